//===- WeightsFileTest.cpp - Models whose weights are in a file -----------===//
//
// A hand-written model "scale" (y = w * x, w from the weights file) stands in
// for one compiled with `--weights external`: contexts made from a file and
// from an image in memory run it with the file's data, and every wrong file
// (another model's, another compile's, cut short, not a weights file at
// all) is refused at create time with a message that says which.
//
//===----------------------------------------------------------------------===//

#include "mlcc/runtime.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

constexpr int64_t kCount = 4;
const int64_t kDims[] = {kCount};
const mlcc_model_tensor_desc kInputs[] = {{"x", kDims, 1, MLCC_DTYPE_F32}};
const mlcc_model_tensor_desc kOutputs[] = {{"y", kDims, 1, MLCC_DTYPE_F32}};

int32_t scaleEntry(void *arena, const void *weights, const void *const *inputs,
                   void *const *outputs, mlcc_threadpool *pool) {
  (void)arena;
  (void)pool;
  const float *w = static_cast<const float *>(weights);
  const float *x = static_cast<const float *>(inputs[0]);
  float *y = static_cast<float *>(outputs[0]);
  for (int64_t i = 0; i < kCount; ++i)
    y[i] = w[i] * x[i];
  return MLCC_OK;
}

constexpr uint64_t kFingerprint = 0x0123456789abcdefull;

mlcc_model_desc scaleDesc() {
  mlcc_model_desc d{};
  d.abi_version = MLCC_MODEL_ABI_VERSION;
  d.num_inputs = 1;
  d.num_outputs = 1;
  d.name = "scale";
  d.inputs = kInputs;
  d.outputs = kOutputs;
  d.arena_bytes = 64;
  d.entry = scaleEntry;
  d.weights_bytes = kCount * sizeof(float);
  d.weights_fingerprint = kFingerprint;
  return d;
}

const mlcc_model_desc kScale = scaleDesc();
const float kWeights[kCount] = {2, -1, 0.5f, 10};

/// A weights file image: the header fields may be spoiled by a test.
struct Image {
  mlcc_weights_header header{};
  std::vector<float> data{kWeights, kWeights + kCount};

  Image() {
    std::memcpy(header.magic, MLCC_WEIGHTS_MAGIC, 8);
    header.header_bytes = 64;
    header.data_bytes = kCount * sizeof(float);
    header.fingerprint = kFingerprint;
    std::strncpy(header.model_name, "scale", sizeof(header.model_name));
  }
  std::string bytes() const {
    std::string s(reinterpret_cast<const char *>(&header), sizeof(header));
    s.append(reinterpret_cast<const char *>(data.data()),
             data.size() * sizeof(float));
    return s;
  }
};

/// A temporary file that holds `bytes`.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string &bytes) {
    char name[] = "/tmp/mlcc-weights-XXXXXX";
    int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, bytes.data(), bytes.size()) ==
            static_cast<ssize_t>(bytes.size()));
    close(fd);
    path = name;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

/// 64-byte aligned copy of an image.
struct AlignedImage {
  void *data;
  size_t size;
  explicit AlignedImage(const std::string &bytes) : size(bytes.size()) {
    data = std::aligned_alloc(64, (bytes.size() + 63) / 64 * 64);
    REQUIRE(data != nullptr);
    std::memcpy(data, bytes.data(), bytes.size());
  }
  ~AlignedImage() { std::free(data); }
};

/// Runs y = w * x in `ctx` and checks y.
void checkRuns(mlcc_model_context *ctx) {
  float x[kCount] = {1, 2, 3, 4}, y[kCount] = {};
  int64_t dims[] = {kCount};
  mlcc_tensor in{x, dims, 1, MLCC_DTYPE_F32};
  mlcc_tensor out{y, dims, 1, MLCC_DTYPE_F32};
  REQUIRE(mlcc_model_run(&kScale, ctx, &in, &out) == MLCC_OK);
  for (int64_t i = 0; i < kCount; ++i)
    CHECK(y[i] == kWeights[i] * x[i]);
}

