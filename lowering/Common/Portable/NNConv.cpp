//===- NNConv.cpp - Portable lowering of conv, conv_transpose, int convs --===//
//
// conv, conv_integer and qlinear_conv share one direct convolution: the
// input is copied into a zero-padded buffer (with the integer ops' zero
// point subtracted on the way, so padding contributes nothing), then one
// linalg.generic over (n, g, m, c, k..., o...) accumulates
// y[n, g, m, o] += x[n, g*CG + c, o*s + k*d] * w[g, m, c, k] with the
// output's last spatial dim innermost (contiguous in the output, stride s
// in the input). conv_transpose scatters with scf loops into a full-size
// buffer and copies out the window its pads select.
//
//===----------------------------------------------------------------------===//

#include "NNUtils.h"

using namespace mlir;

namespace mlcc::portable::nn {
namespace {

//===----------------------------------------------------------------------===//
// Shared pieces
//===----------------------------------------------------------------------===//

/// Kernel dims of a conv-like op: the weight's spatial dims, which a
/// kernel_shape attribute (when present) must repeat.
LogicalResult kernelDims(Operation *op, ArrayRef<int64_t> wShape,
                         SmallVector<int64_t> &kernel) {
  kernel.assign(wShape.begin() + 2, wShape.end());
  SmallVector<int64_t> ks = intsAttr(op, "kernel_shape");
  if (!ks.empty() && ArrayRef<int64_t>(ks) != ArrayRef<int64_t>(kernel))
    return op->emitError("kernel_shape does not match the weight's kernel "
                         "dims");
  return success();
}

/// The resolved geometry of conv, conv_integer and qlinear_conv.
struct ConvGeom {
  int64_t groups = 1;
  Window window;
  SmallVector<int64_t> lengths; // padded input spatial dims
  /// Unit strides along the last two spatial dims: the output rows are
  /// computed as wide as the padded input rows, so that (row, column) is one
  /// flat dim and the inner loop runs over whole planes.
  bool flatRows = false;
};

LogicalResult convGeom(Operation *op, Value x, Value w, Value y, ConvGeom &g) {
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w), ys = shapeOf(y);
  if (xs.size() < 3 || ws.size() != xs.size() || ys.size() != xs.size())
    return op->emitError("conv operands must have rank >= 3 and equal ranks");
  g.groups = intAttr(op, "group", 1);
  if (g.groups < 1 || xs[1] != ws[1] * g.groups || ws[0] % g.groups != 0 ||
      ys[1] != ws[0])
    return op->emitError("conv channels do not agree with group ") << g.groups;
  SmallVector<int64_t> kernel, out;
  if (failed(kernelDims(op, ws, kernel)) ||
      failed(readWindow(op, xs.drop_front(2), kernel, /*ceilMode=*/false,
                        g.window, out)))
    return failure();
  if (ArrayRef<int64_t>(out) != ys.drop_front(2))
    return op->emitError("conv result shape does not match its attributes");
  g.lengths = paddedLengths(xs.drop_front(2), out, g.window);
  size_t nd = out.size();
  g.flatRows = nd >= 2 && g.window.strides[nd - 1] == 1 &&
               g.window.strides[nd - 2] == 1 && numElements(out) > 0;
  // The last output row's taps run past its input row by up to the kernel
  // span: one more (padding) row keeps them inside the buffer.
  if (g.flatRows && g.window.span(nd - 1) > 1)
    ++g.lengths[nd - 2];
  return success();
}

/// `buffer` with its last two dims merged (identity layout required).
Value collapseLastTwo(OpBuilder &b, Location loc, Value buffer) {
  int64_t rank = shapeOf(buffer).size();
  SmallVector<ReassociationIndices> reassoc;
  for (int64_t i = 0; i < rank - 2; ++i)
    reassoc.push_back({i});
  reassoc.push_back({rank - 2, rank - 1});
  return b.create<memref::CollapseShapeOp>(loc, buffer, reassoc);
}

/// acc[n, m, o...] += sum x[n, g*CG + c, o*s + k*d] * w[m, c, k], with `x`
/// already padded (to geom.lengths). Elements are converted from
/// xType/wType to accType.
void emitConvCore(OpBuilder &b, Location loc, Scratch &scratch,
                  const ConvGeom &geom, Value x, Type xType, Value w,
                  Type wType, Value acc, Type accType) {
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> ws = shapeOf(w), ys = shapeOf(acc);
  int64_t groups = geom.groups, mg = ws[0] / groups, cg = ws[1];
  unsigned nd = ws.size() - 2;
  const Window &win = geom.window;

  // With flat rows the output is computed on rows as long as the padded
  // input's (L): output (r, c) and input (r + kh*dh, c + kw*dw) are then
  // flat indices f and f + kh*dh*L + kw*dw. The extra columns are dropped.
  Value target = acc, wide;
  int64_t rowLen = shapeOf(x).back();
  if (geom.flatRows) {
    if (rowLen != ys.back()) {
      SmallVector<int64_t> wideShape(ys.begin(), ys.end());
      wideShape.back() = rowLen;
      wide = scratch.alloc(wideShape, accType);
      fillBuffer(b, loc, wide, scalarConstant(b, loc, accType, 0.0));
      copyBuffer(b, loc, acc,
                 subview(b, loc, wide, SmallVector<int64_t>(ys.size(), 0), ys));
      target = wide;
    }
    target = collapseLastTwo(b, loc, target);
    x = collapseLastTwo(b, loc, x);
  }
  unsigned od = geom.flatRows ? nd - 1 : nd; // output spatial loop dims
  ArrayRef<int64_t> ts = shapeOf(target);

  // Split M into [G, MG] so that every loop dim is a plain dim of some
  // operand (linalg infers the loop ranges from them).
  SmallVector<int64_t> yExpanded{ts[0], groups, mg};
  yExpanded.append(ts.begin() + 2, ts.end());
  SmallVector<ReassociationIndices> yReassoc{{0}, {1, 2}};
  for (unsigned i = 0; i < od; ++i)
    yReassoc.push_back({static_cast<int64_t>(3 + i)});
  Value y4 = b.create<memref::ExpandShapeOp>(loc, yExpanded, target, yReassoc);
  SmallVector<int64_t> wExpanded{groups, mg, cg};
  wExpanded.append(ws.begin() + 2, ws.end());
  SmallVector<ReassociationIndices> wReassoc{{0, 1}, {2}};
  for (unsigned i = 0; i < nd; ++i)
    wReassoc.push_back({static_cast<int64_t>(3 + i)});
  Value w4 = b.create<memref::ExpandShapeOp>(loc, wExpanded, w, wReassoc);

  // Loop dims: n, g, m, c, k[nd], o[od]; the last one innermost.
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  unsigned kBase = 4, oBase = 4 + nd;
  SmallVector<AffineExpr> xExprs{d(0), d(1) * cg + d(3)};
  SmallVector<AffineExpr> wExprs{d(1), d(2), d(3)};
  SmallVector<AffineExpr> yExprs{d(0), d(1), d(2)};
  for (unsigned i = 0; i < nd; ++i)
    wExprs.push_back(d(kBase + i));
  for (unsigned i = 0; i < od; ++i) {
    AffineExpr tap = d(kBase + i) * win.dilations[i];
    if (geom.flatRows && i == od - 1)
      tap = tap * rowLen + d(kBase + nd - 1) * win.dilations[nd - 1];
    xExprs.push_back(d(oBase + i) * win.strides[i] + tap);
    yExprs.push_back(d(oBase + i));
  }
  GenericBuilder g(4 + nd + od);
  g.addInput(x, xExprs);
  g.addInput(w4, wExprs);
  g.addOutput(y4, yExprs);
  g.setReduction(3);
  for (unsigned i = 0; i < nd; ++i)
    g.setReduction(kBase + i);
  g.build(b, loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value xv = convertScalar(nb, nl, args[0], xType, accType);
    Value wv = convertScalar(nb, nl, args[1], wType, accType);
    return SmallVector<Value>{
        addValues(nb, nl, args[2], mulValues(nb, nl, xv, wv))};
  });
  if (wide)
    copyBuffer(b, loc,
               subview(b, loc, wide, SmallVector<int64_t>(ys.size(), 0), ys),
               acc);
}

