//===- DataMovement.cpp - Portable lowering of the data movement family ---===//
//
// Views and layout changes: the reshape family, transpose, concat, split,
// slice, pad, expand, tile, depth_to_space and space_to_depth. Elements are
// moved in their storage type, so one lowering serves every dtype. Shapes
// are static: whatever a result's shape encodes (split sizes, slice counts,
// expand targets) is read from the result buffer, and only what it does not
// encode (slice starts and steps, pad amounts) is read from the operands,
// as constants when the graph has them, at run time otherwise.
//
// The gathers, scatters and the other index-driven ops live in
// DataMovementIndexing.cpp, the value generators (range, eye_like, shape,
// ...) in DataMovementGenerators.cpp.
//
//===----------------------------------------------------------------------===//

#include "DataMovementUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace mlcc::portable {

using namespace dm;

namespace {

/// Source exprs of a plain elementwise copy.
SmallVector<AffineExpr> identityExprs(unsigned rank, MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d = 0; d < rank; ++d)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return exprs;
}

//===----------------------------------------------------------------------===//
// Reshape family and identity
//===----------------------------------------------------------------------===//

/// reshape, flatten, squeeze, unsqueeze and identity keep the row-major
/// order of the elements: one flat copy (the driver may alias these results
/// instead of lowering them).
LogicalResult lowerFlatCopy(PortableOp &p) {
  if (numElements(shapeOf(p.operands[0])) != numElements(shapeOf(p.results[0])))
    return p.op->emitError("element count changes between input and result");
  copyFlat(p.b, p.loc, p.operands[0], p.results[0]);
  return success();
}

//===----------------------------------------------------------------------===//
// graph.transpose
//===----------------------------------------------------------------------===//

LogicalResult lowerTranspose(PortableOp &p) {
  int64_t rank = shapeOf(p.operands[0]).size();
  SmallVector<int64_t> perm;
  if (!intsAttr(p.op, "perm", perm))
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != rank)
    return p.op->emitError("transpose: perm has ")
           << perm.size() << " entries for rank " << rank;
  // Output dim i reads input dim perm[i].
  SmallVector<AffineExpr> exprs(rank);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t axis;
    if (!normalizeAxis(perm[i], rank, axis) || exprs[axis])
      return p.op->emitError("transpose: perm is not a permutation");
    exprs[axis] = getAffineDimExpr(i, p.b.getContext());
  }
  copyGeneric(p.b, p.loc, p.operands[0], p.results[0], exprs);
  return success();
}

//===----------------------------------------------------------------------===//
// graph.concat, graph.split
//===----------------------------------------------------------------------===//

/// The axis attribute normalised for `rank` (default `dflt`).
FailureOr<int64_t> axisOf(PortableOp &p, int64_t rank, int64_t dflt = 0) {
  int64_t axis;
  int64_t raw = intAttr(p.op, "axis", dflt);
  if (!normalizeAxis(raw, rank, axis))
    return p.op->emitError("axis ")
           << raw << " is out of range for rank " << rank;
  return axis;
}

/// The part [offset, offset + size) of `buffer` along `axis`.
Value sliceAlong(OpBuilder &b, Location loc, Value buffer, int64_t axis,
                 int64_t offset, int64_t size) {
  ArrayRef<int64_t> shape = shapeOf(buffer);
  SmallVector<int64_t> offsets(shape.size(), 0), sizes(shape),
      strides(shape.size(), 1);
  offsets[axis] = offset;
  sizes[axis] = size;
  return b.create<memref::SubViewOp>(loc, buffer, offsets, sizes, strides);
}

LogicalResult lowerConcat(PortableOp &p) {
  Value out = p.results[0];
  int64_t rank = shapeOf(out).size();
  FailureOr<int64_t> axis = axisOf(p, rank);
  if (failed(axis))
    return failure();
  SmallVector<AffineExpr> ident = identityExprs(rank, p.b.getContext());
  int64_t offset = 0;
  for (Value in : p.operands) {
    int64_t size = shapeOf(in)[*axis];
    if (numElements(shapeOf(in)) != 0) {
      Value part = sliceAlong(p.b, p.loc, out, *axis, offset, size);
      copyGeneric(p.b, p.loc, in, part, ident);
    }
    offset += size;
  }
  if (offset != shapeOf(out)[*axis])
    return p.op->emitError("concat: inputs do not add up to the result");
  return success();
}

