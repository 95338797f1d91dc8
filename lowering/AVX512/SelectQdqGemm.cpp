//===- SelectQdqGemm.cpp - f32 matmuls between Q/DQ ops -> int8 kernels ---===//
//
// What a QDQ model (ONNX Runtime's quantiser, torch's export, `mlcc
// quantize`) leaves around each quantised layer:
//
//   y = MatMul(DequantizeLinear(q), DequantizeLinear(Wq))
//
// with q the u8/s8 output of a QuantizeLinear and Wq a constant int8 weight
// (per tensor, or per output column). That is an int8 GEMM whose
// accumulators are dequantised once: y = acc * sa * sw[n] (+ bias, then
// the activation of graph.fc), so on a --cpu with AVX512-VNNI the matmul
// reads q and Wq directly and never computes in f32. Gemm (transB, a bias
// row) and graph.fc (bias, residual, activation) too. The dequantised
// weight stays unfolded for this (mlcc-fold-constants keeps a
// DequantizeLinear of a constant that feeds a matmul).
//
// A MatMul of two activations (a transformer's Q K^T and probs V, which
// ONNX Runtime's quantiser and `mlcc compile --quantize` put between Q/DQ
// too) has a B the model computes: its int8 values, scale and zero point
// are packed when the op runs (mlcc_int8_pack_b), batch by batch for a
// batched matmul, and the kernel computes A's row sums for B's zero point.
//
// In a variant of a range of lengths, a layer with a weight computes the
// rows of the run's positions only (a run-time M; lengthRows), on VNNI.
//
//===----------------------------------------------------------------------===//

#include "QuantSelection.h"
#include "SelectionUtils.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// The A side: one scale and zero point for the whole tensor.
bool planActivation(OpLoweringContext &ctx, Value a, Int8GemmPlan &plan,
                    float &scale) {
  Dequantized d;
  if (!dequantizedFrom(ctx, a, d) || d.scale.size() != 1 ||
      shapeOf(d.q).size() < 2)
    return false;
  plan.a = d.q;
  plan.signedA = !isUnsignedTensor(d.q);
  plan.za = d.zero[0];
  scale = d.scale[0];
  return true;
}

/// The B side: a constant weight K x N, or N x K when `transB`, quantised
/// per tensor or per output column (N). Sets B, zb and scale = sa * sw[n].
bool planWeight(OpLoweringContext &ctx, Value w, bool transB, float sa,
                Int8GemmPlan &plan) {
  Dequantized d;
  std::vector<int32_t> values;
  if (!dequantizedFrom(ctx, w, d) || shapeOf(d.q).size() != 2 ||
      !constantInts(ctx, d.q, values))
    return false;
  ArrayRef<int64_t> ws = shapeOf(d.q);
  int64_t k = transB ? ws[1] : ws[0], n = transB ? ws[0] : ws[1];
  int64_t columnAxis = transB ? 0 : 1;
  if (d.scale.size() != 1 && d.axis != columnAxis)
    return false;
  plan.k = k;
  plan.n = n;
  plan.unsignedB = isUnsignedTensor(d.q);
  plan.b.resize(k * n);
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t j = 0; j < n; ++j)
      plan.b[kk * n + j] = transB ? values[j * k + kk] : values[kk * n + j];
  plan.zb = d.zero;
  plan.scale.resize(n);
  for (int64_t j = 0; j < n; ++j)
    plan.scale[j] = sa * d.scale[d.scale.size() == 1 ? 0 : j];
  return true;
}

/// The B side of a matmul of two activations: the DequantizeLinear of an
/// int8 tensor the model computes, [K, N] or batched [..., K, N] with A's
/// leading dims; per tensor, or per column of a 2-D B. A's and B's
/// quantisation parameters are read from their buffers as B is packed.
bool planRuntimeB(Value a, Value w, Int8GemmPlan &plan) {
  Operation *aDq = a.getDefiningOp(), *bDq = w.getDefiningOp();
  if (!bDq || bDq->getName().getStringRef() != "graph.dequantize")
    return false;
  Value q = bDq->getOperand(0);
  if (!planInt8Shapes(plan.a, q, /*runtime=*/true, plan))
    return false;
  const int64_t rank = static_cast<int64_t>(shapeOf(q).size());
  // One scale and zero point per column of a 2-D B (its last axis), else
  // one for all.
  int64_t columns = plan.batches == 1 ? plan.n : 1;
  int64_t axis = intAttr(bDq, "axis", 1);
  if (axis < 0)
    axis += rank;
  if (numElements(bDq->getOperand(1)) != 1 && axis != rank - 1)
    return false;
  RuntimeOperands &r = plan.runtime;
  r.b = q;
  r.strideK = plan.n;
  r.aScale = aDq->getOperand(1);
  r.aZero = aDq->getOperand(2);
  r.bScale = bDq->getOperand(1);
  r.bZero = bDq->getOperand(2);
  plan.packAtRunTime = true;
  return runtimeScalars(r.aScale, 1, false) &&
         runtimeScalars(r.aZero, 1, true) &&
         runtimeScalars(r.bScale, columns, false) &&
         runtimeScalars(r.bZero, columns, true);
}

} // namespace

TargetLowering selectQdqGemm(Operation *op, OpLoweringContext &ctx,
                             SelectionState &state) {
  StringRef name = op->getName().stripDialect();
  if ((name != "matmul" && name != "gemm" && name != "fc") ||
      !state.cpu.has(MLCC_CPU_AVX512_VNNI) || !isF32Tensor(op->getResult(0)))
    return TargetLowering::Declined;
  Int8GemmPlan plan;
  plan.result = op->getResult(0);
  plan.output = Int8GemmOutput::Float;
  bool transB = name == "gemm" && intAttr(op, "transB", 0) != 0;
  float sa = 0;
  if ((name == "gemm" && intAttr(op, "transA", 0) != 0) ||
      !planActivation(ctx, op->getOperand(0), plan, sa))
    return TargetLowering::Declined;
  if (planWeight(ctx, op->getOperand(1), transB, sa, plan)) {
    if (plan.k == 0 || shapeOf(plan.a).back() != plan.k ||
        !planGemmEpilogue(op, ctx, plan))
      return TargetLowering::Declined;
    plan.m = numElements(plan.a) / plan.k;
    // With a range of lengths, the rows of the run's positions.
    plan.rows = lengthRows(op, ctx, plan.result, plan.m);
  } else if (name != "matmul" ||
             !planRuntimeB(op->getOperand(0), op->getOperand(1), plan)) {
    return TargetLowering::Declined;
  }
  plan.amx = useAmx(state.cpu, /*bf16=*/false, plan.m, plan.k);
  return emitInt8Gemm(op, ctx, plan);
}

} // namespace mlcc::avx512
