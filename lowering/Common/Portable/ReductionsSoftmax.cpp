//===- ReductionsSoftmax.cpp - Softmax, LogSoftmax and Hardmax ------------===//
//
// Opset-13 semantics along one axis (default -1); the older flatten-to-2D
// forms are rewritten by the importer. As in the reference (Kernels/
// Softmax.cpp): the row max is subtracted before exp, exp runs in the
// element type (f32 for f16), the sum of exponentials accumulates in
// double. Each (outer, inner) row along the axis takes three passes: max,
// exp/sum, scale; an axis followed by many inner elements (softmax over
// the channels of NCHW) runs them in blocks, the rows' state in scratch.
//
//===----------------------------------------------------------------------===//

#include "ParallelLoops.h"
#include "ReductionsSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace mlcc::portable::red {
namespace {

enum class SK { Softmax, LogSoftmax, Hardmax };

/// Row form: one row along the axis per (outer, inner) pair, its state in
/// registers; used when the axis is innermost or the inner dims are short.
void emitRows(Builder &b, SK kind, const Elem &e, Value x, Value y,
              int64_t outer, int64_t len, int64_t inner) {
  Type ct = computeFloatType(e);
  // exp values can be kept in y between passes when y holds the compute
  // type; for f16 they are recomputed so the scaling stays in f32.
  bool keepExp = e.storage == ct;
  Type i64 = b.getI64Type();
  // Each row is computed (and rescaled in y) on its own: parallel.
  parallelLoops(b, {outer, inner}, [&](Builder &b, ValueRange oi) {
    Value o = oi[0], i = oi[1];
    auto at = [&](Builder &b, Value k) {
      return toCompute(b, load(b, x, {o, k, i}), e);
    };
    // Pass 1: the max (first occurrence, plain '>' as the reference).
    SmallVector<Value> mx = loop(
        b, cIndex(b, 1), cIndex(b, len), {at(b, cIndex(b, 0)), cInt(b, i64, 0)},
        [&](Builder &b, ValueRange k, ValueRange acc) {
          Value v = at(b, k[0]);
          Value gt =
              b.create<arith::CmpFOp>(arith::CmpFPredicate::OGT, v, acc[0]);
          Value kk = b.create<arith::IndexCastOp>(i64, k[0]);
          return SmallVector<Value>{b.create<arith::SelectOp>(gt, v, acc[0]),
                                    b.create<arith::SelectOp>(gt, kk, acc[1])};
        });
    Value m = mx[0];
    Value zero = cIndex(b, 0), end = cIndex(b, len);
    auto forK = [&](auto &&fn) {
      loop(b, zero, end, {}, [&](Builder &b, ValueRange k, ValueRange) {
        fn(b, k[0]);
        return SmallVector<Value>{};
      });
    };
    if (kind == SK::Hardmax) {
      Value one = cFloat(b, e.storage, 1.0), nil = cFloat(b, e.storage, 0.0);
      forK([&](Builder &b, Value k) {
        Value kk = b.create<arith::IndexCastOp>(i64, k);
        Value hit =
            b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, kk, mx[1]);
        store(b, b.create<arith::SelectOp>(hit, one, nil), y, {o, k, i});
      });
      return;
    }
    auto expAt = [&](Builder &b, Value k) -> Value {
      return b.create<math::ExpOp>(b.create<arith::SubFOp>(at(b, k), m));
    };
    // Pass 2: sum of exp(x - m) in double.
    bool store2 = kind == SK::Softmax && keepExp;
    Value sum =
        loop(b, zero, end, {cF64(b, 0.0)},
             [&](Builder &b, ValueRange k, ValueRange acc) {
               Value ex = expAt(b, k[0]);
               if (store2)
                 store(b, ex, y, {o, k[0], i});
               return SmallVector<Value>{accAdd(b, acc[0], toF64(b, ex, e))};
             })[0];
    // Pass 3: scale.
    if (kind == SK::Softmax) {
      Value inv = b.create<arith::DivFOp>(cF64(b, 1.0), sum);
      if (ct != inv.getType())
        inv = b.create<arith::TruncFOp>(ct, inv);
      forK([&](Builder &b, Value k) {
        Value ex = keepExp ? load(b, y, {o, k, i}) : expAt(b, k);
        store(b, fromCompute(b, b.create<arith::MulFOp>(ex, inv), e), y,
              {o, k, i});
      });
    } else {
      Value logSum = b.create<math::LogOp>(sum);
      forK([&](Builder &b, Value k) {
        Value d = toF64(b, b.create<arith::SubFOp>(at(b, k), m), e);
        store(b, fromF64(b, b.create<arith::SubFOp>(d, logSum), e), y,
              {o, k, i});
      });
    }
  });
}

