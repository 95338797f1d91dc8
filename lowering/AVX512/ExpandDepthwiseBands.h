//===- ExpandDepthwiseBands.h - A 1x1 conv and its depthwise conv -*- C++ -*-=//
//
// An expanding 1x1 conv whose result only a depthwise conv reads (MobileNet's
// inverted residual blocks) run together in bands of the depthwise conv's
// output rows, so that the expanded tensor never leaves L2 (see
// ExpandDepthwiseBands.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_EXPANDDEPTHWISEBANDS_H
#define MLCC_LOWERING_AVX512_EXPANDDEPTHWISEBANDS_H

#include "Conv.h"
#include "KernelSelection.h"

#include <optional>

namespace mlcc::avx512 {

/// One conv of the bands: its planned spec, its ONNX weights ([OC, C, 1, 1]
/// or depthwise [C, 1, KH, KW]) and the address of its bias (0: none).
struct BandedConv {
  ConvSpec spec;
  llvm::ArrayRef<float> weights;
  mlir::Value bias;
};

/// An inverted residual block's convs: the 1x1 expansion (none: the
/// depthwise conv reads src), the depthwise conv and, when it alone reads
/// the depthwise conv's result, the 1x1 projection. src (the first conv's
/// X), dst (the last conv's Y) and the projection's residual (0: none) are
/// addresses of NCHW16c tensors.
struct BandedConvs {
  std::optional<BandedConv> expand;
  BandedConv depthwise;
  std::optional<BandedConv> project;
  mlir::Value src, dst, residual;
};

/// Whether `expand` (a planned 1x1 conv) and `depthwise` (the planned conv
/// that is the only reader of its result, activation applied) run in bands:
/// one 2-D image, no residual on either, an expanded tensor too large for
/// L2.
bool expandDepthwiseApplies(const ConvSpec &expand, const ConvSpec &depthwise);

/// Whether `project`, a planned conv that alone reads the depthwise conv's
/// result, runs in its bands too (`expanded`: with an expansion): a 1x1
/// conv (a residual and an activation are fine).
bool projectionApplies(const ConvSpec &depthwise, const ConvSpec &project,
                       bool expanded);

/// Whether a planned depthwise conv without an expansion and the 1x1
/// projection that alone reads its result run in bands: one 2-D image, no
/// residual on the depthwise conv, its result too large for L2.
bool depthwiseProjectionApplies(const ConvSpec &depthwise,
                                const ConvSpec &project);

/// Emits the bands over the thread pool. Fails after reporting on `op`.
mlir::LogicalResult emitExpandDepthwiseBands(mlir::Operation *op,
                                             OpLoweringContext &ctx,
                                             const BandedConvs &convs);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_EXPANDDEPTHWISEBANDS_H
