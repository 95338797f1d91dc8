//===- CpuTarget.cpp - Resolving --cpu to LLVM's CPU and mlcc's bits ------===//

#include "CpuTarget.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/X86TargetParser.h"

namespace mlcc::lowering {

namespace {

struct FeatureName {
  const char *llvm;
  uint64_t bit;
};

// LLVM's names for the features runtime/include/mlcc/cpu.h tracks: those
// that code generation uses. (System features such as xsave or rdpid are
// never emitted into a model's code.)
constexpr FeatureName kFeatureNames[] = {
    {"sse4.2", MLCC_CPU_SSE4_2},
    {"popcnt", MLCC_CPU_POPCNT},
    {"avx", MLCC_CPU_AVX},
    {"avx2", MLCC_CPU_AVX2},
    {"fma", MLCC_CPU_FMA},
    {"bmi", MLCC_CPU_BMI1},
    {"bmi2", MLCC_CPU_BMI2},
    {"f16c", MLCC_CPU_F16C},
    {"lzcnt", MLCC_CPU_ABM},
    {"movbe", MLCC_CPU_MOVBE},
    {"avx512f", MLCC_CPU_AVX512F},
    {"avx512cd", MLCC_CPU_AVX512CD},
    {"avx512bw", MLCC_CPU_AVX512BW},
    {"avx512dq", MLCC_CPU_AVX512DQ},
    {"avx512vl", MLCC_CPU_AVX512VL},
    {"avx512ifma", MLCC_CPU_AVX512IFMA},
    {"avx512vbmi", MLCC_CPU_AVX512VBMI},
    {"avx512vbmi2", MLCC_CPU_AVX512_VBMI2},
    {"avx512vnni", MLCC_CPU_AVX512_VNNI},
    {"avx512bitalg", MLCC_CPU_AVX512_BITALG},
    {"avx512vpopcntdq", MLCC_CPU_AVX512_VPOPCNTDQ},
    {"avx512bf16", MLCC_CPU_AVX512_BF16},
    {"avx512fp16", MLCC_CPU_AVX512_FP16},
    {"gfni", MLCC_CPU_GFNI},
    {"vaes", MLCC_CPU_VAES},
    {"vpclmulqdq", MLCC_CPU_VPCLMULQDQ},
    {"avxvnni", MLCC_CPU_AVX_VNNI},
    {"amx-tile", MLCC_CPU_AMX_TILE},
    {"amx-int8", MLCC_CPU_AMX_INT8},
    {"amx-bf16", MLCC_CPU_AMX_BF16},
};

} // namespace

uint64_t cpuFeaturesFromLLVM(llvm::ArrayRef<llvm::StringRef> names) {
  uint64_t bits = 0;
  for (llvm::StringRef name : names) {
    name.consume_front("+");
    for (const FeatureName &f : kFeatureNames)
      if (name == f.llvm)
        bits |= f.bit;
  }
  return bits;
}

llvm::Expected<CpuTarget> resolveCpu(llvm::StringRef name) {
  CpuTarget cpu;
  if (name.empty())
    name = kDefaultCpu;
  if (name == "native") {
    // The host's own feature list, not its model's: a VM may hide some of
    // what the model name implies (and LLVM may not know a new model).
    cpu.llvmCpu = llvm::sys::getHostCPUName().str();
    cpu.name = "native (" + cpu.llvmCpu + ")";
    llvm::SmallVector<llvm::StringRef> enabled;
    std::string features;
    const llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
    for (const auto &f : host) {
      features += (features.empty() ? "" : ",");
      features += (f.second ? "+" : "-") + f.first().str();
      if (f.second)
        enabled.push_back(f.first());
    }
    cpu.llvmFeatures = std::move(features);
    cpu.features = cpuFeaturesFromLLVM(enabled);
  } else {
    if (llvm::X86::parseArchX86(name, /*Only64Bit=*/true) == llvm::X86::CK_None)
      return llvm::createStringError(
          "--cpu '%s' is not a 64-bit x86 CPU that LLVM knows (try native, "
          "x86-64-v4, skylake-avx512, icelake-server, sapphirerapids, "
          "znver4 or znver5)",
          name.str().c_str());
    cpu.name = name.str();
    cpu.llvmCpu = name.str();
    // The CPU's list leaves out what its features imply (x86-64-v4 names
    // avx512bw, not avx512f): closed over the implications here.
    llvm::SmallVector<llvm::StringRef> listed;
    llvm::X86::getFeaturesForCPU(name, listed);
    llvm::StringMap<bool> implied;
    for (llvm::StringRef f : listed) {
      implied[f] = true;
      llvm::X86::updateImpliedFeatures(f, true, implied);
    }
    llvm::SmallVector<llvm::StringRef> features;
    for (const auto &f : implied)
      if (f.second)
        features.push_back(f.first());
    cpu.features = cpuFeaturesFromLLVM(features);
  }
  if (!cpu.has(kAVX512Base)) {
    std::string missing;
    for (const FeatureName &f : kFeatureNames)
      if ((kAVX512Base & f.bit) && !(cpu.features & f.bit))
        missing += std::string(missing.empty() ? "" : ", ") + f.llvm;
    return llvm::createStringError(
        "--cpu %s lacks %s, which the avx512 target needs", cpu.name.c_str(),
        missing.c_str());
  }
  return cpu;
}

} // namespace mlcc::lowering