/// Sets acc[n, m, ...] to bias[m] converted from biasType (or to zero
/// without a bias).
void initWithBias(OpBuilder &b, Location loc, Value acc, Value bias,
                  Type biasType, Type accType) {
  if (!bias) {
    fillBuffer(b, loc, acc, scalarConstant(b, loc, accType, 0.0));
    return;
  }
  MLIRContext *ctx = b.getContext();
  unsigned rank = shapeOf(acc).size();
  SmallVector<unsigned> all = allDims(rank);
  GenericBuilder g(rank);
  g.addInput(bias, dimExprs(ctx, {1}));
  g.addOutput(acc, dimExprs(ctx, all));
  g.build(b, loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
    return SmallVector<Value>{
        convertScalar(nb, nl, args[0], biasType, accType)};
  });
}

/// A bias operand must hold one value per output channel.
LogicalResult checkBias(Operation *op, Value bias, int64_t m) {
  if (bias && (shapeOf(bias).size() != 1 || shapeOf(bias)[0] != m))
    return op->emitError("bias must have one element per output channel (")
           << m << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// graph.conv
//===----------------------------------------------------------------------===//

LogicalResult lowerConv(PortableOp &p) {
  Operation *op = p.op;
  OpBuilder &b = p.b;
  Location loc = p.loc;
  Value x = p.operands[0], w = p.operands[1];
  Value bias = p.operands.size() > 2 ? p.operands[2] : Value();
  Value y = p.results[0];
  ConvGeom geom;
  if (failed(convGeom(op, x, w, y, geom)) ||
      failed(checkBias(op, bias, shapeOf(w)[0])))
    return failure();
  Type t = elementTypeOf(op->getResult(0));
  if (!isa<FloatType>(t))
    return op->emitError("conv: only float types are supported");
  Type accType = computeType(t);
  Type xType = elementTypeOf(op->getOperand(0));
  Scratch scratch(b, loc);
  Value xp = padInput(b, loc, scratch, x, geom.window.padBegin, geom.lengths,
                      storageType(xType),
                      scalarConstant(b, loc, storageType(xType), 0.0));
  Accumulator acc = Accumulator::create(scratch, y, t);
  initWithBias(b, loc, acc.buffer, bias,
               bias ? elementTypeOf(op->getOperand(2)) : Type(), accType);
  emitConvCore(b, loc, scratch, geom, xp, xType, w,
               elementTypeOf(op->getOperand(1)), acc.buffer, accType);
  acc.finish(b, loc);
  return success();
}

//===----------------------------------------------------------------------===//
// graph.conv_integer and graph.qlinear_conv
//===----------------------------------------------------------------------===//

/// The integer convs' operands shifted by their zero points into i32: the
/// input padded (its padding is then 0, i.e. the zero point), the weight
/// minus a per-tensor or per-output-channel zero point.
struct ShiftedOperands {
  Value x, w;
  Type wType;
};

LogicalResult shiftOperands(Operation *op, OpBuilder &b, Location loc,
                            Scratch &scratch, const ConvGeom &geom, Value x,
                            Type xType, Value xZero, Type xZeroType, Value w,
                            Type wType, Value wZero, Type wZeroType,
                            ShiftedOperands &out) {
  Type i32 = b.getI32Type();
  MLIRContext *ctx = b.getContext();
  if (xZero && numElements(shapeOf(xZero)) != 1)
    return op->emitError("the input zero point must be a scalar");
  Value xz =
      xZero ? convertScalar(b, loc, loadFirst(b, loc, xZero), xZeroType, i32)
            : Value();
  out.x = padInput(b, loc, scratch, x, geom.window.padBegin, geom.lengths, i32,
                   scalarConstant(b, loc, i32, 0.0),
                   [&](OpBuilder &nb, Location nl, Value v) {
                     Value e = convertScalar(nb, nl, v, xType, i32);
                     return xz ? nb.create<arith::SubIOp>(nl, e, xz).getResult()
                               : e;
                   });
  out.w = w;
  out.wType = wType;
  if (!wZero)
    return success();
  ArrayRef<int64_t> ws = shapeOf(w);
  int64_t zn = numElements(shapeOf(wZero));
  if (zn != 1 && zn != ws[0])
    return op->emitError("the weight zero point must be a scalar or hold one "
                         "value per output channel");
  out.w = scratch.alloc(ws, i32);
  out.wType = i32;
  SmallVector<unsigned> all = allDims(ws.size());
  GenericBuilder g(ws.size());
  g.addInput(w, dimExprs(ctx, all));
  g.addInput(wZero, paramExprs(ctx, wZero, getAffineDimExpr(0, ctx)));
  g.addOutput(out.w, dimExprs(ctx, all));
  g.build(b, loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value v = convertScalar(nb, nl, args[0], wType, i32);
    Value z = convertScalar(nb, nl, args[1], wZeroType, i32);
    return SmallVector<Value>{nb.create<arith::SubIOp>(nl, v, z)};
  });
  return success();
}

