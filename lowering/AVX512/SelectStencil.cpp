//===- SelectStencil.cpp - graph.stencil -> AVX-512 kernels ---------------===//
//
// graph.stencil on a static f32 input with constant f32 weights, for every
// reduction and padding mode, when the window spans at most the last three
// dims and strides the innermost one by at most 2 (Kernels/Stencil.h);
// the weights, offsets, strides and dilations are baked into the code.
// Anything else (dynamic shapes, weights computed at run time, a window
// over a fourth dim, a stride above 2 along the last dim) is declined and
// takes the portable lowering (lowering/Common/Portable/Stencil.cpp).
//
//===----------------------------------------------------------------------===//

#include "ChunkedKernelCalls.h"
#include "KernelABI.h"
#include "SelectionUtils.h"
#include "Stencil.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// `spec` for one plane: its first `batchDims` dims (which the window does
/// not move along) dropped.
StencilSpec planeSpec(const StencilSpec &spec, size_t batchDims) {
  StencilSpec plane = spec;
  auto drop = [&](std::vector<int64_t> &v) {
    if (!v.empty())
      v.erase(v.begin(), v.begin() + batchDims);
  };
  drop(plane.shape);
  drop(plane.kernel);
  drop(plane.offsets);
  drop(plane.strides);
  drop(plane.dilations);
  return plane;
}

} // namespace

TargetLowering selectStencil(Operation *op, OpLoweringContext &ctx,
                             SelectionState &) {
  if (op->getName().stripDialect() != "stencil" || op->getNumOperands() != 2 ||
      op->getNumResults() != 1)
    return TargetLowering::Declined;
  Value x = op->getOperand(0), w = op->getOperand(1), y = op->getResult(0);
  auto yType = dyn_cast<RankedTensorType>(y.getType());
  if (!isF32Tensor(x) || !isF32Tensor(w) || !yType || !yType.hasStaticShape())
    return TargetLowering::Declined;
  StencilSpec spec;
  spec.name = nodeName(op);
  if (!ref::parseStencilReduction(stringAttr(op, "reduction", "sum"),
                             spec.reduction) ||
      !ref::parseStencilPadding(stringAttr(op, "padding", "zero"), spec.padding))
    return TargetLowering::Declined;
  bool arg = spec.reduction == StencilReduction::ArgMin ||
             spec.reduction == StencilReduction::ArgMax;
  if (arg ? !yType.getElementType().isInteger(64)
          : !yType.getElementType().isF32())
    return TargetLowering::Declined;
  if (!constantFloats(ctx, w, spec.weights))
    return TargetLowering::Declined;
  spec.shape.assign(shapeOf(x).begin(), shapeOf(x).end());
  spec.kernel.assign(shapeOf(w).begin(), shapeOf(w).end());
  spec.paddingValue = floatAttr(op, "padding_value", 0.0f);
  spec.offsets = intsAttr(op, "offsets");
  spec.strides = intsAttr(op, "strides");
  spec.dilations = intsAttr(op, "dilations");
  std::vector<int64_t> outShape;
  if (stencilOutputShape(spec, outShape).failed() ||
      ArrayRef<int64_t>(outShape) != yType.getShape())
    return TargetLowering::Declined;
  std::vector<uint8_t> code;
  if (ref::Status s = generateStencil(spec, code); s.failed())
    return failed(op, s);
  std::string symbol = ctx.addKernel(spec.name, std::move(code));
  // mlcc_stencil_args: src, dst.
  SmallVector<Value> fields{ctx.address(ctx.buffer(x)),
                            ctx.address(ctx.buffer(y))};
  // Leading dims the window does not move along (size 1, offset 0, stride
  // 1) hold independent planes: on several threads each is a call of a
  // kernel generated for one plane.
  size_t batchDims = 0;
  while (batchDims + 1 < spec.shape.size() && spec.kernel[batchDims] == 1 &&
         (spec.offsets.empty() || spec.offsets[batchDims] == 0) &&
         (spec.strides.empty() || spec.strides[batchDims] == 1))
    ++batchDims;
  int64_t planes = 1;
  for (size_t d = 0; d < batchDims; ++d)
    planes *= spec.shape[d];
  if (ctx.oneThread() || planes < 2) {
    ctx.callKernel(symbol, fields);
    return TargetLowering::Lowered;
  }
  StencilSpec plane = planeSpec(spec, batchDims);
  std::vector<int64_t> planeOut;
  std::vector<uint8_t> planeCode;
  if (ref::Status s = stencilOutputShape(plane, planeOut); s.failed())
    return failed(op, s);
  if (ref::Status s = generateStencil(plane, planeCode); s.failed())
    return failed(op, s);
  std::string planeSymbol =
      ctx.addKernel(spec.name + "_plane", std::move(planeCode));
  int64_t inPlaneBytes = 4, outPlaneBytes = arg ? 8 : 4;
  for (size_t d = 0; d < plane.shape.size(); ++d) {
    inPlaneBytes *= plane.shape[d];
    outPlaneBytes *= planeOut[d];
  }
  emitChunkedKernelCalls(ctx, {symbol, planeSymbol, "", planes}, fields,
                         {inPlaneBytes, outPlaneBytes});
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
