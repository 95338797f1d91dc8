//===- NonMaxSuppression.cpp - graph.non_max_suppression ------------------===//
//
// As the reference (compiler/Reference/Kernels/Misc.cpp), per batch and
// class: the boxes whose score is above score_threshold (all when it is
// absent), merge sorted by score, highest first and ties in box order; then
// greedily, while fewer than max_output_boxes_per_class are kept, a box is
// kept unless its IoU with a kept one exceeds iou_threshold. Coordinates,
// scores and IoU are in double with the reference's formulas. The three
// scalars are read at run time; the result [bound, 3] holds the selected
// (batch, class, box) triples in that order, zeros after them.
//
//===----------------------------------------------------------------------===//

#include "DataDependent.h"

#include "NNUtils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mlcc::portable::ddep {
namespace {

using namespace red;
using P = arith::CmpIPredicate;
using F = arith::CmpFPredicate;

/// A box in corner form (f64): xMin, yMin, xMax, yMax.
using Box = std::array<Value, 4>;

/// Box `i` of batch `bi`, whatever the input format (the reference's boxAt).
Box boxAt(Builder &b, Value boxes, const Elem &e, Value bi, Value i,
          bool centerPoint) {
  Value v[4];
  for (int64_t k = 0; k < 4; ++k)
    v[k] = toF64(b, load(b, boxes, {bi, i, cIndex(b, k)}), e);
  if (centerPoint) { // [x_center, y_center, width, height]
    Value two = cF64(b, 2.0);
    Value hw = b.create<arith::DivFOp>(v[2], two);
    Value hh = b.create<arith::DivFOp>(v[3], two);
    return {subF(b, v[0], hw), subF(b, v[1], hh),
            b.create<arith::AddFOp>(v[0], hw),
            b.create<arith::AddFOp>(v[1], hh)};
  }
  // [y1, x1, y2, x2], any pair of diagonal corners.
  return {stdMin(b, v[1], v[3]), stdMin(b, v[0], v[2]), stdMax(b, v[1], v[3]),
          stdMax(b, v[0], v[2])};
}

/// The reference's iou(a, c): 0 without overlap or for an empty box.
Value iou(Builder &b, const Box &a, const Box &c) {
  Value iw = subF(b, stdMin(b, a[2], c[2]), stdMax(b, a[0], c[0]));
  Value ih = subF(b, stdMin(b, a[3], c[3]), stdMax(b, a[1], c[1]));
  Value inter = mulF(b, iw, ih);
  Value areaA = mulF(b, subF(b, a[2], a[0]), subF(b, a[3], a[1]));
  Value areaC = mulF(b, subF(b, c[2], c[0]), subF(b, c[3], c[1]));
  Value uni = subF(b, b.create<arith::AddFOp>(areaA, areaC), inter);
  Value zero = cF64(b, 0.0);
  Value none = cmpF(b, F::OLE, iw, zero);
  for (Value v : {ih, areaA, areaC, uni})
    none = b.create<arith::OrIOp>(none, cmpF(b, F::OLE, v, zero));
  return b.create<arith::SelectOp>(none, zero,
                                   b.create<arith::DivFOp>(inter, uni));
}

LogicalResult lowerNonMaxSuppression(PortableOp &p) {
  Operation *op = p.op;
  if (!hasOperand(op, 0) || !hasOperand(op, 1))
    return op->emitError("boxes and scores are required");
  Value boxesV = op->getOperand(0), scoresV = op->getOperand(1);
  Elem be = elemOf(boxesV), se = elemOf(scoresV);
  if (!be.isFloat || !se.isFloat)
    return op->emitError("boxes and scores must be float tensors");
  ArrayRef<int64_t> bs = shapeOf(boxesV), ss = shapeOf(scoresV);
  if (bs.size() != 3 || bs[2] != 4 || ss.size() != 3 || bs[0] != ss[0] ||
      bs[1] != ss[2])
    return op->emitError("boxes [batches, boxes, 4] and scores [batches, "
                         "classes, boxes] do not match");
  for (unsigned i = 2; i < 5; ++i)
    if (hasOperand(op, i) && numElements(shapeOf(op->getOperand(i))) != 1)
      return op->emitError("operand ") << i << " must be a scalar";
  int64_t centerPointBox = intAttr(op, "center_point_box", 0);
  if (centerPointBox != 0 && centerPointBox != 1)
    return op->emitError("center_point_box must be 0 or 1, got ")
           << centerPointBox;
  ArrayRef<int64_t> outShape = shapeOf(op->getResult(0));
  if (outShape.size() != 2 || outShape[1] != 3)
    return op->emitError("result must have shape [n, 3]");
  int64_t batches = ss[0], classes = ss[1], numBoxes = ss[2];
  int64_t bound = outShape[0];

  Builder b(p.loc, p.b);
  shapeBuffers(b, p);
  Value boxes = p.operands[0], scores = p.operands[1], out = p.results[0];
  Type i64 = b.getI64Type();
  // The scalars, as the reference reads them: absent ones select nothing,
  // threshold IoU at 0 and keep every score.
  auto scalar = [&](unsigned i) {
    return nn::loadFirst(b, b.getLoc(), p.operands[i]);
  };
  Value maxPerClass = cInt(b, i64, 0);
  if (hasOperand(op, 2)) {
    Elem me = elemOf(op->getOperand(2));
    Value v = scalar(2);
    maxPerClass = me.isFloat ? b.create<arith::FPToSIOp>(i64, v).getResult()
                             : toI64(b, v, me);
  }
  Value iouThreshold = hasOperand(op, 3)
                           ? toF64(b, scalar(3), elemOf(op->getOperand(3)))
                           : cF64(b, 0.0);
  Value scoreThreshold = hasOperand(op, 4)
                             ? toF64(b, scalar(4), elemOf(op->getOperand(4)))
                             : Value();

  zeroFill(b, out);
  nn::Scratch scratch(b, b.getLoc());
  Value order = scratch.alloc({numBoxes}, i64);
  Value tmp = scratch.alloc({numBoxes}, i64);
  Value kept = scratch.alloc({numBoxes, 4}, b.getF64Type());
  Value c0 = cIndex(b, 0);
  Value total = loops(
      b, {batches, classes}, {c0},
      [&](Builder &b, ValueRange bc, ValueRange acc) {
        auto score = [&](Builder &b, Value i) {
          return toF64(b, load(b, scores, {bc[0], bc[1], i}), se);
        };
        Value candidates = loop(
            b, c0, cIndex(b, numBoxes), {c0},
            [&](Builder &b, ValueRange i, ValueRange m) {
              Value keep = scoreThreshold
                               ? cmpF(b, F::OGT, score(b, i[0]), scoreThreshold)
                               : cInt(b, b.getI1Type(), 1);
              ifThenElse(
                  b, keep,
                  [&](Builder &b) { store(b, asI64(b, i[0]), order, {m[0]}); },
                  nullptr);
              return SmallVector<Value>{plusIf(b, m[0], keep)};
            })[0];
        Value sorted =
            mergeSort(b, order, tmp, candidates, numBoxes,
                      [&](Builder &b, Value x, Value y) {
                        return cmpF(b, F::OGT, score(b, toIndex(b, x)),
                                    score(b, toIndex(b, y)));
                      });
        // Carries the kept count and the selected total.
        SmallVector<Value> r =
            loop(b, c0, candidates, {c0, acc[0]},
                 [&](Builder &b, ValueRange t, ValueRange kt) {
                   Value k = kt[0], tot = kt[1];
                   Value i = toIndex(b, load(b, sorted, t));
                   Box box = boxAt(b, boxes, be, bc[0], i, centerPointBox == 1);
                   Value room = cmpI(b, P::slt, asI64(b, k), maxPerClass);
                   Value suppressed =
                       loop(b, c0, b.create<arith::SelectOp>(room, k, c0),
                            {cInt(b, b.getI1Type(), 0)},
                            [&](Builder &b, ValueRange j, ValueRange s) {
                              Box other;
                              for (int64_t d = 0; d < 4; ++d)
                                other[d] = load(b, kept, {j[0], cIndex(b, d)});
                              Value over = cmpF(b, F::OGT, iou(b, box, other),
                                                iouThreshold);
                              return SmallVector<Value>{
                                  b.create<arith::OrIOp>(s[0], over)};
                            })[0];
                   Value take = b.create<arith::AndIOp>(
                       room, b.create<arith::XOrIOp>(
                                 suppressed, cInt(b, b.getI1Type(), 1)));
                   ifThenElse(
                       b, take,
                       [&](Builder &b) {
                         for (int64_t d = 0; d < 4; ++d)
                           store(b, box[d], kept, {k, cIndex(b, d)});
                         ifThenElse(
                             b, cmpI(b, P::ult, tot, cIndex(b, bound)),
                             [&](Builder &b) {
                               Value triple[3] = {bc[0], bc[1], i};
                               for (int64_t d = 0; d < 3; ++d)
                                 store(b, asI64(b, triple[d]), out,
                                       {tot, cIndex(b, d)});
                             },
                             nullptr);
                       },
                       nullptr);
                   return SmallVector<Value>{plusIf(b, k, take),
                                             plusIf(b, tot, take)};
                 });
        return SmallVector<Value>{r[1]};
      })[0];
  storeExtents(b, p, 0, {total, cIndex(b, 3)});
  if (bound < batches * classes * numBoxes)
    p.failIf(cmpI(b, P::ugt, total, cIndex(b, bound)),
             "more selected boxes than the " + std::to_string(bound) +
                 " of its result shape");
  return success();
}

} // namespace

void registerNonMaxSuppression(PortableRegistry &registry) {
  registry["graph.non_max_suppression"] = lowerNonMaxSuppression;
}

} // namespace mlcc::portable::ddep
