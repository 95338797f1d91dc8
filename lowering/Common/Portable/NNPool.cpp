//===- NNPool.cpp - Portable lowering of the pooling ops ------------------===//
//
// max_pool (with its optional i64 indices), average_pool, lp_pool, the
// global pools, max_unpool and max_roi_pool. The windowed pools copy the
// input into a padded buffer (lowest value for max, zero otherwise) long
// enough for every window ceil_mode adds, then reduce with one
// linalg.generic over (n, c, k..., o...): the output's last dim innermost.
// A shape-only "window" operand [K...] gives linalg the kernel loop ranges
// (as linalg's named pooling ops do). average_pool's divisor and
// max_pool's indices come from the loop indices, so they follow the
// reference's rules at the borders exactly. max_unpool and max_roi_pool,
// whose addressing is data dependent, are scf loops.
//
//===----------------------------------------------------------------------===//

#include "NNUtils.h"

using namespace mlir;

namespace mlcc::portable::nn {
namespace {

enum class PoolKind { Max, Average, Lp };

/// Geometry of a windowed pool.
struct PoolGeom {
  Window window;
  SmallVector<int64_t> in, out, lengths; // spatial dims
};

LogicalResult poolGeom(Operation *op, Value x, Value y, PoolGeom &g) {
  ArrayRef<int64_t> xs = shapeOf(x), ys = shapeOf(y);
  if (xs.size() < 3 || ys.size() != xs.size() || xs[0] != ys[0] ||
      xs[1] != ys[1])
    return op->emitError("pool input and result must be [N, C, spatial...] "
                         "with the same N and C");
  SmallVector<int64_t> kernel = intsAttr(op, "kernel_shape");
  if (kernel.size() != xs.size() - 2)
    return op->emitError("kernel_shape must have one value per spatial dim");
  g.in.assign(xs.begin() + 2, xs.end());
  SmallVector<int64_t> out;
  if (failed(readWindow(op, g.in, kernel, intAttr(op, "ceil_mode", 0) != 0,
                        g.window, out)))
    return failure();
  if (ArrayRef<int64_t>(out) != ys.drop_front(2))
    return op->emitError("pool result shape does not match its attributes");
  g.out = out;
  g.lengths = paddedLengths(g.in, out, g.window);
  return success();
}

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIndexOp>(loc, v);
}

/// floor(a / d) for a constant d > 0, from truncating division.
Value floorDivIndex(OpBuilder &b, Location loc, Value a, int64_t d) {
  if (d == 1)
    return a;
  Value dv = indexConst(b, loc, d);
  Value q = b.create<arith::DivSIOp>(loc, a, dv);
  Value r = b.create<arith::RemSIOp>(loc, a, dv);
  Value neg = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, r,
                                      indexConst(b, loc, 0));
  return b.create<arith::SelectOp>(
      loc, neg, b.create<arith::SubIOp>(loc, q, indexConst(b, loc, 1)), q);
}

/// ceil(a / d) = -floor(-a / d).
Value ceilDivIndex(OpBuilder &b, Location loc, Value a, int64_t d) {
  Value zero = indexConst(b, loc, 0);
  Value negA = b.create<arith::SubIOp>(loc, zero, a);
  return b.create<arith::SubIOp>(loc, zero, floorDivIndex(b, loc, negA, d));
}

Value minIndex(OpBuilder &b, Location loc, Value a, Value c) {
  return b.create<arith::MinSIOp>(loc, a, c);
}

Value maxIndex(OpBuilder &b, Location loc, Value a, Value c) {
  return b.create<arith::MaxSIOp>(loc, a, c);
}

/// Loop dims of the window reduction acc[n, c, o] = reduce over k of
/// x[n, c, o*s + k*d] (x padded): n, c, k[nd], o[nd].
struct PoolLoops {
  unsigned nd = 0, numDims = 0, kBase = 0, oBase = 0;
};

PoolLoops poolLoops(const PoolGeom &g) {
  PoolLoops l;
  l.nd = g.in.size();
  l.kBase = 2;
  l.oBase = 2 + l.nd;
  l.numDims = 2 + 2 * l.nd;
  return l;
}

