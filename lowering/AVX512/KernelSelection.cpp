//===- KernelSelection.cpp - Graph ops -> AVX-512 kernels -----------------===//

#include "KernelSelection.h"
#include "SelectionUtils.h"

#include "RunTimeExtents.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace mlcc::avx512 {

Value lengthRows(Operation *op, OpLoweringContext &ctx, Value v, int64_t rows) {
  auto axisAttr = op->getAttrOfType<IntegerAttr>(graph::kPaddedAxisAttr);
  ArrayRef<int64_t> shape = shapeOf(v);
  if (!axisAttr)
    return {};
  int64_t axis = axisAttr.getInt();
  if (axis < 0 || axis + 1 >= static_cast<int64_t>(shape.size()) ||
      shape[axis] == 0 || rows % shape[axis] != 0 ||
      llvm::any_of(shape.take_front(axis), [](int64_t d) { return d != 1; }))
    return {};
  Value length = ctx.runTimeLength();
  if (!length)
    return {};
  OpBuilder &b = ctx.builder();
  Value perPosition =
      b.create<arith::ConstantIntOp>(ctx.loc(), rows / shape[axis], 64);
  return b.create<arith::MulIOp>(ctx.loc(), length, perPosition);
}

TargetLowering selectKernel(Operation *op, OpLoweringContext &ctx,
                            SelectionState &state) {
  for (auto select :
       {selectDequantize,     selectQuantize,      selectChannelScale,
        selectEltwise,        selectQdqGemm,       selectBf16Gemm,
        selectGemm,           selectQuantGemm,     selectQuantConv,
        selectConv,           selectConvTranspose, selectPool,
        selectConcat,         selectBatchNorm,     selectNormalization,
        selectEmbedLayerNorm, selectAttention,     selectReduce,
        selectStencil,        selectLrn,           selectGather,
        selectRecurrent,      selectResize,        selectGridSample,
        selectTranspose}) {
    TargetLowering result = select(op, ctx, state);
    if (result != TargetLowering::Declined)
      return result;
  }
  return TargetLowering::Declined;
}

} // namespace mlcc::avx512
