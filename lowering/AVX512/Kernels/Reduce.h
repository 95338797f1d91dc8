//===- Reduce.h - AVX-512 f32 reduction kernels -----------------*- C++ -*-===//
//
// Generates f32 reductions of a contiguous [outer, r, inner] view to
// [outer, inner]: the graph's reduce_{sum,mean,max,min,sum_square} once
// (and reduce_l1, reduce_l2) once their reduced axes have been merged into
// the one middle dim r. Every dim
// is known when the kernel is generated, so loop counts, tail masks and
// 1 / r are constants in the code.
//
// inner == 1 reduces each contiguous row of r elements into several zmm
// accumulators (masked tail), then across them and their lanes; inner > 1
// runs vectors along inner (masked tail) and loops over r.
//
// The kernel's signature is that of lowering/Common/KernelABI.h:
//   void kernel(const mlcc_reduce_args *args);
// with args->src the [outer, r, inner] input and args->dst the [outer,
// inner] output (and args->r, with ReduceSpec::runTimeR).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_REDUCE_H
#define MLCC_LOWERING_AVX512_KERNELS_REDUCE_H

#include "mlcc/Reference/Status.h"
#include "mlcc/Reference/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlcc::avx512 {

using ref::DType;
using ref::Status;

enum class ReduceKind : uint8_t {
  Sum,       // 0 over an empty set
  Mean,      // sum / r; nan over an empty set, as the reference
  Max,       // nan when any element is nan; -inf over an empty set
  Min,       // nan when any element is nan; +inf over an empty set
  SumSquare, // sum of x * x
  L1,        // sum of |x|
  L2,        // sqrt of the sum of x * x
};

/// The graph op's mnemonic ("reduce_sum", ...).
const char *reduceKindName(ReduceKind kind);

/// Largest [r, inner] slice a kernel takes, in bytes: offsets within one
/// slice are 32-bit displacements.
constexpr int64_t kMaxReduceSliceBytes = int64_t(1) << 30;

struct ReduceSpec {
  /// Names the kernel in error messages (the graph op it lowers).
  std::string name = "reduce";
  ReduceKind kind = ReduceKind::Sum;
  DType dtype = DType::F32;
  int64_t outer = 1, r = 1, inner = 1;
  /// Each slice reduces args->r of its r rows (at most r): a reduction
  /// over the positions of a variant of a range of lengths, which the run
  /// has that many of. Mean divides by that count.
  bool runTimeR = false;
};

/// Generates the kernel's machine code into `code` (plain bytes, position
/// independent: copy them anywhere executable). Fails, naming spec.name,
/// for a dtype other than f32, negative dims or a slice larger than
/// kMaxReduceSliceBytes.
Status generateReduce(const ReduceSpec &spec, std::vector<uint8_t> &code);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_REDUCE_H