LogicalResult lowerSplit(PortableOp &p) {
  Value in = p.operands[0];
  int64_t rank = shapeOf(in).size();
  FailureOr<int64_t> axis = axisOf(p, rank);
  if (failed(axis))
    return failure();
  // The part sizes are the results' dims, whichever way the graph gave them
  // (split operand, num_outputs or equal parts).
  SmallVector<AffineExpr> ident = identityExprs(rank, p.b.getContext());
  int64_t offset = 0;
  for (Value out : p.results) {
    int64_t size = shapeOf(out)[*axis];
    if (numElements(shapeOf(out)) != 0) {
      Value part = sliceAlong(p.b, p.loc, in, *axis, offset, size);
      copyGeneric(p.b, p.loc, part, out, ident);
    }
    offset += size;
  }
  if (offset > shapeOf(in)[*axis])
    return p.op->emitError("split: results are larger than the input");
  return success();
}

//===----------------------------------------------------------------------===//
// graph.slice
//===----------------------------------------------------------------------===//

/// First element taken along a dim of size `dim`, per the spec's clamping
/// (a negative step starts at most at the last element).
int64_t sliceFirst(int64_t start, int64_t step, int64_t dim) {
  if (start < 0)
    start += dim;
  return step > 0 ? std::clamp<int64_t>(start, 0, dim)
                  : std::clamp<int64_t>(start, 0, dim - 1);
}

/// The same on run-time values.
Value sliceFirst(OpBuilder &b, Location loc, Value start, Value step,
                 int64_t dim) {
  Value zero = indexConst(b, loc, 0);
  Value neg = b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::slt,
                                            start, zero);
  Value wrapped =
      b.createOrFold<arith::AddIOp>(loc, start, indexConst(b, loc, dim));
  start = b.createOrFold<arith::SelectOp>(loc, neg, wrapped, start);
  Value up =
      b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, step, zero);
  Value hi = b.createOrFold<arith::SelectOp>(loc, up, indexConst(b, loc, dim),
                                             indexConst(b, loc, dim - 1));
  start = b.createOrFold<arith::MinSIOp>(loc, start, hi);
  return b.createOrFold<arith::MaxSIOp>(loc, start, zero);
}

/// Slice with every operand known: a subview (positive strides) read
/// backwards along the dims with negative steps.
LogicalResult lowerStaticSlice(PortableOp &p, ArrayRef<int64_t> starts,
                               ArrayRef<int64_t> axes,
                               ArrayRef<int64_t> steps) {
  Value in = p.operands[0], out = p.results[0];
  ArrayRef<int64_t> inShape = shapeOf(in), outShape = shapeOf(out);
  int64_t rank = inShape.size();
  SmallVector<int64_t> first(rank, 0), step(rank, 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis;
    if (!normalizeAxis(axes[i], rank, axis) || steps[i] == 0)
      return p.op->emitError("slice: bad axis or zero step");
    step[axis] = steps[i];
    first[axis] = sliceFirst(starts[i], steps[i], inShape[axis]);
  }
  SmallVector<int64_t> offsets(rank), strides(rank);
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t count = outShape[d];
    AffineExpr dim = getAffineDimExpr(d, p.b.getContext());
    strides[d] = std::abs(step[d]);
    if (step[d] > 0) {
      offsets[d] = first[d];
      exprs.push_back(dim);
    } else {
      // The subview starts at the last element taken and runs forward.
      offsets[d] = first[d] + (count - 1) * step[d];
      exprs.push_back(count - 1 - dim);
    }
    if (count > 0 &&
        (offsets[d] < 0 || offsets[d] + (count - 1) * strides[d] >= inShape[d]))
      return p.op->emitError("slice: result shape does not match the slice");
  }
  Value view =
      p.b.create<memref::SubViewOp>(p.loc, in, offsets, outShape, strides);
  copyGeneric(p.b, p.loc, view, out, exprs);
  return success();
}

