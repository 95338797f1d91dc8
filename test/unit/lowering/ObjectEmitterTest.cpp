//===- ObjectEmitterTest.cpp - host IR and blobs -> one object ------------===//
//
// The ELF objects are checked three ways: parsed in-process with LLVM's ELF
// reader (exact bytes, sizes, bindings), read by llvm-readelf-19, and linked
// by `cc` with a C main that calls into them and prints what it gets.
//
//===----------------------------------------------------------------------===//

#include "ObjectEmitter.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>
#include <xbyak/xbyak.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <tuple>

using namespace llvm;
using namespace mlcc;

namespace {

// What the linked program must print, computed from the kernels' meaning
// rather than from the object.
constexpr int32_t kAddConstant = 12345;
constexpr int32_t kFirstWeight = 1000;
constexpr int32_t kLocalValue = -77;

int32_t expectedHost(int32_t x) {
  int32_t doubled = 2 * x + 1;
  return 3 * (doubled + kAddConstant) + kFirstWeight + kLocalValue;
}

std::vector<uint8_t>
generate(const std::function<void(Xbyak::CodeGenerator &)> &body) {
  std::vector<uint8_t> buffer(4096);
  Xbyak::CodeGenerator gen(buffer.size(), buffer.data());
  body(gen);
  REQUIRE(Xbyak::GetError() == 0);
  buffer.resize(gen.getSize());
  return buffer;
}

struct Blobs {
  std::vector<uint8_t> doublePlusOne, addConstant, timesThree;
  std::vector<uint8_t> weights, zeros, local;
  std::vector<KernelBlob> kernels;
  std::vector<DataBlob> data;
};

// Three kernels (exported, hidden with a RIP-relative constant, local) and
// four data blobs (weights; an all-zero one that must stay read-only; an
// empty one; a local one).
Blobs makeBlobs() {
  Blobs b;
  b.doublePlusOne = generate([](Xbyak::CodeGenerator &g) {
    using namespace Xbyak::util;
    g.lea(eax, g.ptr[rdi + rdi + 1]);
    g.ret();
  });
  b.addConstant = generate([](Xbyak::CodeGenerator &g) {
    using namespace Xbyak::util;
    Xbyak::Label constant;
    g.mov(eax, edi);
    g.add(eax, g.dword[rip + constant]);
    g.ret();
    g.align(4);
    g.L(constant);
    g.dd(kAddConstant);
  });
  b.timesThree = generate([](Xbyak::CodeGenerator &g) {
    using namespace Xbyak::util;
    g.imul(eax, edi, 3);
    g.ret();
  });
  int32_t weights[5] = {kFirstWeight, -7, 42, 0x01020304, -1};
  b.weights.resize(sizeof(weights));
  std::memcpy(b.weights.data(), weights, sizeof(weights));
  b.zeros.assign(100, 0);
  b.local.resize(sizeof(kLocalValue));
  std::memcpy(b.local.data(), &kLocalValue, sizeof(kLocalValue));

  b.kernels = {
      {"mlcc_test_double_plus_one", b.doublePlusOne, 64, SymbolScope::Exported},
      {"mlcc_test_add_constant", b.addConstant, 64, SymbolScope::Hidden},
      {"mlcc_test_times_three", b.timesThree, 64, SymbolScope::Local},
  };
  b.data = {
      {"mlcc_test_weights", b.weights, 64, SymbolScope::Exported},
      {"mlcc_test_zeros", b.zeros, 64, SymbolScope::Exported},
      {"mlcc_test_empty", {}, 64, SymbolScope::Hidden},
      {"mlcc_test_local", b.local, 64, SymbolScope::Local},
  };
  return b;
}

// int host(int x) {
//   return times_three(add_constant(double_plus_one(x))) + *(int *)weights +
//          *(int *)local;
// }
std::unique_ptr<Module> makeHost(LLVMContext &ctx) {
  auto m = std::make_unique<Module>("host", ctx);
  IRBuilder<> b(ctx);
  Type *i32 = b.getInt32Ty();
  FunctionType *unary = FunctionType::get(i32, {i32}, false);
  auto declare = [&](StringRef name) {
    return m->getOrInsertFunction(name, unary);
  };
  FunctionCallee k1 = declare("mlcc_test_double_plus_one");
  FunctionCallee k2 = declare("mlcc_test_add_constant");
  FunctionCallee k3 = declare("mlcc_test_times_three");
  // Declared with whatever type is handy: the emitter replaces them.
  Constant *weights = m->getOrInsertGlobal("mlcc_test_weights", b.getInt8Ty());
  Constant *local = m->getOrInsertGlobal("mlcc_test_local", i32);

  Function *host =
      Function::Create(unary, GlobalValue::ExternalLinkage, "host", *m);
  b.SetInsertPoint(BasicBlock::Create(ctx, "entry", host));
  Value *v = b.CreateCall(k1, {host->getArg(0)});
  v = b.CreateCall(k2, {v});
  v = b.CreateCall(k3, {v});
  Value *w = b.CreateAlignedLoad(i32, weights, Align(4));
  Value *l = b.CreateAlignedLoad(i32, local, Align(4));
  b.CreateRet(b.CreateAdd(b.CreateAdd(v, w), l));
  return m;
}

Expected<SmallVector<char, 0>>
emitToBuffer(std::unique_ptr<Module> host, const Blobs &blobs,
             const ObjectEmitterOptions &opts = {}) {
  SmallVector<char, 0> buffer;
  raw_svector_ostream os(buffer);
  if (Error err =
          emitObject(std::move(host), blobs.kernels, blobs.data, os, opts))
    return std::move(err);
  return buffer;
}

SmallVector<char, 0> emitOrFail(const Blobs &blobs,
                                const ObjectEmitterOptions &opts = {}) {
  LLVMContext ctx;
  auto obj = emitToBuffer(makeHost(ctx), blobs, opts);
  if (!obj)
    FAIL(toString(obj.takeError()));
  return std::move(*obj);
}

struct TempDir {
  SmallString<128> path;
  TempDir() {
    REQUIRE(!sys::fs::createUniqueDirectory("mlcc-object-emitter", path));
  }
  ~TempDir() { sys::fs::remove_directories(path); }
  std::string file(StringRef name) const {
    SmallString<128> p(path);
    sys::path::append(p, name);
    return std::string(p);
  }
};

void writeFile(const std::string &path, StringRef contents) {
  std::ofstream f(path, std::ios::binary);
  f.write(contents.data(), contents.size());
  REQUIRE(f.good());
}

std::string readFile(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs `command` with stdout and stderr captured; returns the exit status.
int run(const TempDir &dir, const std::string &command, std::string &output) {
  std::string log = dir.file("command.log");
  int status = std::system((command + " > " + log + " 2>&1").c_str());
  output = readFile(log);
  INFO(command << "\n" << output);
  return status;
}

struct SymbolInfo {
  uint8_t type = 0, binding = 0, visibility = 0;
  uint64_t value = 0, size = 0;
  std::string section;
};

} // namespace

TEST_CASE("object emitter: ELF symbols and sections", "[object-emitter]") {
  Blobs blobs = makeBlobs();
  SmallVector<char, 0> obj = emitOrFail(blobs);

  auto parsed = object::ObjectFile::createELFObjectFile(
      MemoryBufferRef(StringRef(obj.data(), obj.size()), "obj"));
  if (!parsed)
    FAIL(toString(parsed.takeError()));
  auto *elf = dyn_cast<object::ELF64LEObjectFile>(parsed->get());
  REQUIRE(elf);
  CHECK(elf->getArch() == Triple::x86_64);
  CHECK(elf->getELFFile().getHeader().e_type == ELF::ET_REL);

  std::map<std::string, object::ELFSectionRef> sections;
  for (object::ELFSectionRef s : elf->sections())
    if (auto name = s.getName())
      sections.emplace(name->str(), s);
  REQUIRE(sections.count(".text.mlcc_kernels"));
  REQUIRE(sections.count(".rodata"));
  REQUIRE(sections.count(".note.GNU-stack"));
  CHECK(sections.count(".bss") == 0);
  object::ELFSectionRef text = sections.at(".text.mlcc_kernels");
  object::ELFSectionRef rodata = sections.at(".rodata");
  CHECK(text.getAlignment().value() == 64);
  CHECK(rodata.getAlignment().value() == 64);
  CHECK(text.getFlags() == (ELF::SHF_ALLOC | ELF::SHF_EXECINSTR));
  CHECK(rodata.getFlags() == ELF::SHF_ALLOC);
  // No SHF_EXECINSTR on the note: the linked program gets a non-exec stack.
  CHECK(sections.at(".note.GNU-stack").getFlags() == 0);

  std::map<std::string, SymbolInfo> symbols;
  for (object::ELFSymbolRef s : elf->symbols()) {
    StringRef name = cantFail(s.getName());
    object::section_iterator section = cantFail(s.getSection());
    SymbolInfo info;
    info.type = s.getELFType();
    info.binding = s.getBinding();
    info.visibility = s.getOther() & 0x3;
    info.value = cantFail(s.getValue());
    info.size = s.getSize();
    if (section != elf->section_end())
      info.section = cantFail(section->getName()).str();
    symbols[name.str()] = info;
  }

  StringRef textBytes = cantFail(text.getContents());
  for (const KernelBlob &k : blobs.kernels) {
    INFO("kernel " << k.name);
    REQUIRE(symbols.count(k.name));
    const SymbolInfo &s = symbols[k.name];
    CHECK(s.type == ELF::STT_FUNC);
    CHECK(s.size == k.bytes.size());
    CHECK(s.value % 64 == 0);
    CHECK(s.section == ".text.mlcc_kernels");
    CHECK(s.binding ==
          (k.scope == SymbolScope::Local ? ELF::STB_LOCAL : ELF::STB_GLOBAL));
    CHECK(s.visibility == (k.scope == SymbolScope::Hidden ? ELF::STV_HIDDEN
                                                          : ELF::STV_DEFAULT));
    REQUIRE(s.value + s.size <= textBytes.size());
    CHECK(textBytes.substr(s.value, s.size) ==
          StringRef(reinterpret_cast<const char *>(k.bytes.data()),
                    k.bytes.size()));
  }

  StringRef dataBytes = cantFail(rodata.getContents());
  for (const DataBlob &d : blobs.data) {
    INFO("data " << d.name);
    REQUIRE(symbols.count(d.name));
    const SymbolInfo &s = symbols[d.name];
    CHECK(s.type == ELF::STT_OBJECT);
    CHECK(s.size == d.bytes.size());
    CHECK(s.value % 64 == 0);
    CHECK(s.section == ".rodata");
    CHECK(s.binding ==
          (d.scope == SymbolScope::Local ? ELF::STB_LOCAL : ELF::STB_GLOBAL));
    CHECK(s.visibility == (d.scope == SymbolScope::Hidden ? ELF::STV_HIDDEN
                                                          : ELF::STV_DEFAULT));
    REQUIRE(s.value + s.size <= dataBytes.size());
    CHECK(dataBytes.substr(s.value, s.size) ==
          StringRef(reinterpret_cast<const char *>(d.bytes.data()),
                    d.bytes.size()));
  }

  REQUIRE(symbols.count("host"));
  CHECK(symbols["host"].type == ELF::STT_FUNC);
  CHECK(symbols["host"].section == ".text");
}

TEST_CASE("object emitter: llvm-readelf reads the object",
          "[object-emitter][tools]") {
  Blobs blobs = makeBlobs();
  SmallVector<char, 0> obj = emitOrFail(blobs);
  TempDir dir;
  writeFile(dir.file("model.o"), StringRef(obj.data(), obj.size()));

  std::string out;
  REQUIRE(run(dir, "llvm-readelf-19 --wide -S -s " + dir.file("model.o"),
              out) == 0);
  INFO(out);
  CHECK(out.find(".note.GNU-stack") != std::string::npos);
  // Symbol lines: Num Value Size Type Bind Vis Ndx Name.
  auto symbolLine = [&](const std::string &name) -> std::string {
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);)
      if (line.size() > name.size() &&
          line.compare(line.size() - name.size() - 1, std::string::npos,
                       " " + name) == 0)
        return line;
    return "";
  };
  auto fields = [](const std::string &line) {
    std::istringstream s(line);
    std::vector<std::string> f;
    for (std::string w; s >> w;)
      f.push_back(w);
    return f;
  };
  auto kernel = fields(symbolLine("mlcc_test_double_plus_one"));
  REQUIRE(kernel.size() == 8);
  CHECK(std::stoul(kernel[2]) == blobs.doublePlusOne.size());
  CHECK(kernel[3] == "FUNC");
  CHECK(kernel[4] == "GLOBAL");
  CHECK(kernel[5] == "DEFAULT");
  auto hidden = fields(symbolLine("mlcc_test_add_constant"));
  REQUIRE(hidden.size() == 8);
  CHECK(hidden[3] == "FUNC");
  CHECK(hidden[5] == "HIDDEN");
  auto local = fields(symbolLine("mlcc_test_times_three"));
  REQUIRE(local.size() == 8);
  CHECK(local[3] == "FUNC");
  CHECK(local[4] == "LOCAL");
  auto weights = fields(symbolLine("mlcc_test_weights"));
  REQUIRE(weights.size() == 8);
  CHECK(std::stoul(weights[2]) == blobs.weights.size());
  CHECK(weights[3] == "OBJECT");
}

