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

namespace mlcc::avx512 {

/// Whether `expand` (a planned 1x1 conv) and `depthwise` (the planned conv
/// that is the only reader of its result, activation applied) run in bands:
/// one 2-D image, no residual on either, an expanded tensor too large for
/// L2.
bool expandDepthwiseApplies(const ConvSpec &expand, const ConvSpec &depthwise);

/// Emits the bands over the thread pool. The weights are the convs' ONNX
/// ones ([OC, C, 1, 1] and [C, 1, KH, KW]); src (expand's X), the biases (0
/// for none) and dst (depthwise's Y) are addresses of NCHW16c tensors. Fails
/// after reporting on `op`.
mlir::LogicalResult emitExpandDepthwiseBands(
    mlir::Operation *op, OpLoweringContext &ctx, const ConvSpec &expand,
    llvm::ArrayRef<float> expandWeights, const ConvSpec &depthwise,
    llvm::ArrayRef<float> depthwiseWeights, mlir::Value src,
    mlir::Value expandBias, mlir::Value depthwiseBias, mlir::Value dst);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_EXPANDDEPTHWISEBANDS_H