/// Slice with some operand known only at run time: per dim a run-time first
/// element and step; the counts are the result's dims. Where the run-time
/// bounds select fewer elements than the (static) result has, reads are
/// clamped into the input: never outside it.
LogicalResult lowerDynamicSlice(PortableOp &p) {
  OpBuilder &b = p.b;
  Location loc = p.loc;
  Value in = p.operands[0], out = p.results[0];
  ArrayRef<int64_t> inShape = shapeOf(in);
  int64_t rank = inShape.size();
  int64_t n = numElements(shapeOf(p.operands[1]));
  bool hasAxes = p.operands.size() > 3 && p.operands[3];
  bool hasSteps = p.operands.size() > 4 && p.operands[4];
  SmallVector<int64_t> constAxes;
  bool axesKnown = !hasAxes || constantInts(p.op, 3, constAxes);
  if (!hasAxes)
    for (int64_t i = 0; i < n; ++i)
      constAxes.push_back(i);
  SmallVector<Value> first(rank, indexConst(b, loc, 0)),
      step(rank, indexConst(b, loc, 1));
  for (int64_t i = 0; i < n; ++i) {
    Value start = operandIndexAt(p, 1, i);
    Value st = hasSteps ? operandIndexAt(p, 4, i) : indexConst(b, loc, 1);
    if (axesKnown) {
      int64_t axis;
      if (!normalizeAxis(constAxes[i], rank, axis))
        return p.op->emitError("slice: axis out of range");
      first[axis] = sliceFirst(b, loc, start, st, inShape[axis]);
      step[axis] = st;
      continue;
    }
    // Axes at run time: every dim takes this entry when its axis names it.
    Value axis = operandIndexAt(p, 3, i);
    Value wrapped =
        b.create<arith::AddIOp>(loc, axis, indexConst(b, loc, rank));
    Value neg = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, axis,
                                        indexConst(b, loc, 0));
    axis = b.create<arith::SelectOp>(loc, neg, wrapped, axis);
    for (int64_t d = 0; d < rank; ++d) {
      Value hit = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, axis,
                                          indexConst(b, loc, d));
      first[d] = b.create<arith::SelectOp>(
          loc, hit, sliceFirst(b, loc, start, st, inShape[d]), first[d]);
      step[d] = b.create<arith::SelectOp>(loc, hit, st, step[d]);
    }
  }
  parallelNest(
      b, loc, shapeOf(out), [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
        SmallVector<Value> src;
        for (int64_t d = 0; d < rank; ++d) {
          Value off = nb.createOrFold<arith::MulIOp>(nloc, ivs[d], step[d]);
          Value at = nb.createOrFold<arith::AddIOp>(nloc, first[d], off);
          at = nb.create<arith::MaxSIOp>(nloc, at, indexConst(nb, nloc, 0));
          src.push_back(nb.create<arith::MinSIOp>(
              nloc, at, indexConst(nb, nloc, inShape[d] - 1)));
        }
        Value v = nb.create<memref::LoadOp>(nloc, in, src);
        nb.create<memref::StoreOp>(nloc, v, out, ivs);
      });
  return success();
}

LogicalResult lowerSlice(PortableOp &p) {
  if (numElements(shapeOf(p.results[0])) == 0)
    return success();
  int64_t n = numElements(shapeOf(p.operands[1]));
  SmallVector<int64_t> starts, axes, steps;
  bool known = constantInts(p.op, 1, starts);
  if (p.operands.size() > 3 && p.operands[3])
    known &= constantInts(p.op, 3, axes);
  else
    for (int64_t i = 0; i < n; ++i)
      axes.push_back(i);
  if (p.operands.size() > 4 && p.operands[4])
    known &= constantInts(p.op, 4, steps);
  else
    steps.assign(n, 1);
  if (known && static_cast<int64_t>(starts.size()) == n &&
      static_cast<int64_t>(axes.size()) == n &&
      static_cast<int64_t>(steps.size()) == n)
    return lowerStaticSlice(p, starts, axes, steps);
  return lowerDynamicSlice(p);
}

//===----------------------------------------------------------------------===//
// graph.pad
//===----------------------------------------------------------------------===//

