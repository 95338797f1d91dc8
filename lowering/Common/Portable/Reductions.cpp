//===- Reductions.cpp - Portable lowering of the Reduce* ops --------------===//
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
// Code shape: when the innermost dim is reduced (or the kept dims after
// the last reduced one are short), one loop nest over the kept dims and
// inside it one over the reduced dims carrying the accumulator in
// registers (scf.for iter_args). Otherwise (e.g. over the channels of
// NCHW) the trailing kept elements run in blocks whose accumulators live
// in a scratch array, so the innermost loop stays contiguous. Float sums
// are marked reassociable so LLVM vectorises them.
//
// Axes given by a non-constant operand (the node tests feed them as graph
// inputs) are resolved from the static shapes where those leave only one
// possibility; otherwise the candidates consistent with the shapes are all
// emitted and the one matching the axes read at run time is selected.
//
//===----------------------------------------------------------------------===//

#include "ParallelLoops.h"
#include "ReductionsSupport.h"
#include "mlcc/Reference/ReduceAxes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/bit.h"

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
    double v = k == RK::Prod  ? 1.0
               : k == RK::Max ? -inf
               : k == RK::Min ? inf
                              : 0.0;
    return cF64(b, v);
  }
  if (!accInStorage(k))
    return cInt(b, b.getI64Type(), k == RK::Prod ? 1 : 0);
  int64_t lowest, highest;
  intLimits(e, lowest, highest);
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

/// Input index from the kept and reduced loop variables, in the order of
/// the dims (`mask` marks the reduced ones).
SmallVector<Value> inputIndex(ArrayRef<bool> mask, ValueRange keptIvs,
                              ValueRange redIvs) {
  SmallVector<Value> idx;
  unsigned kept = 0, red = 0;
  for (bool r : mask)
    idx.push_back(r ? redIvs[red++] : keptIvs[kept++]);
  return idx;
}

/// The accumulator type: f64 for floats, the element type for integer
/// max/min, i64 otherwise.
Type accType(Builder &b, RK k, const Elem &e) {
  if (e.isFloat)
    return b.getF64Type();
  return accInStorage(k) ? e.storage : b.getI64Type();
}

/// The max m of log_sum_exp as subtracted: an infinite or nan max becomes
/// 0, so that m + log(sum(exp(x - m))) then gives the right inf/nan.
Value finiteShift(Builder &b, Value m) {
  Value finite = b.create<arith::CmpFOp>(
      arith::CmpFPredicate::ONE, b.create<math::AbsFOp>(m),
      cF64(b, std::numeric_limits<double>::infinity()));
  return b.create<arith::SelectOp>(finite, m, cF64(b, 0.0));
}

/// A reduction on merged dims: x has `dims`, `mask` marks the reduced ones,
/// y has the kept ones in order.
struct Reduction {
  RK kind;
  Elem elem;
  Value x, y;
  SmallVector<int64_t> dims;
  SmallVector<bool> mask;
  SmallVector<int64_t> keptDims, redDims;
};

/// Register form: one loop nest over the kept dims, inside it the reduced
/// dims carry the accumulator. Used when the innermost dim is reduced (so
/// the innermost loop is contiguous) or the kept inner dim is short.
void emitReduceRegisters(Builder &b, const Reduction &r) {
  RK k = r.kind;
  const Elem &e = r.elem;
  // Each kept index reduces on its own: parallel (ParallelLoops.h).
  parallelLoops(b, r.keptDims, [&](Builder &b, ValueRange kept) {
    auto reduceOver = [&](Value init, auto &&elementFn) {
      return loops(b, r.redDims, init,
                   [&](Builder &b, ValueRange red, ValueRange acc) {
                     Value v = load(b, r.x, inputIndex(r.mask, kept, red));
                     return SmallVector<Value>{elementFn(b, acc[0], v)};
                   })[0];
    };
    Value result;
    if (k == RK::LogSumExp) {
      Value m = reduceOver(cF64(b, -std::numeric_limits<double>::infinity()),
                           [&](Builder &b, Value acc, Value v) {
                             return nanMax(b, acc, toF64(b, v, e));
                           });
      m = finiteShift(b, m);
      Value sum = reduceOver(cF64(b, 0.0), [&](Builder &b, Value acc, Value v) {
        Value d = b.create<arith::SubFOp>(toF64(b, v, e), m);
        return accAdd(b, acc, b.create<math::ExpOp>(d));
      });
      result =
          fromF64(b, b.create<arith::AddFOp>(m, b.create<math::LogOp>(sum)), e);
    } else {
      Value acc =
          reduceOver(identity(b, k, e), [&](Builder &b, Value acc, Value v) {
            return step(b, k, e, acc, v);
          });
      result = finish(b, k, e, acc, numElements(r.redDims));
    }
    store(b, result, r.y, kept);
  });
}

