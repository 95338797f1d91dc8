//===- ReductionsArg.cpp - ArgMax, ArgMin, CumSum and TopK ----------------===//
//
// The ops that work along one axis and keep positions: graph.argmax,
// graph.argmin, graph.cumsum and graph.topk. Each views its input as
// [outer, len, inner] around the axis. With a short `inner` one scf loop
// nest runs over (outer, inner) with the axis innermost, the state in
// registers; argmax/argmin and cumsum over a long `inner` (an axis that is
// not the last) run blocks of inner elements with the state in scratch, so
// that memory is walked contiguously. Semantics follow the reference
// kernels (Kernels/ArgReduce.cpp, Kernels/Sort.cpp).
//
//===----------------------------------------------------------------------===//

#include "ParallelLoops.h"
#include "ReductionsSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cmath>

using namespace mlir;

namespace mlcc::portable::red {
namespace {

//===----------------------------------------------------------------------===//
// graph.argmax, graph.argmin
//===----------------------------------------------------------------------===//

/// Whether `v` replaces the current extreme `best` (reference argTyped): a
/// nan counts as the extreme and the first nan wins (the last one with
/// select_last_index); otherwise strict (first index) or non-strict (last
/// index) comparison.
Value takeArg(Builder &b, const Elem &e, bool isMax, bool last, Value v,
              Value best) {
  if (e.isFloat) {
    using P = arith::CmpFPredicate;
    P pred = isMax ? (last ? P::OGE : P::OGT) : (last ? P::OLE : P::OLT);
    Value cmp = b.create<arith::CmpFOp>(pred, v, best);
    Value vNan = isNan(b, v), bNan = isNan(b, best);
    Value whenOrdered = b.create<arith::OrIOp>(vNan, cmp);
    Value whenBestNan = last ? vNan : cInt(b, b.getI1Type(), 0);
    return b.create<arith::SelectOp>(bNan, whenBestNan, whenOrdered);
  }
  using P = arith::CmpIPredicate;
  P pred;
  if (e.isUnsigned)
    pred = isMax ? (last ? P::uge : P::ugt) : (last ? P::ule : P::ult);
  else
    pred = isMax ? (last ? P::sge : P::sgt) : (last ? P::sle : P::slt);
  return b.create<arith::CmpIOp>(pred, v, best);
}

template <bool IsMax> LogicalResult lowerArg(PortableOp &p) {
  Operation *op = p.op;
  Value xv = op->getOperand(0);
  Elem e = elemOf(xv);
  if (e.width == 1)
    return op->emitError("bool input is not supported");
  ArrayRef<int64_t> shape = shapeOf(xv);
  FailureOr<int64_t> axis =
      normalizeAxis(op, intAttr(op, "axis", 0), shape.size());
  if (failed(axis))
    return failure();
  bool last = intAttr(op, "select_last_index", 0) != 0;
  int64_t outer, len, inner;
  splitAtAxis(shape, *axis, outer, len, inner);
  if (outer * inner == 0)
    return success();
  if (len == 0)
    return op->emitError("axis ")
           << *axis << " has size 0, there is no extreme to select";

  Builder b(p.loc, p.b);
  shapeBuffers(b, p);
  Value x = view(b, p.operands[0], {outer, len, inner});
  Value y = view(b, p.results[0], {outer, inner});
  Type i64 = b.getI64Type();
  if (inner >= kMinBlockedInner) {
    // Blocks of the contiguous inner dim; the best value so far lives in
    // the block's own state array (parallelBlocks), its index in y:
    // independent, parallel.
    Type ct = e.isFloat ? computeFloatType(e) : e.storage;
    parallelBlocks(
        b, {outer}, inner, {ct},
        [&](Builder &b, ValueRange o, Value i0, Value n, ArrayRef<Value> tmp) {
          Value best = tmp[0];
          auto at = [&](Builder &b, Value k, Value ii) {
            Value i = b.create<arith::AddIOp>(i0, ii);
            return toCompute(b, load(b, x, {o[0], k, i}), e);
          };
          auto out = [&](Builder &b, Value ii) -> SmallVector<Value> {
            return {o[0], b.create<arith::AddIOp>(i0, ii)};
          };
          each(b, n, [&](Builder &b, Value ii) {
            store(b, at(b, cIndex(b, 0), ii), best, ii);
            store(b, cInt(b, i64, 0), y, out(b, ii));
          });
          loop(b, cIndex(b, 1), cIndex(b, len), {},
               [&](Builder &b, ValueRange k, ValueRange) {
                 Value kk = b.create<arith::IndexCastOp>(i64, k[0]);
                 each(b, n, [&](Builder &b, Value ii) {
                   Value v = at(b, k[0], ii), cur = load(b, best, ii);
                   Value take = takeArg(b, e, IsMax, last, v, cur);
                   store(b, b.create<arith::SelectOp>(take, v, cur), best, ii);
                   SmallVector<Value> yi = out(b, ii);
                   store(b, b.create<arith::SelectOp>(take, kk, load(b, y, yi)),
                         y, yi);
                 });
                 return SmallVector<Value>{};
               });
        });
    return success();
  }
  // Each (outer, inner) position scans its own row: parallel.
  parallelLoops(b, {outer, inner}, [&](Builder &b, ValueRange oi) {
    Value o = oi[0], i = oi[1];
    Value first = toCompute(b, load(b, x, {o, cIndex(b, 0), i}), e);
    SmallVector<Value> r =
        loop(b, cIndex(b, 1), cIndex(b, len), {first, cInt(b, i64, 0)},
             [&](Builder &b, ValueRange k, ValueRange acc) {
               Value v = toCompute(b, load(b, x, {o, k[0], i}), e);
               Value take = takeArg(b, e, IsMax, last, v, acc[0]);
               Value kk = b.create<arith::IndexCastOp>(i64, k[0]);
               return SmallVector<Value>{
                   b.create<arith::SelectOp>(take, v, acc[0]),
                   b.create<arith::SelectOp>(take, kk, acc[1])};
             });
    store(b, r[1], y, {o, i});
  });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.cumsum
//===----------------------------------------------------------------------===//

/// Running sums along `axis`: double for floats, 64-bit wrapping for
/// integers (reference cumSumTyped).
void emitCumSum(Builder &b, const Elem &e, Value xBuf, Value yBuf,
                ArrayRef<int64_t> shape, int64_t axis, bool exclusive,
                bool reverse) {
  int64_t outer, len, inner;
  splitAtAxis(shape, axis, outer, len, inner);
  if (outer * len * inner == 0)
    return;
  Value x = view(b, xBuf, {outer, len, inner});
  Value y = view(b, yBuf, {outer, len, inner});
  auto toStorage = [&](Builder &b, Value acc) -> Value {
    if (e.isFloat)
      return fromF64(b, acc, e);
    return e.width < 64 ? b.create<arith::TruncIOp>(e.storage, acc).getResult()
                        : acc;
  };
  Type accT = e.isFloat ? Type(b.getF64Type()) : Type(b.getI64Type());
  auto toAcc = [&](Builder &b, Value raw) {
    return e.isFloat ? toF64(b, raw, e) : toI64(b, raw, e);
  };
  auto add = [&](Builder &b, Value a, Value v) -> Value {
    return e.isFloat ? b.create<arith::AddFOp>(a, v).getResult()
                     : b.create<arith::AddIOp>(a, v).getResult();
  };
  auto axisIndex = [&](Builder &b, Value k) -> Value {
    return reverse ? b.create<arith::SubIOp>(cIndex(b, len - 1), k).getResult()
                   : k;
  };
  if (inner >= kMinBlockedInner) {
    // Blocks of the contiguous inner dim, the running sums in the block's
    // own state array (parallelBlocks): independent, parallel.
    parallelBlocks(
        b, {outer}, inner, {accT},
        [&](Builder &b, ValueRange o, Value i0, Value n, ArrayRef<Value> tmp) {
          Value acc = tmp[0];
          each(b, n, [&](Builder &b, Value ii) {
            store(b, e.isFloat ? cF64(b, 0.0) : cInt(b, accT, 0), acc, ii);
          });
          loop(b, cIndex(b, 0), cIndex(b, len), {},
               [&](Builder &b, ValueRange k, ValueRange) {
                 Value kk = axisIndex(b, k[0]);
                 each(b, n, [&](Builder &b, Value ii) {
                   SmallVector<Value> idx{o[0], kk,
                                          b.create<arith::AddIOp>(i0, ii)};
                   Value a = load(b, acc, ii);
                   Value next = add(b, a, toAcc(b, load(b, x, idx)));
                   store(b, toStorage(b, exclusive ? a : next), y, idx);
                   store(b, next, acc, ii);
                 });
                 return SmallVector<Value>{};
               });
        });
    return;
  }
  // Each (outer, inner) row carries its own running sum: parallel.
  parallelLoops(b, {outer, inner}, [&](Builder &b, ValueRange oi) {
    Value o = oi[0], i = oi[1];
    Value init = e.isFloat ? cF64(b, 0.0) : cInt(b, accT, 0);
    loop(b, cIndex(b, 0), cIndex(b, len), {init},
         [&](Builder &b, ValueRange k, ValueRange acc) {
           Value kk = axisIndex(b, k[0]);
           Value next = add(b, acc[0], toAcc(b, load(b, x, {o, kk, i})));
           store(b, toStorage(b, exclusive ? acc[0] : next), y, {o, kk, i});
           return SmallVector<Value>{next};
         });
  });
}

LogicalResult lowerCumSum(PortableOp &p) {
  Operation *op = p.op;
  Value xv = op->getOperand(0);
  Elem e = elemOf(xv);
  if (e.width == 1)
    return op->emitError("bool input is not supported");
  if (!hasOperand(op, 1))
    return op->emitError("missing operand 'axis'");
  ArrayRef<int64_t> shape = shapeOf(xv);
  int64_t rank = shape.size();
  if (rank == 0)
    return op->emitError("cumsum of a scalar is not supported");
  bool exclusive = intAttr(op, "exclusive", 0) != 0;
  bool reverse = intAttr(op, "reverse", 0) != 0;
  Builder b(p.loc, p.b);
  shapeBuffers(b, p);
  if (auto axes = constInts(op->getOperand(1))) {
    if (axes->size() != 1)
      return op->emitError("axis must hold one value");
    FailureOr<int64_t> axis = normalizeAxis(op, (*axes)[0], rank);
    if (failed(axis))
      return failure();
    emitCumSum(b, e, p.operands[0], p.results[0], shape, *axis, exclusive,
               reverse);
    return success();
  }
  if (numElements(shapeOf(op->getOperand(1))) != 1)
    return op->emitError("axis must hold one value");
  // The axis is read at run time: one variant per axis, chosen by value
  // (a negative axis counts from the end).
  Type i64 = b.getI64Type();
  Value a = toI64(b, load(b, view(b, p.operands[1], {1}), {cIndex(b, 0)}),
                  elemOf(op->getOperand(1)));
  Value neg =
      b.create<arith::CmpIOp>(arith::CmpIPredicate::slt, a, cInt(b, i64, 0));
  a = b.create<arith::SelectOp>(
      neg, b.create<arith::AddIOp>(a, cInt(b, i64, rank)), a);
  dispatch(
      b, rank,
      [&](Builder &b, unsigned d) -> Value {
        return b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, a,
                                       cInt(b, i64, d));
      },
      [&](Builder &b, unsigned d) {
        emitCumSum(b, e, p.operands[0], p.results[0], shape, d, exclusive,
                   reverse);
      });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.topk
//===----------------------------------------------------------------------===//

/// a < b in the reference's key order: nan above every number.
Value keyLess(Builder &b, const Elem &e, Value a, Value c) {
  if (e.isFloat) {
    Value lt = b.create<arith::CmpFOp>(arith::CmpFPredicate::OLT, a, c);
    Value aOrdered = b.create<arith::CmpFOp>(arith::CmpFPredicate::ORD, a, a);
    return b.create<arith::SelectOp>(isNan(b, c), aOrdered, lt);
  }
  return b.create<arith::CmpIOp>(e.isUnsigned ? arith::CmpIPredicate::ult
                                              : arith::CmpIPredicate::slt,
                                 a, c);
}

/// Whether a TopK of k of len elements a row sorts the whole row (stable
/// merge sort, n log2 n steps) rather than inserting into the output (n
/// steps when most elements fall below the k-th, k^2 ln(n / k) when they
/// enter in random order): a sort by TopK (torch.sort and argsort export
/// that way, k = len) took len^2 / 2 steps.
bool sortsWholeRow(int64_t k, int64_t len) {
  const double n = static_cast<double>(len);
  return len > 1 && static_cast<double>(k) * static_cast<double>(k) >
                        4.0 * n * std::log2(n);
}

/// TopK by a bottom-up stable merge sort of each row, in scratch rows of
/// its own (the rows run in parallel): runs of 1, 2, 4, ... elements merge
/// pairwise between two buffers, the left run winning ties, so equal keys
/// keep their index order; then the first k go out.
void emitSortedTopK(Builder &b, const Elem &e, bool largest, Value x,
                    Value vals, Value idxs, int64_t outer, int64_t len,
                    int64_t inner, int64_t k) {
  const int64_t rows = outer * inner;
  Type i64 = b.getI64Type();
  Type elem = cast<MemRefType>(x.getType()).getElementType();
  Value keys[2], order[2];
  for (int buf = 0; buf < 2; ++buf) {
    keys[buf] = b.create<memref::AllocOp>(MemRefType::get({rows, len}, elem),
                                          b.getI64IntegerAttr(64));
    order[buf] = b.create<memref::AllocOp>(MemRefType::get({rows, len}, i64),
                                           b.getI64IntegerAttr(64));
  }
  auto keyOf = [&](Builder &b, Value v) { return toCompute(b, v, e); };
  int passes = 0;
  while ((int64_t(1) << passes) < len)
    ++passes;
  parallelLoops(b, {outer, inner}, [&](Builder &b, ValueRange oi) {
    Value o = oi[0], i = oi[1];
    Value row = b.create<arith::AddIOp>(
        b.create<arith::MulIOp>(o, cIndex(b, inner)), i);
    loops(b, {len}, [&](Builder &b, ValueRange t) {
      store(b, load(b, x, {o, t[0], i}), keys[0], {row, t[0]});
      store(b, b.create<arith::IndexCastOp>(i64, t[0]), order[0], {row, t[0]});
    });
    Value last = cIndex(b, len - 1), end = cIndex(b, len);
    for (int pass = 0; pass < passes; ++pass) {
      const int64_t width = int64_t(1) << pass;
      const int src = pass % 2, dst = 1 - src;
      const int64_t pairs = (len + 2 * width - 1) / (2 * width);
      loops(b, {pairs}, [&](Builder &b, ValueRange pv) {
        Value lo = b.create<arith::MulIOp>(pv[0], cIndex(b, 2 * width));
        Value mid = b.create<arith::MinSIOp>(
            b.create<arith::AddIOp>(lo, cIndex(b, width)), end);
        Value hi = b.create<arith::MinSIOp>(
            b.create<arith::AddIOp>(lo, cIndex(b, 2 * width)), end);
        // Cursors a in [lo, mid) and c in [mid, hi); their loads are
        // clamped into the row and used only while the cursor is inside.
        loop(b, lo, hi, {lo, mid},
             [&](Builder &b, ValueRange q, ValueRange cur) {
               Value a = cur[0], c = cur[1];
               Value aAt = b.create<arith::MinSIOp>(a, last);
               Value cAt = b.create<arith::MinSIOp>(c, last);
               Value left = load(b, keys[src], {row, aAt});
               Value right = load(b, keys[src], {row, cAt});
               Value rightBeats =
                   largest ? keyLess(b, e, keyOf(b, left), keyOf(b, right))
                           : keyLess(b, e, keyOf(b, right), keyOf(b, left));
               Value leftLive =
                   b.create<arith::CmpIOp>(arith::CmpIPredicate::slt, a, mid);
               Value rightLive =
                   b.create<arith::CmpIOp>(arith::CmpIPredicate::slt, c, hi);
               Value takeRight = b.create<arith::AndIOp>(
                   rightLive,
                   b.create<arith::OrIOp>(
                       rightBeats, b.create<arith::XOrIOp>(
                                       leftLive, cInt(b, b.getI1Type(), 1))));
               Value from = b.create<arith::SelectOp>(takeRight, cAt, aAt);
               store(b, b.create<arith::SelectOp>(takeRight, right, left),
                     keys[dst], {row, q[0]});
               store(b, load(b, order[src], {row, from}), order[dst],
                     {row, q[0]});
               Value one = cIndex(b, 1), zero = cIndex(b, 0);
               return SmallVector<Value>{
                   b.create<arith::AddIOp>(
                       a, b.create<arith::SelectOp>(takeRight, zero, one)),
                   b.create<arith::AddIOp>(
                       c, b.create<arith::SelectOp>(takeRight, one, zero))};
             });
      });
    }
    const int sorted = passes % 2;
    loops(b, {k}, [&](Builder &b, ValueRange j) {
      store(b, load(b, keys[sorted], {row, j[0]}), vals, {o, j[0], i});
      store(b, load(b, order[sorted], {row, j[0]}), idxs, {o, j[0], i});
    });
  });
  for (int buf = 0; buf < 2; ++buf) {
    b.create<memref::DeallocOp>(keys[buf]);
    b.create<memref::DeallocOp>(order[buf]);
  }
}

/// The k best elements along the axis, best first, ties to the lower
/// index (the reference sorts even with sorted=0). Insertion into the
/// output rows: element t goes after the entries it does not beat and
/// pushes the rest one slot down; the rows hold the best of x[0..t). Once
/// k are held, an element that does not beat the k-th is passed over after
/// that one compare: with k much below the axis (the best 1000 of 100k
/// detection scores) most are. A k near the axis's length sorts the rows
/// instead (sortsWholeRow).
LogicalResult lowerTopK(PortableOp &p) {
  Operation *op = p.op;
  Value xv = op->getOperand(0);
  Elem e = elemOf(xv);
  ArrayRef<int64_t> shape = shapeOf(xv);
  FailureOr<int64_t> axis =
      normalizeAxis(op, intAttr(op, "axis", -1), shape.size());
  if (failed(axis))
    return failure();
  // K is the result's extent along the axis (shapes are static), whether
  // or not the K operand is a constant.
  int64_t k = shapeOf(op->getResult(0))[*axis];
  if (auto kv = hasOperand(op, 1) ? constInts(op->getOperand(1)) : std::nullopt)
    if (kv->size() == 1 && (*kv)[0] != k)
      return op->emitError("K = ") << (*kv)[0] << " but the result has " << k
                                   << " elements along the axis";
  bool largest = intAttr(op, "largest", 1) != 0;
  int64_t outer, len, inner;
  splitAtAxis(shape, *axis, outer, len, inner);
  if (k > len || k < 0)
    return op->emitError("K = ")
           << k << " is out of range for a dimension of " << len;
  if (outer * inner * k == 0)
    return success();

  Builder b(p.loc, p.b);
  shapeBuffers(b, p);
  Value x = view(b, p.operands[0], {outer, len, inner});
  Value vals = view(b, p.results[0], {outer, k, inner});
  Value idxs = view(b, p.results[1], {outer, k, inner});
  if (sortsWholeRow(k, len)) {
    emitSortedTopK(b, e, largest, x, vals, idxs, outer, len, inner, k);
    return success();
  }
  Type i64 = b.getI64Type();
  auto keyOf = [&](Builder &b, Value v) { return toCompute(b, v, e); };
  // The rows (outer, inner) are independent: parallel. The insertions
  // along a row depend on the ones before: a serial loop inside.
  parallelLoops(b, {outer, inner}, [&](Builder &b, ValueRange oi) {
    Value o = oi[0], i = oi[1];
    loops(b, {len}, [&](Builder &b, ValueRange tv) {
      Value t = tv[0];
      Value v = load(b, x, {o, t, i});
      Value key = keyOf(b, v);
      Value kc = cIndex(b, k);
      // Slot k - 1 is read before it is written too; then unused.
      Value kth = keyOf(b, load(b, vals, {o, cIndex(b, k - 1), i}));
      Value beatsKth =
          largest ? keyLess(b, e, kth, key) : keyLess(b, e, key, kth);
      Value notFull = b.create<arith::CmpIOp>(arith::CmpIPredicate::slt, t, kc);
      Value enters = b.create<arith::OrIOp>(notFull, beatsKth);
      ifThenElse(
          b, enters,
          [&](Builder &b) {
            Value cnt = b.create<arith::MinSIOp>(t, kc);
            Value zero = cIndex(b, 0);
            // Position = number of entries the new element does not beat.
            Value pos =
                loop(b, zero, cnt, {zero},
                     [&](Builder &b, ValueRange q, ValueRange acc) {
                       Value old = keyOf(b, load(b, vals, {o, q[0], i}));
                       Value beats = largest ? keyLess(b, e, old, key)
                                             : keyLess(b, e, key, old);
                       Value add = b.create<arith::SelectOp>(
                           beats, cIndex(b, 0), cIndex(b, 1));
                       return SmallVector<Value>{
                           b.create<arith::AddIOp>(acc[0], add)};
                     })[0];
            Value fits =
                b.create<arith::CmpIOp>(arith::CmpIPredicate::slt, pos, kc);
            ifThenElse(
                b, fits,
                [&](Builder &b) {
                  // Shift slots [pos, last) to [pos + 1, last], last = min(cnt,
                  // k-1).
                  Value lastSlot =
                      b.create<arith::MinSIOp>(cnt, cIndex(b, k - 1));
                  Value n = b.create<arith::SubIOp>(lastSlot, pos);
                  loop(b, cIndex(b, 0), n, {},
                       [&](Builder &b, ValueRange r, ValueRange) {
                         Value q = b.create<arith::SubIOp>(lastSlot, r[0]);
                         Value qp = b.create<arith::SubIOp>(q, cIndex(b, 1));
                         store(b, load(b, vals, {o, qp, i}), vals, {o, q, i});
                         store(b, load(b, idxs, {o, qp, i}), idxs, {o, q, i});
                         return SmallVector<Value>{};
                       });
                  store(b, v, vals, {o, pos, i});
                  store(b, b.create<arith::IndexCastOp>(i64, t), idxs,
                        {o, pos, i});
                },
                nullptr);
          },
          nullptr);
    });
  });
  return success();
}

} // namespace

void registerArgOps(PortableRegistry &registry) {
  registry["graph.argmax"] = &lowerArg<true>;
  registry["graph.argmin"] = &lowerArg<false>;
  registry["graph.cumsum"] = &lowerCumSum;
  registry["graph.topk"] = &lowerTopK;
}

} // namespace mlcc::portable::red