TEST_CASE("object emitter: linked program calls kernels and reads data",
          "[object-emitter][tools]") {
  Blobs blobs = makeBlobs();
  TempDir dir;
  {
    LLVMContext ctx;
    if (Error err = emitObjectFile(makeHost(ctx), blobs.kernels, blobs.data,
                                   dir.file("model.o")))
      FAIL(toString(std::move(err)));
  }
  writeFile(dir.file("main.c"), R"(#include <stdio.h>
extern int host(int);
extern int mlcc_test_double_plus_one(int);
extern const int mlcc_test_weights[];
extern const unsigned char mlcc_test_zeros[100];
int main(void) {
  int xs[] = {0, 1, -5, 20, 100000};
  for (int i = 0; i < 5; ++i)
    printf("%d\n", host(xs[i]));
  printf("%d\n", mlcc_test_double_plus_one(7));
  printf("%d\n", mlcc_test_weights[3]);
  int sum = 0;
  for (int i = 0; i < 100; ++i)
    sum += mlcc_test_zeros[i];
  printf("%d\n", sum);
  return 0;
}
)");
  std::string out;
  // -Wl,--fatal-warnings: a missing .note.GNU-stack is a linker warning.
  REQUIRE(run(dir,
              "cc -O0 -Wl,--fatal-warnings -o " + dir.file("app") + " " +
                  dir.file("main.c") + " " + dir.file("model.o"),
              out) == 0);
  REQUIRE(run(dir, dir.file("app"), out) == 0);
  std::ostringstream expected;
  for (int x : {0, 1, -5, 20, 100000})
    expected << expectedHost(x) << "\n";
  expected << 2 * 7 + 1 << "\n" << 0x01020304 << "\n" << 0 << "\n";
  CHECK(out == expected.str());

  REQUIRE(run(dir, "llvm-readelf-19 --wide -l " + dir.file("app"), out) == 0);
  std::istringstream lines(out);
  bool sawStack = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("GNU_STACK") == std::string::npos)
      continue;
    sawStack = true;
    INFO(line);
    CHECK(line.find("RWE") == std::string::npos);
  }
  CHECK(sawStack);
}