/// Per dim, the pads before the data, as index values (constants when the
/// pads operand is one; then also as numbers, with `known` set). Handles
/// the optional axes operand (Pad-18).
LogicalResult padsBefore(PortableOp &p, SmallVectorImpl<Value> &before,
                         SmallVectorImpl<int64_t> &constBefore, bool &known) {
  int64_t rank = shapeOf(p.operands[0]).size();
  int64_t given = numElements(shapeOf(p.operands[1]));
  SmallVector<int64_t> axes;
  bool hasAxes = p.operands.size() > 3 && p.operands[3];
  if (hasAxes && !constantInts(p.op, 3, axes))
    return p.op->emitError("pad: axes must be a constant");
  if (!hasAxes)
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  if (given != 2 * static_cast<int64_t>(axes.size()))
    return p.op->emitError("pad: ")
           << given << " pads for " << axes.size() << " axes";
  SmallVector<int64_t> pads;
  known = constantInts(p.op, 1, pads);
  before.assign(rank, indexConst(p.b, p.loc, 0));
  constBefore.assign(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis;
    if (!normalizeAxis(axes[i], rank, axis))
      return p.op->emitError("pad: axis out of range");
    before[axis] = operandIndexAt(p, 1, i);
    if (known)
      constBefore[axis] = pads[i];
  }
  return success();
}

/// The fill value of constant mode: constant_value[0] or zero.
Value padValue(PortableOp &p, Type elemType) {
  Value cv = p.operands.size() > 2 ? p.operands[2] : Value();
  if (!cv || numElements(shapeOf(cv)) == 0)
    return zeroOf(p.b, p.loc, elemType);
  return loadAt(p.b, p.loc, cv, 0);
}

/// Constant mode with constant pads: fill, then copy the kept part of the
/// input (negative pads crop it) into its place.
void lowerStaticConstantPad(PortableOp &p, ArrayRef<int64_t> before,
                            Value fill) {
  Value in = p.operands[0], out = p.results[0];
  ArrayRef<int64_t> inShape = shapeOf(in), outShape = shapeOf(out);
  int64_t rank = inShape.size();
  p.b.create<linalg::FillOp>(p.loc, ValueRange{fill}, ValueRange{out});
  SmallVector<int64_t> inOff(rank), outOff(rank), sizes(rank), ones(rank, 1);
  for (int64_t d = 0; d < rank; ++d) {
    inOff[d] = std::max<int64_t>(-before[d], 0);
    outOff[d] = std::max<int64_t>(before[d], 0);
    sizes[d] = std::min(inShape[d] - inOff[d], outShape[d] - outOff[d]);
    if (sizes[d] <= 0)
      return; // nothing of the input survives
  }
  Value src = p.b.create<memref::SubViewOp>(p.loc, in, inOff, sizes, ones);
  Value dst = p.b.create<memref::SubViewOp>(p.loc, out, outOff, sizes, ones);
  copyGeneric(p.b, p.loc, src, dst, identityExprs(rank, p.b.getContext()));
}

/// Input coordinate for output coordinate `o` along a dim of size `dim`
/// under `mode` (edge, reflect, wrap); see padSource in the reference.
Value padSource(OpBuilder &b, Location loc, StringRef mode, Value o,
                Value before, int64_t dim) {
  Value i = b.createOrFold<arith::SubIOp>(loc, o, before);
  if (mode == "edge" || dim == 1)
    return clampIndex(b, loc, i, 0, dim - 1);
  auto posMod = [&](Value v, int64_t m) {
    Value mv = indexConst(b, loc, m);
    Value r = b.createOrFold<arith::RemSIOp>(loc, v, mv);
    r = b.createOrFold<arith::AddIOp>(loc, r, mv);
    return b.createOrFold<arith::RemSIOp>(loc, r, mv);
  };
  if (mode == "wrap")
    return posMod(i, dim);
  // reflect: period 2 * (dim - 1), mirrored in its second half.
  int64_t period = 2 * (dim - 1);
  Value m = posMod(i, period);
  Value inFirstHalf = b.createOrFold<arith::CmpIOp>(
      loc, arith::CmpIPredicate::slt, m, indexConst(b, loc, dim));
  Value mirrored =
      b.createOrFold<arith::SubIOp>(loc, indexConst(b, loc, period), m);
  return b.createOrFold<arith::SelectOp>(loc, inFirstHalf, m, mirrored);
}

