//===- Elementwise.cpp - Portable lowering of the Elementwise family ------===//
//
// Unary math and activation functions, one linalg.generic each, with the
// semantics of compiler/Reference/Kernels/{Unary,Activations}.cpp: f16 and
// bf16 computed in f32, f64 in f64, integers where the ONNX op allows them.
// Also the family's entry point, registerPortableElementwise; the binary,
// variadic and conversion ops live in ElementwiseBinary.cpp and
// ElementwiseCast.cpp.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>

using namespace mlir;

namespace mlcc::portable {
namespace ew {
namespace {

/// Computes one element of a unary op from the compute value of its input.
using UnaryFn =
    llvm::function_ref<Value(Scalar &s, const ElemType &t, Value x)>;

/// Lowers a unary op whose input has a type in `set`; the result has the
/// input's type, or bool when `boolResult`.
LogicalResult lowerUnary(PortableOp &p, unsigned set, UnaryFn fn,
                         bool boolResult = false) {
  if (failed(checkPresent(p, 1)) || failed(checkOperandType(p, 0, set)))
    return failure();
  const ElemType t = elemTypeOf(p.op->getOperand(0));
  buildElementwise(p.b, p.loc, p.operands[0], p.results[0],
                   [&](Scalar &s, ValueRange in) {
                     Value y = fn(s, t, s.load(t, in[0]));
                     return SmallVector<Value>{boolResult ? y : s.store(t, y)};
                   });
  return success();
}

/// Float functions that are one math op.
template <typename MathOp> LogicalResult lowerMath(PortableOp &p) {
  return lowerUnary(p, kFloat, [](Scalar &s, const ElemType &, Value x) {
    return Value(s.b.create<MathOp>(s.loc, x));
  });
}

//===----------------------------------------------------------------------===//
// Unary math
//===----------------------------------------------------------------------===//

LogicalResult lowerAbs(PortableOp &p) {
  return lowerUnary(p, kNumeric, [](Scalar &s, const ElemType &t, Value x) {
    if (t.isFloat()) // also clears the sign of -0
      return Value(s.b.create<math::AbsFOp>(s.loc, x));
    if (t.isUnsigned())
      return x;
    Value zero = s.cst(t.compute, 0);
    return s.select(s.cmp(Scalar::Cmp::Lt, t, x, zero), s.sub(t, zero, x), x);
  });
}

LogicalResult lowerNeg(PortableOp &p) {
  return lowerUnary(p, kFloatOrSigned,
                    [](Scalar &s, const ElemType &t, Value x) {
                      if (t.isFloat())
                        return Value(s.b.create<arith::NegFOp>(s.loc, x));
                      return s.sub(t, s.cst(t.compute, 0), x);
                    });
}

// -1, 0 or 1; nan and -0 stay as they are (numpy.sign).
LogicalResult lowerSign(PortableOp &p) {
  return lowerUnary(p, kNumeric, [](Scalar &s, const ElemType &t, Value x) {
    Value zero = s.cst(t.compute, 0);
    Value r = x;
    if (!t.isUnsigned())
      r = s.select(s.cmp(Scalar::Cmp::Lt, t, x, zero), s.cst(t.compute, -1), r);
    return s.select(s.cmp(Scalar::Cmp::Gt, t, x, zero), s.cst(t.compute, 1), r);
  });
}

LogicalResult lowerReciprocal(PortableOp &p) {
  return lowerUnary(p, kFloat, [](Scalar &s, const ElemType &t, Value x) {
    return s.div(s.cst(t.compute, 1), x);
  });
}

// Erf-13 also takes integers: erf in double, truncated back.
LogicalResult lowerErf(PortableOp &p) {
  return lowerUnary(p, kNumeric, [](Scalar &s, const ElemType &t, Value x) {
    if (t.isFloat())
      return Value(s.b.create<math::ErfOp>(s.loc, x));
    Value e = s.b.create<math::ErfOp>(s.loc, s.toF64(t, x));
    // erf is in [-1, 1]: the conversion cannot overflow.
    if (t.isSigned())
      return Value(s.b.create<arith::FPToSIOp>(s.loc, t.compute, e));
    return Value(s.b.create<arith::FPToUIOp>(s.loc, t.compute, e));
  });
}

LogicalResult lowerIsNaN(PortableOp &p) {
  return lowerUnary(
      p, kFloat,
      [](Scalar &s, const ElemType &, Value x) { return s.isNan(x); },
      /*boolResult=*/true);
}

LogicalResult lowerIsInf(PortableOp &p) {
  const bool negative = intAttr(p.op, "detect_negative", 1) != 0;
  const bool positive = intAttr(p.op, "detect_positive", 1) != 0;
  return lowerUnary(
      p, kFloat,
      [&](Scalar &s, const ElemType &t, Value x) {
        const double inf = std::numeric_limits<double>::infinity();
        Value isPos = s.cmp(Scalar::Cmp::Eq, t, x, s.cst(t.compute, inf));
        Value isNeg = s.cmp(Scalar::Cmp::Eq, t, x, s.cst(t.compute, -inf));
        if (positive && negative)
          return s.orI(isPos, isNeg);
        if (positive)
          return isPos;
        if (negative)
          return isNeg;
        return s.boolCst(false);
      },
      /*boolResult=*/true);
}

LogicalResult lowerNot(PortableOp &p) {
  return lowerUnary(p, kBool, [](Scalar &s, const ElemType &, Value x) {
    return Value(s.b.create<arith::XOrIOp>(s.loc, x, s.boolCst(true)));
  });
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

/// v < lo ? lo : (v > hi ? hi : v): nan passes through.
Value clampNan(Scalar &s, const ElemType &t, Value v, double lo, double hi) {
  Value loV = s.cst(t.compute, lo), hiV = s.cst(t.compute, hi);
  Value upper = s.select(s.cmp(Scalar::Cmp::Gt, t, v, hiV), hiV, v);
  return s.select(s.cmp(Scalar::Cmp::Lt, t, v, loV), loV, upper);
}

Value expm1(Scalar &s, Value x) { return s.b.create<math::ExpM1Op>(s.loc, x); }

// Relu-14 also takes signed integers. nan stays nan.
LogicalResult lowerRelu(PortableOp &p) {
  return lowerUnary(
      p, kFloatOrSigned, [](Scalar &s, const ElemType &t, Value x) {
        Value zero = s.cst(t.compute, 0);
        return s.select(s.cmp(Scalar::Cmp::Lt, t, x, zero), zero, x);
      });
}

LogicalResult lowerLeakyRelu(PortableOp &p) {
  const double alpha = floatAttr(p.op, "alpha", 0.01f);
  return lowerUnary(p, kFloat, [&](Scalar &s, const ElemType &t, Value x) {
    Value neg = s.cmp(Scalar::Cmp::Lt, t, x, s.cst(t.compute, 0));
    return s.select(neg, s.mul(t, s.cst(t.compute, alpha), x), x);
  });
}

LogicalResult lowerThresholdedRelu(PortableOp &p) {
  const double alpha = floatAttr(p.op, "alpha", 1.0f);
  return lowerUnary(p, kFloat, [&](Scalar &s, const ElemType &t, Value x) {
    Value above = s.cmp(Scalar::Cmp::Gt, t, x, s.cst(t.compute, alpha));
    return s.select(above, x, s.cst(t.compute, 0));
  });
}

// alpha * (exp(x) - 1) below 0, via expm1 for accuracy near 0.
LogicalResult lowerElu(PortableOp &p) {
  const double alpha = floatAttr(p.op, "alpha", 1.0f);
  return lowerUnary(p, kFloat, [&](Scalar &s, const ElemType &t, Value x) {
    Value neg = s.cmp(Scalar::Cmp::Lt, t, x, s.cst(t.compute, 0));
    return s.select(neg, s.mul(t, s.cst(t.compute, alpha), expm1(s, x)), x);
  });
}

LogicalResult lowerSelu(PortableOp &p) {
  const double alpha = floatAttr(p.op, "alpha", 1.67326319217681884765625f);
  const double gamma = floatAttr(p.op, "gamma", 1.05070102214813232421875f);
  return lowerUnary(p, kFloat, [&](Scalar &s, const ElemType &t, Value x) {
    Value nonPos = s.cmp(Scalar::Cmp::Le, t, x, s.cst(t.compute, 0));
    Value v =
        s.select(nonPos, s.mul(t, s.cst(t.compute, alpha), expm1(s, x)), x);
    return s.mul(t, s.cst(t.compute, gamma), v);
  });
}

LogicalResult lowerCelu(PortableOp &p) {
  const double alpha = floatAttr(p.op, "alpha", 1.0f);
  return lowerUnary(p, kFloat, [&](Scalar &s, const ElemType &t, Value x) {
    Value a = s.cst(t.compute, alpha);
    Value pos = s.cmp(Scalar::Cmp::Gt, t, x, s.cst(t.compute, 0));
    return s.select(pos, x, s.mul(t, a, expm1(s, s.div(x, a))));
  });
}

LogicalResult lowerSigmoid(PortableOp &p) {
  return lowerUnary(p, kFloat, [](Scalar &s, const ElemType &t, Value x) {
    Value one = s.cst(t.compute, 1);
    Value e =
        s.b.create<math::ExpOp>(s.loc, s.b.create<arith::NegFOp>(s.loc, x));
    return s.div(one, s.add(t, one, e));
  });
}

LogicalResult lowerHardSigmoid(PortableOp &p) {
  const double alpha = floatAttr(p.op, "alpha", 0.2f);
  const double beta = floatAttr(p.op, "beta", 0.5f);
  return lowerUnary(p, kFloat, [&](Scalar &s, const ElemType &t, Value x) {
    Value v =
        s.add(t, s.mul(t, s.cst(t.compute, alpha), x), s.cst(t.compute, beta));
    return clampNan(s, t, v, 0, 1);
  });
}

// x * hard_sigmoid(x) with alpha = 1/6 (as a division, like the reference)
// and beta = 0.5.
LogicalResult lowerHardSwish(PortableOp &p) {
  return lowerUnary(p, kFloat, [](Scalar &s, const ElemType &t, Value x) {
    Value v = s.add(t, s.div(x, s.cst(t.compute, 6)), s.cst(t.compute, 0.5));
    return s.mul(t, x, clampNan(s, t, v, 0, 1));
  });
}

// log(exp(x) + 1), written so that exp cannot overflow in the arm taken.
LogicalResult lowerSoftplus(PortableOp &p) {
  return lowerUnary(p, kFloat, [](Scalar &s, const ElemType &t, Value x) {
    auto log1pExp = [&](Value v) {
      return Value(
          s.b.create<math::Log1pOp>(s.loc, s.b.create<math::ExpOp>(s.loc, v)));
    };
    Value pos = s.cmp(Scalar::Cmp::Gt, t, x, s.cst(t.compute, 0));
    Value negX = s.b.create<arith::NegFOp>(s.loc, x);
    return s.select(pos, s.add(t, x, log1pExp(negX)), log1pExp(x));
  });
}

LogicalResult lowerSoftsign(PortableOp &p) {
  return lowerUnary(p, kFloat, [](Scalar &s, const ElemType &t, Value x) {
    Value absX = s.b.create<math::AbsFOp>(s.loc, x);
    return s.div(x, s.add(t, s.cst(t.compute, 1), absX));
  });
}

// x + bias below -lambd, x - bias above lambd, else 0. Integers compute in
// double and are truncated back with saturation.
LogicalResult lowerShrink(PortableOp &p) {
  const double bias = floatAttr(p.op, "bias", 0.0f);
  const double lambd = floatAttr(p.op, "lambd", 0.5f);
  return lowerUnary(p, kNumeric, [&](Scalar &s, const ElemType &t, Value x) {
    const ElemType f64 = elemTypeOf(s.b.getF64Type());
    const ElemType &c = t.isFloat() ? t : f64;
    Value v = t.isFloat() ? x : s.toF64(t, x);
    Value below = s.cmp(Scalar::Cmp::Lt, c, v, s.cst(c.compute, -lambd));
    Value above = s.cmp(Scalar::Cmp::Gt, c, v, s.cst(c.compute, lambd));
    Value biasV = s.cst(c.compute, bias);
    Value r = s.select(above, s.sub(c, v, biasV), s.cst(c.compute, 0));
    r = s.select(below, s.add(c, v, biasV), r);
    return t.isFloat() ? r : s.f64ToIntSaturating(t, r);
  });
}

// graph.gelu in the reference's order of operations (Kernels/Gelu.cpp):
// 0.5 x (1 + erf(x / sqrt 2)), or with tanh(sqrt(2 / pi) (x + 0.044715 x^3)).
LogicalResult lowerGelu(PortableOp &p) {
  StringRef approximate = "none";
  if (auto a = p.op->getAttrOfType<StringAttr>("approximate"))
    approximate = a.getValue();
  if (approximate != "none" && approximate != "tanh")
    return p.op->emitError() << "approximate = '" << approximate
                             << "' is not supported (none or tanh)";
  const bool tanhForm = approximate == "tanh";
  return lowerUnary(p, kFloat, [&](Scalar &s, const ElemType &t, Value x) {
    Value half = s.mul(t, s.cst(t.compute, 0.5), x);
    Value f;
    if (!tanhForm) {
      Value z = s.div(x, s.cst(t.compute, 1.41421356237309504880));
      f = s.b.create<math::ErfOp>(s.loc, z);
    } else {
      Value cube = s.mul(t, s.mul(t, x, x), x);
      Value inner = s.add(t, x, s.mul(t, s.cst(t.compute, 0.044715), cube));
      Value u = s.mul(t, s.cst(t.compute, 0.79788456080286535588), inner);
      f = s.b.create<math::TanhOp>(s.loc, u);
    }
    return s.mul(t, half, s.add(t, s.cst(t.compute, 1), f));
  });
}

} // namespace

void registerUnary(PortableRegistry &registry) {
  registry["graph.abs"] = &lowerAbs;
  registry["graph.acos"] = &lowerMath<math::AcosOp>;
  registry["graph.acosh"] = &lowerMath<math::AcoshOp>;
  registry["graph.asin"] = &lowerMath<math::AsinOp>;
  registry["graph.asinh"] = &lowerMath<math::AsinhOp>;
  registry["graph.atan"] = &lowerMath<math::AtanOp>;
  registry["graph.atanh"] = &lowerMath<math::AtanhOp>;
  registry["graph.ceil"] = &lowerMath<math::CeilOp>;
  registry["graph.cos"] = &lowerMath<math::CosOp>;
  registry["graph.cosh"] = &lowerMath<math::CoshOp>;
  registry["graph.erf"] = &lowerErf;
  registry["graph.exp"] = &lowerMath<math::ExpOp>;
  registry["graph.floor"] = &lowerMath<math::FloorOp>;
  registry["graph.log"] = &lowerMath<math::LogOp>;
  registry["graph.neg"] = &lowerNeg;
  registry["graph.reciprocal"] = &lowerReciprocal;
  // Halves to even (numpy.round).
  registry["graph.round"] = &lowerMath<math::RoundEvenOp>;
  registry["graph.sign"] = &lowerSign;
  registry["graph.sin"] = &lowerMath<math::SinOp>;
  registry["graph.sinh"] = &lowerMath<math::SinhOp>;
  registry["graph.sqrt"] = &lowerMath<math::SqrtOp>;
  registry["graph.tan"] = &lowerMath<math::TanOp>;
  registry["graph.tanh"] = &lowerMath<math::TanhOp>;
  registry["graph.is_nan"] = &lowerIsNaN;
  registry["graph.is_inf"] = &lowerIsInf;
  registry["graph.not"] = &lowerNot;

  registry["graph.relu"] = &lowerRelu;
  registry["graph.leaky_relu"] = &lowerLeakyRelu;
  registry["graph.thresholded_relu"] = &lowerThresholdedRelu;
  registry["graph.elu"] = &lowerElu;
  registry["graph.selu"] = &lowerSelu;
  registry["graph.celu"] = &lowerCelu;
  registry["graph.sigmoid"] = &lowerSigmoid;
  registry["graph.hard_sigmoid"] = &lowerHardSigmoid;
  registry["graph.hard_swish"] = &lowerHardSwish;
  registry["graph.gelu"] = &lowerGelu;
  registry["graph.softplus"] = &lowerSoftplus;
  registry["graph.softsign"] = &lowerSoftsign;
  registry["graph.shrink"] = &lowerShrink;
}

} // namespace ew

void registerPortableElementwise(PortableRegistry &registry) {
  ew::registerUnary(registry);
  ew::registerBinary(registry);
  ew::registerCast(registry);
}

} // namespace mlcc::portable
