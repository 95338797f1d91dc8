//===- Int8Pack.c - B of an int8 GEMM packed at run time ------------------===//
//
// The layout is GemmInt8.h's: panel p holds its K rows in groups of 4, each
// group 16 dwords of 4 consecutive k,
//
//   packed[((p * K4 + g) * 16 + j) * 4 + t] = B'[4g + t][16p + j],
//
// and the column data of a panel is comp, scale, bias and zb', 16 x 4
// bytes each. With A' = A + 128 (s8 A) and B' = B - 128 (u8 B):
//
//   comp = -za' * colsum(B') + K * za' * zb' + int_bias.
//
//===----------------------------------------------------------------------===//

#include "mlcc/int8_pack.h"

#include <string.h>

/// Element i of an 8-bit buffer of the given signedness, or 0 without one.
static int32_t int8At(const void *p, int64_t i, int is_signed) {
  if (!p)
    return 0;
  return is_signed ? (int32_t)((const int8_t *)p)[i]
                   : (int32_t)((const uint8_t *)p)[i];
}

void mlcc_int8_pack_b(const mlcc_int8_pack_args *args) {
  const int64_t k = args->k, n = args->n;
  const int64_t groups = (k + 3) / 4;
  const int b_signed = !(args->flags & MLCC_INT8_PACK_B_UNSIGNED);
  const int a_signed = (args->flags & MLCC_INT8_PACK_A_SIGNED) != 0;
  const int32_t shift_b = b_signed ? 0 : 128;
  const int64_t za = int8At(args->a_zero, 0, a_signed) + (a_signed ? 128 : 0);
  const float sa = args->a_scale ? *args->a_scale : 1.0f;
  const float sy = args->y_scale ? *args->y_scale : 1.0f;
  const unsigned char *b = (const unsigned char *)args->b;
  memset(args->packed, 0, (size_t)mlcc_int8_packed_bytes(k, n));
  memset(args->column_data, 0, (size_t)mlcc_int8_column_data_bytes(n));
  for (int64_t col = 0; col < n; ++col) {
    const int64_t p = col / MLCC_INT8_PANEL, j = col % MLCC_INT8_PANEL;
    int8_t *panel = args->packed + p * groups * MLCC_INT8_PANEL_GROUP_BYTES;
    int64_t col_sum = 0;
    for (int64_t kk = 0; kk < k; ++kk) {
      int32_t v =
          int8At(b, kk * args->stride_k + col * args->stride_n, b_signed) -
          shift_b;
      col_sum += v;
      panel[((kk / 4) * MLCC_INT8_PANEL + j) * 4 + kk % 4] = (int8_t)v;
    }
    const int64_t zb =
        int8At(args->b_zero, args->b_zero_count == 1 ? 0 : col, b_signed) -
        shift_b;
    const int32_t comp = (int32_t)(-za * col_sum + k * za * zb +
                                   (args->int_bias ? args->int_bias[col] : 0));
    const float sb = args->b_scale
                         ? args->b_scale[args->b_scale_count == 1 ? 0 : col]
                         : 1.0f;
    const float scale = sa * sb / sy;
    const float bias = args->bias ? args->bias[col] : 0.0f;
    const int32_t zb32 = (int32_t)zb;
    uint8_t *data = args->column_data + p * MLCC_INT8_COLUMN_DATA_BYTES;
    memcpy(data + 0 * 64 + j * 4, &comp, 4);
    memcpy(data + 1 * 64 + j * 4, &scale, 4);
    memcpy(data + 2 * 64 + j * 4, &bias, 4);
    memcpy(data + 3 * 64 + j * 4, &zb32, 4);
  }
}
