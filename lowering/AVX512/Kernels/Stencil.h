//===- Stencil.h - AVX-512 graph.stencil kernels ----------------*- C++ -*-===//
//
// Generates f32 weighted windowed reductions (graph.stencil, see
// dialects/Graph/IR/GraphCoreOps.td and its reference kernel
// compiler/Reference/Kernels/Stencil.cpp) specialised to one input shape,
// one set of constant weights, reduction, padding, offsets, strides and
// dilations. The window spans the last one, two or three dims; the dims
// before them are batch (their weights dim must be 1, offset 0, stride 1).
// Vectors run along the innermost dim, 16 outputs per zmm; every border
// position is resolved (padding mode) when the kernel is generated.
//
// Optionally (for graph.lrn, lowering/AVX512/SelectLrn.cpp) a sum squares
// each input value before weighting it, and its epilogue turns the window
// sum s of output position p into x[p] * (bias + s)^-beta: the whole of
// ONNX LRN in one kernel when the window runs over the channels.
//
// The kernel's signature is that of lowering/Common/KernelABI.h:
//   void kernel(const mlcc_stencil_args *args);
// with args->src the f32 input and args->dst the output: f32 for sum, min
// and max, i64 (the flat index inside the window) for argmin and argmax.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_STENCIL_H
#define MLCC_LOWERING_AVX512_KERNELS_STENCIL_H

#include "mlcc/Reference/Status.h"
#include "mlcc/Reference/StencilModes.h"

#include <cstdint>

#include <string>
#include <vector>

namespace mlcc::avx512 {

using ref::Status;

using ref::StencilPadding;
using ref::StencilReduction;

/// What a sum does to each input value (padding included) before weighting
/// it.
enum class StencilPrologue : uint8_t { None, Square };
/// What it does to each window sum s before storing it. Lrn: out[p] =
/// x[p] * (lrnBias + s)^-lrnBeta, x[p] the input at the output's position.
enum class StencilEpilogue : uint8_t { None, Lrn };

struct StencilSpec {
  /// Names the kernel in error messages (the graph op it lowers).
  std::string name = "stencil";
  StencilReduction reduction = StencilReduction::Sum;
  StencilPadding padding = StencilPadding::Zero;
  /// What zero padding reads outside the input.
  float paddingValue = 0.0f;
  /// The input's shape and the weights' (same rank), weights row-major.
  std::vector<int64_t> shape, kernel;
  std::vector<float> weights;
  /// Per dim of the input; empty means the op's defaults (centred window,
  /// strides and dilations 1).
  std::vector<int64_t> offsets, strides, dilations;
  /// Sum only. The lrn epilogue needs the square prologue, weights >= 0,
  /// lrnBias > 0 (so that bias + s > 0) and strides of 1.
  StencilPrologue prologue = StencilPrologue::None;
  StencilEpilogue epilogue = StencilEpilogue::None;
  float lrnBias = 1.0f, lrnBeta = 0.75f;
};

/// The output shape of `spec` (the input's divided by the strides,
/// rounded up), or a failure naming spec.name for what the generator does
/// not take: a window over more than the last three dims, a batch dim with
/// a window, offset or stride, a stride above 2 along the innermost dim,
/// sizes past 32-bit displacements, a prologue or epilogue outside the
/// conditions above.
Status stencilOutputShape(const StencilSpec &spec, std::vector<int64_t> &out);

/// ONNX LRN (graph.lrn) of an f32 input of `shape` (N x C x D1 ...) as a
/// stencil: the input viewed as N x C x S (S the product of the spatial
/// dims; N x C when S is 1), a window of `size` taps along C from
/// c - floor((size - 1) / 2), zero padding, weights alpha / size, the
/// square prologue and the lrn epilogue. Fails for what the kernel does
/// not take: rank < 2, an empty input, bias <= 0, alpha < 0, non-finite
/// attributes, a window past the generator's limits.
Status lrnStencilSpec(const std::string &name,
                      const std::vector<int64_t> &shape, int64_t size,
                      float alpha, float beta, float bias, StencilSpec &spec);

/// Generates the kernel's machine code into `code` (plain bytes, position
/// independent). Fails, naming spec.name, for what stencilOutputShape
/// rejects.
Status generateStencil(const StencilSpec &spec, std::vector<uint8_t> &code);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_STENCIL_H
