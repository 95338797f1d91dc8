//===- DataMovementIndexing.cpp - Gathers, scatters, index-driven copies -===//
//
// gather, gather_elements, gather_nd, scatter (deprecated), scatter_elements,
// scatter_nd, one_hot, trilu and reverse_sequence: the element addresses
// depend on run-time data, so these are scf.for nests with memref.load and
// memref.store. Index values are loaded in their own type, negative ones
// count from the end, and out-of-range ones are clamped for now (see
// normalizeIndex). Scatters run their updates sequentially in row-major
// order of the indices, so with duplicates and no reduction the last one
// wins, as in the reference.
//
//===----------------------------------------------------------------------===//

#include "DataMovementUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace mlcc::portable {

using namespace dm;

namespace {

/// Loads index element `at` of graph operand `i` and normalises it into
/// [0, dim).
Value loadIndex(PortableOp &p, OpBuilder &b, Location loc, unsigned i,
                ValueRange at, int64_t dim) {
  Value raw = b.create<memref::LoadOp>(loc, p.operands[i], at);
  Value idx = toIndex(b, loc, raw, isUnsignedValue(p.op->getOperand(i)));
  return normalizeIndex(b, loc, idx, dim);
}

FailureOr<int64_t> axisAttr(PortableOp &p, int64_t rank, int64_t dflt) {
  int64_t axis, raw = intAttr(p.op, "axis", dflt);
  if (!normalizeAxis(raw, rank, axis))
    return p.op->emitError("axis ")
           << raw << " is out of range for rank " << rank;
  return axis;
}

SmallVector<Value> concat(ValueRange a, ValueRange b) {
  SmallVector<Value> out(a.begin(), a.end());
  out.append(b.begin(), b.end());
  return out;
}

//===----------------------------------------------------------------------===//
// graph.gather
//===----------------------------------------------------------------------===//

LogicalResult lowerGather(PortableOp &p) {
  Value data = p.operands[0], out = p.results[0];
  ArrayRef<int64_t> ds = shapeOf(data), is = shapeOf(p.operands[1]);
  FailureOr<int64_t> axis = axisAttr(p, ds.size(), 0);
  if (failed(axis))
    return failure();
  if (numElements(shapeOf(out)) == 0)
    return success();
  // out[o..., i..., n...] = data[o..., indices[i...], n...]: the outer loops
  // fetch one index, the inner ones copy a contiguous block.
  SmallVector<int64_t> outerShape(ds.begin(), ds.begin() + *axis);
  outerShape.append(is.begin(), is.end());
  SmallVector<int64_t> innerShape(ds.begin() + *axis + 1, ds.end());
  parallelNest(
      p.b, p.loc, outerShape,
      [&](OpBuilder &b, Location loc, ValueRange outer) {
        ValueRange pre = outer.take_front(*axis);
        Value idx = loadIndex(p, b, loc, 1, outer.drop_front(*axis), ds[*axis]);
        parallelNest(b, loc, innerShape,
                     [&](OpBuilder &ib, Location iloc, ValueRange inner) {
                       SmallVector<Value> src = concat(pre, idx);
                       src.append(inner.begin(), inner.end());
                       Value v = ib.create<memref::LoadOp>(iloc, data, src);
                       ib.create<memref::StoreOp>(iloc, v, out,
                                                  concat(outer, inner));
                     });
      });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.gather_elements
//===----------------------------------------------------------------------===//

LogicalResult lowerGatherElements(PortableOp &p) {
  Value data = p.operands[0], out = p.results[0];
  ArrayRef<int64_t> ds = shapeOf(data);
  int64_t rank = ds.size();
  FailureOr<int64_t> axis = axisAttr(p, rank, 0);
  if (failed(axis))
    return failure();
  if (shapeOf(p.operands[1]).size() != ds.size())
    return p.op->emitError("gather_elements: indices rank differs from data");
  // out[pos] = data[pos with pos[axis] = indices[pos]].
  parallelNest(p.b, p.loc, shapeOf(out),
               [&](OpBuilder &b, Location loc, ValueRange ivs) {
                 SmallVector<Value> src(ivs.begin(), ivs.end());
                 src[*axis] = loadIndex(p, b, loc, 1, ivs, ds[*axis]);
                 Value v = b.create<memref::LoadOp>(loc, data, src);
                 b.create<memref::StoreOp>(loc, v, out, ivs);
               });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.gather_nd
//===----------------------------------------------------------------------===//

LogicalResult lowerGatherND(PortableOp &p) {
  Value data = p.operands[0], indices = p.operands[1], out = p.results[0];
  ArrayRef<int64_t> ds = shapeOf(data), is = shapeOf(indices);
  int64_t r = ds.size(), q = is.size();
  int64_t bd = intAttr(p.op, "batch_dims", 0);
  if (q < 1 || bd < 0 || bd >= std::min(q, r))
    return p.op->emitError("gather_nd: bad batch_dims or ranks");
  int64_t k = is[q - 1];
  if (k < 1 || k > r - bd)
    return p.op->emitError("gather_nd: index tuples of length ")
           << k << " for data of rank " << r;
  if (numElements(shapeOf(out)) == 0)
    return success();
  // out[t..., e...] = data[t[:bd]..., indices[t..., 0:k]..., e...], where
  // t runs over indices.shape[:-1] (batch dims first) and e over the block.
  ArrayRef<int64_t> tupleShape = is.drop_back();
  ArrayRef<int64_t> blockShape = ds.drop_front(bd + k);
  parallelNest(
      p.b, p.loc, tupleShape, [&](OpBuilder &b, Location loc, ValueRange t) {
        SmallVector<Value> src(t.begin(), t.begin() + bd);
        for (int64_t j = 0; j < k; ++j) {
          SmallVector<Value> at = concat(t, indexConst(b, loc, j));
          src.push_back(loadIndex(p, b, loc, 1, at, ds[bd + j]));
        }
        parallelNest(b, loc, blockShape,
                     [&](OpBuilder &ib, Location iloc, ValueRange e) {
                       Value v = ib.create<memref::LoadOp>(iloc, data,
                                                           concat(src, e));
                       ib.create<memref::StoreOp>(iloc, v, out, concat(t, e));
                     });
      });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.scatter, graph.scatter_elements, graph.scatter_nd
//===----------------------------------------------------------------------===//

/// The combination of an old value and an update under `reduction`; the
/// reference's semantics: bool add/max are or, mul/min are and; max/min
/// keep the old value unless the update compares greater/smaller.
Value combine(OpBuilder &b, Location loc, StringRef reduction, Value old,
              Value upd, bool isUnsigned) {
  if (reduction == "none")
    return upd;
  Type t = old.getType();
  bool isMax = reduction == "max";
  if (isa<FloatType>(t)) {
    if (reduction == "add")
      return b.create<arith::AddFOp>(loc, old, upd);
    if (reduction == "mul")
      return b.create<arith::MulFOp>(loc, old, upd);
    Value takeUpd =
        isMax
            ? b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, old, upd)
            : b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, upd, old);
    return b.create<arith::SelectOp>(loc, takeUpd, upd, old);
  }
  if (t.isInteger(1)) {
    if (reduction == "add" || isMax)
      return b.create<arith::OrIOp>(loc, old, upd);
    return b.create<arith::AndIOp>(loc, old, upd);
  }
  if (reduction == "add")
    return b.create<arith::AddIOp>(loc, old, upd);
  if (reduction == "mul")
    return b.create<arith::MulIOp>(loc, old, upd);
  if (isMax)
    return isUnsigned ? b.create<arith::MaxUIOp>(loc, old, upd).getResult()
                      : b.create<arith::MaxSIOp>(loc, old, upd).getResult();
  return isUnsigned ? b.create<arith::MinUIOp>(loc, old, upd).getResult()
                    : b.create<arith::MinSIOp>(loc, old, upd).getResult();
}

FailureOr<std::string> reductionOf(PortableOp &p) {
  std::string r = strAttr(p.op, "reduction", "none");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    return p.op->emitError("unknown reduction '") << r << "'";
  return r;
}

/// out[at] = combine(out[at], updates[from]).
void scatterOne(PortableOp &p, OpBuilder &b, Location loc, StringRef reduction,
                ValueRange at, ValueRange from) {
  Value out = p.results[0];
  Value upd = b.create<memref::LoadOp>(loc, p.operands[2], from);
  if (reduction != "none") {
    Value old = b.create<memref::LoadOp>(loc, out, at);
    upd = combine(b, loc, reduction, old, upd,
                  isUnsignedValue(p.op->getResult(0)));
  }
  b.create<memref::StoreOp>(loc, upd, out, at);
}

LogicalResult lowerScatterElements(PortableOp &p) {
  Value data = p.operands[0];
  ArrayRef<int64_t> ds = shapeOf(data), is = shapeOf(p.operands[1]);
  FailureOr<int64_t> axis = axisAttr(p, ds.size(), 0);
  FailureOr<std::string> reduction = reductionOf(p);
  if (failed(axis) || failed(reduction))
    return failure();
  if (is.size() != ds.size() || shapeOf(p.operands[2]) != is)
    return p.op->emitError("scatter: data, indices and updates disagree");
  copyFlat(p.b, p.loc, data, p.results[0]);
  // out[pos with pos[axis] = indices[pos]] (op)= updates[pos].
  loopNest(p.b, p.loc, is, [&](OpBuilder &b, Location loc, ValueRange ivs) {
    SmallVector<Value> at(ivs.begin(), ivs.end());
    at[*axis] = loadIndex(p, b, loc, 1, ivs, ds[*axis]);
    scatterOne(p, b, loc, *reduction, at, ivs);
  });
  return success();
}

LogicalResult lowerScatterND(PortableOp &p) {
  Value data = p.operands[0];
  ArrayRef<int64_t> ds = shapeOf(data), is = shapeOf(p.operands[1]);
  int64_t r = ds.size(), q = is.size();
  FailureOr<std::string> reduction = reductionOf(p);
  if (failed(reduction))
    return failure();
  int64_t k = q ? is[q - 1] : 0;
  if (k < 1 || k > r)
    return p.op->emitError("scatter_nd: index tuples of length ")
           << k << " for data of rank " << r;
  copyFlat(p.b, p.loc, data, p.results[0]);
  // out[indices[t..., 0:k]..., e...] (op)= updates[t..., e...].
  ArrayRef<int64_t> tupleShape = is.drop_back(), blockShape = ds.drop_front(k);
  loopNest(p.b, p.loc, tupleShape,
           [&](OpBuilder &b, Location loc, ValueRange t) {
             SmallVector<Value> at;
             for (int64_t j = 0; j < k; ++j)
               at.push_back(loadIndex(p, b, loc, 1,
                                      concat(t, indexConst(b, loc, j)), ds[j]));
             loopNest(b, loc, blockShape,
                      [&](OpBuilder &ib, Location iloc, ValueRange e) {
                        scatterOne(p, ib, iloc, *reduction, concat(at, e),
                                   concat(t, e));
                      });
           });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.one_hot
//===----------------------------------------------------------------------===//

LogicalResult lowerOneHot(PortableOp &p) {
  Value indices = p.operands[0], values = p.operands[2], out = p.results[0];
  ArrayRef<int64_t> os = shapeOf(out);
  int64_t rank = os.size();
  FailureOr<int64_t> axis = axisAttr(p, rank, -1);
  if (failed(axis))
    return failure();
  if (numElements(shapeOf(values)) != 2)
    return p.op->emitError("one_hot: values must hold [off, on]");
  if (numElements(os) == 0)
    return success();
  int64_t depth = os[*axis];
  Value off = loadAt(p.b, p.loc, values, 0), on = loadAt(p.b, p.loc, values, 1);
  bool isUnsigned = isUnsignedValue(p.op->getOperand(0));
  // out[..., d, ...] = indices[...] (from the end when negative) == d ? on
  // : off; an index outside [-depth, depth) matches no d.
  parallelNest(p.b, p.loc, os, [&](OpBuilder &b, Location loc, ValueRange ivs) {
    SmallVector<Value> at(ivs.begin(), ivs.end());
    at.erase(at.begin() + *axis);
    Value raw = b.create<memref::LoadOp>(loc, indices, at);
    Value idx = toIndex(b, loc, raw, isUnsigned);
    Value neg = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, idx,
                                        indexConst(b, loc, 0));
    Value wrapped =
        b.create<arith::AddIOp>(loc, idx, indexConst(b, loc, depth));
    idx = b.create<arith::SelectOp>(loc, neg, wrapped, idx);
    Value hit =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, idx, ivs[*axis]);
    Value v = b.create<arith::SelectOp>(loc, hit, on, off);
    b.create<memref::StoreOp>(loc, v, out, ivs);
  });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.trilu
//===----------------------------------------------------------------------===//

LogicalResult lowerTrilu(PortableOp &p) {
  Value in = p.operands[0], out = p.results[0];
  ArrayRef<int64_t> s = shapeOf(in);
  int64_t rank = s.size();
  if (rank < 2)
    return p.op->emitError("trilu: input rank below 2");
  bool upper = intAttr(p.op, "upper", 1) != 0;
  bool hasK = p.operands.size() > 1 && p.operands[1] &&
              numElements(shapeOf(p.operands[1])) > 0;
  Value k = hasK ? operandIndexAt(p, 1, 0) : indexConst(p.b, p.loc, 0);
  Value zero =
      zeroOf(p.b, p.loc, cast<MemRefType>(out.getType()).getElementType());
  // Upper keeps j - i >= k, lower keeps j - i <= k; the rest is zero.
  parallelNest(p.b, p.loc, s, [&](OpBuilder &b, Location loc, ValueRange ivs) {
    Value diff = b.create<arith::SubIOp>(loc, ivs[rank - 1], ivs[rank - 2]);
    Value keep = b.create<arith::CmpIOp>(
        loc, upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle,
        diff, k);
    Value v = b.create<memref::LoadOp>(loc, in, ivs);
    v = b.create<arith::SelectOp>(loc, keep, v, zero);
    b.create<memref::StoreOp>(loc, v, out, ivs);
  });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.reverse_sequence
//===----------------------------------------------------------------------===//

LogicalResult lowerReverseSequence(PortableOp &p) {
  Value in = p.operands[0], lens = p.operands[1], out = p.results[0];
  ArrayRef<int64_t> s = shapeOf(in);
  int64_t batchAxis = intAttr(p.op, "batch_axis", 1);
  int64_t timeAxis = intAttr(p.op, "time_axis", 0);
  if (s.size() < 2 ||
      !((batchAxis == 0 && timeAxis == 1) || (batchAxis == 1 && timeAxis == 0)))
    return p.op->emitError("reverse_sequence: batch_axis and time_axis must "
                           "be 0 and 1 in some order");
  int64_t time = s[timeAxis];
  bool isUnsigned = isUnsignedValue(p.op->getOperand(1));
  // out[b, t, ...] = in[b, t < len[b] ? len[b] - 1 - t : t, ...].
  parallelNest(p.b, p.loc, s, [&](OpBuilder &b, Location loc, ValueRange ivs) {
    Value raw = b.create<memref::LoadOp>(loc, lens, ivs[batchAxis]);
    // TODO(issue 5): error status. A length outside [0, time] is an error;
    // it is clamped for now.
    Value len = clampIndex(b, loc, toIndex(b, loc, raw, isUnsigned), 0, time);
    Value t = ivs[timeAxis];
    Value inSeq =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, t, len);
    Value last = b.create<arith::SubIOp>(loc, len, indexConst(b, loc, 1));
    Value rev = b.create<arith::SubIOp>(loc, last, t);
    SmallVector<Value> src(ivs.begin(), ivs.end());
    src[timeAxis] = b.create<arith::SelectOp>(loc, inSeq, rev, t);
    Value v = b.create<memref::LoadOp>(loc, in, src);
    b.create<memref::StoreOp>(loc, v, out, ivs);
  });
  return success();
}

} // namespace

void dm::registerIndexing(PortableRegistry &registry) {
  registry["graph.gather"] = &lowerGather;
  registry["graph.gather_elements"] = &lowerGatherElements;
  registry["graph.gather_nd"] = &lowerGatherND;
  registry["graph.scatter"] = &lowerScatterElements;
  registry["graph.scatter_elements"] = &lowerScatterElements;
  registry["graph.scatter_nd"] = &lowerScatterND;
  registry["graph.one_hot"] = &lowerOneHot;
  registry["graph.trilu"] = &lowerTrilu;
  registry["graph.reverse_sequence"] = &lowerReverseSequence;
}

} // namespace mlcc::portable
