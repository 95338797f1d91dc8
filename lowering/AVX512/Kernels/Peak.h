//===- Peak.h - Kernels that measure the machine ----------------*- C++ -*-===//
//
// `mlcc bench --peak` (and --per-op's roofline) times these to learn what
// this CPU can do at best: the arithmetic kernels issue 24 independent
// zmm instructions of one kind per iteration (more than latency x ports on
// any AVX-512 core, so only throughput bounds them); the memory kernels
// stream a buffer with 64-byte loads (and stores), four per iteration.
//
// Signature: void kernel(const mlcc_peak_args *args).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_PEAK_H
#define MLCC_LOWERING_AVX512_KERNELS_PEAK_H

#include "mlcc/Reference/Status.h"

#include <cstdint>
#include <vector>

namespace mlcc::avx512 {

using ref::Status;

enum class PeakKernel {
  FmaF32,  ///< vfmadd231ps: 16 multiply-adds
  DotInt8, ///< vpdpbusd (AVX512-VNNI): 64 u8 x s8 multiply-adds
  DotBf16, ///< vdpbf16ps (AVX512-BF16): 32 bf16 multiply-adds
  Read,    ///< reads `bytes` of src
  Copy,    ///< copies `bytes` of src to dst
};

struct mlcc_peak_args {
  const void *src;
  void *dst;
  /// Bytes per pass of the memory kernels: a multiple of kPeakStreamBytes.
  int64_t bytes;
  /// Passes (memory) or loop iterations (arithmetic), at least 1.
  int64_t iterations;
};
using mlcc_peak_kernel_fn = void (*)(const mlcc_peak_args *);

/// Bytes a memory kernel moves per inner iteration.
constexpr int64_t kPeakStreamBytes = 256;

/// Arithmetic operations (2 per multiply-add) of one iteration of an
/// arithmetic kernel; 0 for the memory kernels.
double peakOpsPerIteration(PeakKernel kind);

Status generatePeakKernel(PeakKernel kind, std::vector<uint8_t> &code);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_PEAK_H