/// Adds the padded input and the shape-only window operand to `gb`; returns
/// the padded input's argument index.
int addPoolInputs(GenericBuilder &gb, MLIRContext *ctx, const PoolGeom &g,
                  const PoolLoops &l, Value xp, Value windowShape) {
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> xExprs{d(0), d(1)}, kExprs;
  for (unsigned i = 0; i < l.nd; ++i) {
    xExprs.push_back(d(l.oBase + i) * g.window.strides[i] +
                     d(l.kBase + i) * g.window.dilations[i]);
    kExprs.push_back(d(l.kBase + i));
  }
  int ix = gb.addInput(xp, xExprs);
  gb.addInput(windowShape, kExprs);
  for (unsigned i = 0; i < l.nd; ++i)
    gb.setReduction(l.kBase + i);
  return ix;
}

SmallVector<AffineExpr> poolOutExprs(MLIRContext *ctx, const PoolLoops &l) {
  SmallVector<unsigned> dims{0, 1};
  for (unsigned i = 0; i < l.nd; ++i)
    dims.push_back(l.oBase + i);
  return dimExprs(ctx, dims);
}

Value maxValues(OpBuilder &b, Location loc, Value a, Value v, Type tensorType) {
  if (isa<FloatType>(a.getType()))
    return b.create<arith::MaximumFOp>(loc, a, v); // NaN wins
  if (isUnsignedInt(tensorType))
    return b.create<arith::MaxUIOp>(loc, a, v);
  return b.create<arith::MaxSIOp>(loc, a, v);
}

Value absValue(OpBuilder &b, Location loc, Value v) {
  return b.create<math::AbsFOp>(loc, v);
}

/// |v|^p with the reference's shortcuts for p = 1 and 2.
Value powAbs(OpBuilder &b, Location loc, Value v, int64_t p) {
  if (p == 2)
    return b.create<arith::MulFOp>(loc, v, v);
  Value a = absValue(b, loc, v);
  if (p == 1)
    return a;
  return b.create<math::PowFOp>(
      loc, a, scalarConstant(b, loc, v.getType(), static_cast<double>(p)));
}

/// sum^(1/p) with the same shortcuts.
Value lpRoot(OpBuilder &b, Location loc, Value sum, int64_t p) {
  if (p == 2)
    return b.create<math::SqrtOp>(loc, sum);
  if (p == 1)
    return sum;
  return b.create<math::PowFOp>(
      loc, sum, scalarConstant(b, loc, sum.getType(), 1.0 / double(p)));
}

//===----------------------------------------------------------------------===//
// graph.max_pool, graph.average_pool, graph.lp_pool
//===----------------------------------------------------------------------===//