/// Blocked form for reduced dims followed by a kept dim of >= 16
/// contiguous elements (e.g. over the channels of NCHW): loops over the
/// other kept dims, then blocks of the inner elements, whose accumulators
/// live in scratch while the reduced dims are walked; the innermost loop is
/// contiguous (and vectorisable).
void emitReduceBlocked(Builder &b, const Reduction &r) {
  RK k = r.kind;
  const Elem &e = r.elem;
  int64_t inner = r.dims.back();
  ArrayRef<bool> mask = ArrayRef<bool>(r.mask).drop_back();
  ArrayRef<int64_t> outerKept = ArrayRef<int64_t>(r.keptDims).drop_back();
  // The accumulators of a block: max and sum for log_sum_exp, else one.
  SmallVector<Type> accTypes;
  if (k == RK::LogSumExp)
    accTypes.assign(2, b.getF64Type());
  else
    accTypes.push_back(accType(b, k, e));
  // The blocks are independent, each with its accumulators in its own
  // arrays (parallelBlocks): parallel.
  parallelBlocks(
      b, outerKept, inner, accTypes,
      [&](Builder &b, ValueRange kept, Value i0, Value n, ArrayRef<Value> s) {
        auto at = [&](Builder &b, ValueRange red, Value ii) {
          SmallVector<Value> idx = inputIndex(mask, kept, red);
          idx.push_back(b.create<arith::AddIOp>(i0, ii));
          return load(b, r.x, idx);
        };
        auto storeOut = [&](Builder &b, Value v, Value ii) {
          SmallVector<Value> idx(kept.begin(), kept.end());
          idx.push_back(b.create<arith::AddIOp>(i0, ii));
          store(b, v, r.y, idx);
        };
        // fn(ii) over the block for every index of the reduced dims.
        auto overReduced = [&](auto &&fn) {
          loops(b, r.redDims, [&](Builder &b, ValueRange red) {
            each(b, n, [&](Builder &b, Value ii) { fn(b, red, ii); });
          });
        };
        if (k == RK::LogSumExp) {
          Value mx = s[0], sum = s[1];
          each(b, n, [&](Builder &b, Value ii) {
            store(b, cF64(b, -std::numeric_limits<double>::infinity()), mx, ii);
          });
          overReduced([&](Builder &b, ValueRange red, Value ii) {
            Value v = toF64(b, at(b, red, ii), e);
            store(b, nanMax(b, load(b, mx, ii), v), mx, ii);
          });
          each(b, n, [&](Builder &b, Value ii) {
            store(b, finiteShift(b, load(b, mx, ii)), mx, ii);
            store(b, cF64(b, 0.0), sum, ii);
          });
          overReduced([&](Builder &b, ValueRange red, Value ii) {
            Value d = b.create<arith::SubFOp>(toF64(b, at(b, red, ii), e),
                                              load(b, mx, ii));
            store(b, accAdd(b, load(b, sum, ii), b.create<math::ExpOp>(d)), sum,
                  ii);
          });
          each(b, n, [&](Builder &b, Value ii) {
            Value v = b.create<arith::AddFOp>(
                load(b, mx, ii), b.create<math::LogOp>(load(b, sum, ii)));
            storeOut(b, fromF64(b, v, e), ii);
          });
          return;
        }
        Value acc = s[0];
        each(b, n, [&](Builder &b, Value ii) {
          store(b, identity(b, k, e), acc, ii);
        });
        overReduced([&](Builder &b, ValueRange red, Value ii) {
          store(b, step(b, k, e, load(b, acc, ii), at(b, red, ii)), acc, ii);
        });
        int64_t count = numElements(r.redDims);
        each(b, n, [&](Builder &b, Value ii) {
          storeOut(b, finish(b, k, e, load(b, acc, ii), count), ii);
        });
      });
}