TEST_CASE("object emitter: same input gives the same bytes",
          "[object-emitter]") {
  Blobs blobs = makeBlobs();
  SmallVector<char, 0> first = emitOrFail(blobs);
  SmallVector<char, 0> second = emitOrFail(blobs);
  CHECK(first.size() == second.size());
  CHECK(first == second);
  // And the input does matter: one flipped data byte changes the object.
  blobs.weights[7] ^= 1;
  SmallVector<char, 0> third = emitOrFail(blobs);
  CHECK(first != third);
}

TEST_CASE("object emitter: .text as the kernel section", "[object-emitter]") {
  Blobs blobs = makeBlobs();
  ObjectEmitterOptions opts;
  opts.kernelSection = ".text";
  opts.dataSection = ".rodata.mlcc_weights";
  SmallVector<char, 0> obj = emitOrFail(blobs, opts);
  auto parsed = cantFail(object::ObjectFile::createELFObjectFile(
      MemoryBufferRef(StringRef(obj.data(), obj.size()), "obj")));
  bool sawWeights = false;
  for (object::SectionRef s : parsed->sections()) {
    StringRef name = cantFail(s.getName());
    CHECK(name != ".text.mlcc_kernels");
    if (name == ".rodata.mlcc_weights") {
      sawWeights = true;
      CHECK(s.getAlignment().value() == 64);
    }
    if (name == ".text")
      CHECK(s.getAlignment().value() >= 64);
  }
  CHECK(sawWeights);
}