/// max_pool's Indices: the flat index in X of the first maximum of each
/// window, the spatial part row-major or (storage_order 1) column-major.
void emitMaxPoolWithIndices(OpBuilder &b, Location loc, const PoolGeom &g,
                            const PoolLoops &l, Value xp, Value windowShape,
                            Value acc, Value indices, Type xType, Type accType,
                            int64_t channels, bool colMajor) {
  MLIRContext *ctx = b.getContext();
  fillBuffer(b, loc, indices, scalarConstant(b, loc, b.getI64Type(), -1));
  GenericBuilder gb(l.numDims);
  int ix = addPoolInputs(gb, ctx, g, l, xp, windowShape);
  int iy = gb.addOutput(acc, poolOutExprs(ctx, l));
  int ii = gb.addOutput(indices, poolOutExprs(ctx, l));
  int64_t inPlane = numElements(g.in);
  gb.build(b, loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value v = convertScalar(nb, nl, args[ix], xType, accType);
    Value best = args[iy], at = args[ii];
    // Input coordinates of this tap and whether it is inside the input.
    Value inside = nb.create<arith::ConstantIntOp>(nl, 1, 1);
    SmallVector<Value> coords;
    for (unsigned i = 0; i < l.nd; ++i) {
      Value o = nb.create<linalg::IndexOp>(nl, l.oBase + i);
      Value k = nb.create<linalg::IndexOp>(nl, l.kBase + i);
      Value c = nb.create<arith::AddIOp>(
          nl,
          nb.create<arith::MulIOp>(nl, o,
                                   indexConst(nb, nl, g.window.strides[i])),
          nb.create<arith::MulIOp>(nl, k,
                                   indexConst(nb, nl, g.window.dilations[i])));
      c = nb.create<arith::SubIOp>(nl, c,
                                   indexConst(nb, nl, g.window.padBegin[i]));
      Value ge = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::sge, c,
                                          indexConst(nb, nl, 0));
      Value lt = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::slt, c,
                                          indexConst(nb, nl, g.in[i]));
      inside = nb.create<arith::AndIOp>(nl, inside,
                                        nb.create<arith::AndIOp>(nl, ge, lt));
      coords.push_back(c);
    }
    // Flat index: plane * inPlane + spatial offset.
    Value n = nb.create<linalg::IndexOp>(nl, 0);
    Value ch = nb.create<linalg::IndexOp>(nl, 1);
    Value plane = nb.create<arith::AddIOp>(
        nl, nb.create<arith::MulIOp>(nl, n, indexConst(nb, nl, channels)), ch);
    Value off = indexConst(nb, nl, 0);
    if (colMajor) {
      for (int i = static_cast<int>(l.nd) - 1; i >= 0; --i)
        off = nb.create<arith::AddIOp>(
            nl, nb.create<arith::MulIOp>(nl, off, indexConst(nb, nl, g.in[i])),
            coords[i]);
    } else {
      for (unsigned i = 0; i < l.nd; ++i)
        off = nb.create<arith::AddIOp>(
            nl, nb.create<arith::MulIOp>(nl, off, indexConst(nb, nl, g.in[i])),
            coords[i]);
    }
    Value flat = nb.create<arith::AddIOp>(
        nl, nb.create<arith::MulIOp>(nl, plane, indexConst(nb, nl, inPlane)),
        off);
    flat = nb.create<arith::IndexCastOp>(nl, nb.getI64Type(), flat);
    // First maximum wins; NaN beats any number.
    Value first =
        nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::slt, at,
                                 scalarConstant(nb, nl, nb.getI64Type(), 0));
    Value better;
    if (isa<FloatType>(accType)) {
      Value gt =
          nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::OGT, v, best);
      Value vNan =
          nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::UNO, v, v);
      Value bNum =
          nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::ORD, best, best);
      better = nb.create<arith::OrIOp>(
          nl, gt, nb.create<arith::AndIOp>(nl, vNan, bNum));
    } else {
      better = nb.create<arith::CmpIOp>(nl,
                                        isUnsignedInt(xType)
                                            ? arith::CmpIPredicate::ugt
                                            : arith::CmpIPredicate::sgt,
                                        v, best);
    }
    Value take = nb.create<arith::AndIOp>(
        nl, inside, nb.create<arith::OrIOp>(nl, first, better));
    return SmallVector<Value>{nb.create<arith::SelectOp>(nl, take, v, best),
                              nb.create<arith::SelectOp>(nl, take, flat, at)};
  });
}

