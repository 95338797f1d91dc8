//===- Quantize.h - AVX-512 QuantizeLinear and bf16 kernels -----*- C++ -*-===//
//
// q[i] = saturate(round(x[i] / scale) + zero) from f32 to u8 or s8, per
// tensor: the reference's arithmetic (an f32 division, round to nearest
// even), 16 lanes at a time. The layout does not matter, so the same
// kernel quantises a plain tensor or a channel-blocked one (NCHW16c in,
// NCHW16c u8/s8 out, the int8 convs' input).
//
// DequantizeLinear the other way, y[i] = (q[i] - zero[c]) * scale[c] from
// u8, s8 or int32 to f32, per tensor or per slice of an axis (c the index
// along it), the scales and zero points read when the kernel runs.
//
// The other narrowing the low-precision GEMMs need: f32 to bf16
// (vcvtneps2bf16, round to nearest even), for A of a bf16 GEMM.
//
// Signature: void kernel(const mlcc_eltwise_args *args), reading src[0],
// dst (KernelABI.h) and, for run-time quantisation parameters, src[1] and
// src[2]; the count is baked in.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_QUANTIZE_H
#define MLCC_LOWERING_AVX512_KERNELS_QUANTIZE_H

#include "mlcc/Reference/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlcc::avx512 {

struct QuantizeSpec {
  std::string name = "quantize";
  int64_t n = 0;
  float scale = 1.0f;
  /// Of the output's type: 0..255 for u8, -128..127 for s8.
  int32_t zero = 0;
  bool signedOutput = false;
  /// The scale (f32) and zero point (of the output's type) are read when
  /// the kernel runs, from src[1] and src[2] (src[2] null: zero point 0),
  /// for a QuantizeLinear whose are graph inputs; scale and zero are then
  /// not read.
  bool runtimeParameters = false;
  /// Per slice of an axis (runtimeParameters only): `outer` x `channels`
  /// slices of n elements each, slice c reading scale[c] and zero[c].
  int64_t outer = 1, channels = 1;
};

/// The element types DequantizeLinear reads.
enum class QuantizedType { U8, S8, I32 };

/// The tensor as [outer, channels, inner] (channels 1 per tensor): the
/// kernel reads scale[c] (f32) from src[1] and, with hasZero, zero[c] (of
/// the input's type) from src[2], for c < channels.
struct DequantizeSpec {
  std::string name = "dequantize";
  int64_t outer = 1, channels = 1, inner = 0;
  QuantizedType type = QuantizedType::U8;
  bool hasZero = true;
};

/// Fails, naming spec.name, for a negative count, a count whose bytes do
/// not fit in 31 bits, a scale that is 0 or not finite, or a zero point
/// outside the output's range.
ref::Status generateQuantize(const QuantizeSpec &spec,
                             std::vector<uint8_t> &code);

/// Fails, naming spec.name, for negative sizes or an f32 result whose
/// bytes do not fit in 31 bits.
ref::Status generateDequantize(const DequantizeSpec &spec,
                               std::vector<uint8_t> &code);

/// dst[i] = bf16(src[i]) for i < n; needs AVX512_BF16 to run.
ref::Status generateToBf16(const std::string &name, int64_t n,
                           std::vector<uint8_t> &code);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_QUANTIZE_H
