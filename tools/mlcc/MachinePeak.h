//===- MachinePeak.h - What this CPU can do at best -------------*- C++ -*-===//
//
// `mlcc bench --peak` prints it; `mlcc bench --per-op` measures it first
// and sets each op's time against its roofline bound: the op's arithmetic
// at the peak of the precision its kernels compute in, or its bytes at the
// copy bandwidth measured for a working set of its size (so an op whose
// tensors stay in cache is held to the cache's bandwidth), whichever takes
// longer. Measured with the bench's thread count, each thread running the
// kernels of Kernels/Peak.h on its own registers and slice of a buffer.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_TOOLS_MLCC_MACHINEPEAK_H
#define MLCC_TOOLS_MLCC_MACHINEPEAK_H

#include "OpWork.h"

#include "mlcc/threadpool.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlcc::cli {

struct MachinePeak {
  std::string cpuName;
  int threads = 1;
  /// Billions of operations (2 per multiply-add) per second; 0 where this
  /// CPU lacks the instructions (AVX512-VNNI, AVX512-BF16).
  double f32 = 0, int8 = 0, bf16 = 0;
  struct Bandwidth {
    int64_t workingSet; ///< bytes read and written per pass, all threads
    double gbPerSecond; ///< of those bytes
  };
  /// Ascending working sets, from what fits in L1 to main memory.
  std::vector<Bandwidth> bandwidth;

  double opsPeak(lowering::WorkPrecision precision) const;
  /// The bandwidth of the smallest working set that holds `bytes` (the
  /// largest's past it).
  double bandwidthFor(double bytes) const;
  /// The least time `work` can take here, in seconds; 0 when unknown.
  double boundSeconds(const lowering::OpWork &work) const;
};

/// Measures on the pool's threads (no pool: this thread). False, with a
/// message in `error`, when this CPU has no AVX-512F or memory runs out.
bool measureMachinePeak(mlcc_threadpool *pool, MachinePeak &out,
                        std::string &error);

void printMachinePeak(const MachinePeak &peak);

} // namespace mlcc::cli

#endif // MLCC_TOOLS_MLCC_MACHINEPEAK_H
