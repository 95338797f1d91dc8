//===- KernelSelection.cpp - Graph ops -> AVX-512 kernels -----------------===//

#include "KernelSelection.h"

using namespace mlir;

namespace mlcc::avx512 {

TargetLowering selectKernel(Operation *op, OpLoweringContext &ctx,
                            SelectionState &state) {
  for (auto select :
       {selectDequantize, selectQuantize, selectEltwise, selectQdqGemm,
        selectBf16Gemm, selectGemm, selectQuantGemm, selectQuantConv,
        selectConv, selectPool, selectConcat, selectBatchNorm,
        selectNormalization, selectEmbedLayerNorm, selectAttention,
        selectReduce, selectStencil, selectLrn, selectGather, selectRecurrent,
        selectResize}) {
    TargetLowering result = select(op, ctx, state);
    if (result != TargetLowering::Declined)
      return result;
  }
  return TargetLowering::Declined;
}

} // namespace mlcc::avx512
