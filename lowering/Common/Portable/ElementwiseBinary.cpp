//===- ElementwiseBinary.cpp - Portable lowering of broadcasting ops ------===//
//
// Binary arithmetic, pow, mod, bit shifts, logical ops, comparisons, where,
// the variadic max/min/sum/mean, clip and prelu: one linalg.generic each,
// its inputs read through ONNX multidirectional broadcasting maps. The
// semantics are those of compiler/Reference/Kernels/{Binary,Variadic,
// Activations}.cpp. Integer division and remainder by zero, which the
// reference rejects when it sees the data, cannot be rejected at compile
// time; they give the dividend (div) or 0 (mod) instead of trapping.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;

namespace mlcc::portable {
namespace ew {
namespace {

using Cmp = Scalar::Cmp;

//===----------------------------------------------------------------------===//
// Binary ops of one operand type
//===----------------------------------------------------------------------===//

/// Computes one element from the compute values of A and B (type `t`).
using BinaryFn =
    llvm::function_ref<Value(Scalar &s, const ElemType &t, Value a, Value c)>;

/// Fails unless operand `index` has the element type of operand 0.
LogicalResult checkSameType(PortableOp &p, unsigned index) {
  Type t0 = cast<ShapedType>(p.op->getOperand(0).getType()).getElementType();
  auto shaped = dyn_cast<ShapedType>(p.op->getOperand(index).getType());
  if (!shaped || shaped.getElementType() != t0)
    return p.op->emitError()
           << "input " << index << " has type "
           << p.op->getOperand(index).getType() << ", expected element type "
           << t0 << " like input 0";
  return success();
}

/// Lowers a broadcasting binary op whose operands share a type in `set`;
/// the result has that type, or bool when `boolResult`.
LogicalResult lowerBinary(PortableOp &p, unsigned set, BinaryFn fn,
                          bool boolResult = false) {
  if (failed(checkPresent(p, 2)) || failed(checkOperandType(p, 0, set)) ||
      failed(checkSameType(p, 1)))
    return failure();
  const ElemType t = elemTypeOf(p.op->getOperand(0));
  buildElementwise(p.b, p.loc, {p.operands[0], p.operands[1]}, p.results[0],
                   [&](Scalar &s, ValueRange in) {
                     Value r = fn(s, t, s.load(t, in[0]), s.load(t, in[1]));
                     return SmallVector<Value>{boolResult ? r : s.store(t, r)};
                   });
  return success();
}

LogicalResult lowerAdd(PortableOp &p) {
  return lowerBinary(p, kNumeric,
                     [](Scalar &s, const ElemType &t, Value a, Value c) {
                       return s.add(t, a, c);
                     });
}

LogicalResult lowerSub(PortableOp &p) {
  return lowerBinary(p, kNumeric,
                     [](Scalar &s, const ElemType &t, Value a, Value c) {
                       return s.sub(t, a, c);
                     });
}

LogicalResult lowerMul(PortableOp &p) {
  return lowerBinary(p, kNumeric,
                     [](Scalar &s, const ElemType &t, Value a, Value c) {
                       return s.mul(t, a, c);
                     });
}

/// An integer divisor that cannot trap: 1 where `c` is 0, and also where it
/// is -1 for signed types (INT_MIN / -1 overflows; callers handle -1).
Value safeDivisor(Scalar &s, const ElemType &t, Value c) {
  Value one = s.cst(t.compute, 1);
  Value bad = s.cmp(Cmp::Eq, t, c, s.cst(t.compute, 0));
  if (t.isSigned())
    bad = s.orI(bad, s.cmp(Cmp::Eq, t, c, s.cst(t.compute, -1)));
  return s.select(bad, one, c);
}

// Integers truncate toward zero, like C; x / -1 wraps (INT_MIN / -1).
LogicalResult lowerDiv(PortableOp &p) {
  return lowerBinary(
      p, kNumeric, [](Scalar &s, const ElemType &t, Value a, Value c) {
        if (t.isFloat())
          return s.div(a, c);
        Value d = safeDivisor(s, t, c);
        if (t.isUnsigned())
          return Value(s.b.create<arith::DivUIOp>(s.loc, a, d));
        Value q = s.b.create<arith::DivSIOp>(s.loc, a, d);
        Value minusOne = s.cmp(Cmp::Eq, t, c, s.cst(t.compute, -1));
        return s.select(minusOne, s.sub(t, s.cst(t.compute, 0), a), q);
      });
}

// fmod = 0: the result takes the divisor's sign (numpy.mod), also on
// floats; fmod = 1: the dividend's (C fmod and %).
LogicalResult lowerMod(PortableOp &p) {
  const int64_t fmod = intAttr(p.op, "fmod", 0);
  if (fmod != 0 && fmod != 1)
    return p.op->emitError() << "fmod is " << fmod << ", expected 0 or 1";
  return lowerBinary(
      p, kNumeric, [&](Scalar &s, const ElemType &t, Value a, Value c) {
        Value zero = s.cst(t.compute, 0);
        Value r;
        if (t.isFloat()) {
          r = s.b.create<arith::RemFOp>(s.loc, a, c);
        } else if (t.isUnsigned()) {
          return Value(
              s.b.create<arith::RemUIOp>(s.loc, a, safeDivisor(s, t, c)));
        } else {
          r = s.b.create<arith::RemSIOp>(s.loc, a, safeDivisor(s, t, c));
          r = s.select(s.cmp(Cmp::Eq, t, c, s.cst(t.compute, -1)), zero, r);
        }
        if (fmod)
          return r;
        Value signsDiffer = s.b.create<arith::XOrIOp>(
            s.loc, s.cmp(Cmp::Lt, t, r, zero), s.cmp(Cmp::Lt, t, c, zero));
        Value fix = s.andI(s.cmp(Cmp::Ne, t, r, zero), signsDiffer);
        return s.select(fix, s.add(t, r, c), r);
      });
}

// Shifting by the bit width or more gives 0.
LogicalResult lowerBitShift(PortableOp &p) {
  auto dir = p.op->getAttrOfType<StringAttr>("direction");
  if (!dir || (dir.getValue() != "LEFT" && dir.getValue() != "RIGHT"))
    return p.op->emitError()
           << "direction is '" << (dir ? dir.getValue() : StringRef())
           << "', expected LEFT or RIGHT";
  const bool left = dir.getValue() == "LEFT";
  return lowerBinary(
      p, kUnsigned, [&](Scalar &s, const ElemType &t, Value a, Value c) {
        Value zero = s.cst(t.compute, 0);
        unsigned width = cast<IntegerType>(t.compute).getWidth();
        Value tooFar = s.cmp(Cmp::Ge, t, c, s.cst(t.compute, width));
        // A shift by the width or more is poison: never emit one.
        Value amount = s.select(tooFar, zero, c);
        Value r = left ? Value(s.b.create<arith::ShLIOp>(s.loc, a, amount))
                       : Value(s.b.create<arith::ShRUIOp>(s.loc, a, amount));
        return s.select(tooFar, zero, r);
      });
}

/// Logical ops and comparisons: the result is bool.
template <Cmp kind, unsigned set> LogicalResult lowerCompare(PortableOp &p) {
  return lowerBinary(
      p, set,
      [](Scalar &s, const ElemType &t, Value a, Value c) {
        return s.cmp(kind, t, a, c);
      },
      /*boolResult=*/true);
}

template <typename LogicOp> LogicalResult lowerLogic(PortableOp &p) {
  return lowerBinary(
      p, kBool,
      [](Scalar &s, const ElemType &, Value a, Value c) {
        return Value(s.b.create<LogicOp>(s.loc, a, c));
      },
      /*boolResult=*/true);
}

//===----------------------------------------------------------------------===//
// graph.pow
//===----------------------------------------------------------------------===//

/// Integer power by squaring, wrapping on overflow, over every bit of the
/// exponent (a fixed trip count LLVM can unroll). Negative exponents give
/// the truncated reciprocal: 0 except for bases 1 and -1.
Value intPow(Scalar &s, const ElemType &x, const ElemType &y, Value base,
             Value exp) {
  OpBuilder &b = s.b;
  Value zeroE = s.cst(y.compute, 0);
  Value negExp, expOdd;
  if (y.isSigned()) {
    negExp = s.cmp(Cmp::Lt, y, exp, zeroE);
    // The low bit gives the parity of negative exponents too.
    expOdd = s.cmp(Cmp::Ne, y, s.andI(exp, s.cst(y.compute, 1)), zeroE);
    exp = s.select(negExp, zeroE, exp);
  }
  unsigned width = cast<IntegerType>(y.compute).getWidth();
  Value lb = b.create<arith::ConstantIndexOp>(s.loc, 0);
  Value ub = b.create<arith::ConstantIndexOp>(s.loc, width);
  Value step = b.create<arith::ConstantIndexOp>(s.loc, 1);
  Value one = s.cst(x.compute, 1);
  auto loop = b.create<scf::ForOp>(
      s.loc, lb, ub, step, ValueRange{one, base, exp},
      [&](OpBuilder &nb, Location loc, Value, ValueRange it) {
        Scalar ls{nb, loc};
        Value bit = ls.andI(it[2], ls.cst(y.compute, 1));
        Value odd = ls.cmp(Cmp::Ne, y, bit, ls.cst(y.compute, 0));
        Value result = ls.select(odd, ls.mul(x, it[0], it[1]), it[0]);
        Value squared = ls.mul(x, it[1], it[1]);
        Value rest =
            nb.create<arith::ShRUIOp>(loc, it[2], ls.cst(y.compute, 1));
        nb.create<scf::YieldOp>(loc, ValueRange{result, squared, rest});
      });
  Value r = loop.getResult(0);
  if (!negExp)
    return r;
  // base 1 -> 1; base -1 -> -1 or 1 by the exponent's parity; else 0.
  Value neg = s.select(s.cmp(Cmp::Eq, x, base, one), one, s.cst(x.compute, 0));
  if (x.isSigned()) {
    Value minusOne = s.cst(x.compute, -1);
    Value pm = s.select(expOdd, minusOne, one);
    neg = s.select(s.cmp(Cmp::Eq, x, base, minusOne), pm, neg);
  }
  return s.select(negExp, neg, r);
}

// The exponent may have another type than the base (Pow-15: T and T1); the
// result has the base's type. float ^ same float stays in that float type;
// a float base with another exponent type computes in double (C++'s
// std::pow promotion); an integer base with a float exponent computes in
// double and converts back with saturation.
LogicalResult lowerPow(PortableOp &p) {
  if (failed(checkPresent(p, 2)) || failed(checkOperandType(p, 0, kNumeric)) ||
      failed(checkOperandType(p, 1, kNumeric)))
    return failure();
  const ElemType x = elemTypeOf(p.op->getOperand(0));
  const ElemType y = elemTypeOf(p.op->getOperand(1));
  buildElementwise(p.b, p.loc, {p.operands[0], p.operands[1]}, p.results[0],
                   [&](Scalar &s, ValueRange in) {
                     Value a = s.load(x, in[0]), c = s.load(y, in[1]);
                     Value r;
                     if (x.isFloat() && y.isFloat() && x.compute == y.compute) {
                       r = s.b.create<math::PowFOp>(s.loc, a, c);
                     } else if (x.isFloat() || y.isFloat()) {
                       Value d = s.b.create<math::PowFOp>(s.loc, s.toF64(x, a),
                                                          s.toF64(y, c));
                       if (!x.isFloat())
                         r = s.f64ToIntSaturating(x, d);
                       else if (x.compute.isF64())
                         r = d;
                       else
                         r = s.b.create<arith::TruncFOp>(s.loc, x.compute, d);
                     } else {
                       r = intPow(s, x, y, a, c);
                     }
                     return SmallVector<Value>{s.store(x, r)};
                   });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.where
//===----------------------------------------------------------------------===//

LogicalResult lowerWhere(PortableOp &p) {
  if (failed(checkPresent(p, 3)) || failed(checkOperandType(p, 0, kBool)) ||
      failed(checkOperandType(p, 1, kAny)))
    return failure();
  Type tx = cast<ShapedType>(p.op->getOperand(1).getType()).getElementType();
  Type ty = cast<ShapedType>(p.op->getOperand(2).getType()).getElementType();
  if (tx != ty)
    return p.op->emitError() << "X and Y have types " << tx << " and " << ty
                             << ", expected one type";
  // Selection copies elements: the storage values are enough.
  buildElementwise(p.b, p.loc, {p.operands[0], p.operands[1], p.operands[2]},
                   p.results[0], [](Scalar &s, ValueRange in) {
                     return SmallVector<Value>{s.select(in[0], in[1], in[2])};
                   });
  return success();
}

//===----------------------------------------------------------------------===//
// Variadic ops
//===----------------------------------------------------------------------===//

enum class Fold { Sum, Mean, Max, Min };

/// max/min: nan propagates (numpy.maximum/minimum): a if a is nan or wins,
/// else b.
Value foldStep(Scalar &s, Fold fold, const ElemType &t, Value acc, Value x) {
  switch (fold) {
  case Fold::Sum:
  case Fold::Mean:
    return s.add(t, acc, x);
  case Fold::Max:
  case Fold::Min: {
    Value wins = s.cmp(fold == Fold::Max ? Cmp::Gt : Cmp::Lt, t, acc, x);
    if (t.isFloat())
      wins = s.orI(wins, s.isNan(acc));
    return s.select(wins, acc, x);
  }
  }
  return acc;
}

/// Inputs broadcast together and folded left to right. f16/bf16 results
/// are rounded after every step, as the reference stores each partial
/// result.
LogicalResult lowerVariadic(PortableOp &p, Fold fold, unsigned set) {
  const unsigned n = p.operands.size();
  if (n == 0)
    return p.op->emitError("expected at least one input");
  if (failed(checkPresent(p, n)) || failed(checkOperandType(p, 0, set)))
    return failure();
  for (unsigned i = 1; i < n; ++i)
    if (failed(checkSameType(p, i)))
      return failure();
  const ElemType t = elemTypeOf(p.op->getOperand(0));
  buildElementwise(p.b, p.loc, p.operands, p.results[0],
                   [&](Scalar &s, ValueRange in) {
                     Value acc = s.load(t, in[0]);
                     for (unsigned k = 1; k < n; ++k) {
                       acc = foldStep(s, fold, t, acc, s.load(t, in[k]));
                       if (t.isNarrowFloat())
                         acc = s.load(t, s.store(t, acc));
                     }
                     if (fold == Fold::Mean)
                       acc = s.div(acc, s.cst(t.compute, n));
                     return SmallVector<Value>{s.store(t, acc)};
                   });
  return success();
}

LogicalResult lowerSum(PortableOp &p) {
  return lowerVariadic(p, Fold::Sum, kFloat);
}
LogicalResult lowerMean(PortableOp &p) {
  return lowerVariadic(p, Fold::Mean, kFloat);
}
LogicalResult lowerMax(PortableOp &p) {
  return lowerVariadic(p, Fold::Max, kNumeric);
}
LogicalResult lowerMin(PortableOp &p) {
  return lowerVariadic(p, Fold::Min, kNumeric);
}

//===----------------------------------------------------------------------===//
// graph.clip
//===----------------------------------------------------------------------===//

/// The limits of the compute type of `t`, as the reference's defaults.
std::pair<Value, Value> typeLimits(Scalar &s, const ElemType &t) {
  if (t.isFloat()) {
    const double max = t.compute.isF64()
                           ? std::numeric_limits<double>::max()
                           : double(std::numeric_limits<float>::max());
    return {s.cst(t.compute, -max), s.cst(t.compute, max)};
  }
  unsigned w = cast<IntegerType>(t.compute).getWidth();
  if (t.isUnsigned())
    return {s.intCst(t.compute, 0), s.intCst(t.compute, -1)};
  const uint64_t min = uint64_t(1) << (w - 1);
  return {s.intCst(t.compute, static_cast<int64_t>(min)),
          s.intCst(t.compute, static_cast<int64_t>(min - 1))};
}

/// min(max(x, lo), hi): when lo > hi every element becomes hi; nan passes.
/// An absent bound is the type's limit, as in the reference.
LogicalResult lowerClip(PortableOp &p) {
  if (failed(checkPresent(p, 1)) || failed(checkOperandType(p, 0, kNumeric)))
    return failure();
  const ElemType t = elemTypeOf(p.op->getOperand(0));
  Scalar outer{p.b, p.loc};
  std::pair<Value, Value> limits = typeLimits(outer, t);
  Value lo = limits.first, hi = limits.second;
  for (unsigned i = 1; i < 3 && i < p.operands.size(); ++i) {
    if (!p.operands[i])
      continue;
    if (failed(checkSameType(p, i)))
      return failure();
    if (cast<MemRefType>(p.operands[i].getType()).getNumElements() != 1)
      return p.op->emitError()
             << (i == 1 ? "min" : "max") << " is not a scalar";
    Value v = outer.load(t, loadScalar(p.b, p.loc, p.operands[i]));
    (i == 1 ? lo : hi) = v;
  }
  buildElementwise(p.b, p.loc, p.operands[0], p.results[0],
                   [&](Scalar &s, ValueRange in) {
                     Value v = s.load(t, in[0]);
                     v = s.select(s.cmp(Cmp::Lt, t, v, lo), lo, v);
                     v = s.select(s.cmp(Cmp::Gt, t, v, hi), hi, v);
                     return SmallVector<Value>{s.store(t, v)};
                   });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.prelu
//===----------------------------------------------------------------------===//

/// How the slope is read: numpy-style broadcast to X's shape, or, for a 1-d
/// slope of size C = X.dim(1) that does not broadcast, per channel (the
/// PRelu-6 form old PyTorch exports still use). Null if neither applies.
AffineMap slopeMap(MLIRContext *ctx, ArrayRef<int64_t> x,
                   ArrayRef<int64_t> slope) {
  bool fits = slope.size() <= x.size();
  for (size_t i = 0; fits && i < slope.size(); ++i) {
    int64_t d = slope[slope.size() - 1 - i];
    fits = d == 1 || d == x[x.size() - 1 - i];
  }
  if (fits)
    return broadcastMap(ctx, slope, x);
  if (slope.size() == 1 && x.size() >= 2 && slope[0] == x[1])
    return AffineMap::get(x.size(), 0, getAffineDimExpr(1, ctx), ctx);
  return {};
}

LogicalResult lowerPRelu(PortableOp &p) {
  if (failed(checkPresent(p, 2)) || failed(checkOperandType(p, 0, kNumeric)) ||
      failed(checkSameType(p, 1)))
    return failure();
  const ElemType t = elemTypeOf(p.op->getOperand(0));
  auto xType = cast<MemRefType>(p.operands[0].getType());
  auto sType = cast<MemRefType>(p.operands[1].getType());
  AffineMap sMap =
      slopeMap(p.b.getContext(), xType.getShape(), sType.getShape());
  if (!sMap)
    return p.op->emitError() << "slope of type " << sType
                             << " does not broadcast to input type " << xType;
  AffineMap xMap =
      AffineMap::getMultiDimIdentityMap(xType.getRank(), p.b.getContext());
  buildElementwise(p.b, p.loc, {p.operands[0], p.operands[1]}, p.results[0],
                   [&](Scalar &s, ValueRange in) {
                     if (t.isUnsigned()) // never negative
                       return SmallVector<Value>{in[0]};
                     Value v = s.load(t, in[0]), slope = s.load(t, in[1]);
                     Value neg = s.cmp(Cmp::Lt, t, v, s.cst(t.compute, 0));
                     Value r = s.select(neg, s.mul(t, slope, v), v);
                     return SmallVector<Value>{s.store(t, r)};
                   },
                   {xMap, sMap});
  return success();
}

} // namespace

void registerBinary(PortableRegistry &registry) {
  registry["graph.add"] = &lowerAdd;
  registry["graph.sub"] = &lowerSub;
  registry["graph.mul"] = &lowerMul;
  registry["graph.div"] = &lowerDiv;
  registry["graph.mod"] = &lowerMod;
  registry["graph.pow"] = &lowerPow;
  registry["graph.bit_shift"] = &lowerBitShift;
  registry["graph.and"] = &lowerLogic<arith::AndIOp>;
  registry["graph.or"] = &lowerLogic<arith::OrIOp>;
  registry["graph.xor"] = &lowerLogic<arith::XOrIOp>;
  registry["graph.equal"] = &lowerCompare<Cmp::Eq, kAny>;
  registry["graph.greater"] = &lowerCompare<Cmp::Gt, kNumeric>;
  registry["graph.greater_or_equal"] = &lowerCompare<Cmp::Ge, kNumeric>;
  registry["graph.less"] = &lowerCompare<Cmp::Lt, kNumeric>;
  registry["graph.less_or_equal"] = &lowerCompare<Cmp::Le, kNumeric>;
  registry["graph.where"] = &lowerWhere;
  registry["graph.sum"] = &lowerSum;
  registry["graph.mean"] = &lowerMean;
  registry["graph.max"] = &lowerMax;
  registry["graph.min"] = &lowerMin;
  registry["graph.clip"] = &lowerClip;
  registry["graph.prelu"] = &lowerPRelu;
}

} // namespace ew
} // namespace mlcc::portable
