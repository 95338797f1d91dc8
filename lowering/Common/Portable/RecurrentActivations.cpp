//===- RecurrentActivations.cpp - Activations of the RNN cells ------------===//

#include "RecurrentActivations.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <string>

using namespace mlir;

namespace mlcc::portable::rnn {

using namespace red;

LogicalResult parseActivations(Operation *op, Cell kind, int64_t dirs,
                               ArrayAttr namesAttr, ArrayAttr alphaAttr,
                               ArrayAttr betaAttr,
                               std::vector<Activation> &out) {
  std::vector<std::string> names;
  if (namesAttr)
    for (Attribute a : namesAttr)
      names.push_back(cast<StringAttr>(a).getValue().str());
  auto floats = [](ArrayAttr a) {
    std::vector<double> v;
    if (a)
      for (Attribute e : a)
        v.push_back(cast<FloatAttr>(e).getValueAsDouble());
    return v;
  };
  std::string error = ref::rnn::parseActivations(kind, names, floats(alphaAttr),
                                                 floats(betaAttr), dirs, out);
  if (!error.empty())
    return op->emitError(error);
  return success();
}

Value clampLikeStd(Builder &b, Value v, Value lo, Value hi) {
  return stdMin(b, stdMax(b, v, lo), hi);
}

Value activate(Builder &b, const Activation &a, Value x) {
  auto c = [&](double v) { return cF64(b, v); };
  auto mul = [&](Value l, Value r) {
    return b.create<arith::MulFOp>(l, r).getResult();
  };
  auto add = [&](Value l, Value r) {
    return b.create<arith::AddFOp>(l, r).getResult();
  };
  auto cmp = [&](arith::CmpFPredicate pred, Value l, Value r) {
    return b.create<arith::CmpFOp>(pred, l, r).getResult();
  };
  auto select = [&](Value cond, Value t, Value f) {
    return b.create<arith::SelectOp>(cond, t, f).getResult();
  };
  auto exp = [&](Value v) { return b.create<math::ExpOp>(v).getResult(); };
  switch (a.kind) {
  case Activation::Relu:
    return select(cmp(arith::CmpFPredicate::OGT, x, c(0)), x, c(0));
  case Activation::Tanh:
    return b.create<math::TanhOp>(x);
  case Activation::Sigmoid:
    return b.create<arith::DivFOp>(c(1),
                                   add(c(1), exp(b.create<arith::NegFOp>(x))));
  case Activation::Affine:
    return add(mul(c(a.alpha), x), c(a.beta));
  case Activation::LeakyRelu:
    return select(cmp(arith::CmpFPredicate::OGE, x, c(0)), x,
                  mul(c(a.alpha), x));
  case Activation::ThresholdedRelu:
    return select(cmp(arith::CmpFPredicate::OGE, x, c(a.alpha)), x, c(0));
  case Activation::ScaledTanh:
    return mul(c(a.alpha), b.create<math::TanhOp>(mul(c(a.beta), x)));
  case Activation::HardSigmoid:
    return clampLikeStd(b, add(mul(c(a.alpha), x), c(a.beta)), c(0), c(1));
  case Activation::Elu:
    return select(cmp(arith::CmpFPredicate::OGE, x, c(0)), x,
                  mul(c(a.alpha), b.create<arith::SubFOp>(exp(x), c(1))));
  case Activation::Softsign:
    return b.create<arith::DivFOp>(x, add(c(1), b.create<math::AbsFOp>(x)));
  case Activation::Softplus:
    return b.create<math::Log1pOp>(exp(x));
  }
  return x;
}

} // namespace mlcc::portable::rnn