TEST_CASE("object emitter: bad input returns an error", "[object-emitter]") {
  struct Case {
    const char *what;
    std::function<void(Blobs &, Module &, ObjectEmitterOptions &)> mutate;
    const char *message;
  };
  auto dummyDefinition = [](Module &m, StringRef name) {
    LLVMContext &ctx = m.getContext();
    Function *f = Function::Create(FunctionType::get(Type::getVoidTy(ctx), {}),
                                   GlobalValue::ExternalLinkage, name, m);
    IRBuilder<>(BasicBlock::Create(ctx, "entry", f)).CreateRetVoid();
  };
  std::vector<Case> cases = {
      {"duplicate kernel",
       [](Blobs &b, Module &, ObjectEmitterOptions &) {
         b.kernels.push_back(b.kernels[0]);
       },
       "'mlcc_test_double_plus_one' is given more than once"},
      {"kernel and data share a name",
       [](Blobs &b, Module &, ObjectEmitterOptions &) {
         b.data[1].name = "mlcc_test_add_constant";
       },
       "given more than once"},
      {"name starts with a digit",
       [](Blobs &b, Module &, ObjectEmitterOptions &) {
         b.kernels[0].name = "1kernel";
       },
       "'1kernel' is not a C identifier"},
      {"name with a space",
       [](Blobs &b, Module &, ObjectEmitterOptions &) {
         b.data[0].name = "my weights";
       },
       "is not a C identifier"},
      {"name with asm syntax",
       [](Blobs &b, Module &, ObjectEmitterOptions &) {
         b.kernels[2].name = "k\n.globl x";
       },
       "is not a C identifier"},
      {"empty name",
       [](Blobs &b, Module &, ObjectEmitterOptions &) { b.data[0].name = ""; },
       "is not a C identifier"},
      {"kernel defined by the host",
       [&](Blobs &b, Module &m, ObjectEmitterOptions &) {
         dummyDefinition(m, "mlcc_test_extra");
         b.kernels.push_back({"mlcc_test_extra", b.timesThree});
       },
       "'mlcc_test_extra' is already defined by the host module"},
      {"data declared as a function",
       [](Blobs &b, Module &m, ObjectEmitterOptions &) {
         m.getOrInsertFunction("mlcc_test_table",
                               Type::getVoidTy(m.getContext()));
         b.data.push_back({"mlcc_test_table", b.weights});
       },
       "declare it as a global variable"},
      {"kernel declared as a variable",
       [](Blobs &b, Module &m, ObjectEmitterOptions &) {
         m.getOrInsertGlobal("mlcc_test_code", Type::getInt8Ty(m.getContext()));
         b.kernels.push_back({"mlcc_test_code", b.timesThree});
       },
       "declare it as a function"},
      {"alignment not a power of two",
       [](Blobs &b, Module &, ObjectEmitterOptions &) {
         b.data[0].alignment = 48;
       },
       "has alignment 48"},
      {"alignment zero",
       [](Blobs &b, Module &, ObjectEmitterOptions &) {
         b.kernels[0].alignment = 0;
       },
       "has alignment 0"},
      {"alignment too large",
       [](Blobs &b, Module &, ObjectEmitterOptions &) {
         b.kernels[0].alignment = uint64_t(1) << 40;
       },
       "must be a power of two <= 4096"},
      {"empty kernel",
       [](Blobs &b, Module &, ObjectEmitterOptions &) {
         b.kernels[1].bytes = {};
       },
       "'mlcc_test_add_constant' has no code"},
      {"data section that would be writable",
       [](Blobs &, Module &, ObjectEmitterOptions &o) {
         o.dataSection = ".data";
       },
       "must be .rodata or .rodata.<name>"},
      {"kernel section that is not code",
       [](Blobs &, Module &, ObjectEmitterOptions &o) {
         o.kernelSection = ".rodata";
       },
       "must be .text or .text.<name>"},
      {"unknown host CPU",
       [](Blobs &, Module &, ObjectEmitterOptions &o) {
         o.hostCpu = "not-a-cpu";
       },
       "'not-a-cpu' is not a known x86-64 CPU"},
      {"invalid host IR",
       [](Blobs &, Module &m, ObjectEmitterOptions &) {
         LLVMContext &ctx = m.getContext();
         Function *f =
             Function::Create(FunctionType::get(Type::getVoidTy(ctx), {}),
                              GlobalValue::ExternalLinkage, "no_terminator", m);
         BasicBlock::Create(ctx, "entry", f);
       },
       "invalid host module"},
      {"bad module asm from the host",
       [](Blobs &, Module &m, ObjectEmitterOptions &) {
         m.appendModuleInlineAsm("not_an_instruction %rax");
       },
       "invalid instruction mnemonic"},
  };

  for (const Case &c : cases) {
    DYNAMIC_SECTION(c.what) {
      Blobs blobs = makeBlobs();
      LLVMContext ctx;
      std::unique_ptr<Module> host = makeHost(ctx);
      ObjectEmitterOptions opts;
      c.mutate(blobs, *host, opts);
      auto obj = emitToBuffer(std::move(host), blobs, opts);
      REQUIRE(!obj);
      std::string message = toString(obj.takeError());
      INFO(message);
      CHECK(message.find(c.message) != std::string::npos);
    }
  }
}