/// average_pool's divisor of each window: the taps inside the input, or
/// with count_include_pad also those in the pads (not those beyond the end
/// padding that ceil_mode adds); an empty window gives 0.
void emitAverageDivide(OpBuilder &b, Location loc, const PoolGeom &g, Value acc,
                       bool includePad) {
  MLIRContext *ctx = b.getContext();
  unsigned nd = g.in.size();
  GenericBuilder gb(2 + nd);
  int iy = gb.addOutput(acc, dimExprs(ctx, allDims(2 + nd)));
  gb.build(b, loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value count = indexConst(nb, nl, 1);
    const Window &w = g.window;
    for (unsigned i = 0; i < nd; ++i) {
      Value o = nb.create<linalg::IndexOp>(nl, 2 + i);
      // The window starts at input coordinate o*s - pb.
      Value start = nb.create<arith::SubIOp>(
          nl, nb.create<arith::MulIOp>(nl, o, indexConst(nb, nl, w.strides[i])),
          indexConst(nb, nl, w.padBegin[i]));
      Value k = indexConst(nb, nl, w.kernel[i]);
      auto tapsBelow = [&](int64_t limit) {
        // min(k, floor((limit - 1 - start) / d) + 1)
        Value rel =
            nb.create<arith::SubIOp>(nl, indexConst(nb, nl, limit - 1), start);
        Value t = nb.create<arith::AddIOp>(
            nl, floorDivIndex(nb, nl, rel, w.dilations[i]),
            indexConst(nb, nl, 1));
        return minIndex(nb, nl, k, t);
      };
      Value factor;
      if (includePad) {
        factor = tapsBelow(g.in[i] + w.padEnd[i]);
      } else {
        Value zero = indexConst(nb, nl, 0);
        Value lo = maxIndex(
            nb, nl, zero,
            ceilDivIndex(nb, nl, nb.create<arith::SubIOp>(nl, zero, start),
                         w.dilations[i]));
        Value hi = tapsBelow(g.in[i]);
        factor = maxIndex(nb, nl, zero, nb.create<arith::SubIOp>(nl, hi, lo));
      }
      count = nb.create<arith::MulIOp>(nl, count, factor);
    }
    Value sum = args[iy];
    Type ft = sum.getType();
    Value ci = nb.create<arith::IndexCastOp>(nl, nb.getI64Type(), count);
    Value cf = nb.create<arith::SIToFPOp>(nl, ft, ci);
    Value avg = nb.create<arith::DivFOp>(nl, sum, cf);
    Value empty =
        nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::sle, ci,
                                 scalarConstant(nb, nl, nb.getI64Type(), 0));
    return SmallVector<Value>{nb.create<arith::SelectOp>(
        nl, empty, scalarConstant(nb, nl, ft, 0.0), avg)};
  });
}

template <PoolKind Kind> LogicalResult lowerWindowPool(PortableOp &p) {
  Operation *op = p.op;
  OpBuilder &b = p.b;
  Location loc = p.loc;
  MLIRContext *ctx = b.getContext();
  Value x = p.operands[0], y = p.results[0];
  PoolGeom g;
  if (failed(poolGeom(op, x, y, g)))
    return failure();
  Type xType = elementTypeOf(op->getOperand(0));
  Type t = elementTypeOf(op->getResult(0));
  if (Kind != PoolKind::Max && !isa<FloatType>(t))
    return op->emitError("only float types are supported");
  int64_t pw = intAttr(op, "p", 2);
  if (Kind == PoolKind::Lp && pw < 1)
    return op->emitError("lp_pool: p must be >= 1");
  Type accType = computeType(t);
  Type st = storageType(xType);
  Value padValue = Kind == PoolKind::Max ? lowestConstant(b, loc, xType)
                                         : scalarConstant(b, loc, st, 0.0);

  Scratch scratch(b, loc);
  Value xp =
      padInput(b, loc, scratch, x, g.window.padBegin, g.lengths, st, padValue);
  Value windowShape = scratch.alloc(g.window.kernel, b.getI8Type());
  Accumulator acc = Accumulator::create(scratch, y, t);
  Type accTensorType = isHalfFloat(t) ? accType : t;
  fillBuffer(b, loc, acc.buffer,
             Kind == PoolKind::Max ? lowestConstant(b, loc, accTensorType)
                                   : scalarConstant(b, loc, accType, 0.0));
  PoolLoops l = poolLoops(g);
  Value indices = p.results.size() > 1 ? p.results[1] : Value();
  if (Kind == PoolKind::Max && indices) {
    emitMaxPoolWithIndices(b, loc, g, l, xp, windowShape, acc.buffer, indices,
                           xType, accType, shapeOf(x)[1],
                           intAttr(op, "storage_order", 0) == 1);
    acc.finish(b, loc);
    return success();
  }

  GenericBuilder gb(l.numDims);
  int ix = addPoolInputs(gb, ctx, g, l, xp, windowShape);
  int iy = gb.addOutput(acc.buffer, poolOutExprs(ctx, l));
  gb.build(b, loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value v = convertScalar(nb, nl, args[ix], xType, accType);
    Value r;
    if (Kind == PoolKind::Max)
      r = maxValues(nb, nl, args[iy], v, xType);
    else if (Kind == PoolKind::Average)
      r = nb.create<arith::AddFOp>(nl, args[iy], v);
    else
      r = nb.create<arith::AddFOp>(nl, args[iy], powAbs(nb, nl, v, pw));
    return SmallVector<Value>{r};
  });

  if (Kind == PoolKind::Average)
    emitAverageDivide(b, loc, g, acc.buffer,
                      intAttr(op, "count_include_pad", 0) != 0);
  if (Kind == PoolKind::Lp && pw != 1) {
    GenericBuilder fb(shapeOf(y).size());
    int io =
        fb.addOutput(acc.buffer, dimExprs(ctx, allDims(shapeOf(y).size())));
    fb.build(b, loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
      return SmallVector<Value>{lpRoot(nb, nl, args[io], pw)};
    });
  }
  acc.finish(b, loc);
  return success();
}