/// Blocked form for an axis followed by >= 16 contiguous elements (e.g.
/// softmax over the channels of NCHW): the same passes over blocks of the
/// inner elements, the per-element max, arg and sum in scratch, so the
/// innermost loops are contiguous.
void emitBlocked(Builder &b, SK kind, const Elem &e, Value x, Value y,
                 int64_t outer, int64_t len, int64_t inner) {
  Type ct = computeFloatType(e);
  bool keepExp = e.storage == ct;
  Type i64 = b.getI64Type(), f64 = b.getF64Type();
  // The blocks are independent, each with its state in its own arrays
  // (parallelBlocks): parallel.
  parallelBlocks(
      b, {outer}, inner, {ct, f64, i64},
      [&](Builder &b, ValueRange o, Value i0, Value n, ArrayRef<Value> s) {
        Value mx = s[0], sum = s[1], arg = s[2];
        auto idx = [&](Builder &b, Value k, Value ii) -> SmallVector<Value> {
          return {o[0], k, b.create<arith::AddIOp>(i0, ii)};
        };
        auto at = [&](Builder &b, Value k, Value ii) {
          return toCompute(b, load(b, x, idx(b, k, ii)), e);
        };
        // fn(k, ii) over the block for k in [from, len).
        auto forKI = [&](int64_t from, auto &&fn) {
          loop(b, cIndex(b, from), cIndex(b, len), {},
               [&](Builder &b, ValueRange k, ValueRange) {
                 each(b, n, [&](Builder &b, Value ii) { fn(b, k[0], ii); });
                 return SmallVector<Value>{};
               });
        };
        each(b, n, [&](Builder &b, Value ii) {
          store(b, at(b, cIndex(b, 0), ii), mx, ii);
          store(b, cInt(b, i64, 0), arg, ii);
          store(b, cF64(b, 0.0), sum, ii);
        });
        forKI(1, [&](Builder &b, Value k, Value ii) {
          Value v = at(b, k, ii), m = load(b, mx, ii);
          Value gt = b.create<arith::CmpFOp>(arith::CmpFPredicate::OGT, v, m);
          store(b, b.create<arith::SelectOp>(gt, v, m), mx, ii);
          if (kind == SK::Hardmax) {
            Value kk = b.create<arith::IndexCastOp>(i64, k);
            store(b, b.create<arith::SelectOp>(gt, kk, load(b, arg, ii)), arg,
                  ii);
          }
        });
        if (kind == SK::Hardmax) {
          Value one = cFloat(b, e.storage, 1.0),
                nil = cFloat(b, e.storage, 0.0);
          forKI(0, [&](Builder &b, Value k, Value ii) {
            Value kk = b.create<arith::IndexCastOp>(i64, k);
            Value hit = b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, kk,
                                                load(b, arg, ii));
            store(b, b.create<arith::SelectOp>(hit, one, nil), y,
                  idx(b, k, ii));
          });
          return;
        }
        auto expAt = [&](Builder &b, Value k, Value ii) -> Value {
          return b.create<math::ExpOp>(
              b.create<arith::SubFOp>(at(b, k, ii), load(b, mx, ii)));
        };
        bool store2 = kind == SK::Softmax && keepExp;
        forKI(0, [&](Builder &b, Value k, Value ii) {
          Value ex = expAt(b, k, ii);
          if (store2)
            store(b, ex, y, idx(b, k, ii));
          store(b, accAdd(b, load(b, sum, ii), toF64(b, ex, e)), sum, ii);
        });
        // sum becomes 1 / sum (softmax) or log(sum) (log_softmax).
        each(b, n, [&](Builder &b, Value ii) {
          Value v = load(b, sum, ii);
          v = kind == SK::Softmax
                  ? b.create<arith::DivFOp>(cF64(b, 1.0), v).getResult()
                  : b.create<math::LogOp>(v).getResult();
          store(b, v, sum, ii);
        });
        forKI(0, [&](Builder &b, Value k, Value ii) {
          Value r;
          if (kind == SK::Softmax) {
            Value inv = load(b, sum, ii);
            if (ct != inv.getType())
              inv = b.create<arith::TruncFOp>(ct, inv);
            Value ex = keepExp ? load(b, y, idx(b, k, ii)) : expAt(b, k, ii);
            r = fromCompute(b, b.create<arith::MulFOp>(ex, inv), e);
          } else {
            Value d = toF64(
                b, b.create<arith::SubFOp>(at(b, k, ii), load(b, mx, ii)), e);
            r = fromF64(b, b.create<arith::SubFOp>(d, load(b, sum, ii)), e);
          }
          store(b, r, y, idx(b, k, ii));
        });
      });
}

template <SK K> LogicalResult lowerSoftmax(PortableOp &p) {
  Operation *op = p.op;
  Value xv = op->getOperand(0);
  Elem e = elemOf(xv);
  if (!e.isFloat)
    return op->emitError("input must have a float type");
  ArrayRef<int64_t> shape = shapeOf(xv);
  FailureOr<int64_t> axis =
      normalizeAxis(op, intAttr(op, "axis", -1), shape.size());
  if (failed(axis))
    return failure();
  int64_t outer, len, inner;
  splitAtAxis(shape, *axis, outer, len, inner);
  if (outer * len * inner == 0)
    return success();
  Builder b(p.loc, p.b);
  shapeBuffers(b, p);
  Value x = view(b, p.operands[0], {outer, len, inner});
  Value y = view(b, p.results[0], {outer, len, inner});
  if (inner >= kMinBlockedInner)
    emitBlocked(b, K, e, x, y, outer, len, inner);
  else
    emitRows(b, K, e, x, y, outer, len, inner);
  return success();
}

} // namespace

void registerSoftmaxOps(PortableRegistry &registry) {
  registry["graph.softmax"] = &lowerSoftmax<SK::Softmax>;
  registry["graph.log_softmax"] = &lowerSoftmax<SK::LogSoftmax>;
  registry["graph.hardmax"] = &lowerSoftmax<SK::Hardmax>;
}

} // namespace mlcc::portable::red