LogicalResult lowerPad(PortableOp &p) {
  Value in = p.operands[0], out = p.results[0];
  ArrayRef<int64_t> inShape = shapeOf(in);
  int64_t rank = inShape.size();
  Type elemType = cast<MemRefType>(out.getType()).getElementType();
  std::string mode = strAttr(p.op, "mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect" &&
      mode != "wrap")
    return p.op->emitError("pad: unsupported mode '") << mode << "'";
  if (numElements(shapeOf(out)) == 0)
    return success();
  bool emptyInput = numElements(inShape) == 0;
  if (emptyInput && mode != "constant")
    return p.op->emitError("pad: mode ") << mode << " of an empty input";
  SmallVector<Value> before;
  SmallVector<int64_t> constBefore;
  bool constPads = false;
  if (failed(padsBefore(p, before, constBefore, constPads)))
    return failure();
  Value fill = mode == "constant" ? padValue(p, elemType) : Value();
  if (mode == "constant") {
    if (emptyInput) {
      p.b.create<linalg::FillOp>(p.loc, ValueRange{fill}, ValueRange{out});
      return success();
    }
    if (constPads) {
      lowerStaticConstantPad(p, constBefore, fill);
      return success();
    }
  }
  parallelNest(
      p.b, p.loc, shapeOf(out),
      [&](OpBuilder &b, Location loc, ValueRange ivs) {
        SmallVector<Value> src;
        Value inside;
        for (int64_t d = 0; d < rank; ++d) {
          if (mode != "constant") {
            src.push_back(
                padSource(b, loc, mode, ivs[d], before[d], inShape[d]));
            continue;
          }
          // Constant mode: read a clamped (always valid) place, then
          // select.
          Value i = b.createOrFold<arith::SubIOp>(loc, ivs[d], before[d]);
          Value lo = b.createOrFold<arith::CmpIOp>(
              loc, arith::CmpIPredicate::sge, i, indexConst(b, loc, 0));
          Value hi =
              b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, i,
                                            indexConst(b, loc, inShape[d]));
          Value ok = b.createOrFold<arith::AndIOp>(loc, lo, hi);
          inside = inside ? b.createOrFold<arith::AndIOp>(loc, inside, ok) : ok;
          src.push_back(clampIndex(b, loc, i, 0, inShape[d] - 1));
        }
        Value v = b.create<memref::LoadOp>(loc, in, src);
        if (inside)
          v = b.create<arith::SelectOp>(loc, inside, v, fill);
        b.create<memref::StoreOp>(loc, v, out, ivs);
      });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.expand, graph.tile
//===----------------------------------------------------------------------===//

LogicalResult lowerExpand(PortableOp &p) {
  ArrayRef<int64_t> inShape = shapeOf(p.operands[0]),
                    outShape = shapeOf(p.results[0]);
  int64_t inRank = inShape.size(), outRank = outShape.size();
  if (inRank > outRank)
    return p.op->emitError("expand: result rank below the input rank");
  // Numpy broadcasting: input dims align with the trailing result dims; a
  // size-1 input dim is read at 0 for every result index.
  SmallVector<AffineExpr> exprs;
  for (int64_t j = 0; j < inRank; ++j) {
    int64_t od = j + outRank - inRank;
    if (inShape[j] == outShape[od])
      exprs.push_back(getAffineDimExpr(od, p.b.getContext()));
    else if (inShape[j] == 1)
      exprs.push_back(getAffineConstantExpr(0, p.b.getContext()));
    else
      return p.op->emitError("expand: input dim ")
             << j << " does not broadcast to the result";
  }
  copyGeneric(p.b, p.loc, p.operands[0], p.results[0], exprs);
  return success();
}

LogicalResult lowerTile(PortableOp &p) {
  Value in = p.operands[0], out = p.results[0];
  ArrayRef<int64_t> inShape = shapeOf(in), outShape = shapeOf(out);
  int64_t rank = inShape.size();
  if (numElements(outShape) == 0)
    return success();
  // The result [r0*d0, r1*d1, ...] is the row-major view [r0, d0, r1, d1,
  // ...] in which the input is repeated along the r dims.
  SmallVector<int64_t> view;
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d) {
    if (inShape[d] == 0 || outShape[d] % inShape[d] != 0)
      return p.op->emitError("tile: result dim ")
             << d << " is not a multiple of the input dim";
    view.push_back(outShape[d] / inShape[d]);
    view.push_back(inShape[d]);
    exprs.push_back(getAffineDimExpr(2 * d + 1, p.b.getContext()));
  }
  copyGeneric(p.b, p.loc, in, viewAs(p.b, p.loc, out, view), exprs);
  return success();
}