//===----------------------------------------------------------------------===//
// graph.global_average_pool, graph.global_max_pool, graph.global_lp_pool
//===----------------------------------------------------------------------===//

template <PoolKind Kind> LogicalResult lowerGlobalPool(PortableOp &p) {
  Operation *op = p.op;
  OpBuilder &b = p.b;
  Location loc = p.loc;
  MLIRContext *ctx = b.getContext();
  Value x = p.operands[0], y = p.results[0];
  ArrayRef<int64_t> xs = shapeOf(x), ys = shapeOf(y);
  if (xs.size() < 3 || ys.size() != xs.size() || ys[0] != xs[0] ||
      ys[1] != xs[1] || numElements(ys) != xs[0] * xs[1])
    return op->emitError("global pool result must be [N, C, 1...]");
  Type xType = elementTypeOf(op->getOperand(0));
  Type t = elementTypeOf(op->getResult(0));
  if (!isa<FloatType>(t))
    return op->emitError("only float types are supported");
  int64_t pw = intAttr(op, "p", 2);
  if (Kind == PoolKind::Lp && pw < 1)
    return op->emitError("global_lp_pool: p must be >= 1");
  Type accType = computeType(t);
  Scratch scratch(b, loc);
  Accumulator acc = Accumulator::create(scratch, y, t);
  fillBuffer(b, loc, acc.buffer,
             scalarConstant(b, loc, accType,
                            Kind == PoolKind::Max
                                ? -std::numeric_limits<double>::infinity()
                                : 0.0));
  unsigned rank = xs.size();
  SmallVector<AffineExpr> outExprs = dimExprs(ctx, {0, 1});
  for (unsigned i = 2; i < rank; ++i)
    outExprs.push_back(getAffineConstantExpr(0, ctx));
  GenericBuilder gb(rank);
  gb.addInput(x, dimExprs(ctx, allDims(rank)));
  gb.addOutput(acc.buffer, outExprs);
  for (unsigned i = 2; i < rank; ++i)
    gb.setReduction(i);
  gb.build(b, loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value v = convertScalar(nb, nl, args[0], xType, accType);
    Value r;
    if (Kind == PoolKind::Max)
      r = nb.create<arith::MaximumFOp>(nl, args[1], v);
    else if (Kind == PoolKind::Average)
      r = nb.create<arith::AddFOp>(nl, args[1], v);
    else
      r = nb.create<arith::AddFOp>(nl, args[1], powAbs(nb, nl, v, pw));
    return SmallVector<Value>{r};
  });
  int64_t size = numElements(xs.drop_front(2));
  if (Kind != PoolKind::Max) {
    GenericBuilder fb(rank);
    fb.addOutput(acc.buffer, dimExprs(ctx, allDims(rank)));
    fb.build(b, loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
      Value v = args[0];
      if (Kind == PoolKind::Average)
        v = size ? nb.create<arith::DivFOp>(
                         nl, v, scalarConstant(nb, nl, accType, double(size)))
                       .getResult()
                 : scalarConstant(nb, nl, accType, 0.0);
      else
        v = lpRoot(nb, nl, v, pw);
      return SmallVector<Value>{v};
    });
  }
  acc.finish(b, loc);
  return success();
}

//===----------------------------------------------------------------------===//
// graph.max_unpool
//===----------------------------------------------------------------------===//

