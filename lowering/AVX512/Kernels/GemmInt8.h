//===- GemmInt8.h - AVX-512 VNNI int8 (and BF16) GEMM kernels ---*- C++ -*-===//
//
// Generates kernels for the integer part of a quantised matmul:
//
//   acc[m][n] = sum_k (A[m][k] - za) * (B[k][n] - zb[n])      (exact, int32)
//
// with A u8 or s8 at run time, B a constant s8 or u8 weight packed now, the
// zero points constants (and an int32 bias per column added to acc, e.g.
// QLinearConv's), then one of three epilogues: store acc as int32
// (MatMulInteger); c = ops(acc * scale[n] + bias[n] + residual) as f32 (a
// dequantised output, then an activation); or q = saturate(round(acc *
// scale[n] + bias[n]) + zero) as u8 or s8 (QLinearMatMul: scale = sa *
// sb[n] / sy). Rounding is to nearest even, ONNX's.
//
// The products go through vpdpbusd (AVX512-VNNI), which multiplies u8 by
// s8. A signed A is moved to u8 by flipping its sign bit (a + 128) and a u8
// B to s8 by subtracting 128 when packing, each with its zero point moved
// the same way; then
//
//   acc = sum a'b' - za' * colsum(b')[n] + K * za' * zb'[n] - zb'[n] *
//   rowsum(a')[m]
//
// The first two correction terms are constants per column, computed at
// pack time (the "compensation"); the row sums are computed by the kernel
// only when some zb'[n] is not 0 (a weight zero point other than 0 for s8,
// 128 for u8), with one more vpdpbusd per row against a vector of ones.
//
// Packed B layout: panels of 16 columns; panel p holds its K rows in groups
// of 4 (ceil(K / 4) groups), each group 16 dwords of 4 consecutive k:
//
//   packed[((p * K4 + g) * 16 + j) * 4 + t] = B'[4g + t][16p + j]
//
// (0 past K or N). Column data, 256 bytes per panel: comp int32 x 16, scale
// f32 x 16, bias f32 x 16, zb' int32 x 16 (0 past N).
//
// The same kernel multiplies bf16 (Int8GemmSpec::bf16, AVX512_BF16): A
// bf16 at run time, B packed by packBf16B in pairs of k (2 per dword lane,
// the same panel layout with groups of 2), vdpbf16ps into f32
// accumulators, then the Float epilogue (scale, bias, residual, ops).
//
// With AMX (Int8GemmSpec::amx, GemmAmx.cpp) the products of each 64 bytes
// of k run on tiles instead (tdpbusd, tdpbssd for an s8 A, tdpbf16ps):
// the packed panels are already AMX's B tiles (16 groups of k by 16
// columns, 64 bytes a row); the K tail past the last whole 64 bytes, the
// epilogue and the stores are the VNNI kernel's.
//
// Signature: void kernel(const mlcc_int8_gemm_args *args) (KernelABI.h).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_GEMMINT8_H
#define MLCC_LOWERING_AVX512_KERNELS_GEMMINT8_H

#include "Eltwise.h"

#include "mlcc/Reference/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlcc::avx512 {

using ref::Status;

/// Columns of one packed-B panel, and bytes of column data per panel.
constexpr int64_t kInt8Panel = 16;
constexpr int64_t kInt8ColumnDataBytes = 256;

enum class Int8GemmOutput { Int32, Float, U8, S8 };

/// Bytes of one element of C.
inline int outputBytes(Int8GemmOutput o) {
  return o == Int8GemmOutput::U8 || o == Int8GemmOutput::S8 ? 1 : 4;
}

struct Int8GemmSpec {
  std::string name = "gemm_int8";
  /// bf16 x bf16 with f32 accumulators (vdpbf16ps) instead of u8 x s8.
  bool bf16 = false;
  /// AMX tiles (AMX-INT8, or AMX-BF16 with bf16) for the bulk of K. Not
  /// with row sums or a blocked A; an s8 A needs its compensation moved
  /// (amxCompensation).
  bool amx = false;
  int64_t m = 0, n = 0, k = 0;
  /// The rows are args->m, at most m (a variant of a range of lengths
  /// computes its run's positions only). Not with amx.
  bool runTimeM = false;
  /// Elements between rows of A and of C; 0 means dense (k, n).
  int64_t lda = 0, ldc = 0;
  /// Bytes between the 16-k blocks of an A row, for A read in place from a
  /// channel-blocked image (NCHW16c: a pixel's 16 channels are contiguous,
  /// the next 16 a plane further; lda is then 16); 0: A rows are dense. K
  /// must be a multiple of 16.
  int64_t aBlockStride = 0;
  /// Elements between the 16-column blocks of C and of the residual, for C
  /// written straight into NCHW16c (ldc 16, a plane per block); 0: rows of
  /// C are contiguous. The lanes past N of the last block are written as 0.
  int64_t cBlockStride = 0;
  bool signedA = false;
  /// Some zb' is not 0: the kernel subtracts zb'[n] * rowsum(a')[m].
  bool rowSums = false;
  Int8GemmOutput output = Int8GemmOutput::Int32;
  /// U8/S8 output: added after rounding, before saturating (ONNX's order:
  /// saturate(round(x) + zero_point)).
  int32_t outputZero = 0;
  /// The output zero point is args->output_zero, known at run time only
  /// (outputZero is then not read).
  bool outputZeroArgument = false;
  /// Float output: add args->residual (laid out like C) after the bias,
  /// then the elementwise ops (constant operands only): graph.fc's order.
  bool residual = false;
  std::vector<EltwiseOp> epilogue;
};

/// Generates the kernel into `code`. Fails, naming spec.name, for negative
/// sizes, leading dimensions smaller than a row, sizes whose byte offsets
/// do not fit in 31 bits, and epilogue ops on a non-float output.
Status generateInt8Gemm(const Int8GemmSpec &spec, std::vector<uint8_t> &code);

/// B (K x N, row major, s8 or u8 as `bUnsigned` says; `zb` one zero point
/// per column or one for all) with what the kernel adds, ready for it.
struct PackedInt8B {
  std::vector<int8_t> panels;
  std::vector<uint8_t> columnData;
  /// Some column's zb' is not 0 (Int8GemmSpec::rowSums).
  bool rowSums = false;
};

/// Packs B and computes the column data for A's zero point `za` (of A's
/// own type: 0..255 for u8, -128..127 for s8), per-column `scale` and
/// `bias` (N values each, or empty: 1 and 0) and `intBias` (N int32 values
/// added to the accumulators, or empty).
PackedInt8B packInt8B(const int32_t *b, int64_t k, int64_t n, bool bUnsigned,
                      const std::vector<int32_t> &zb, int32_t za, bool signedA,
                      const std::vector<float> &scale,
                      const std::vector<float> &bias,
                      const std::vector<int32_t> &intBias = {});

/// Moves the compensation of `packed` (packInt8B with signedA) to an AMX
/// kernel, which multiplies the s8 A of the whole 64-byte steps of K as it
/// is (tdpbssd) and the K tail flipped to u8 as the VNNI kernel does.
void amxCompensation(PackedInt8B &packed, int64_t k, int64_t n);

/// f32 -> bf16, rounded to nearest even (as vcvtneps2bf16).
uint16_t toBf16(float v);

/// B (K x N f32, row major) as bf16 pairs for a bf16 kernel; `scale` and
/// `bias` as packInt8B's (N values each, or empty).
PackedInt8B packBf16B(const float *b, int64_t k, int64_t n,
                      const std::vector<float> &scale,
                      const std::vector<float> &bias);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_GEMMINT8_H
