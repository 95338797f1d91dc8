//===- ChannelAffine.h - Per-channel scale and shift, NCHW16c ---*- C++ -*-===//
//
// y = act(x * scale[c] + shift[c]) over a blocked activation: an inference
// batch norm that no conv could absorb (DenseNet's, after a concat), with
// the activation after it fused. Each plane (an image's 16 channels) holds
// its scale and shift in two registers; the pixels stream through one fma
// and the epilogue, eight a step.
//
// Signature: void kernel(const mlcc_channel_affine_args *args)
// (KernelABI.h).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_CHANNELAFFINE_H
#define MLCC_LOWERING_AVX512_KERNELS_CHANNELAFFINE_H

#include "Eltwise.h"

#include "mlcc/Reference/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlcc::avx512 {

struct ChannelAffineSpec {
  std::string name = "channel_affine";
  /// Images, channels (ceil(c / 16) blocks a image) and H * W.
  int64_t n = 1, c = 1, pixels = 1;
  /// Unary ops applied after the affine map (a fused activation).
  std::vector<EltwiseOp> epilogue;
};

ref::Status generateChannelAffine(const ChannelAffineSpec &spec,
                                  std::vector<uint8_t> &code);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_CHANNELAFFINE_H
