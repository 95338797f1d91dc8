//===- Resize.h - AVX-512 nearest, bilinear and bicubic resizes -*- C++ -*-===//
//
// Generates f32 Resize/Upsample kernels over the last two axes of a 4-D
// tensor (N and C unchanged), in nearest, linear or cubic mode with any
// coordinate transformation but tf_crop_and_resize and any scales. Every source index
// and weight depends only on its output row or column, so both are worked
// out here, with the reference's formulas (compiler/Reference/Kernels/
// Resize.cpp), and the code is generated from those tables.
//
// The input is NCHW, or NCHW16c (BlockedLayout.h: a conv's output); the
// output is always NCHW. The kernel's signature is that of
// lowering/Common/KernelABI.h:
//   void kernel(const mlcc_resize_args *args);
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_RESIZE_H
#define MLCC_LOWERING_AVX512_KERNELS_RESIZE_H

#include "mlcc/Reference/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlcc::avx512 {

using ref::Status;

enum class ResizeMode : uint8_t { Nearest, Linear, Cubic };

/// ONNX coordinate_transformation_mode, less tf_crop_and_resize.
enum class ResizeCoord : uint8_t {
  HalfPixel,
  PytorchHalfPixel,
  AlignCorners,
  Asymmetric,
  TfHalfPixelForNN,
};

/// ONNX nearest_mode.
enum class ResizeRounding : uint8_t { PreferFloor, PreferCeil, Floor, Ceil };

/// How output indices map to input taps, as the reference resolves it.
struct ResizeCoords {
  ResizeMode mode = ResizeMode::Nearest;
  ResizeCoord coord = ResizeCoord::HalfPixel;
  ResizeRounding rounding = ResizeRounding::PreferFloor;
  bool excludeOutside = false;
  /// cubic_coeff_a: the cubic kernel's value of its derivative at 1.
  double cubicA = -0.75;
  /// The output lengths came from `sizes`: the formulas' "resized length"
  /// is then the output length, not scale * input length.
  bool fromSizes = false;
};

/// Input taps of an output index along one axis, at most (cubic).
constexpr int kMaxResizeTaps = 4;

/// The input taps of one output index along one axis: index[0] alone
/// (weight 1) for nearest, index[k] with weight[k] for k < 2 (linear) or
/// 4 (cubic); a weight of 0 is no tap. Indices are clamped into the input.
struct ResizeTap {
  int64_t index[kMaxResizeTaps] = {0, 0, 0, 0};
  double weight[kMaxResizeTaps] = {1.0, 0.0, 0.0, 0.0};
};

/// The taps of every output index of an axis of `inLen` resized to
/// `outLen` with `scale`, computed as the reference does (in double).
std::vector<ResizeTap> resizeAxisTaps(const ResizeCoords &coords, double scale,
                                      int64_t inLen, int64_t outLen);

/// Whether `taps` copy the axis unchanged (output index i reads input i).
bool isIdentityAxis(const std::vector<ResizeTap> &taps, int64_t inLen,
                    int64_t outLen);

struct ResizeSpec {
  /// Names the kernel in error messages (the graph op it lowers).
  std::string name = "resize";
  ResizeCoords coords;
  /// Scales of H and W (the reference's scales[2], scales[3]).
  double scales[2] = {1.0, 1.0};
  int64_t n = 1, c = 1, h = 1, w = 1, oh = 1, ow = 1;
  /// src is [N, ceil(C/16), H, W, 16] (NCHW16c) rather than NCHW.
  bool blockedInput = false;
};

/// Whether the generator takes `spec`: fails, naming spec.name, for
/// negative or oversized dims (NCHW16c rows too long for its stack
/// scratch of two transposed rows, four for cubic, more than 2^16 output columns), or an input axis of length 0
/// resized to a nonzero length.
Status validateResize(const ResizeSpec &spec);

/// Generates the kernel's machine code into `code` (plain bytes, position
/// independent). Fails as validateResize does.
Status generateResize(const ResizeSpec &spec, std::vector<uint8_t> &code);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_RESIZE_H