Type typeOrNull(Operation *op, unsigned i) {
  return i < op->getNumOperands() &&
                 isa<ShapedType>(op->getOperand(i).getType())
             ? elementTypeOf(op->getOperand(i))
             : Type();
}

Value operandOrNull(PortableOp &p, unsigned i) {
  return i < p.operands.size() ? p.operands[i] : Value();
}

// Operands: x, w, x_zero_point, w_zero_point (both optional).
LogicalResult lowerConvInteger(PortableOp &p) {
  Operation *op = p.op;
  OpBuilder &b = p.b;
  Location loc = p.loc;
  Value x = p.operands[0], w = p.operands[1], y = p.results[0];
  ConvGeom geom;
  if (failed(convGeom(op, x, w, y, geom)))
    return failure();
  Scratch scratch(b, loc);
  ShiftedOperands s;
  if (failed(shiftOperands(op, b, loc, scratch, geom, x, typeOrNull(op, 0),
                           operandOrNull(p, 2), typeOrNull(op, 2), w,
                           typeOrNull(op, 1), operandOrNull(p, 3),
                           typeOrNull(op, 3), s)))
    return failure();
  Type i32 = b.getI32Type();
  fillBuffer(b, loc, y, scalarConstant(b, loc, i32, 0.0));
  emitConvCore(b, loc, scratch, geom, s.x, i32, s.w, s.wType, y, i32);
  return success();
}

