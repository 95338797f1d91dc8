//===- Determinant.cpp - graph.det ----------------------------------------===//
//
// The determinant of each matrix of a batch [..., M, M], as the reference
// computes it (compiler/Reference/Kernels/Misc.cpp): LU decomposition with
// partial pivoting in f64, det = sign * product of the pivots, stopping at
// the first zero pivot (or once the product is 0). The matrices are
// independent: one scf.parallel over the batch, each elimination serial in
// its own f64 copy of the matrix.
//
//===----------------------------------------------------------------------===//

#include "NNUtils.h"
#include "ParallelLoops.h"
#include "ReductionsSupport.h"

using namespace mlir;

namespace mlcc::portable {

void registerDetLowering(PortableRegistry &registry);

namespace {

using namespace red;

/// Matrix `mat` of the f64 scratch [count, M, M]: element (i, j).
struct Matrix {
  Value buf, mat;
  Value load(Builder &b, Value i, Value j) const {
    return red::load(b, buf, {mat, i, j});
  }
  void store(Builder &b, Value v, Value i, Value j) const {
    red::store(b, v, buf, {mat, i, j});
  }
};

/// Step k of the elimination of `a` with the product so far `det` (not 0):
/// the pivot row swapped into place, the rows below reduced; returns the
/// updated product.
Value eliminateColumn(Builder &b, const Matrix &a, Value k, int64_t m,
                      Value det) {
  auto abs = [&](Builder &b, Value row) {
    return b.create<math::AbsFOp>(a.load(b, row, k));
  };
  Value kp1 = b.create<arith::AddIOp>(k, cIndex(b, 1)), end = cIndex(b, m);
  // The first row with the largest |a[i][k]|.
  Value pivot =
      loop(b, kp1, end, {k}, [&](Builder &b, ValueRange i, ValueRange best) {
        Value larger = b.create<arith::CmpFOp>(arith::CmpFPredicate::OGT,
                                               abs(b, i[0]), abs(b, best[0]));
        return SmallVector<Value>{
            b.create<arith::SelectOp>(larger, i[0], best[0])};
      })[0];
  Value zero = cF64(b, 0.0);
  Value singular = b.create<arith::CmpFOp>(arith::CmpFPredicate::OEQ,
                                           a.load(b, pivot, k), zero);
  auto ifOp = b.create<scf::IfOp>(
      singular,
      [&](OpBuilder &ob, Location loc) { ob.create<scf::YieldOp>(loc, zero); },
      [&](OpBuilder &ob, Location loc) {
        Builder b(loc, ob);
        Value swap =
            b.create<arith::CmpIOp>(arith::CmpIPredicate::ne, pivot, k);
        // Columns before k are never read again: the swap starts at k.
        ifThenElse(
            b, swap,
            [&](Builder &b) {
              loop(b, k, end, {}, [&](Builder &b, ValueRange j, ValueRange) {
                Value u = a.load(b, k, j[0]), v = a.load(b, pivot, j[0]);
                a.store(b, v, k, j[0]);
                a.store(b, u, pivot, j[0]);
                return SmallVector<Value>{};
              });
            },
            nullptr);
        Value d =
            b.create<arith::SelectOp>(swap, b.create<arith::NegFOp>(det), det);
        Value akk = a.load(b, k, k);
        d = b.create<arith::MulFOp>(d, akk);
        loop(b, kp1, end, {}, [&](Builder &b, ValueRange i, ValueRange) {
          Value f = b.create<arith::DivFOp>(a.load(b, i[0], k), akk);
          loop(b, kp1, end, {}, [&](Builder &b, ValueRange j, ValueRange) {
            Value t = b.create<arith::MulFOp>(f, a.load(b, k, j[0]));
            a.store(b, b.create<arith::SubFOp>(a.load(b, i[0], j[0]), t), i[0],
                    j[0]);
            return SmallVector<Value>{};
          });
          return SmallVector<Value>{};
        });
        b.create<scf::YieldOp>(d);
      });
  return ifOp.getResult(0);
}

LogicalResult lowerDet(PortableOp &p) {
  Operation *op = p.op;
  Value xv = op->getOperand(0);
  Elem e = elemOf(xv), ye = elemOf(op->getResult(0));
  ArrayRef<int64_t> xs = shapeOf(xv);
  if (!e.isFloat)
    return op->emitError("det: X must have a float type");
  if (xs.size() < 2 || xs[xs.size() - 1] != xs[xs.size() - 2])
    return op->emitError("det: X must be [..., M, M]");
  if (shapeOf(op->getResult(0)) != xs.drop_back(2))
    return op->emitError("det: Y must have X's batch dims");
  const int64_t m = xs.back(), count = numElements(xs.drop_back(2));
  if (count == 0)
    return success();

  Builder b(p.loc, p.b);
  shapeBuffers(b, p);
  Value x = view(b, p.operands[0], {count, m, m});
  Value y = view(b, p.results[0], {count});
  if (m == 0) { // the determinant of an empty matrix
    parallelLoops(b, {count}, [&](Builder &b, ValueRange ivs) {
      store(b, fromF64(b, cF64(b, 1.0), ye), y, ivs);
    });
    return success();
  }
  // One f64 copy per matrix, so that the batch's eliminations share nothing.
  nn::Scratch scratch(b, b.getLoc());
  Value work = scratch.alloc({count, m, m}, b.getF64Type());
  parallelLoops(b, {count}, [&](Builder &b, ValueRange ivs) {
    Matrix a{work, ivs[0]};
    parallelLoops(b, {m, m}, [&](Builder &b, ValueRange ij) {
      Value v = toF64(b, load(b, x, {ivs[0], ij[0], ij[1]}), e);
      a.store(b, v, ij[0], ij[1]);
    });
    // Like the reference, no step once the product is 0.
    auto step = [&](Builder &b, ValueRange k, ValueRange acc) {
      Value going = b.create<arith::CmpFOp>(arith::CmpFPredicate::UNE, acc[0],
                                            cF64(b, 0.0));
      auto ifOp = b.create<scf::IfOp>(
          going,
          [&](OpBuilder &ob, Location loc) {
            Builder nb(loc, ob);
            nb.create<scf::YieldOp>(eliminateColumn(nb, a, k[0], m, acc[0]));
          },
          [&](OpBuilder &ob, Location loc) {
            ob.create<scf::YieldOp>(loc, acc[0]);
          });
      return SmallVector<Value>{ifOp.getResult(0)};
    };
    Value det = loop(b, cIndex(b, 0), cIndex(b, m), {cF64(b, 1.0)}, step)[0];
    store(b, fromF64(b, det, ye), y, ivs);
  });
  scratch.release();
  return success();
}

} // namespace

void registerDetLowering(PortableRegistry &registry) {
  registry["graph.det"] = lowerDet;
}

} // namespace mlcc::portable