// An Apple host (--target metal): the same host IR and data in a Mach-O
// object; machine-code kernels are ELF x86-64 only.
TEST_CASE("object emitter: Mach-O for Apple hosts", "[object-emitter]") {
  for (auto [triple, cpu, arch] :
       {std::tuple{"arm64-apple-macosx11.0.0", "generic", Triple::aarch64},
        std::tuple{"x86_64-apple-macosx11.0.0", "x86-64", Triple::x86_64}}) {
    DYNAMIC_SECTION(triple) {
      Blobs blobs = makeBlobs();
      // Its data points into `blobs`' bytes.
      Blobs dataOnly = blobs;
      dataOnly.kernels.clear();
      LLVMContext ctx;
      ObjectEmitterOptions opts;
      opts.triple = triple;
      opts.hostCpu = cpu;
      auto obj = emitToBuffer(makeHost(ctx), dataOnly, opts);
      if (!obj)
        FAIL(toString(obj.takeError()));
      auto parsed = object::ObjectFile::createObjectFile(
          MemoryBufferRef(StringRef(obj->data(), obj->size()), "obj"));
      if (!parsed)
        FAIL(toString(parsed.takeError()));
      CHECK(parsed->get()->isMachO());
      CHECK(parsed->get()->getArch() == arch);
      std::set<std::string> names;
      for (const object::SymbolRef &symbol : parsed->get()->symbols())
        names.insert(cantFail(symbol.getName()).str());
      // Mach-O prefixes C names with an underscore.
      for (const DataBlob &blob : blobs.data)
        CHECK(names.count("_" + blob.name));

      opts.hostCpu = "x86-64-v9";
      auto badCpu = emitToBuffer(makeHost(ctx), dataOnly, opts);
      REQUIRE(!badCpu);
      CHECK_THAT(toString(badCpu.takeError()),
                 Catch::Contains("is not a known"));
      opts.hostCpu = cpu;
      auto withKernels = emitToBuffer(makeHost(ctx), blobs, opts);
      REQUIRE(!withKernels);
      CHECK_THAT(toString(withKernels.takeError()),
                 Catch::Contains("machine-code kernels go into ELF x86-64 "
                                 "objects only"));
    }
  }
  LLVMContext ctx;
  ObjectEmitterOptions opts;
  opts.triple = "aarch64-unknown-linux-gnu";
  auto linuxArm = emitToBuffer(makeHost(ctx), makeBlobs(), opts);
  REQUIRE(!linuxArm);
  CHECK_THAT(toString(linuxArm.takeError()),
             Catch::Contains("is not a host objects are written for"));
}

