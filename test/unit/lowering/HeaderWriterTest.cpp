//===- HeaderWriterTest.cpp - The C header an app includes for a model ----===//
//
// Each case is compared with a checked-in golden file (MLCC_UPDATE_GOLDEN=1
// rewrites them) and compiled by `cc` as strict C11 and by `c++` as C++17,
// so a header that reads right but does not compile still fails.
//
//===----------------------------------------------------------------------===//

#include "HeaderWriter.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#ifndef MLCC_SOURCE_DIR
#error "MLCC_SOURCE_DIR must name the source tree (a compile definition)"
#endif

using namespace mlcc;

namespace {

std::string readFile(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void writeFile(const std::string &path, const std::string &contents) {
  std::ofstream f(path, std::ios::binary);
  f.write(contents.data(), contents.size());
  REQUIRE(f.good());
}

InterfaceTensor tensor(std::string name, std::string dtype,
                       std::vector<InterfaceDim> dims) {
  return InterfaceTensor{std::move(name), std::move(dtype), std::move(dims)};
}

ModelInterface classifier() {
  ModelInterface m;
  m.name = "resnet";
  m.inputs = {tensor("image", "f32", {{1, ""}, {3, ""}, {224, ""}, {224, ""}})};
  m.outputs = {tensor("probabilities", "f32", {{1, ""}, {1000, ""}})};
  m.arenaBytes = 12845056;
  return m;
}

ModelInterface bert() {
  ModelInterface m;
  m.name = "bert_tiny";
  m.inputs = {tensor("input_ids", "i64", {{-1, "batch"}, {128, ""}}),
              tensor("attention_mask", "i64", {{-1, "batch"}, {128, ""}})};
  m.outputs = {tensor("logits", "f32", {{-1, "batch"}, {2, ""}})};
  m.arenaBytes = 0;
  m.externalWeights = true;
  m.weightsBytes = 17563648;
  return m;
}

// Names that are not identifiers, collide once sanitized, are keywords,
// start with a digit, need escaping ("??/" is a trigraph) or are not ASCII;
// also a scalar output and a bool one.
ModelInterface oddNames() {
  ModelInterface m;
  m.name = "Odd_Names2";
  m.inputs = {tensor("input:0", "f32", {{2, ""}, {3, ""}}),
              tensor("a.b/c", "u8", {{4, ""}}),
              tensor("a_b_c", "i32", {{4, ""}}),
              tensor("float", "f64", {{1, ""}}), tensor("0start", "i8", {})};
  m.outputs = {tensor("out \"quoted\"\\ ?\?/ \n\xc3\xa9", "bool", {{2, ""}}),
               tensor("a.b.c", "f16", {}), tensor("__x", "bf16", {{0, ""}})};
  m.arenaBytes = 64;
  return m;
}

const std::string kGoldenDir =
    std::string(MLCC_SOURCE_DIR) + "/test/unit/lowering/golden/";

void checkGolden(const std::string &caseName, const std::string &header) {
  std::string path = kGoldenDir + caseName + ".h.golden";
  const char *update = std::getenv("MLCC_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    writeFile(path, header);
    WARN("rewrote " << path);
  }
  std::string golden = readFile(path);
  INFO("golden file " << path << " (MLCC_UPDATE_GOLDEN=1 rewrites it)");
  REQUIRE(!golden.empty());
  CHECK(header == golden);
}

// Compiles a source that includes `header` twice (the guard) and uses its
// constants, with `compiler` (cc or c++ and flags); returns the exit status.
int compile(const std::string &caseName, const std::string &header,
            const std::string &compiler, const std::string &ext,
            const std::string &uses, std::string &log) {
  char dirTemplate[] = "/tmp/mlcc-header-XXXXXX";
  REQUIRE(mkdtemp(dirTemplate) != nullptr);
  std::string dir = dirTemplate;
  writeFile(dir + "/" + caseName + ".h", header);
  std::string src =
      "#include \"" + caseName + ".h\"\n#include \"" + caseName +
      ".h\"\n#ifdef __cplusplus\n#define SA "
      "static_assert\n#else\n#define SA _Static_assert\n#endif\n" +
      uses;
  writeFile(dir + "/use." + ext, src);
  std::string cmd = compiler +
                    " -Wall -Wextra -pedantic -Werror -fsyntax-only"
                    " -I " MLCC_SOURCE_DIR "/runtime/include -I " +
                    dir + " " + dir + "/use." + ext + " > " + dir + "/log 2>&1";
  int status = std::system(cmd.c_str());
  log = cmd + "\n" + readFile(dir + "/log");
  std::system(("rm -rf " + dir).c_str());
  return status;
}

void checkCompiles(const std::string &caseName, const std::string &header,
                   const std::string &uses) {
  std::string log;
  int c = compile(caseName, header, "cc -std=c11", "c", uses, log);
  INFO(log);
  CHECK(c == 0);
  int cxx = compile(caseName, header, "c++ -std=c++17", "cpp", uses, log);
  INFO(log);
  CHECK(cxx == 0);
}

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("HeaderWriter: static image classifier", "[header]") {
  std::string h = writeModelHeader(classifier());
  REQUIRE(!h.empty());
  checkGolden("static_classifier", h);
  CHECK(contains(h, "mlcc_status mlcc_resnet_run_static(mlcc_resnet_context "
                    "*ctx,\n    const float *image,\n    float "
                    "*probabilities);"));
  CHECK(contains(h, "#define MLCC_RESNET_INPUT_0_BYTES 602112u\n"));
  CHECK(contains(h, "#define MLCC_RESNET_ARENA_BYTES 12845056u\n"));
  CHECK(contains(h, "mlcc_resnet_run_with_arena("));
  CHECK(!contains(h, "weights_path"));
  // The constants mean what the runtime means.
  checkCompiles(
      "resnet", h,
      "SA(MLCC_RESNET_INPUT_0_BYTES == 1 * 3 * 224 * 224 * 4, "
      "\"\");\n"
      "SA(MLCC_RESNET_NUM_INPUTS == 1 && MLCC_RESNET_NUM_OUTPUTS "
      "== 1, \"\");\n"
      "SA(sizeof(mlcc_resnet_input_0_dims) == 4 * sizeof(int64_t)"
      " && MLCC_RESNET_INPUT_0_RANK == 4, \"\");\n"
      "int main(void) {\n"
      "  mlcc_dtype d = MLCC_RESNET_OUTPUT_0_DTYPE;\n"
      "  const char *n = MLCC_RESNET_INPUT_0_NAME;\n"
      "  mlcc_status (*f)(mlcc_resnet_context *, const float *, float *) = "
      "mlcc_resnet_run_static;\n"
      "  mlcc_status (*g)(void *, size_t, const mlcc_tensor *, mlcc_tensor *)"
      " = mlcc_resnet_run_with_arena;\n"
      "  return (int)d + n[0] + (f != 0) + (g != 0) + "
      "(int)mlcc_resnet_output_0_dims[1];\n}\n");
}

TEST_CASE("HeaderWriter: dynamic batch, external weights", "[header]") {
  std::string h = writeModelHeader(bert());
  REQUIRE(!h.empty());
  checkGolden("dynamic_bert", h);
  CHECK(contains(h, "static const int64_t mlcc_bert_tiny_input_0_dims[2] = "
                    "{-1, 128};"));
  // Nothing that needs every shape known, and no run without weights.
  CHECK(!contains(h, "INPUT_0_BYTES"));
  CHECK(!contains(h, "ARENA_BYTES"));
  CHECK(contains(h, "#define MLCC_BERT_TINY_WEIGHTS_BYTES 17563648u\n"));
  CHECK(!contains(h, "run_static"));
  CHECK(!contains(h, "run_with_arena"));
  CHECK(contains(h, "const char *weights_path"));
  checkCompiles(
      "bert_tiny", h,
      "int main(void) {\n"
      "  mlcc_status (*c)(mlcc_threadpool *, const char *, "
      "mlcc_bert_tiny_context **) = mlcc_bert_tiny_create;\n"
      "  mlcc_status (*r)(mlcc_bert_tiny_context *, const mlcc_tensor *, "
      "mlcc_tensor *) = mlcc_bert_tiny_run;\n"
      "  void (*d)(mlcc_bert_tiny_context *) = mlcc_bert_tiny_destroy;\n"
      "  mlcc_status (*m)(mlcc_threadpool *, const void *, size_t, "
      "mlcc_bert_tiny_context **) = mlcc_bert_tiny_create_from_memory;\n"
      "  return (c != 0) + (r != 0) + (d != 0) + (m != 0) + "
      "(int)mlcc_bert_tiny_input_1_dims[0] + MLCC_BERT_TINY_INPUT_1_DTYPE;\n"
      "}\n");
}

TEST_CASE("HeaderWriter: odd ONNX names", "[header]") {
  std::string h = writeModelHeader(oddNames());
  REQUIRE(!h.empty());
  checkGolden("odd_names", h);
  CHECK(contains(h, "#define MLCC_ODD_NAMES2_INPUT_0_NAME \"input:0\"\n"));
  CHECK(contains(h, "#define MLCC_ODD_NAMES2_OUTPUT_0_NAME \"out "
                    "\\\"quoted\\\"\\\\ \\?\\?/ \\n\\303\\251\"\n"));
  CHECK(contains(h, "const float *input_0,"));
  CHECK(contains(h, "const uint8_t *a_b_c,"));
  CHECK(contains(h, "const int32_t *a_b_c_1,"));
  CHECK(contains(h, "const double *float_,"));
  CHECK(contains(h, "const int8_t *t_0start,"));
  CHECK(contains(h, "uint16_t *a_b_c_2,"));
  CHECK(contains(h, "uint16_t *x);"));
  CHECK(contains(h, "#define MLCC_ODD_NAMES2_OUTPUT_2_BYTES 0u\n"));
  CHECK(contains(h, "#define MLCC_ODD_NAMES2_OUTPUT_1_BYTES 2u\n"));
  // The names survive the C compiler byte for byte.
  checkCompiles(
      "odd", h,
      "SA(sizeof(MLCC_ODD_NAMES2_OUTPUT_0_NAME) == 22, \"\");\n"
      "SA(MLCC_ODD_NAMES2_INPUT_4_RANK == 0, \"\");\n"
      "int main(void) { return MLCC_ODD_NAMES2_OUTPUT_0_NAME[16] == '/' ? 0 : "
      "1; }\n");
}

TEST_CASE("HeaderWriter: escapeCString", "[header]") {
  CHECK(escapeCString("") == "");
  CHECK(escapeCString("a.b/c") == "a.b/c");
  CHECK(escapeCString("\"\\") == "\\\"\\\\");
  CHECK(escapeCString("?\?=") == "\\?\\?=");
  // Three octal digits, so a following digit is not part of the escape.
  CHECK(escapeCString(std::string("\x01"
                                  "7",
                                  2)) == "\\0017");
  CHECK(escapeCString(std::string("\0", 1)) == "\\000");
  CHECK(escapeCString("\t\n\r") == "\\t\\n\\015");
}

TEST_CASE("HeaderWriter: output is deterministic", "[header]") {
  CHECK(writeModelHeader(oddNames()) == writeModelHeader(oddNames()));
  CHECK(writeModelHeader(bert()) == writeModelHeader(bert()));
}

TEST_CASE("HeaderWriter: invalid interfaces are errors", "[header]") {
  std::string header = "stale", error;
  auto fails = [&](const ModelInterface &m, const std::string &expected) {
    bool ok = tryWriteModelHeader(m, header, error);
    INFO(error);
    CHECK(!ok);
    CHECK(header.empty());
    CHECK(error == expected);
    CHECK(writeModelHeader(m).empty());
  };
  ModelInterface m = classifier();
  m.name = "2fast";
  fails(m, "model name '2fast' is not a C identifier");
  m.name = "";
  fails(m, "model name '' is not a C identifier");
  m.name = "my-model";
  fails(m, "model name 'my-model' is not a C identifier");

  m = classifier();
  m.outputs[0].name = "";
  fails(m, "output 0 has an empty name");
  m = classifier();
  m.outputs[0].name = "image";
  fails(m, "output 0 'image': duplicate tensor name");
  m = bert();
  m.inputs[1].name = "input_ids";
  fails(m, "input 1 'input_ids': duplicate tensor name");

  m = classifier();
  m.inputs[0].dtype = "f8";
  fails(m, "input 0 'image': unsupported dtype 'f8'");
  m.inputs[0].dtype = "undefined";
  fails(m, "input 0 'image': unsupported dtype 'undefined'");
  m = classifier();
  m.inputs[0].dims[1].size = -2;
  fails(m, "input 0 'image': dim -2 (expected >= 0, or -1 for dynamic)");
  m = classifier();
  m.outputs[0].dims = {{INT64_MAX, ""}, {4, ""}};
  fails(m, "output 0 'probabilities': byte size overflows");

  // A valid one clears the error.
  REQUIRE(tryWriteModelHeader(classifier(), header, error));
  CHECK(error.empty());
  CHECK(header == writeModelHeader(classifier()));
}

TEST_CASE("HeaderWriter: a model with no inputs", "[header]") {
  ModelInterface m;
  m.name = "constant";
  m.outputs = {tensor("y", "f32", {{2, ""}})};
  std::string h = writeModelHeader(m);
  REQUIRE(!h.empty());
  CHECK(contains(h, "mlcc_status mlcc_constant_run_static(mlcc_constant_context"
                    " *ctx,\n    float *y);"));
  checkCompiles("constant", h, "int main(void) { return 0; }\n");
}

TEST_CASE("HeaderWriter: dynamic dims with embedded weights", "[header]") {
  // No arena constant, so no run over caller memory either.
  ModelInterface m = bert();
  m.externalWeights = false;
  std::string h = writeModelHeader(m);
  REQUIRE(!h.empty());
  CHECK(!contains(h, "ARENA_BYTES"));
  CHECK(!contains(h, "run_with_arena"));
  CHECK(contains(h, "mlcc_status mlcc_bert_tiny_create(mlcc_threadpool *pool,"
                    " mlcc_bert_tiny_context **out);"));
  checkCompiles("bert_embedded", h, "int main(void) { return 0; }\n");
}
