//===- CpuTarget.h - The x86 CPU an object is compiled for ------*- C++ -*-===//
//
// `mlcc compile --cpu NAME` picks the instructions the host code and the
// kernels may use. The same choice goes three ways: LLVM's -mcpu and
// features for the host code, the kernel selection (VNNI, AVX512-BF16, AMX
// kernels only where the CPU has them), and the object's descriptor, whose
// cpu_features the runtime checks against CPUID at create time
// (runtime/include/mlcc/cpu.h).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_CPUTARGET_H
#define MLCC_LOWERING_COMMON_CPUTARGET_H

#include "mlcc/cpu.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlcc::lowering {

/// What `--cpu` defaults to: AVX-512 F/CD/BW/DQ/VL, which every AVX-512
/// CPU has.
constexpr const char *kDefaultCpu = "x86-64-v4";

struct CpuTarget {
  /// As given ("znver5"; "native" becomes "native (znver5)").
  std::string name;
  /// LLVM's CPU name and, for native, the host's exact feature string.
  std::string llvmCpu;
  std::string llvmFeatures;
  /// MLCC_CPU_* bits: what the object may use and create checks.
  uint64_t features = 0;

  bool has(uint64_t wanted) const { return (features & wanted) == wanted; }
};

/// The AVX-512 features every avx512 object needs, whatever its --cpu.
constexpr uint64_t kAVX512Base = MLCC_CPU_AVX512F | MLCC_CPU_AVX512CD |
                                 MLCC_CPU_AVX512BW | MLCC_CPU_AVX512DQ |
                                 MLCC_CPU_AVX512VL;

/// The CPU `name` stands for: "native" (this machine), or any 64-bit x86
/// CPU LLVM knows (x86-64-v4, skylake-avx512, icelake-server,
/// sapphirerapids, znver4, znver5, ...). An unknown name, or a CPU
/// without kAVX512Base, is an error that says which.
llvm::Expected<CpuTarget> resolveCpu(llvm::StringRef name);

/// The MLCC_CPU_* bits among LLVM feature names ("avx512vnni", with or
/// without a leading '+').
uint64_t cpuFeaturesFromLLVM(llvm::ArrayRef<llvm::StringRef> names);

} // namespace mlcc::lowering

#endif // MLCC_LOWERING_COMMON_CPUTARGET_H
