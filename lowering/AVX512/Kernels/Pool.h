//===- Pool.h - AVX-512 2-D pooling kernels ---------------------*- C++ -*-===//
//
// Generates f32 max and average pooling kernels over NCHW input, specialised
// to one shape, window, stride, padding and dilation: every window position
// and border mask is worked out here, so the code holds no bounds tests.
// Output rows and columns whose windows lie wholly inside the input share a
// loop; the border ones get their own straight-line code. Vectors run along
// the output width, 16 outputs per zmm. Global max reduces each plane; the
// global average takes 16 planes at once, one per lane, and adds their
// elements in order, as the reference does.
//
// The kernel's signature is that of lowering/Common/KernelABI.h:
//   void kernel(const mlcc_pool_args *args);
// with args->src the [N, C, H, W] input and args->dst the [N, C, OH, OW]
// output (OH = OW = 1 for the global pools).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_POOL_H
#define MLCC_LOWERING_AVX512_KERNELS_POOL_H

#include "mlcc/Reference/Status.h"
#include "mlcc/Reference/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlcc::avx512 {

using ref::DType;
using ref::Status;

enum class PoolKind : uint8_t {
  Max,       // max over the in-bounds taps; NaN wins, as the reference
  Average,   // sum of the in-bounds taps over the count countIncludePad says
  GlobalMax, // max over each whole H x W plane
  GlobalAverage,
};

const char *poolKindName(PoolKind kind);

struct PoolSpec {
  /// Names the kernel in error messages (the graph op it lowers).
  std::string name = "pool";
  PoolKind kind = PoolKind::Max;
  DType dtype = DType::F32;
  int64_t n = 1, c = 1, h = 1, w = 1;
  /// Window along (H, W); ignored by the global pools.
  int64_t kernel[2] = {1, 1};
  int64_t strides[2] = {1, 1};
  int64_t dilations[2] = {1, 1};
  /// ONNX order: top, left, bottom, right.
  int64_t pads[4] = {0, 0, 0, 0};
  /// Output size rounds up; a last window starting in the end padding is
  /// dropped (PyTorch, ONNX >= 19), as in the reference.
  bool ceilMode = false;
  /// Average: divide by the taps in the input and its pads, not just those
  /// in the input (never the taps past the end padding ceil_mode adds).
  bool countIncludePad = false;
};

/// Output height and width of `spec` (1 x 1 for the global pools); fails,
/// naming spec.name, for a window that does not fit or bad attributes.
Status poolOutputSize(const PoolSpec &spec, int64_t &oh, int64_t &ow);

/// Generates the kernel's machine code into `code` (plain bytes, position
/// independent: copy them anywhere executable). Fails, naming spec.name,
/// for a dtype other than f32, negative or oversized dims, or a bad window.
Status generatePool(const PoolSpec &spec, std::vector<uint8_t> &code);

/// The same pool over NCHW16c (PoolBlocked.cpp): src [N, ceil(C/16), H, W,
/// 16] and dst [N, ceil(C/16), OH, OW, 16], each output pixel one vector of
/// 16 channels (the padding lanes pooled too), so a conv's blocked output
/// is pooled without a conversion to NCHW and back.
Status generateBlockedPool(const PoolSpec &spec, std::vector<uint8_t> &code);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_POOL_H
