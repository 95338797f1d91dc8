//===- RecurrentActivations.cpp - Activations of the RNN cells ------------===//

#include "RecurrentActivations.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <string>

using namespace mlir;

namespace mlcc::portable::rnn {

using namespace red;

size_t activationCount(Cell kind) {
  return kind == Cell::Lstm ? 3 : kind == Cell::Gru ? 2 : 1;
}

/// Parses `activations` with `activation_alpha` and `activation_beta` into
/// one Activation per (direction, slot), as the reference does: the alpha
/// and beta lists are consumed in order by the functions that take such a
/// parameter; the others keep the default of the ONNX op of that name.
LogicalResult parseActivations(Operation *op, Cell kind, int64_t dirs,
                               ArrayAttr namesAttr, ArrayAttr alphaAttr,
                               ArrayAttr betaAttr,
                               SmallVectorImpl<Activation> &out) {
  size_t perDir = activationCount(kind);
  SmallVector<std::string> names;
  if (namesAttr)
    for (Attribute a : namesAttr)
      names.push_back(cast<StringAttr>(a).getValue().lower());
  if (names.empty()) {
    SmallVector<std::string> dflt =
        kind == Cell::Lstm ? SmallVector<std::string>{"sigmoid", "tanh", "tanh"}
        : kind == Cell::Gru ? SmallVector<std::string>{"sigmoid", "tanh"}
                            : SmallVector<std::string>{"tanh"};
    for (int64_t d = 0; d < dirs; ++d)
      names.append(dflt.begin(), dflt.end());
  } else if (names.size() == perDir && dirs == 2) {
    // One set given for a bidirectional cell: both directions share it.
    SmallVector<std::string> copy = names;
    names.append(copy.begin(), copy.end());
  }
  if (names.size() != perDir * dirs)
    return op->emitError("activations has ")
           << names.size() << " entries, expected " << perDir * dirs;
  auto floats = [](ArrayAttr a) {
    SmallVector<double> v;
    if (a)
      for (Attribute e : a)
        v.push_back(cast<FloatAttr>(e).getValueAsDouble());
    return v;
  };
  SmallVector<double> alphas = floats(alphaAttr), betas = floats(betaAttr);
  // Name, kind, whether alpha / beta are taken, and their defaults.
  struct Spec {
    const char *name;
    Activation::Kind kind;
    bool usesAlpha, usesBeta;
    double alpha, beta;
  };
  static const Spec specs[] = {
      {"relu", Activation::Relu, false, false, 0, 0},
      {"tanh", Activation::Tanh, false, false, 0, 0},
      {"sigmoid", Activation::Sigmoid, false, false, 0, 0},
      {"affine", Activation::Affine, true, true, 1.0, 0.0},
      {"leakyrelu", Activation::LeakyRelu, true, false, 0.01, 0},
      {"thresholdedrelu", Activation::ThresholdedRelu, true, false, 1.0, 0},
      {"scaledtanh", Activation::ScaledTanh, true, true, 1.0, 1.0},
      {"hardsigmoid", Activation::HardSigmoid, true, true, 0.2, 0.5},
      {"elu", Activation::Elu, true, false, 1.0, 0},
      {"softsign", Activation::Softsign, false, false, 0, 0},
      {"softplus", Activation::Softplus, false, false, 0, 0},
  };
  size_t ai = 0, bi = 0;
  out.clear();
  for (const std::string &name : names) {
    const Spec *spec = nullptr;
    for (const Spec &s : specs)
      if (name == s.name)
        spec = &s;
    if (!spec)
      return op->emitError("unknown activation function '") << name << "'";
    Activation a;
    a.kind = spec->kind;
    a.alpha =
        spec->usesAlpha && ai < alphas.size() ? alphas[ai++] : spec->alpha;
    a.beta = spec->usesBeta && bi < betas.size() ? betas[bi++] : spec->beta;
    out.push_back(a);
  }
  return success();
}

Value clampLikeStd(Builder &b, Value v, Value lo, Value hi) {
  Value m = b.create<arith::SelectOp>(
      b.create<arith::CmpFOp>(arith::CmpFPredicate::OLT, v, lo), lo, v);
  return b.create<arith::SelectOp>(
      b.create<arith::CmpFOp>(arith::CmpFPredicate::OLT, hi, m), hi, m);
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