// Operands: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
// y_zero_point, B (optional, i32).
LogicalResult lowerQLinearConv(PortableOp &p) {
  Operation *op = p.op;
  OpBuilder &b = p.b;
  Location loc = p.loc;
  MLIRContext *ctx = b.getContext();
  if (p.operands.size() < 8)
    return op->emitError("qlinear_conv: expected at least 8 operands");
  Value x = p.operands[0], w = p.operands[3], y = p.results[0];
  Value bias = operandOrNull(p, 8);
  ConvGeom geom;
  int64_t m = shapeOf(w)[0];
  if (failed(convGeom(op, x, w, y, geom)) || failed(checkBias(op, bias, m)))
    return failure();
  for (unsigned i : {1u, 6u, 7u})
    if (numElements(shapeOf(p.operands[i])) != 1)
      return op->emitError("qlinear_conv: x_scale, y_scale and y_zero_point "
                           "must be scalars");
  int64_t wsn = numElements(shapeOf(p.operands[4]));
  if (wsn != 1 && wsn != m)
    return op->emitError("qlinear_conv: w_scale must be a scalar or hold one "
                         "value per output channel");
  Scratch scratch(b, loc);
  ShiftedOperands s;
  if (failed(shiftOperands(op, b, loc, scratch, geom, x, typeOrNull(op, 0),
                           p.operands[2], typeOrNull(op, 2), w,
                           typeOrNull(op, 3), p.operands[5], typeOrNull(op, 5),
                           s)))
    return failure();
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  ArrayRef<int64_t> ys = shapeOf(y);
  Value acc = scratch.alloc(ys, i32);
  initWithBias(b, loc, acc, bias, bias ? typeOrNull(op, 8) : Type(), i32);
  emitConvCore(b, loc, scratch, geom, s.x, i32, s.w, s.wType, acc, i32);

  // Requantize in f32 like the usual runtimes: scale = xs * ws[m] / ys.
  SmallVector<unsigned> all = allDims(ys.size());
  GenericBuilder g(ys.size());
  int iacc = g.addInput(acc, dimExprs(ctx, all));
  int ixs = g.addInput(p.operands[1], paramExprs(ctx, p.operands[1], {}));
  int iws = g.addInput(
      p.operands[4], paramExprs(ctx, p.operands[4], getAffineDimExpr(1, ctx)));
  int iys = g.addInput(p.operands[6], paramExprs(ctx, p.operands[6], {}));
  int iyz = g.addInput(p.operands[7], paramExprs(ctx, p.operands[7], {}));
  g.addOutput(y, dimExprs(ctx, all));
  Type yType = elementTypeOf(op->getResult(0));
  Type yzType = typeOrNull(op, 7);
  g.build(b, loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value scale = nb.create<arith::MulFOp>(nl, args[ixs], args[iws]);
    scale = nb.create<arith::DivFOp>(nl, scale, args[iys]);
    Value v = convertScalar(nb, nl, args[iacc], i32, f32);
    v = nb.create<arith::MulFOp>(nl, v, scale);
    Value zp = convertScalar(nb, nl, args[iyz], yzType, f32);
    return SmallVector<Value>{requantize(nb, nl, v, zp, yType)};
  });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.conv_transpose