//===----------------------------------------------------------------------===//
// graph.depth_to_space, graph.space_to_depth
//===----------------------------------------------------------------------===//

/// out = permute(view(in, inView)) viewed as the result: out6[d] =
/// in6[perm(d)], where exprs[k] picks the output dim feeding input dim k.
void permutedCopy(PortableOp &p, ArrayRef<int64_t> inView,
                  ArrayRef<int64_t> outView, ArrayRef<unsigned> srcDims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : srcDims)
    exprs.push_back(getAffineDimExpr(d, p.b.getContext()));
  Value src = viewAs(p.b, p.loc, p.operands[0], inView);
  Value dst = viewAs(p.b, p.loc, p.results[0], outView);
  copyGeneric(p.b, p.loc, src, dst, exprs);
}

LogicalResult lowerDepthToSpace(PortableOp &p) {
  ArrayRef<int64_t> s = shapeOf(p.operands[0]);
  int64_t bs = intAttr(p.op, "blocksize", 0);
  if (s.size() != 4 || bs <= 0 || s[1] % (bs * bs) != 0)
    return p.op->emitError("depth_to_space: needs NCHW input and channels a "
                           "multiple of blocksize^2");
  if (numElements(s) == 0)
    return success();
  int64_t n = s[0], c = s[1] / (bs * bs), h = s[2], w = s[3];
  // Output view [n, c, h, bi, w, bj].
  SmallVector<int64_t> outView = {n, c, h, bs, w, bs};
  std::string mode = strAttr(p.op, "mode", "DCR");
  if (mode == "DCR") // input view [n, bi, bj, c, h, w]
    permutedCopy(p, {n, bs, bs, c, h, w}, outView, {0, 3, 5, 1, 2, 4});
  else if (mode == "CRD") // input view [n, c, bi, bj, h, w]
    permutedCopy(p, {n, c, bs, bs, h, w}, outView, {0, 1, 3, 5, 2, 4});
  else
    return p.op->emitError("depth_to_space: unknown mode '") << mode << "'";
  return success();
}

LogicalResult lowerSpaceToDepth(PortableOp &p) {
  ArrayRef<int64_t> s = shapeOf(p.operands[0]);
  int64_t bs = intAttr(p.op, "blocksize", 0);
  if (s.size() != 4 || bs <= 0 || s[2] % bs != 0 || s[3] % bs != 0)
    return p.op->emitError("space_to_depth: needs NCHW input with H and W "
                           "multiples of blocksize");
  if (numElements(s) == 0)
    return success();
  int64_t n = s[0], c = s[1], h = s[2] / bs, w = s[3] / bs;
  // Output view [n, bi, bj, c, h, w] reads input view [n, c, h, bi, w, bj].
  permutedCopy(p, {n, c, h, bs, w, bs}, {n, bs, bs, c, h, w},
               {0, 3, 4, 1, 5, 2});
  return success();
}

} // namespace

void registerPortableDataMovement(PortableRegistry &registry) {
  for (const char *name : {"graph.reshape", "graph.flatten", "graph.squeeze",
                           "graph.unsqueeze", "graph.identity"})
    registry[name] = &lowerFlatCopy;
  registry["graph.transpose"] = &lowerTranspose;
  registry["graph.concat"] = &lowerConcat;
  registry["graph.split"] = &lowerSplit;
  registry["graph.slice"] = &lowerSlice;
  registry["graph.pad"] = &lowerPad;
  registry["graph.expand"] = &lowerExpand;
  registry["graph.tile"] = &lowerTile;
  registry["graph.depth_to_space"] = &lowerDepthToSpace;
  registry["graph.space_to_depth"] = &lowerSpaceToDepth;
  registerIndexing(registry);
  registerGenerators(registry);
}

} // namespace mlcc::portable