TEST_CASE("object emitter: file output errors", "[object-emitter]") {
  Blobs blobs = makeBlobs();
  LLVMContext ctx;
  Error err = emitObjectFile(makeHost(ctx), blobs.kernels, blobs.data,
                             "/nonexistent-dir/model.o");
  REQUIRE(bool(err));
  CHECK(toString(std::move(err)).find("cannot create") != std::string::npos);

  // A failed emit leaves an existing file as it was and no temporary behind.
  TempDir dir;
  std::string path = dir.file("model.o");
  writeFile(path, "old contents");
  LLVMContext ctx2;
  blobs.kernels.push_back(blobs.kernels[0]);
  Error dup = emitObjectFile(makeHost(ctx2), blobs.kernels, blobs.data, path);
  REQUIRE(bool(dup));
  consumeError(std::move(dup));
  CHECK(readFile(path) == "old contents");
  std::error_code ec;
  int entries = 0;
  for (sys::fs::directory_iterator it(dir.path, ec), end; it != end && !ec;
       it.increment(ec))
    ++entries;
  CHECK(entries == 1);
}

// Not run by default (hidden tag): emits a 100 MB weight and a 1 MB kernel
// and reports the time, to watch the cost of large models.
TEST_CASE("object emitter: large blobs", "[.][object-emitter][perf]") {
  std::vector<uint8_t> weights(100u << 20);
  for (size_t i = 0; i < weights.size(); ++i)
    weights[i] = uint8_t(i * 2654435761u >> 24);
  std::vector<uint8_t> code(1u << 20, 0x90);
  code.back() = 0xc3;
  std::vector<KernelBlob> kernels = {{"big_kernel", code}};
  std::vector<DataBlob> data = {{"big_weights", weights}};

  TempDir dir;
  LLVMContext ctx;
  auto start = std::chrono::steady_clock::now();
  if (Error err = emitObjectFile(std::make_unique<Module>("big", ctx), kernels,
                                 data, dir.file("big.o")))
    FAIL(toString(std::move(err)));
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  WARN("100 MB data + 1 MB kernel: " << seconds << " s");
  uint64_t size = 0;
  REQUIRE(!sys::fs::file_size(dir.file("big.o"), size));
  CHECK(size > weights.size() + code.size());
}
