//===- SelectQuantGemm.cpp - ONNX's integer matmuls -> VNNI kernels -------===//
//
// MatMulInteger (int32 out) and QLinearMatMul (u8/s8 out, requantised in
// the kernel's epilogue) on a --cpu with AVX512-VNNI. A constant 2-D B
// with constant zero points and scales is packed now, and A's leading dims
// are rows of one GEMM. Otherwise (B, a zero point or a scale is a graph
// input; a batched B) the model's code packs B when the op runs, each
// batch's in turn. Per-row A zero points or scales, broadcast batches and
// CPUs without VNNI stay with the portable integer lowering.
//
//===----------------------------------------------------------------------===//

#include "QuantSelection.h"
#include "SelectionUtils.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// A constant B with constant zero points, A's one value (after
/// planInt8Shapes).
bool planConstantB(OpLoweringContext &ctx, Value b, Value aZero, Value bZero,
                   Int8GemmPlan &plan) {
  std::vector<int32_t> za;
  if (!constantInts(ctx, b, plan.b) || !constantInts(ctx, aZero, za) ||
      za.size() != 1 || !constantInts(ctx, bZero, plan.zb) ||
      !oneOrPerSlice(plan.zb.size(), plan.n))
    return false;
  plan.za = za[0];
  return true;
}

/// B, zero points and scales read when the op runs (mlcc_int8_pack_b): A's
/// zero point and scale and the output's one value each, B's one or one
/// per column (one for a batched B).
bool planRuntimeB(Value a, Value b, Value aZero, Value bZero,
                  Int8GemmPlan &plan) {
  if (!planInt8Shapes(a, b, true, plan))
    return false;
  int64_t columns = plan.batches == 1 ? plan.n : 1;
  if (!runtimeScalars(aZero, 1, true) || !runtimeScalars(bZero, columns, true))
    return false;
  plan.packAtRunTime = true;
  plan.runtime.b = b;
  plan.runtime.strideK = plan.n;
  plan.runtime.aZero = aZero;
  plan.runtime.bZero = bZero;
  return true;
}

bool planMatmulInteger(Operation *op, OpLoweringContext &ctx,
                       Int8GemmPlan &plan) {
  Value a = op->getOperand(0), b = op->getOperand(1);
  plan.result = op->getResult(0);
  plan.output = Int8GemmOutput::Int32;
  if (planInt8Shapes(a, b, false, plan) &&
      planConstantB(ctx, b, op->getOperand(2), op->getOperand(3), plan))
    return true;
  plan = Int8GemmPlan();
  plan.result = op->getResult(0);
  return planRuntimeB(a, b, op->getOperand(2), op->getOperand(3), plan);
}

/// y = saturate(round(acc * sa * sb[n] / sy) + zy).
bool planQLinearMatmul(Operation *op, OpLoweringContext &ctx,
                       Int8GemmPlan &plan) {
  Value a = op->getOperand(0), b = op->getOperand(3);
  plan.result = op->getResult(0);
  if (!isInt8Tensor(plan.result))
    return false;
  plan.output =
      isUnsignedTensor(plan.result) ? Int8GemmOutput::U8 : Int8GemmOutput::S8;
  float sa, sy;
  std::vector<float> sb;
  std::vector<int32_t> zy;
  if (planInt8Shapes(a, b, false, plan) &&
      planConstantB(ctx, b, op->getOperand(2), op->getOperand(5), plan) &&
      constantScalar(ctx, op->getOperand(1), sa) &&
      constantFloats(ctx, op->getOperand(4), sb) &&
      oneOrPerSlice(sb.size(), plan.n) &&
      constantScalar(ctx, op->getOperand(6), sy) &&
      constantInts(ctx, op->getOperand(7), zy) && zy.size() == 1 && sy != 0) {
    plan.scale.resize(plan.n);
    // The reference's order: (sa * sb) / sy, in f32.
    for (int64_t j = 0; j < plan.n; ++j)
      plan.scale[j] = sa * sb[sb.size() == 1 ? 0 : j] / sy;
    plan.outputZero = zy[0];
    return true;
  }
  Int8GemmOutput output = plan.output;
  plan = Int8GemmPlan();
  plan.result = op->getResult(0);
  plan.output = output;
  if (!planRuntimeB(a, b, op->getOperand(2), op->getOperand(5), plan))
    return false;
  const int64_t columns = plan.batches == 1 ? plan.n : 1;
  plan.runtime.aScale = op->getOperand(1);
  plan.runtime.bScale = op->getOperand(4);
  plan.runtime.yScale = op->getOperand(6);
  plan.runtime.yZero = op->getOperand(7);
  return runtimeScalars(plan.runtime.aScale, 1, false) &&
         runtimeScalars(plan.runtime.bScale, columns, false) &&
         runtimeScalars(plan.runtime.yScale, 1, false) &&
         runtimeScalars(plan.runtime.yZero, 1, true);
}

} // namespace

TargetLowering selectQuantGemm(Operation *op, OpLoweringContext &ctx,
                               SelectionState &state) {
  StringRef name = op->getName().stripDialect();
  if ((name != "matmul_integer" && name != "qlinear_matmul") ||
      !state.cpu.has(MLCC_CPU_AVX512_VNNI))
    return TargetLowering::Declined;
  Int8GemmPlan plan;
  bool planned = name == "matmul_integer" ? planMatmulInteger(op, ctx, plan)
                                          : planQLinearMatmul(op, ctx, plan);
  if (!planned)
    return TargetLowering::Declined;
  plan.amx = useAmx(state.cpu, /*bf16=*/false, plan.m, plan.k);
  return emitInt8Gemm(op, ctx, plan);
}

} // namespace mlcc::avx512
