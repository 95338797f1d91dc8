//===- SelectQuantGemm.cpp - ONNX's integer matmuls -> VNNI kernels -------===//
//
// MatMulInteger (int32 out) and QLinearMatMul (u8/s8 out, requantised in
// the kernel's epilogue) with a constant 2-D B and constant zero points and
// scales, on a --cpu with AVX512-VNNI: A's leading dims are rows of one
// GEMM. Other forms (B computed at run time, per-row A zero points or
// scales, no VNNI) stay with the portable integer lowering.
//
//===----------------------------------------------------------------------===//

#include "QuantSelection.h"
#include "SelectionUtils.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// A [..., M, K] x B [K, N] constant, with A's zero point one constant.
bool planOperands(OpLoweringContext &ctx, Value a, Value b, Value aZero,
                  Value bZero, Int8GemmPlan &plan) {
  ArrayRef<int64_t> as = shapeOf(a), bs = shapeOf(b);
  std::vector<int32_t> za;
  if (!isInt8Tensor(a) || !isInt8Tensor(b) || as.size() < 2 || bs.size() != 2 ||
      as.back() != bs[0] || !constantInts(ctx, b, plan.b) ||
      !constantInts(ctx, aZero, za) || za.size() != 1 ||
      !constantInts(ctx, bZero, plan.zb) ||
      !oneOrPerSlice(plan.zb.size(), bs[1]))
    return false;
  plan.a = a;
  plan.signedA = !isUnsignedTensor(a);
  plan.unsignedB = isUnsignedTensor(b);
  plan.za = za[0];
  plan.k = bs[0];
  plan.n = bs[1];
  plan.m = numElements(a) / std::max<int64_t>(plan.k, 1);
  return plan.k > 0;
}

bool planMatmulInteger(Operation *op, OpLoweringContext &ctx,
                       Int8GemmPlan &plan) {
  plan.result = op->getResult(0);
  plan.output = Int8GemmOutput::Int32;
  return planOperands(ctx, op->getOperand(0), op->getOperand(1),
                      op->getOperand(2), op->getOperand(3), plan);
}

/// y = saturate(round(acc * sa * sb[n] / sy) + zy).
bool planQLinearMatmul(Operation *op, OpLoweringContext &ctx,
                       Int8GemmPlan &plan) {
  plan.result = op->getResult(0);
  float sa, sy;
  std::vector<float> sb;
  std::vector<int32_t> zy;
  if (!planOperands(ctx, op->getOperand(0), op->getOperand(3),
                    op->getOperand(2), op->getOperand(5), plan) ||
      !isInt8Tensor(plan.result) ||
      !constantScalar(ctx, op->getOperand(1), sa) ||
      !constantFloats(ctx, op->getOperand(4), sb) ||
      !oneOrPerSlice(sb.size(), plan.n) ||
      !constantScalar(ctx, op->getOperand(6), sy) ||
      !constantInts(ctx, op->getOperand(7), zy) || zy.size() != 1 || sy == 0)
    return false;
  plan.output =
      isUnsignedTensor(plan.result) ? Int8GemmOutput::U8 : Int8GemmOutput::S8;
  plan.scale.resize(plan.n);
  // The reference's order: (sa * sb) / sy, in f32.
  for (int64_t j = 0; j < plan.n; ++j)
    plan.scale[j] = sa * sb[sb.size() == 1 ? 0 : j] / sy;
  plan.outputZero = zy[0];
  return true;
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
  return emitInt8Gemm(op, ctx, plan);
}

} // namespace mlcc::avx512