//===----------------------------------------------------------------------===//

} // namespace

/// Window of conv_transpose: X [N, C, I...] and W [C, M/group, K...] give
/// Y [N, M, O...] with O = s * (I - 1) + output_padding + dilated K - pads,
/// or output_shape (the pads then follow from it), as the reference does.
LogicalResult convTransposeWindow(Operation *op, ArrayRef<int64_t> xs,
                                  ArrayRef<int64_t> ws, ArrayRef<int64_t> ys,
                                  Window &win) {
  size_t nd = xs.size() - 2;
  SmallVector<int64_t> kernel, ignored;
  if (failed(kernelDims(op, ws, kernel)))
    return failure();
  win.kernel = kernel;
  win.strides = intsAttr(op, "strides");
  if (win.strides.empty())
    win.strides.assign(nd, 1);
  win.dilations = intsAttr(op, "dilations");
  if (win.dilations.empty())
    win.dilations.assign(nd, 1);
  SmallVector<int64_t> pads = intsAttr(op, "pads");
  if (pads.empty())
    pads.assign(2 * nd, 0);
  SmallVector<int64_t> outPad = intsAttr(op, "output_padding");
  if (outPad.empty())
    outPad.assign(nd, 0);
  SmallVector<int64_t> outShape = intsAttr(op, "output_shape");
  if (outShape.size() == nd + 2)
    outShape.erase(outShape.begin(), outShape.begin() + 2);
  if (win.strides.size() != nd || win.dilations.size() != nd ||
      pads.size() != 2 * nd || outPad.size() != nd ||
      (!outShape.empty() && outShape.size() != nd))
    return op->emitError("conv_transpose: strides, dilations, pads, "
                         "output_padding or output_shape has the wrong length");
  win.padBegin.assign(pads.begin(), pads.begin() + nd);
  win.padEnd.assign(pads.begin() + nd, pads.end());
  std::string autoPad = stringAttr(op, "auto_pad", "NOTSET");
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  for (size_t i = 0; i < nd; ++i) {
    int64_t in = xs[i + 2];
    int64_t full = win.strides[i] * (in - 1) + outPad[i] + win.span(i);
    int64_t o;
    if (!outShape.empty() || same) {
      o = !outShape.empty() ? outShape[i] : in * win.strides[i];
      int64_t total = std::max<int64_t>(0, full - o);
      int64_t small = total / 2;
      win.padBegin[i] = autoPad == "SAME_UPPER" ? small : total - small;
      win.padEnd[i] = total - win.padBegin[i];
    } else {
      if (autoPad == "VALID")
        win.padBegin[i] = win.padEnd[i] = 0;
      o = full - win.padBegin[i] - win.padEnd[i];
    }
    if (o != ys[i + 2])
      return op->emitError("conv_transpose result shape does not match its "
                           "attributes");
  }
  return success();
}

namespace {

LogicalResult lowerConvTranspose(PortableOp &p) {
  Operation *op = p.op;
  OpBuilder &b = p.b;
  Location loc = p.loc;
  MLIRContext *ctx = b.getContext();
  Value x = p.operands[0], w = p.operands[1], y = p.results[0];
  Value bias = operandOrNull(p, 2);
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w), ys = shapeOf(y);
  if (xs.size() < 3 || ws.size() != xs.size() || ys.size() != xs.size())
    return op->emitError("conv_transpose operands must have rank >= 3 and "
                         "equal ranks");
  int64_t groups = intAttr(op, "group", 1);
  if (groups < 1 || xs[1] != ws[0] || ws[0] % groups != 0 ||
      ys[1] != ws[1] * groups)
    return op->emitError("conv_transpose channels do not agree with group ")
           << groups;
  Window win;
  if (failed(convTransposeWindow(op, xs, ws, ys, win)) ||
      failed(checkBias(op, bias, ys[1])))
    return failure();
  Type t = elementTypeOf(op->getResult(0));
  if (!isa<FloatType>(t))
    return op->emitError("conv_transpose: only float types are supported");
  Type accType = computeType(t);
  Type xType = elementTypeOf(op->getOperand(0));
  Type wType = elementTypeOf(op->getOperand(1));
  size_t nd = xs.size() - 2;
  int64_t cg = xs[1] / groups, mg = ws[1];

