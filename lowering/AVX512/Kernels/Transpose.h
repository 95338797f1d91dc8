//===- Transpose.h - AVX-512 transposes of 4-byte elements ------*- C++ -*-===//
//
// Generates kernels for the transposes that move the input's last dim:
// after dims that stay together are merged, such a transpose is a batch of
// 2-D transposes, out[b][a] = in[a][b] for a [rows, cols] plane of the
// input (cols its last dim, rows the dim that becomes the output's last),
// over up to three outer dims. The planes go in 16 x 16 tiles: 16 rows
// loaded, transposed in registers, 16 rows stored. (A transpose that keeps
// the last dim copies whole rows: the portable lowering's loop does that at
// memory speed.)
//
// The kernel's signature is that of lowering/Common/KernelABI.h:
//   void kernel(const mlcc_transpose_args *args);
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_TRANSPOSE_H
#define MLCC_LOWERING_AVX512_KERNELS_TRANSPOSE_H

#include "mlcc/Reference/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlcc::avx512 {

using ref::Status;

/// Outer dims a kernel loops over, at most.
constexpr int kMaxTransposeOuterDims = 3;

/// Sizes and strides in elements (of 4 bytes).
struct TransposeSpec {
  /// Names the kernel in error messages (the graph op it lowers).
  std::string name = "transpose";
  /// The plane: in[a * srcRowStride + b] goes to out[b * dstRowStride + a],
  /// a < rows, b < cols.
  int64_t rows = 1, cols = 1, srcRowStride = 1, dstRowStride = 1;
  /// The dims around the planes, outermost first.
  std::vector<int64_t> outerSizes, outerSrcStrides, outerDstStrides;
};

/// The transpose of `shape` by `perm` (output dim i is input dim perm[i]),
/// when it moves the last dim and its merged dims fit the kernel; false
/// otherwise. `spec.name` is left alone.
bool planTranspose(const std::vector<int64_t> &shape,
                   const std::vector<int64_t> &perm, TransposeSpec &spec);

/// Whether the generator takes `spec`: fails, naming spec.name, for
/// negative sizes, more than kMaxTransposeOuterDims outer dims, or strides
/// of 2 GiB or more.
Status validateTranspose(const TransposeSpec &spec);

/// Generates the kernel's machine code into `code`. Fails as
/// validateTranspose does.
Status generateTranspose(const TransposeSpec &spec, std::vector<uint8_t> &code);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_TRANSPOSE_H