Value flatten(OpBuilder &b, Location loc, Value buffer) {
  unsigned rank = shapeOf(buffer).size();
  ReassociationIndices all;
  for (unsigned i = 0; i < rank; ++i)
    all.push_back(i);
  if (rank == 0)
    return buffer;
  return b.create<memref::CollapseShapeOp>(loc, buffer,
                                           ArrayRef<ReassociationIndices>{all});
}

// Operands: X, I (i64 indices as max_pool returns them), output_shape
// (optional; the result type already has it). As in the ONNX reference the
// indices address the unpooled shape the attributes imply; a larger
// output gets that result in its leading corner and zeros elsewhere.
// Indices outside the unpooled shape are skipped.
LogicalResult lowerMaxUnpool(PortableOp &p) {
  Operation *op = p.op;
  OpBuilder &b = p.b;
  Location loc = p.loc;
  Value x = p.operands[0], ind = p.operands[1], y = p.results[0];
  ArrayRef<int64_t> xs = shapeOf(x), ys = shapeOf(y);
  if (xs.size() < 3 || shapeOf(ind) != xs || ys.size() != xs.size())
    return op->emitError("max_unpool: X and I must have the same shape "
                         "[N, C, spatial...] and Y the same rank");
  SmallVector<int64_t> kernel = intsAttr(op, "kernel_shape");
  size_t nd = xs.size() - 2;
  if (kernel.size() != nd)
    return op->emitError("kernel_shape must have one value per spatial dim");
  SmallVector<int64_t> strides = intsAttr(op, "strides");
  if (strides.empty())
    strides.assign(nd, 1);
  SmallVector<int64_t> pads = intsAttr(op, "pads");
  if (pads.empty())
    pads.assign(2 * nd, 0);
  if (strides.size() != nd || pads.size() != 2 * nd)
    return op->emitError("strides and pads must match the spatial dims");
  SmallVector<int64_t> unpooled{xs[0], xs[1]};
  for (size_t i = 0; i < nd; ++i)
    unpooled.push_back((xs[i + 2] - 1) * strides[i] + kernel[i] - pads[i] -
                       pads[i + nd]);
  for (size_t i = 0; i < unpooled.size(); ++i)
    if (unpooled[i] < 0 || unpooled[i] > ys[i])
      return op->emitError("max_unpool: the result is smaller than the "
                           "unpooled shape");
  bool direct = ArrayRef<int64_t>(unpooled) == ys;

  Type st = storageType(elementTypeOf(op->getResult(0)));
  fillBuffer(b, loc, y, scalarConstant(b, loc, st, 0.0));
  Value x1 = flatten(b, loc, x), i1 = flatten(b, loc, ind),
        y1 = flatten(b, loc, y);
  int64_t limit = numElements(unpooled);
  SmallVector<int64_t> yStrides(ys.size(), 1);
  for (int i = static_cast<int>(ys.size()) - 2; i >= 0; --i)
    yStrides[i] = yStrides[i + 1] * ys[i + 1];
  auto idx = [&](OpBuilder &nb, Location nl, int64_t v) -> Value {
    return nb.create<arith::ConstantIndexOp>(nl, v);
  };
  b.create<scf::ForOp>(
      loc, idx(b, loc, 0), idx(b, loc, numElements(xs)), idx(b, loc, 1),
      ValueRange{}, [&](OpBuilder &nb, Location nl, Value i, ValueRange) {
        Value j = nb.create<memref::LoadOp>(nl, i1, ValueRange{i});
        Type i64 = nb.getI64Type();
        Value ge = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::sge, j,
                                            scalarConstant(nb, nl, i64, 0));
        Value lt = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::slt, j,
                                            scalarConstant(nb, nl, i64, limit));
        Value ok = nb.create<arith::AndIOp>(nl, ge, lt);
        nb.create<scf::IfOp>(nl, ok, [&](OpBuilder &ib, Location il) {
          Value at = ib.create<arith::IndexCastOp>(il, ib.getIndexType(), j);
          if (!direct) {
            // Coordinates in the unpooled shape -> offset in Y.
            Value rem = at, off = idx(ib, il, 0);
            for (int d = static_cast<int>(unpooled.size()) - 1; d >= 0; --d) {
              Value u = idx(ib, il, unpooled[d]);
              Value c = ib.create<arith::RemUIOp>(il, rem, u);
              rem = ib.create<arith::DivUIOp>(il, rem, u);
              off = ib.create<arith::AddIOp>(
                  il, off,
                  ib.create<arith::MulIOp>(il, c, idx(ib, il, yStrides[d])));
            }
            at = off;
          }
          Value v = ib.create<memref::LoadOp>(il, x1, ValueRange{i});
          ib.create<memref::StoreOp>(il, v, y1, ValueRange{at});
          ib.create<scf::YieldOp>(il);
        });
        nb.create<scf::YieldOp>(nl);
      });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.max_roi_pool