/// Reduces the dims of `x` marked in `mask` into `y` (keepdims or not: y
/// holds the kept elements in order either way).
void emitReduce(Builder &b, RK k, const Elem &e, Value x, Value y,
                ArrayRef<int64_t> shape, ArrayRef<bool> mask) {
  // Size-1 dims are dropped and neighbours of the same kind merged: the
  // layout is the same and the loops get longer and fewer.
  Reduction r{k, e, Value(), Value(), {}, {}, {}, {}};
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1)
      continue;
    if (!r.mask.empty() && r.mask.back() == mask[d]) {
      r.dims.back() *= shape[d];
    } else {
      r.dims.push_back(shape[d]);
      r.mask.push_back(mask[d]);
    }
  }
  for (size_t d = 0; d < r.dims.size(); ++d)
    (r.mask[d] ? r.redDims : r.keptDims).push_back(r.dims[d]);
  r.x = view(b, x, r.dims);
  r.y = view(b, y, r.keptDims);
  // bool has no byte-sized scratch element: it stays in registers.
  bool blocked = r.dims.size() >= 2 && !r.mask.back() &&
                 r.dims.back() >= kMinBlockedInner && e.width >= 8;
  if (blocked)
    emitReduceBlocked(b, r);
  else
    emitReduceRegisters(b, r);
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
    if (llvm::popcount(m) != numAxes)
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
                 bit = b.create<arith::SelectOp>(inRange, bit, cInt(b, i64, 0));
                 return SmallVector<Value>{b.create<arith::OrIOp>(acc[0], bit)};
               })[0];
}

/// The axes when they are known at compile time: the constant axes operand
/// (ReduceSum-13, opset 18), an empty one, or the attribute (absent: none).
/// Otherwise nullopt, with the operand's element count in `runtimeCount`.
std::optional<SmallVector<int64_t>> staticAxes(Operation *op,
                                               int64_t &runtimeCount) {
  if (!hasOperand(op, 1))
    return intsAttr(op, "axes").value_or(SmallVector<int64_t>());
  Value axesVal = op->getOperand(1);
  if (std::optional<SmallVector<int64_t>> axes = constInts(axesVal))
    return axes;
  runtimeCount = numElements(shapeOf(axesVal));
  if (runtimeCount == 0)
    return SmallVector<int64_t>();
  return std::nullopt;
}

/// Axes read at run time: the masks the static shapes allow, one variant
/// each, selected by the axes' value (the last one is the fallback).
template <RK K>
LogicalResult emitRuntimeAxes(Builder &b, PortableOp &p, const Elem &e,
                              bool keep, int64_t count) {
  Operation *op = p.op;
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
  int64_t rank = in.size();
  SmallVector<uint64_t> cands =
      candidateMasks(in, shapeOf(op->getResult(0)), keep, count);
  if (cands.empty())
    return op->emitError("cannot match the run-time axes (")
           << count << " of them) to the static result shape";
  // One variant per distinct set of non-unit reduced dims.
  uint64_t nonUnit = nonUnitDims(in);
  SmallVector<uint64_t> distinct;
  for (uint64_t m : cands)
    if (llvm::none_of(distinct, [&](uint64_t d) {
          return (d & nonUnit) == (m & nonUnit);
        }))
      distinct.push_back(m);
  Value x = p.operands[0], y = p.results[0];
  if (distinct.size() == 1) {
    emitReduce(b, K, e, x, y, in, maskBits(distinct[0], rank));
    return success();
  }
  Value bits =
      runtimeAxisBits(b, p.operands[1], elemOf(op->getOperand(1)), count, rank);
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
        emitReduce(b, K, e, x, y, in, maskBits(distinct[i], rank));
      });
  return success();
}

template <RK K> LogicalResult lowerReduce(PortableOp &p) {
  Operation *op = p.op;
  Value xv = op->getOperand(0);
  Elem e = elemOf(xv);
  if (e.width == 1 && K != RK::Max && K != RK::Min)
    return op->emitError("bool input is only supported by reduce_max/min");
  if (!e.isFloat && e.width == 0)
    return op->emitError("unsupported element type");
  ArrayRef<int64_t> in = shapeOf(xv);
  int64_t rank = in.size();
  bool keep = intAttr(op, "keepdims", 1) != 0;
  bool noop = intAttr(op, "noop_with_empty_axes", 0) != 0;
  int64_t runtimeCount = 0;
  std::optional<SmallVector<int64_t>> axes = staticAxes(op, runtimeCount);

  if (!axes) {
    Builder b(p.loc, p.b);
    shapeBuffers(b, p);
    return emitRuntimeAxes<K>(b, p, e, keep, runtimeCount);
  }
  SmallVector<bool> mask;
  std::string name = op->getName().getStringRef().str();
  ref::Status valid = ref::reducedDimsOf(name.c_str(), *axes, rank, noop, mask);
  if (!valid.ok())
    return op->emitError(valid.message());
  Builder b(p.loc, p.b);
  shapeBuffers(b, p);
  emitReduce(b, K, e, p.operands[0], p.results[0], in, mask);
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
