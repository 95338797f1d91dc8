//===- Reductions.cpp - Portable lowering of the Reductions family ---------===//
//
// graph.reduce_{sum,mean,max,min,prod,l1,l2,log_sum,log_sum_exp,sum_square}
// (the rest of the family lives in Reductions*.cpp and Normalization*.cpp).
//
// Semantics are those of the reference kernel (compiler/Reference/Kernels/
// Reduce.cpp): floats accumulate in double, integers in 64 bits (wrapping),
// max/min propagate nan; an empty reduction gives the identity (0, 1,
// -inf/lowest, nan for a float mean, -inf for log_sum[_exp]); with empty
// axes and noop_with_empty_axes=1 every element is reduced on its own, so
// the pre/post functions (square, abs, sqrt, log) still apply.
//
// Code shape: one loop nest over the kept dims, and inside it one over the
// reduced dims carrying the accumulator in registers (scf.for iter_args),
// then the finished value is stored. No scratch buffers.
//
// Axes given by a non-constant operand (the node tests feed them as graph
// inputs) are resolved from the static shapes where those leave only one
// possibility; otherwise the candidates consistent with the shapes are all
// emitted and the one matching the axes read at run time is selected.
//
//===----------------------------------------------------------------------===//

#include "ReductionsSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace mlcc::portable {
namespace red {
namespace {

enum class RK {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  L1,
  L2,
  LogSum,
  LogSumExp,
  SumSquare
};

/// Max/min of integers stay in the element type (no widening needed, and
/// the identity is the type's own limit); every other integer reduction
/// accumulates in i64 like the reference.
bool accInStorage(RK k) { return k == RK::Max || k == RK::Min; }

/// The identity of the reduction in the accumulator type.
Value identity(Builder &b, RK k, const Elem &e) {
  if (e.isFloat) {
    double inf = std::numeric_limits<double>::infinity();
    double v = k == RK::Prod ? 1.0 : k == RK::Max ? -inf : k == RK::Min ? inf
                                                                        : 0.0;
    return cF64(b, v);
  }
  if (!accInStorage(k))
    return cInt(b, b.getI64Type(), k == RK::Prod ? 1 : 0);
  unsigned w = e.width;
  int64_t lowest, highest;
  if (e.isUnsigned) {
    lowest = 0;
    highest = -1; // all ones
  } else {
    lowest = w == 64 ? std::numeric_limits<int64_t>::min()
                     : -(int64_t(1) << (w - 1));
    highest = w == 64 ? std::numeric_limits<int64_t>::max()
                      : (int64_t(1) << (w - 1)) - 1;
  }
  return cInt(b, e.storage, k == RK::Max ? lowest : highest);
}

/// One element into the accumulator.
Value step(Builder &b, RK k, const Elem &e, Value acc, Value x) {
  if (e.isFloat) {
    x = toF64(b, x, e);
    switch (k) {
    case RK::Max:
      return nanMax(b, acc, x);
    case RK::Min:
      return nanMin(b, acc, x);
    case RK::Prod:
      return accMul(b, acc, x);
    case RK::L1:
      return accAdd(b, acc, b.create<math::AbsFOp>(x));
    case RK::L2:
    case RK::SumSquare:
      return accAdd(b, acc, b.create<arith::MulFOp>(x, x));
    default:
      return accAdd(b, acc, x);
    }
  }
  if (k == RK::Max)
    return e.isUnsigned ? b.create<arith::MaxUIOp>(acc, x).getResult()
                        : b.create<arith::MaxSIOp>(acc, x).getResult();
  if (k == RK::Min)
    return e.isUnsigned ? b.create<arith::MinUIOp>(acc, x).getResult()
                        : b.create<arith::MinSIOp>(acc, x).getResult();
  x = toI64(b, x, e);
  switch (k) {
  case RK::Prod:
    return b.create<arith::MulIOp>(acc, x);
  case RK::L1:
    if (!e.isUnsigned) {
      Value zero = cInt(b, x.getType(), 0);
      Value neg = b.create<arith::CmpIOp>(arith::CmpIPredicate::slt, x, zero);
      x = b.create<arith::SelectOp>(neg, b.create<arith::SubIOp>(zero, x), x);
    }
    return b.create<arith::AddIOp>(acc, x);
  case RK::L2:
  case RK::SumSquare:
    return b.create<arith::AddIOp>(acc, b.create<arith::MulIOp>(x, x));
  default:
    return b.create<arith::AddIOp>(acc, x);
  }
}

/// The accumulator of `n` elements to the stored value.
Value finish(Builder &b, RK k, const Elem &e, Value acc, int64_t n) {
  if (e.isFloat) {
    if (k == RK::Mean)
      acc = b.create<arith::DivFOp>(acc, cF64(b, static_cast<double>(n)));
    else if (k == RK::L2)
      acc = b.create<math::SqrtOp>(acc);
    else if (k == RK::LogSum)
      acc = b.create<math::LogOp>(acc);
    return fromF64(b, acc, e);
  }
  if (accInStorage(k))
    return acc;
  if (k == RK::L2 || k == RK::LogSum) {
    Value d = toF64(b, acc, e);
    d = k == RK::L2 ? b.create<math::SqrtOp>(d).getResult()
                    : b.create<math::LogOp>(d).getResult();
    return fromF64(b, d, e);
  }
  if (k == RK::Mean) {
    // Integer mean truncates; an empty mean is 0.
    Value cnt = cInt(b, acc.getType(), n == 0 ? 1 : n);
    acc = e.isUnsigned ? b.create<arith::DivUIOp>(acc, cnt).getResult()
                       : b.create<arith::DivSIOp>(acc, cnt).getResult();
    if (n == 0)
      acc = cInt(b, acc.getType(), 0);
  }
  return e.width < 64 ? b.create<arith::TruncIOp>(e.storage, acc).getResult()
                      : acc;
}

/// Input index from the kept and reduced loop variables (plus `tail`, the
/// index of a trailing dim that is in neither list).
SmallVector<Value> inputIndex(ArrayRef<bool> mask, ValueRange keptIvs,
                              ValueRange redIvs, Value tail = Value()) {
  SmallVector<Value> idx;
  unsigned kept = 0, red = 0;
  for (bool r : mask)
    idx.push_back(r ? redIvs[red++] : keptIvs[kept++]);
  if (tail)
    idx.push_back(tail);
  return idx;
}

/// Output index from the kept loop variables: reduced dims are dropped, or
/// index 0 with keepdims.
SmallVector<Value> outputIndex(Builder &b, ArrayRef<bool> mask, bool keep,
                               ValueRange keptIvs, Value tail = Value()) {
  SmallVector<Value> idx;
  unsigned kd = 0;
  for (bool r : mask) {
    if (!r)
      idx.push_back(keptIvs[kd++]);
    else if (keep)
      idx.push_back(cIndex(b, 0));
  }
  if (tail)
    idx.push_back(tail);
  return idx;
}

/// The accumulator type: f64 for floats, the element type for integer
/// max/min, i64 otherwise.
Type accType(Builder &b, RK k, const Elem &e) {
  if (e.isFloat)
    return b.getF64Type();
  return accInStorage(k) ? e.storage : b.getI64Type();
}

/// log(sum(exp(x - m))) + m from the max m and the sum: an infinite or nan
/// max was replaced by 0 before summing (see finiteShift), so that the
/// plain formula gives the right inf/nan.
Value finiteShift(Builder &b, Value m) {
  Value finite = b.create<arith::CmpFOp>(
      arith::CmpFPredicate::ONE, b.create<math::AbsFOp>(m),
      cF64(b, std::numeric_limits<double>::infinity()));
  return b.create<arith::SelectOp>(finite, m, cF64(b, 0.0));
}

/// Register form: one loop nest over the kept dims, inside it the reduced
/// dims carry the accumulator. Used when the innermost dim is reduced (so
/// the innermost loop is contiguous) or the kept inner dims are short.
void emitReduceRegisters(Builder &b, RK k, const Elem &e, Value x, Value y,
                         ArrayRef<int64_t> shape, ArrayRef<bool> mask,
                         bool keep) {
  SmallVector<int64_t> keptDims, redDims;
  for (size_t d = 0; d < shape.size(); ++d)
    (mask[d] ? redDims : keptDims).push_back(shape[d]);
  int64_t n = numElements(redDims);
  loops(b, keptDims, [&](Builder &b, ValueRange kept) {
    auto reduceOver = [&](Value init, auto &&elementFn) {
      return loops(b, redDims, init,
                   [&](Builder &b, ValueRange red, ValueRange acc) {
                     Value v = load(b, x, inputIndex(mask, kept, red));
                     return SmallVector<Value>{elementFn(b, acc[0], v)};
                   })[0];
    };
    Value result;
    if (k == RK::LogSumExp) {
      Value m = reduceOver(
          cF64(b, -std::numeric_limits<double>::infinity()),
          [&](Builder &b, Value acc, Value v) {
            return nanMax(b, acc, toF64(b, v, e));
          });
      m = finiteShift(b, m);
      Value sum = reduceOver(cF64(b, 0.0), [&](Builder &b, Value acc, Value v) {
        Value d = b.create<arith::SubFOp>(toF64(b, v, e), m);
        return accAdd(b, acc, b.create<math::ExpOp>(d));
      });
      result = fromF64(
          b, b.create<arith::AddFOp>(m, b.create<math::LogOp>(sum)), e);
    } else {
      Value acc = reduceOver(identity(b, k, e), [&](Builder &b, Value acc,
                                                    Value v) {
        return step(b, k, e, acc, v);
      });
      result = finish(b, k, e, acc, n);
    }
    store(b, result, y, outputIndex(b, mask, keep, kept));
  });
}

/// Blocked form for reductions followed by kept dims of `inner` (>= 16)
/// contiguous elements, e.g. over the channels of NCHW: loops over the
/// outer kept dims, then blocks of the inner elements, whose accumulators
/// live in scratch arrays while the reduced dims are walked; the innermost
/// loop is contiguous (and vectorisable).
void emitReduceBlocked(Builder &b, RK k, const Elem &e, Value x, Value y,
                       ArrayRef<int64_t> shape, ArrayRef<bool> mask, bool keep,
                       int64_t lastRed, int64_t inner) {
  ArrayRef<bool> m = mask.take_front(lastRed + 1);
  SmallVector<int64_t> xs(shape.begin(), shape.begin() + lastRed + 1), ys,
      keptDims, redDims;
  xs.push_back(inner);
  for (int64_t d = 0; d <= lastRed; ++d) {
    if (!mask[d]) {
      ys.push_back(shape[d]);
      keptDims.push_back(shape[d]);
    } else {
      if (keep)
        ys.push_back(1);
      redDims.push_back(shape[d]);
    }
  }
  ys.push_back(inner);
  int64_t count = numElements(redDims);
  Value xv = view(b, x, xs), yv = view(b, y, ys);
  loops(b, keptDims, [&](Builder &b, ValueRange kept) {
    blocks(b, inner, [&](Builder &b, Value i0, Value n) {
      auto at = [&](Builder &b, ValueRange red, Value ii) {
        Value i = b.create<arith::AddIOp>(i0, ii);
        return load(b, xv, inputIndex(m, kept, red, i));
      };
      auto storeOut = [&](Builder &b, Value v, Value ii) {
        Value i = b.create<arith::AddIOp>(i0, ii);
        store(b, v, yv, outputIndex(b, m, keep, kept, i));
      };
      if (k == RK::LogSumExp) {
        Type f64 = b.getF64Type();
        SmallVector<Value> s = scratch(b, {f64, f64});
        Value mx = s[0], sum = s[1];
        each(b, n, [&](Builder &b, Value ii) {
          store(b, cF64(b, -std::numeric_limits<double>::infinity()), mx, ii);
        });
        loops(b, redDims, [&](Builder &b, ValueRange red) {
          each(b, n, [&](Builder &b, Value ii) {
            Value v = toF64(b, at(b, red, ii), e);
            store(b, nanMax(b, load(b, mx, ii), v), mx, ii);
          });
        });
        each(b, n, [&](Builder &b, Value ii) {
          store(b, finiteShift(b, load(b, mx, ii)), mx, ii);
          store(b, cF64(b, 0.0), sum, ii);
        });
        loops(b, redDims, [&](Builder &b, ValueRange red) {
          each(b, n, [&](Builder &b, Value ii) {
            Value d = b.create<arith::SubFOp>(toF64(b, at(b, red, ii), e),
                                              load(b, mx, ii));
            store(b, accAdd(b, load(b, sum, ii), b.create<math::ExpOp>(d)),
                  sum, ii);
          });
        });
        each(b, n, [&](Builder &b, Value ii) {
          Value r = b.create<arith::AddFOp>(
              load(b, mx, ii), b.create<math::LogOp>(load(b, sum, ii)));
          storeOut(b, fromF64(b, r, e), ii);
        });
        return;
      }
      Value acc = scratch(b, {accType(b, k, e)})[0];
      each(b, n, [&](Builder &b, Value ii) {
        store(b, identity(b, k, e), acc, ii);
      });
      loops(b, redDims, [&](Builder &b, ValueRange red) {
        each(b, n, [&](Builder &b, Value ii) {
          store(b, step(b, k, e, load(b, acc, ii), at(b, red, ii)), acc, ii);
        });
      });
      each(b, n, [&](Builder &b, Value ii) {
        storeOut(b, finish(b, k, e, load(b, acc, ii), count), ii);
      });
    });
  });
}

/// Reduces the dims of `x` marked in `mask` into `y` (keepdims: y has x's
/// rank with the reduced dims 1; else just the kept dims).
void emitReduce(Builder &b, RK k, const Elem &e, Value x, Value y,
                ArrayRef<int64_t> shape, ArrayRef<bool> mask, bool keep) {
  int64_t lastRed = -1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (mask[d] && shape[d] != 1)
      lastRed = d;
  int64_t inner = numElements(shape.drop_front(lastRed + 1));
  // Size-1 dims after lastRed, reduced or not, do not change the layout,
  // so the tail is viewed as `inner` kept elements. (bool has no
  // byte-sized scratch element: it stays in registers.)
  if (lastRed >= 0 && inner >= kMinBlockedInner && e.width >= 8)
    emitReduceBlocked(b, k, e, x, y, shape, mask, keep, lastRed, inner);
  else
    emitReduceRegisters(b, k, e, x, y, shape, mask, keep);
}

/// The reduced dims of an input `in` giving output `out`, as bit masks,
/// when the axes are only known at run time. With keepdims every reduced
/// dim of size > 1 shows as a 1, so there is one answer; without, every
/// choice of `numAxes` dims whose removal leaves `out` is a candidate.
SmallVector<uint64_t> candidateMasks(ArrayRef<int64_t> in,
                                     ArrayRef<int64_t> out, bool keep,
                                     int64_t numAxes) {
  int64_t rank = in.size();
  SmallVector<uint64_t> masks;
  if (keep) {
    if (out.size() != in.size())
      return masks;
    uint64_t m = 0;
    for (int64_t d = 0; d < rank; ++d) {
      if (out[d] != in[d] && out[d] != 1)
        return {};
      if (out[d] != in[d])
        m |= uint64_t(1) << d;
    }
    masks.push_back(m);
    return masks;
  }
  if (rank > 16 || numAxes > rank || rank - numAxes != (int64_t)out.size())
    return masks;
  for (uint64_t m = 0; m < (uint64_t(1) << rank); ++m) {
    if (__builtin_popcountll(m) != numAxes)
      continue;
    SmallVector<int64_t> kept;
    for (int64_t d = 0; d < rank; ++d)
      if (!(m & (uint64_t(1) << d)))
        kept.push_back(in[d]);
    if (ArrayRef<int64_t>(kept) == out)
      masks.push_back(m);
  }
  return masks;
}

/// The dims of size > 1: reducing a size-1 dim or not gives the same
/// values in the same layout, so masks are compared on these only.
uint64_t nonUnitDims(ArrayRef<int64_t> shape) {
  uint64_t m = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1)
      m |= uint64_t(1) << d;
  return m;
}

SmallVector<bool> maskBits(uint64_t m, int64_t rank) {
  SmallVector<bool> mask;
  for (int64_t d = 0; d < rank; ++d)
    mask.push_back((m >> d) & 1);
  return mask;
}

/// The bit mask of the axes held in `axesBuf` (n elements), read at run
/// time; out-of-range axes contribute nothing.
Value runtimeAxisBits(Builder &b, Value axesBuf, const Elem &axesElem,
                      int64_t n, int64_t rank) {
  Type i64 = b.getI64Type();
  Value flat = view(b, axesBuf, {n});
  return loops(b, {n}, {cInt(b, i64, 0)},
               [&](Builder &b, ValueRange iv, ValueRange acc) {
                 Value a = toI64(b, load(b, flat, iv), axesElem);
                 Value r = cInt(b, i64, rank);
                 Value neg = b.create<arith::CmpIOp>(arith::CmpIPredicate::slt,
                                                     a, cInt(b, i64, 0));
                 a = b.create<arith::SelectOp>(
                     neg, b.create<arith::AddIOp>(a, r), a);
                 Value inRange = b.create<arith::AndIOp>(
                     b.create<arith::CmpIOp>(arith::CmpIPredicate::sge, a,
                                             cInt(b, i64, 0)),
                     b.create<arith::CmpIOp>(arith::CmpIPredicate::slt, a, r));
                 a = b.create<arith::SelectOp>(inRange, a, cInt(b, i64, 0));
                 Value bit = b.create<arith::ShLIOp>(cInt(b, i64, 1), a);
                 bit = b.create<arith::SelectOp>(inRange, bit,
                                                 cInt(b, i64, 0));
                 return SmallVector<Value>{b.create<arith::OrIOp>(acc[0], bit)};
               })[0];
}

template <RK K> LogicalResult lowerReduce(PortableOp &p) {
  Operation *op = p.op;
  Value xv = op->getOperand(0);
  Elem e = elemOf(xv);
  if (e.width == 1 && K != RK::Max && K != RK::Min)
    return op->emitError("bool input is only supported by reduce_max/min");
  if (!e.isFloat && e.width == 0)
    return op->emitError("unsupported element type");
  ArrayRef<int64_t> in = shapeOf(xv), out = shapeOf(op->getResult(0));
  int64_t rank = in.size();
  bool keep = intAttr(op, "keepdims", 1) != 0;
  bool noop = intAttr(op, "noop_with_empty_axes", 0) != 0;

  // The axes: a constant or run-time operand (ReduceSum-13, opset 18), or
  // the attribute.
  std::optional<SmallVector<int64_t>> axes;
  int64_t runtimeCount = -1;
  if (hasOperand(op, 1)) {
    Value axesVal = op->getOperand(1);
    axes = constInts(axesVal);
    int64_t n = numElements(shapeOf(axesVal));
    if (!axes && n == 0)
      axes = SmallVector<int64_t>();
    if (!axes)
      runtimeCount = n;
  } else {
    axes = intsAttr(op, "axes");
    if (!axes)
      axes = SmallVector<int64_t>();
  }

  Builder b(p.loc, p.b);
  Value x = p.operands[0], y = p.results[0];
  if (axes) {
    SmallVector<bool> mask(rank, axes->empty() && !noop);
    for (int64_t a : *axes) {
      FailureOr<int64_t> d = normalizeAxis(op, a, rank);
      if (failed(d))
        return failure();
      mask[*d] = true;
    }
    emitReduce(b, K, e, x, y, in, mask, keep);
    return success();
  }

  SmallVector<uint64_t> cands = candidateMasks(in, out, keep, runtimeCount);
  if (cands.empty())
    return op->emitError("cannot match the run-time axes (")
           << runtimeCount << " of them) to the static result shape";
  // Keep one candidate per distinct set of non-unit reduced dims.
  uint64_t nonUnit = nonUnitDims(in);
  SmallVector<uint64_t> distinct;
  for (uint64_t m : cands)
    if (llvm::none_of(distinct,
                      [&](uint64_t d) { return (d & nonUnit) == (m & nonUnit); }))
      distinct.push_back(m);
  if (distinct.size() == 1) {
    emitReduce(b, K, e, x, y, in, maskBits(distinct[0], rank), keep);
    return success();
  }
  Value bits = runtimeAxisBits(b, p.operands[1], elemOf(op->getOperand(1)),
                               runtimeCount, rank);
  Type i64 = b.getI64Type();
  Value live = b.create<arith::AndIOp>(bits, cInt(b, i64, nonUnit));
  dispatch(
      b, distinct.size(),
      [&](Builder &b, unsigned i) -> Value {
        return b.create<arith::CmpIOp>(
            arith::CmpIPredicate::eq, live,
            cInt(b, i64, static_cast<int64_t>(distinct[i] & nonUnit)));
      },
      [&](Builder &b, unsigned i) {
        emitReduce(b, K, e, x, y, in, maskBits(distinct[i], rank), keep);
      });
  return success();
}

} // namespace

void registerReduceOps(PortableRegistry &registry) {
  registry["graph.reduce_sum"] = &lowerReduce<RK::Sum>;
  registry["graph.reduce_mean"] = &lowerReduce<RK::Mean>;
  registry["graph.reduce_max"] = &lowerReduce<RK::Max>;
  registry["graph.reduce_min"] = &lowerReduce<RK::Min>;
  registry["graph.reduce_prod"] = &lowerReduce<RK::Prod>;
  registry["graph.reduce_l1"] = &lowerReduce<RK::L1>;
  registry["graph.reduce_l2"] = &lowerReduce<RK::L2>;
  registry["graph.reduce_log_sum"] = &lowerReduce<RK::LogSum>;
  registry["graph.reduce_log_sum_exp"] = &lowerReduce<RK::LogSumExp>;
  registry["graph.reduce_sum_square"] = &lowerReduce<RK::SumSquare>;
}

} // namespace red

void registerPortableReductions(PortableRegistry &registry) {
  red::registerReduceOps(registry);
  red::registerArgOps(registry);
  red::registerSoftmaxOps(registry);
  red::registerNormalizationOps(registry);
  red::registerMiscNormOps(registry);
}

} // namespace mlcc::portable