//===----------------------------------------------------------------------===//

/// ROI max pooling as in Fast R-CNN (and the reference): ROI corners are
/// scaled and rounded, the ROI split into pooled bins by floor/ceil, and an
/// empty bin gives 0. Operands: X [N, C, H, W], rois [R, 5] rows of
/// (batch, x1, y1, x2, y2). A batch index outside [0, N) is clamped.
LogicalResult lowerMaxRoiPool(PortableOp &p) {
  Operation *op = p.op;
  OpBuilder &b = p.b;
  Location loc = p.loc;
  Value x = p.operands[0], rois = p.operands[1], y = p.results[0];
  ArrayRef<int64_t> xs = shapeOf(x), rs = shapeOf(rois), ys = shapeOf(y);
  SmallVector<int64_t> pooled = intsAttr(op, "pooled_shape");
  if (xs.size() != 4 || rs.size() != 2 || rs[1] != 5 || pooled.size() != 2 ||
      ys != ArrayRef<int64_t>{rs[0], xs[1], pooled[0], pooled[1]})
    return op->emitError("max_roi_pool: expected X [N, C, H, W], rois [R, 5] "
                         "and a result [R, C, pooled_shape]");
  Type xType = elementTypeOf(op->getOperand(0));
  Type rType = elementTypeOf(op->getOperand(1));
  Type t = elementTypeOf(op->getResult(0));
  if (!isa<FloatType>(t))
    return op->emitError("max_roi_pool: only float types are supported");
  Type accType = computeType(t);
  Type f64 = b.getF64Type(), i64 = b.getI64Type(), idxType = b.getIndexType();
  double scale = floatAttr(op, "spatial_scale", 1.0);

  auto idx = [](OpBuilder &nb, Location nl, int64_t v) -> Value {
    return nb.create<arith::ConstantIndexOp>(nl, v);
  };
  auto toIndex = [&](OpBuilder &nb, Location nl, Value f) -> Value {
    Value i = nb.create<arith::FPToSIOp>(nl, i64, f);
    return nb.create<arith::IndexCastOp>(nl, idxType, i);
  };
  auto toF64 = [&](OpBuilder &nb, Location nl, Value index) -> Value {
    Value i = nb.create<arith::IndexCastOp>(nl, i64, index);
    return nb.create<arith::SIToFPOp>(nl, f64, i);
  };
  auto clamp = [&](OpBuilder &nb, Location nl, Value v, int64_t hi) {
    return minIndex(nb, nl, maxIndex(nb, nl, v, idx(nb, nl, 0)),
                    idx(nb, nl, hi));
  };
  // Bin `i` of `bins` over a ROI of `len` starting at `start`: [lo, hi)
  // clamped to [0, limit].
  auto binRange = [&](OpBuilder &nb, Location nl, Value i, Value len,
                      int64_t bins, Value start, int64_t limit) {
    Value size = nb.create<arith::DivFOp>(
        nl, toF64(nb, nl, len), scalarConstant(nb, nl, f64, double(bins)));
    Value fi = toF64(nb, nl, i);
    Value lo =
        nb.create<math::FloorOp>(nl, nb.create<arith::MulFOp>(nl, fi, size));
    Value next =
        nb.create<arith::AddFOp>(nl, fi, scalarConstant(nb, nl, f64, 1.0));
    Value hi =
        nb.create<math::CeilOp>(nl, nb.create<arith::MulFOp>(nl, next, size));
    Value l = nb.create<arith::AddIOp>(nl, toIndex(nb, nl, lo), start);
    Value h = nb.create<arith::AddIOp>(nl, toIndex(nb, nl, hi), start);
    return std::make_pair(clamp(nb, nl, l, limit), clamp(nb, nl, h, limit));
  };

  SmallVector<Value> lbs(4, idx(b, loc, 0)), steps(4, idx(b, loc, 1));
  SmallVector<Value> ubs{idx(b, loc, rs[0]), idx(b, loc, pooled[0]),
                         idx(b, loc, pooled[1]), idx(b, loc, xs[1])};
  scf::buildLoopNest(
      b, loc, lbs, ubs, steps, [&](OpBuilder &nb, Location nl, ValueRange iv) {
        Value r = iv[0], i = iv[1], j = iv[2], c = iv[3];
        auto roi = [&](int64_t k) {
          Value v = nb.create<memref::LoadOp>(nl, rois,
                                              ValueRange{r, idx(nb, nl, k)});
          return convertScalar(nb, nl, v, rType, f64);
        };
        auto scaled = [&](int64_t k) {
          Value v = nb.create<arith::MulFOp>(
              nl, roi(k), scalarConstant(nb, nl, f64, scale));
          return toIndex(nb, nl, nb.create<math::RoundOp>(nl, v));
        };
        Value batch = clamp(nb, nl, toIndex(nb, nl, roi(0)), xs[0] - 1);
        Value x0 = scaled(1), y0 = scaled(2);
        Value one = idx(nb, nl, 1);
        Value rw =
            maxIndex(nb, nl,
                     nb.create<arith::AddIOp>(
                         nl, nb.create<arith::SubIOp>(nl, scaled(3), x0), one),
                     one);
        Value rh =
            maxIndex(nb, nl,
                     nb.create<arith::AddIOp>(
                         nl, nb.create<arith::SubIOp>(nl, scaled(4), y0), one),
                     one);
        auto [hs, he] = binRange(nb, nl, i, rh, pooled[0], y0, xs[2]);
        auto [ws, we] = binRange(nb, nl, j, rw, pooled[1], x0, xs[3]);
        Value emptyH =
            nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::sle, he, hs);
        Value emptyW =
            nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::sle, we, ws);
        Value empty = nb.create<arith::OrIOp>(nl, emptyH, emptyW);
        Value init = nb.create<arith::SelectOp>(
            nl, empty, scalarConstant(nb, nl, accType, 0.0),
            lowestConstant(nb, nl, accType));
        auto rows = nb.create<scf::ForOp>(
            nl, hs, he, one, ValueRange{init},
            [&](OpBuilder &rb, Location rl, Value yy, ValueRange rowIter) {
              auto cols = rb.create<scf::ForOp>(
                  rl, ws, we, one, rowIter,
                  [&](OpBuilder &cb, Location cl, Value xx, ValueRange it) {
                    Value v = cb.create<memref::LoadOp>(
                        cl, x, ValueRange{batch, c, yy, xx});
                    v = convertScalar(cb, cl, v, xType, accType);
                    // std::max keeps the running max against a NaN.
                    Value m = cb.create<arith::MaxNumFOp>(cl, it[0], v);
                    cb.create<scf::YieldOp>(cl, m);
                  });
              rb.create<scf::YieldOp>(rl, cols.getResults());
            });
        Value best = convertScalar(nb, nl, rows.getResult(0), accType, t);
        nb.create<memref::StoreOp>(nl, best, y, ValueRange{r, c, i, j});
      });
  return success();
}

} // namespace

void registerPoolLowerings(PortableRegistry &registry) {
  registry["graph.max_pool"] = &lowerWindowPool<PoolKind::Max>;
  registry["graph.average_pool"] = &lowerWindowPool<PoolKind::Average>;
  registry["graph.lp_pool"] = &lowerWindowPool<PoolKind::Lp>;
  registry["graph.global_max_pool"] = &lowerGlobalPool<PoolKind::Max>;
  registry["graph.global_average_pool"] = &lowerGlobalPool<PoolKind::Average>;
  registry["graph.global_lp_pool"] = &lowerGlobalPool<PoolKind::Lp>;
  registry["graph.max_unpool"] = &lowerMaxUnpool;
  registry["graph.max_roi_pool"] = &lowerMaxRoiPool;
}

} // namespace mlcc::portable::nn