  // Scatter into a buffer that holds every tap's target (index i*s + k*d)
  // and the selected output window [pb, pb + O).
  SmallVector<int64_t> full{ys[0], ys[1]};
  for (size_t i = 0; i < nd; ++i)
    full.push_back(std::max(win.strides[i] * (xs[i + 2] - 1) + win.span(i),
                            win.padBegin[i] + ys[i + 2]));
  Scratch scratch(b, loc);
  Value yf = scratch.alloc(full, accType);
  fillBuffer(b, loc, yf, scalarConstant(b, loc, accType, 0.0));

  // Loops: n, g, mi, ci, k[nd], i[nd]; the input's last dim innermost.
  auto idx = [&](int64_t v) -> Value {
    return b.create<arith::ConstantIndexOp>(loc, v);
  };
  SmallVector<Value> lbs, ubs, steps;
  SmallVector<int64_t> bounds{xs[0], groups, mg, cg};
  bounds.append(ws.begin() + 2, ws.end());
  bounds.append(xs.begin() + 2, xs.end());
  for (int64_t bound : bounds) {
    lbs.push_back(idx(0));
    ubs.push_back(idx(bound));
    steps.push_back(idx(1));
  }
  scf::buildLoopNest(
      b, loc, lbs, ubs, steps, [&](OpBuilder &nb, Location nl, ValueRange iv) {
        auto cst = [&](int64_t v) -> Value {
          return nb.create<arith::ConstantIndexOp>(nl, v);
        };
        auto mulAdd = [&](Value a, int64_t m, Value c) -> Value {
          Value prod = nb.create<arith::MulIOp>(nl, a, cst(m));
          return nb.create<arith::AddIOp>(nl, prod, c);
        };
        Value n = iv[0], g = iv[1], mi = iv[2], ci = iv[3];
        Value c = mulAdd(g, cg, ci);
        Value m = mulAdd(g, mg, mi);
        SmallVector<Value> xi{n, c}, wi{c, mi}, yi{n, m};
        for (size_t i = 0; i < nd; ++i) {
          Value k = iv[4 + i], in = iv[4 + nd + i];
          Value kd = nb.create<arith::MulIOp>(nl, k, cst(win.dilations[i]));
          xi.push_back(in);
          wi.push_back(k);
          yi.push_back(mulAdd(in, win.strides[i], kd));
        }
        Value xv = convertScalar(nb, nl, nb.create<memref::LoadOp>(nl, x, xi),
                                 xType, accType);
        Value wv = convertScalar(nb, nl, nb.create<memref::LoadOp>(nl, w, wi),
                                 wType, accType);
        Value yv = nb.create<memref::LoadOp>(nl, yf, yi);
        yv = addValues(nb, nl, yv, mulValues(nb, nl, xv, wv));
        nb.create<memref::StoreOp>(nl, yv, yf, yi);
      });

  // Y = the selected window + bias, rounded into Y's type.
  SmallVector<int64_t> offsets{0, 0};
  offsets.append(win.padBegin.begin(), win.padBegin.end());
  Value window = subview(b, loc, yf, offsets, ys);
  SmallVector<unsigned> all = allDims(ys.size());
  GenericBuilder g(ys.size());
  int iw = g.addInput(window, dimExprs(ctx, all));
  int ib = g.addInput(bias, dimExprs(ctx, {1}));
  g.addOutput(y, dimExprs(ctx, all));
  Type biasType = typeOrNull(op, 2);
  g.build(b, loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value v = args[iw];
    if (ib >= 0)
      v = addValues(nb, nl, v,
                    convertScalar(nb, nl, args[ib], biasType, accType));
    return SmallVector<Value>{convertScalar(nb, nl, v, accType, t)};
  });
  return success();
}

} // namespace

void registerConvLowerings(PortableRegistry &registry) {
  registry["graph.conv"] = &lowerConv;
  registry["graph.conv_integer"] = &lowerConvInteger;
  registry["graph.qlinear_conv"] = &lowerQLinearConv;
  registry["graph.conv_transpose"] = &lowerConvTranspose;
}

} // namespace mlcc::portable::nn
