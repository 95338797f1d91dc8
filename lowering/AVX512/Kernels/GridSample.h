//===- GridSample.h - AVX-512 grid_sample kernels ---------------*- C++ -*-===//
//
// Generates f32 GridSample kernels (torch.nn.functional.grid_sample's
// semantics, as compiler/Reference/Kernels/Sampling.cpp): X [N, C, H, W]
// sampled at grid [N, Ho, Wo, 2] into Y [N, C, Ho, Wo], bilinear or
// nearest, with zeros or border padding and either align_corners. Sixteen
// output points at a time: their source coordinates, taps, weights and
// in-bounds masks are worked out once, in double as the reference does,
// then every channel gathers its taps with them.
//
// The kernel's signature is that of lowering/Common/KernelABI.h:
//   void kernel(const mlcc_grid_sample_args *args);
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_GRIDSAMPLE_H
#define MLCC_LOWERING_AVX512_KERNELS_GRIDSAMPLE_H

#include "mlcc/Reference/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlcc::avx512 {

using ref::Status;

enum class GridSampleMode : uint8_t { Bilinear, Nearest };
/// Where a tap outside X reads from: nothing (0) or the nearest edge (the
/// coordinate clipped first).
enum class GridSamplePadding : uint8_t { Zeros, Border };

struct GridSampleSpec {
  /// Names the kernel in error messages (the graph op it lowers).
  std::string name = "grid_sample";
  GridSampleMode mode = GridSampleMode::Bilinear;
  GridSamplePadding padding = GridSamplePadding::Zeros;
  bool alignCorners = false;
  int64_t n = 1, c = 1, h = 1, w = 1, ho = 1, wo = 1;
};

/// Generates the kernel's machine code into `code` (plain bytes, position
/// independent). Fails, naming spec.name, for negative dims or a plane of
/// 2^31 elements or more (tap indices are 32-bit).
Status generateGridSample(const GridSampleSpec &spec,
                          std::vector<uint8_t> &code);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_GRIDSAMPLE_H
