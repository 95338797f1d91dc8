//===- FusedActivation.cpp - The activations fused ops apply --------------===//

#include "FusedActivation.h"
#include "NNUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace mlcc::portable {
namespace {

using nn::scalarConstant;

/// v < lo ? lo : (v > hi ? hi : v) with nan passing through, as the
/// reference's clampNan.
Value clampNan(OpBuilder &b, Location loc, Value v, double lo, double hi) {
  Type f32 = b.getF32Type();
  Value loV = scalarConstant(b, loc, f32, lo);
  Value hiV = scalarConstant(b, loc, f32, hi);
  Value gt = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, v, hiV);
  Value upper = b.create<arith::SelectOp>(loc, gt, hiV, v);
  Value lt = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, v, loV);
  return b.create<arith::SelectOp>(loc, lt, loV, upper);
}

Value sigmoid(OpBuilder &b, Location loc, Value v) {
  Value one = scalarConstant(b, loc, v.getType(), 1.0);
  Value e = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, v));
  return b.create<arith::DivFOp>(loc, one,
                                 b.create<arith::AddFOp>(loc, one, e));
}

} // namespace

Value fusedActivation(OpBuilder &b, Location loc, StringRef name, double alpha,
                      double beta, Value v) {
  Type f32 = b.getF32Type();
  auto cst = [&](double c) { return scalarConstant(b, loc, f32, c); };
  auto mul = [&](Value x, Value y) {
    return b.create<arith::MulFOp>(loc, x, y).getResult();
  };
  auto lessThanZero = [&](Value x) {
    return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, x, cst(0));
  };
  if (name == "none")
    return v;
  if (name == "relu")
    return b.create<arith::SelectOp>(loc, lessThanZero(v), cst(0), v);
  if (name == "leaky_relu")
    return b.create<arith::SelectOp>(loc, lessThanZero(v),
                                     mul(cst(static_cast<float>(alpha)), v), v);
  if (name == "clip") { // min(max(v, lo), hi), as clip's kernel
    Value lo = cst(static_cast<float>(alpha));
    Value hi = cst(static_cast<float>(beta));
    Value below =
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, v, lo);
    Value r = b.create<arith::SelectOp>(loc, below, lo, v);
    Value above =
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, r, hi);
    return b.create<arith::SelectOp>(loc, above, hi, r);
  }
  if (name == "sigmoid")
    return sigmoid(b, loc, v);
  if (name == "tanh")
    return b.create<math::TanhOp>(loc, v);
  if (name == "silu")
    return mul(v, sigmoid(b, loc, v));
  if (name == "hard_swish") {
    Value t = b.create<arith::AddFOp>(
        loc, b.create<arith::DivFOp>(loc, v, cst(6)), cst(0.5));
    return mul(v, clampNan(b, loc, t, 0, 1));
  }
  if (name == "gelu" || name == "gelu_tanh") { // as graph.gelu's lowering
    Value half = mul(cst(0.5), v);
    Value f;
    if (name == "gelu") {
      f = b.create<math::ErfOp>(
          loc, b.create<arith::DivFOp>(loc, v, cst(1.41421356237309504880)));
    } else {
      Value cube = mul(mul(v, v), v);
      Value inner = b.create<arith::AddFOp>(loc, v, mul(cst(0.044715), cube));
      f = b.create<math::TanhOp>(loc, mul(cst(0.79788456080286535588), inner));
    }
    return mul(half, b.create<arith::AddFOp>(loc, cst(1), f));
  }
  return v;
}

} // namespace mlcc::portable