/// Creates from `bytes` written to a file; the status and message.
mlcc_status createFromFile(const std::string &bytes, std::string &message) {
  TempFile file(bytes);
  mlcc_model_context *ctx = reinterpret_cast<mlcc_model_context *>(&message);
  mlcc_status status =
      mlcc_model_create_from_file(&kScale, file.path.c_str(), nullptr, &ctx);
  message = mlcc_last_error_message();
  if (status == MLCC_OK)
    checkRuns(ctx);
  else
    CHECK(ctx == nullptr);
  mlcc_model_destroy(ctx);
  return status;
}

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("a model runs with the weights of its file", "[runtime][weights]") {
  std::string message;
  REQUIRE(createFromFile(Image().bytes(), message) == MLCC_OK);

  AlignedImage image(Image().bytes());
  mlcc_model_context *ctx = nullptr;
  REQUIRE(mlcc_model_create_from_memory(&kScale, image.data, image.size,
                                        nullptr, &ctx) == MLCC_OK);
  checkRuns(ctx);
  mlcc_model_destroy(ctx);
}

TEST_CASE("a wrong weights file is refused at create time",
          "[runtime][weights]") {
  std::string message;
  SECTION("another model's") {
    Image other;
    other.header.fingerprint = 7;
    std::strncpy(other.header.model_name, "resnet",
                 sizeof(other.header.model_name));
    CHECK(createFromFile(other.bytes(), message) == MLCC_INVALID_ARGUMENT);
    CHECK(contains(message, "was made for model 'resnet', not 'scale'"));
  }
  SECTION("another compile of this model") {
    Image stale;
    stale.header.fingerprint = 7;
    CHECK(createFromFile(stale.bytes(), message) == MLCC_INVALID_ARGUMENT);
    CHECK(contains(message, "comes from another compile of model 'scale'"));
  }
  SECTION("cut short") {
    std::string bytes = Image().bytes();
    bytes.resize(bytes.size() - 3);
    CHECK(createFromFile(bytes, message) == MLCC_INVALID_ARGUMENT);
    CHECK(contains(message, "has 13 data bytes, its header says 16"));
    CHECK(createFromFile(bytes.substr(0, 10), message) ==
          MLCC_INVALID_ARGUMENT);
    CHECK(contains(message, "shorter than its 64-byte header"));
  }
  SECTION("not a weights file") {
    Image junk;
    std::memcpy(junk.header.magic, "GGUF....", 8);
    CHECK(createFromFile(junk.bytes(), message) == MLCC_INVALID_ARGUMENT);
    CHECK(contains(message, "is not an mlcc weights file"));
  }
  SECTION("missing") {
    mlcc_model_context *ctx = nullptr;
    CHECK(mlcc_model_create_from_file(&kScale, "/nonexistent/w.weights",
                                      nullptr, &ctx) == MLCC_INVALID_ARGUMENT);
    CHECK(ctx == nullptr);
    message = mlcc_last_error_message();
    CHECK(contains(message, "mlcc_scale_create: cannot open weights file "
                            "'/nonexistent/w.weights'"));
  }
}

TEST_CASE("weights in a file or in the object need the matching create",
          "[runtime][weights]") {
  mlcc_model_context *ctx = nullptr;
  CHECK(mlcc_model_create(&kScale, nullptr, &ctx) == MLCC_INVALID_ARGUMENT);
  CHECK(contains(mlcc_last_error_message(), "--weights external"));
  CHECK(ctx == nullptr);

  mlcc_model_desc embedded = scaleDesc();
  embedded.weights_bytes = 0;
  embedded.weights_fingerprint = 0;
  TempFile file(Image().bytes());
  CHECK(mlcc_model_create_from_file(&embedded, file.path.c_str(), nullptr,
                                    &ctx) == MLCC_INVALID_ARGUMENT);
  CHECK(contains(mlcc_last_error_message(), "takes no weights file"));

  // Without a context there is nowhere to keep the weights.
  float x[kCount] = {}, y[kCount] = {};
  int64_t dims[] = {kCount};
  mlcc_tensor in{x, dims, 1, MLCC_DTYPE_F32};
  mlcc_tensor out{y, dims, 1, MLCC_DTYPE_F32};
  AlignedImage arena(std::string(64, '\0'));
  CHECK(mlcc_model_run_with_arena(&kScale, arena.data, 64, &in, &out) ==
        MLCC_UNSUPPORTED);

  // An image in memory must be aligned, as the weights are read in place.
  std::string bytes = " " + Image().bytes();
  AlignedImage shifted(bytes);
  CHECK(mlcc_model_create_from_memory(
            &kScale, static_cast<char *>(shifted.data) + 1, bytes.size() - 1,
            nullptr, &ctx) == MLCC_INVALID_ARGUMENT);
  CHECK(contains(mlcc_last_error_message(), "is not 64-byte aligned"));
  CHECK(mlcc_model_create_from_memory(&kScale, nullptr, 0, nullptr, &ctx) ==
        MLCC_INVALID_ARGUMENT);
}
