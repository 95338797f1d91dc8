//===- Gather.h - AVX-512 row gather kernels --------------------*- C++ -*-===//
//
// Generates kernels that copy rows selected by index tuples read at run
// time: graph.gather on any axis (outer dims x indices x an inner block of
// contiguous bytes, the row) and graph.gather_nd (index tuples address the
// leading k dims after the batch dims; the row is the block of the
// remaining dims). Elements move as bytes, so any element type works.
//
// For each outer block o (the data dims before the gathered ones) and each
// index tuple t of that block:
//   row = sum_j clamp(idx[t, j]) * strides[j]
//   dst[o, t, :] = data[o, row, :]      (rowBytes bytes)
// An index counts from the end when negative (ONNX), and is then clamped
// into [0, dims[j]): the host function has already made the run fail for
// an out-of-range index (lowering/Common/HostIndexChecks.cpp), and the
// kernel must still never read outside data.
//
// The kernel's signature is that of lowering/Common/KernelABI.h:
//   void kernel(const mlcc_gather_args *args);
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_GATHER_H
#define MLCC_LOWERING_AVX512_KERNELS_GATHER_H

#include "mlcc/Reference/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlcc::avx512 {

using ref::Status;

/// Largest data tensor a kernel takes, in bytes: offsets stay far from
/// overflowing 64 bits.
constexpr int64_t kMaxGatherDataBytes = int64_t(1) << 46;

struct GatherSpec {
  /// Names the kernel in error messages (the graph op it lowers).
  std::string name = "gather";
  /// Bytes of one index element: 4 (int32) or 8 (int64).
  int indexBytes = 8;
  /// Outer blocks of data, and the bytes from one to the next.
  int64_t outer = 1;
  int64_t outerBytes = 0;
  /// Index tuples per outer block.
  int64_t tuples = 0;
  /// Whether every outer block has its own tuples (gather_nd's batch dims:
  /// the indices advance from block to block) or all share the same ones
  /// (gather: the indices are read again for each block).
  bool tuplesPerOuter = false;
  /// Per component of a tuple: the dim it indexes and that dim's stride in
  /// rows. One component for gather.
  std::vector<int64_t> dims = {1};
  std::vector<int64_t> strides = {1};
  /// Bytes of one row.
  int64_t rowBytes = 0;
};

/// Generates the kernel's machine code into `code` (plain bytes, position
/// independent). Fails, naming spec.name, for an index size other than 4
/// or 8, no tuple components, a dim below 1, negative counts, rows that do
/// not fit their outer block, or data over kMaxGatherDataBytes.
Status generateGather(const GatherSpec &spec, std::vector<uint8_t> &code);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_GATHER_H
