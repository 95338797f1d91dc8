//===- NormalizationMisc.cpp - LpNorm, MVN and LRN ------------------------===//
//
// graph.lp_norm, graph.mean_variance_norm and graph.lrn: the normalisations
// that are not a per-channel affine transform. Float inputs only; sums in
// double, as in the reference (Kernels/NormalizationMisc.cpp).
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

LogicalResult checkFloatInput(Operation *op) {
  if (!elemOf(op->getOperand(0)).isFloat)
    return op->emitError("input must have a float type");
  return success();
}

//===----------------------------------------------------------------------===//
// graph.lp_norm
//===----------------------------------------------------------------------===//

// y = x / ||x||_p along `axis`, p in {1, 2}; a zero vector stays zero.

LogicalResult lowerLpNorm(PortableOp &p) {
  Operation *op = p.op;
  if (failed(checkFloatInput(op)))
    return failure();
  Value xv = op->getOperand(0);
  Elem e = elemOf(xv);
  ArrayRef<int64_t> shape = shapeOf(xv);
  FailureOr<int64_t> axis =
      normalizeAxis(op, intAttr(op, "axis", -1), shape.size());
  if (failed(axis))
    return failure();
  int64_t pNorm = intAttr(op, "p", 2);
  if (pNorm != 1 && pNorm != 2)
    return op->emitError("p = ") << pNorm << " is not supported (1 or 2)";
  int64_t outer, len, inner;
  splitAtAxis(shape, *axis, outer, len, inner);
  if (outer * len * inner == 0)
    return success();

  Builder b(p.loc, p.b);
  shapeBuffers(b, p);
  Value x = view(b, p.operands[0], {outer, len, inner});
  Value y = view(b, p.results[0], {outer, len, inner});
  auto term = [&](Builder &b, Value v) -> Value {
    return pNorm == 1 ? b.create<math::AbsFOp>(v).getResult()
                      : b.create<arith::MulFOp>(v, v).getResult();
  };
  // 1 / ||x||, or 0 for a zero vector.
  auto inverse = [&](Builder &b, Value norm) -> Value {
    if (pNorm == 2)
      norm = b.create<math::SqrtOp>(norm);
    Value isZero =
        b.create<arith::CmpFOp>(arith::CmpFPredicate::OEQ, norm, cF64(b, 0.0));
    return b.create<arith::SelectOp>(
        isZero, cF64(b, 0.0), b.create<arith::DivFOp>(cF64(b, 1.0), norm));
  };
  Value zero = cIndex(b, 0), end = cIndex(b, len);
  if (inner >= kMinBlockedInner) {
    // Blocks of the contiguous inner dim, each with its norms in its own
    // state array (parallelBlocks): independent, parallel.
    parallelBlocks(
        b, {outer}, inner, {b.getF64Type()},
        [&](Builder &b, ValueRange o, Value i0, Value n, ArrayRef<Value> tmp) {
          Value acc = tmp[0];
          auto idx = [&](Builder &b, Value k, Value ii) -> SmallVector<Value> {
            return {o[0], k, b.create<arith::AddIOp>(i0, ii)};
          };
          auto forKI = [&](auto &&fn) {
            loop(b, zero, end, {}, [&](Builder &b, ValueRange k, ValueRange) {
              each(b, n, [&](Builder &b, Value ii) { fn(b, k[0], ii); });
              return SmallVector<Value>{};
            });
          };
          each(b, n,
               [&](Builder &b, Value ii) { store(b, cF64(b, 0.0), acc, ii); });
          forKI([&](Builder &b, Value k, Value ii) {
            Value v = toF64(b, load(b, x, idx(b, k, ii)), e);
            store(b, accAdd(b, load(b, acc, ii), term(b, v)), acc, ii);
          });
          each(b, n, [&](Builder &b, Value ii) {
            store(b, inverse(b, load(b, acc, ii)), acc, ii);
          });
          forKI([&](Builder &b, Value k, Value ii) {
            SmallVector<Value> at = idx(b, k, ii);
            Value v = toF64(b, load(b, x, at), e);
            store(b,
                  fromF64(b, b.create<arith::MulFOp>(v, load(b, acc, ii)), e),
                  y, at);
          });
        });
    return success();
  }
  // Each (outer, inner) vector is normalised on its own: parallel.
  parallelLoops(b, {outer, inner}, [&](Builder &b, ValueRange oi) {
    Value o = oi[0], i = oi[1];
    auto at = [&](Builder &b, Value k) {
      return toF64(b, load(b, x, {o, k, i}), e);
    };
    Value norm = loop(b, zero, end, {cF64(b, 0.0)},
                      [&](Builder &b, ValueRange k, ValueRange acc) {
                        return SmallVector<Value>{
                            accAdd(b, acc[0], term(b, at(b, k[0])))};
                      })[0];
    Value inv = inverse(b, norm);
    loop(b, zero, end, {}, [&](Builder &b, ValueRange k, ValueRange) {
      store(b, fromF64(b, b.create<arith::MulFOp>(at(b, k[0]), inv), e), y,
            {o, k[0], i});
      return SmallVector<Value>{};
    });
  });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.mean_variance_norm
//===----------------------------------------------------------------------===//

// Y = (X - E[X]) / (sqrt(E[(X - E[X])^2]) + 1e-9) over `axes` (default
// [0, 2, 3]; an empty list means all axes).

LogicalResult lowerMvn(PortableOp &p) {
  Operation *op = p.op;
  if (failed(checkFloatInput(op)))
    return failure();
  Value xv = op->getOperand(0);
  Elem e = elemOf(xv);
  ArrayRef<int64_t> shape = shapeOf(xv);
  int64_t rank = shape.size();
  SmallVector<int64_t> axes =
      intsAttr(op, "axes").value_or(SmallVector<int64_t>{0, 2, 3});
  SmallVector<bool> mask(rank, axes.empty());
  for (int64_t a : axes) {
    FailureOr<int64_t> d = normalizeAxis(op, a, rank);
    if (failed(d))
      return failure();
    mask[*d] = true;
  }
  if (numElements(shape) == 0)
    return success();
  SmallVector<int64_t> keptDims, redDims;
  for (int64_t d = 0; d < rank; ++d)
    (mask[d] ? redDims : keptDims).push_back(shape[d]);

  Builder b(p.loc, p.b);
  shapeBuffers(b, p);
  Value x = p.operands[0], y = p.results[0];
  Value count = cF64(b, static_cast<double>(numElements(redDims)));
  // Each kept index has its own statistics and output slice: parallel.
  parallelLoops(b, keptDims, [&](Builder &b, ValueRange kept) {
    auto index = [&](ValueRange red) {
      SmallVector<Value> idx;
      unsigned k = 0, r = 0;
      for (bool m : mask)
        idx.push_back(m ? red[r++] : kept[k++]);
      return idx;
    };
    auto at = [&](Builder &b, ValueRange red) {
      return toF64(b, load(b, x, index(red)), e);
    };
    Value sum =
        loops(b, redDims, {cF64(b, 0.0)},
              [&](Builder &b, ValueRange red, ValueRange acc) {
                return SmallVector<Value>{accAdd(b, acc[0], at(b, red))};
              })[0];
    Value mean = b.create<arith::DivFOp>(sum, count);
    Value sq = loops(b, redDims, {cF64(b, 0.0)},
                     [&](Builder &b, ValueRange red, ValueRange acc) {
                       Value d = b.create<arith::SubFOp>(at(b, red), mean);
                       return SmallVector<Value>{
                           accAdd(b, acc[0], b.create<arith::MulFOp>(d, d))};
                     })[0];
    Value sd = b.create<math::SqrtOp>(b.create<arith::DivFOp>(sq, count));
    Value inv = b.create<arith::DivFOp>(
        cF64(b, 1.0), b.create<arith::AddFOp>(sd, cF64(b, 1e-9)));
    loops(b, redDims, [&](Builder &b, ValueRange red) {
      Value d = b.create<arith::SubFOp>(at(b, red), mean);
      store(b, fromF64(b, b.create<arith::MulFOp>(d, inv), e), y, index(red));
    });
  });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.lrn
//===----------------------------------------------------------------------===//

// Y[n, c, ...] = X[n, c, ...] / (bias + alpha / size * square_sum)^beta,
// square_sum over the channels max(0, c - floor((size-1)/2)) ..
// min(C-1, c + ceil((size-1)/2)).

LogicalResult lowerLrn(PortableOp &p) {
  Operation *op = p.op;
  if (failed(checkFloatInput(op)))
    return failure();
  Value xv = op->getOperand(0);
  Elem e = elemOf(xv);
  ArrayRef<int64_t> shape = shapeOf(xv);
  if (shape.size() < 2)
    return op->emitError("input must have rank >= 2 (N x C x ...)");
  int64_t size = intAttr(op, "size", 0);
  if (size < 1)
    return op->emitError("size must be >= 1");
  int64_t n = shape[0], c = shape[1];
  int64_t s = n * c == 0 ? 0 : numElements(shape) / (n * c);
  if (n * c * s == 0)
    return success();
  double alpha = floatAttr(op, "alpha", 1e-4f);
  double beta = floatAttr(op, "beta", 0.75f);
  double bias = floatAttr(op, "bias", 1.0f);
  int64_t before = (size - 1) / 2, after = size - 1 - before;

  Builder b(p.loc, p.b);
  shapeBuffers(b, p);
  Value x = view(b, p.operands[0], {n, c, s});
  Value y = view(b, p.results[0], {n, c, s});
  // Each output element reads only X: parallel.
  parallelLoops(b, {n, c, s}, [&](Builder &b, ValueRange ivs) {
    Value i = ivs[0], ch = ivs[1], j = ivs[2];
    Value lo = b.create<arith::MaxSIOp>(
        b.create<arith::SubIOp>(ch, cIndex(b, before)), cIndex(b, 0));
    Value hi = b.create<arith::MinSIOp>(
        b.create<arith::AddIOp>(ch, cIndex(b, after + 1)), cIndex(b, c));
    Value sq = loop(b, lo, hi, {cF64(b, 0.0)},
                    [&](Builder &b, ValueRange k, ValueRange acc) {
                      Value v = toF64(b, load(b, x, {i, k[0], j}), e);
                      return SmallVector<Value>{
                          accAdd(b, acc[0], b.create<arith::MulFOp>(v, v))};
                    })[0];
    Value base = b.create<arith::AddFOp>(
        cF64(b, bias), b.create<arith::MulFOp>(
                           cF64(b, alpha / static_cast<double>(size)), sq));
    Value den = b.create<math::PowFOp>(base, cF64(b, beta));
    Value v = toF64(b, load(b, x, {i, ch, j}), e);
    store(b, fromF64(b, b.create<arith::DivFOp>(v, den), e), y, {i, ch, j});
  });
  return success();
}

} // namespace

void registerMiscNormOps(PortableRegistry &registry) {
  registry["graph.lp_norm"] = &lowerLpNorm;
  registry["graph.mean_variance_norm"] = &lowerMvn;
  registry["graph.lrn"] = &lowerLrn;
}

} // namespace mlcc::portable::red
