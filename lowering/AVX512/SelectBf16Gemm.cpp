//===- SelectBf16Gemm.cpp - f32 matmuls -> bf16 GEMM kernels --------------===//
//
// --precision bf16 on a --cpu with AVX512_BF16: a matmul, gemm or fc with a
// constant 2-D f32 weight computes in bf16 with f32 accumulation. The
// weight is rounded to bf16 and packed now (packBf16B); at run time one
// kernel rounds A to bf16 into a scratch buffer (a pass over A, small
// beside the product) and the bf16 GEMM (GemmInt8.h, vdpbf16ps: two
// products per lane) multiplies, with the f32 epilogue of the f32 GEMM:
// alpha, bias, residual, activation. Inputs and outputs stay f32.
//
//===----------------------------------------------------------------------===//

#include "QuantSelection.h"
#include "SelectionUtils.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// The weight, K x N (N x K under transB), as K x N floats.
bool planWeight(OpLoweringContext &ctx, Value w, bool transB,
                Int8GemmPlan &plan) {
  std::vector<float> values;
  if (!isF32Tensor(w) || shapeOf(w).size() != 2 ||
      !constantFloats(ctx, w, values))
    return false;
  ArrayRef<int64_t> ws = shapeOf(w);
  plan.k = transB ? ws[1] : ws[0];
  plan.n = transB ? ws[0] : ws[1];
  plan.bFloat.resize(plan.k * plan.n);
  for (int64_t kk = 0; kk < plan.k; ++kk)
    for (int64_t j = 0; j < plan.n; ++j)
      plan.bFloat[kk * plan.n + j] =
          transB ? values[j * plan.k + kk] : values[kk * plan.n + j];
  return true;
}

} // namespace

TargetLowering selectBf16Gemm(Operation *op, OpLoweringContext &ctx,
                              SelectionState &state) {
  StringRef name = op->getName().stripDialect();
  if ((name != "matmul" && name != "gemm" && name != "fc") ||
      !state.bf16Precision || !isF32Tensor(op->getResult(0)) ||
      !isF32Tensor(op->getOperand(0)))
    return TargetLowering::Declined;
  Int8GemmPlan plan;
  plan.bf16 = true;
  plan.a = op->getOperand(0);
  plan.result = op->getResult(0);
  plan.output = Int8GemmOutput::Float;
  bool transB = name == "gemm" && intAttr(op, "transB", 0) != 0;
  if ((name == "gemm" && intAttr(op, "transA", 0) != 0) ||
      shapeOf(plan.a).size() < 2 ||
      !planWeight(ctx, op->getOperand(1), transB, plan) || plan.k == 0 ||
      shapeOf(plan.a).back() != plan.k || !planGemmEpilogue(op, ctx, plan))
    return TargetLowering::Declined;
  plan.m = numElements(plan.a) / plan.k;
  // With a range of lengths, the rows of the run's positions.
  plan.rows = lengthRows(op, ctx, plan.result, plan.m);
  plan.amx = useAmx(state.cpu, /*bf16=*/true, plan.m, plan.k);
  Int8GemmKernels kernels;
  if (!prepareInt8Gemm(op, ctx, plan, kernels))
    return TargetLowering::Failed;

  Value a16 = emitToBf16(op, ctx, state, plan.a, ctx.buffer(plan.a));
  if (!a16)
    return TargetLowering::Failed;
  callInt8Gemm(
      ctx, kernels, ctx.address(a16), ctx.address(ctx.buffer(plan.result)),
      plan.residual ? ctx.address(ctx.buffer(plan.residual)) : Value());
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
