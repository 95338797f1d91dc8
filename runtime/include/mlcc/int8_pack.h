//===- int8_pack.h - B of an int8 GEMM packed at run time ---------*- C -*-===//
//
// The avx512 int8 GEMM kernels (lowering/AVX512/Kernels/GemmInt8.h) read B
// packed in panels of 16 columns, beside 256 bytes of column data per panel
// (the zero-point compensation, scale, bias and B's shifted zero point).
// A constant weight is packed when the model is compiled; a B the model
// receives at run time (MatMulInteger, QLinearMatMul, ConvInteger or
// QLinearConv whose B, zero points or scales are graph inputs) is packed by
// the model's code with this function before each product. The compiler
// packs constants with it too, so both agree to the byte.
//
// Compiled models call it; applications have no reason to.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_INT8_PACK_H
#define MLCC_INT8_PACK_H

#include "mlcc/api.h"

#include <stdint.h>

MLCC_EXTERN_C_BEGIN

/// Columns per panel, bytes of packed B per panel and group of 4 k, and
/// bytes of column data per panel.
#define MLCC_INT8_PANEL 16
#define MLCC_INT8_PANEL_GROUP_BYTES 64
#define MLCC_INT8_COLUMN_DATA_BYTES 256

/// Bytes of packed B, and of its column data, for K x N.
static inline int64_t mlcc_int8_packed_bytes(int64_t k, int64_t n) {
  return (n + MLCC_INT8_PANEL - 1) / MLCC_INT8_PANEL * ((k + 3) / 4) *
         MLCC_INT8_PANEL_GROUP_BYTES;
}
static inline int64_t mlcc_int8_column_data_bytes(int64_t n) {
  return (n + MLCC_INT8_PANEL - 1) / MLCC_INT8_PANEL *
         MLCC_INT8_COLUMN_DATA_BYTES;
}

/// mlcc_int8_pack_args::flags.
#define MLCC_INT8_PACK_B_UNSIGNED 1 ///< B and its zero point are u8, else s8
#define MLCC_INT8_PACK_A_SIGNED 2   ///< A and its zero point are s8, else u8

/// What mlcc_int8_pack_b reads and writes. Every field is 8 bytes: compiled
/// code passes them as an array of 64-bit values. Optional pointers may be
/// NULL, which reads as the value in brackets.
typedef struct mlcc_int8_pack_args {
  /// B[kk][col] = b[kk * stride_k + col * stride_n], one byte each.
  const void *b;
  int64_t k, n, stride_k, stride_n;
  int64_t flags;
  /// A's zero point, one value of A's type [0].
  const void *a_zero;
  /// B's zero points, of B's type: 1 or N values [0].
  const void *b_zero;
  int64_t b_zero_count;
  /// Column scale = a_scale * b_scale[col] / y_scale (in that order, in
  /// f32): a_scale and y_scale one value each [1], b_scale 1 or N [1].
  const float *a_scale;
  const float *b_scale;
  int64_t b_scale_count;
  const float *y_scale;
  /// Per column: f32 added after the scale [0], int32 added to the
  /// accumulators [0].
  const float *bias;
  const int32_t *int_bias;
  /// Out: ceil(N / 16) * ceil(K / 4) * 64 bytes of panels, ceil(N / 16) *
  /// 256 bytes of column data. Both are written whole (zero padded).
  int8_t *packed;
  uint8_t *column_data;
} mlcc_int8_pack_args;

/// Packs B and computes its column data for the kernels' u8 x s8 products:
/// a u8 B is moved to s8 (-128) and an s8 A to u8 (+128), each with its zero
/// point, and what that moves is folded into the compensation. Cannot fail:
/// the compiler checked the sizes.
MLCC_API void mlcc_int8_pack_b(const mlcc_int8_pack_args *args);

MLCC_EXTERN_C_END

#endif // MLCC_INT8_PACK_H
