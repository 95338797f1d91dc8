//===- GpuConv.cpp - graph.conv and graph.fused_conv as implicit GEMM -----===//
//
// Per group g: Y[n, g*MG + m, o] = act(sum_k A[(n, o), k] W[g*MG + m, k] +
// B + Z), where k runs over (c, kernel tap) and A is the im2col matrix of
// the input: A[(n, o), (c, t)] = X[n, g*CG + c, o*stride + t*dilation -
// pad], zero in the padding. A is never stored: the tiled product
// (TiledMatmul.h) computes each element as it stages it. A depthwise conv
// (under kMinTiledCols outputs per group) gets a thread per output
// element, the same callbacks summing its taps.
//
//===----------------------------------------------------------------------===//

#include "GpuKernels.h"
#include "TiledMatmul.h"

#include "DataMovementUtils.h"
#include "GraphDialect.h"
#include "NNUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mlcc::gpukernels {

using lowering::TargetLowering;
using portable::dm::viewAs;
using namespace portable::nn;

namespace {

/// Splits `flat` into coordinates of `dims` (the last fastest).
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value flat,
                               ArrayRef<int64_t> dims) {
  SmallVector<Value> coords(dims.size());
  for (size_t i = dims.size(); i-- > 0;) {
    Value size = b.create<arith::ConstantIndexOp>(loc, dims[i]);
    coords[i] = i == 0 ? flat : b.create<arith::RemUIOp>(loc, flat, size);
    if (i > 0)
      flat = b.create<arith::DivUIOp>(loc, flat, size);
  }
  return coords;
}

/// A conv's implicit product has rows (image, output position) and depth
/// (input channel of the group, kernel tap); their coordinates.
struct ImplicitIndex {
  Value image, channel;
  SmallVector<Value> position, tap;
};

ImplicitIndex splitIndex(OpBuilder &b, Location loc, Value row, Value k,
                         ArrayRef<int64_t> out, ArrayRef<int64_t> kernel) {
  Value positions = b.create<arith::ConstantIndexOp>(loc, numElements(out));
  Value taps = b.create<arith::ConstantIndexOp>(loc, numElements(kernel));
  ImplicitIndex ix;
  ix.image = b.create<arith::DivUIOp>(loc, row, positions);
  ix.position =
      delinearize(b, loc, b.create<arith::RemUIOp>(loc, row, positions), out);
  ix.channel = b.create<arith::DivUIOp>(loc, k, taps);
  ix.tap = delinearize(b, loc, b.create<arith::RemUIOp>(loc, k, taps), kernel);
  return ix;
}

/// x[at] where `inside`, else 0 (the padding).
Value loadOrZero(OpBuilder &b, Location loc, Value x, ArrayRef<Value> at,
                 Value inside) {
  auto value = b.create<scf::IfOp>(
      loc, inside,
      [&](OpBuilder &tb, Location tl) {
        tb.create<scf::YieldOp>(
            tl, ValueRange{tb.create<memref::LoadOp>(tl, x, at)});
      },
      [&](OpBuilder &eb, Location el) {
        eb.create<scf::YieldOp>(
            el, ValueRange{scalarConstant(eb, el, eb.getF32Type(), 0.0)});
      });
  return value.getResult(0);
}

} // namespace

TargetLowering lowerConv(Operation *op, lowering::OpLoweringContext &ctx) {
  bool fused = op->getName().getStringRef() == "graph.fused_conv";
  Epilogue epilogue = fused ? Epilogue::activationOf(op) : Epilogue();
  if (!allF32(op) || op->getNumOperands() < 2 ||
      !llvm::is_contained(graph::fusedActivations(),
                          StringRef(epilogue.activation)))
    return TargetLowering::Declined;
  Value xValue = op->getOperand(0), wValue = op->getOperand(1);
  Value bValue = op->getNumOperands() > 2 ? op->getOperand(2) : Value();
  Value zValue = fused ? op->getOperand(3) : Value();
  if (bValue && isa<NoneType>(bValue.getType()))
    bValue = nullptr;
  if (zValue && isa<NoneType>(zValue.getType()))
    zValue = nullptr;
  ArrayRef<int64_t> xs = shapeOf(xValue), ws = shapeOf(wValue),
                    ys = shapeOf(op->getResult(0));
  // Anything the portable lowering would reject, it reports.
  int64_t groups = intAttr(op, "group", 1);
  if (xs.size() < 3 || ws.size() != xs.size() || ys.size() != xs.size() ||
      groups < 1 || xs[1] != ws[1] * groups || ws[0] % groups != 0 ||
      ys[0] != xs[0] || ys[1] != ws[0] ||
      (bValue && shapeOf(bValue) != ArrayRef<int64_t>{ws[0]}) ||
      (zValue && shapeOf(zValue) != ys))
    return TargetLowering::Declined;
  ArrayRef<int64_t> kernel = ws.drop_front(2);
  SmallVector<int64_t> kernelShape = intsAttr(op, "kernel_shape");
  if (!kernelShape.empty() && ArrayRef<int64_t>(kernelShape) != kernel)
    return TargetLowering::Declined;
  Window win;
  SmallVector<int64_t> out;
  {
    // readWindow reports a bad window; the portable lowering reports it
    // again, with its context.
    ScopedDiagnosticHandler quiet(op->getContext(),
                                  [](Diagnostic &) { return success(); });
    if (failed(readWindow(op, xs.drop_front(2), kernel, /*ceilMode=*/false, win,
                          out)) ||
        ArrayRef<int64_t>(out) != ys.drop_front(2))
      return TargetLowering::Declined;
  }
  int64_t images = xs[0], channelsPerGroup = ws[1];
  int64_t outChannels = ws[0], outPerGroup = outChannels / groups;
  int64_t positions = numElements(out), taps = numElements(kernel);
  if (numElements(ys) == 0)
    return TargetLowering::Lowered;

  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Value x = ctx.buffer(xValue);
  Value w = viewAs(b, loc, ctx.buffer(wValue),
                   {outChannels, channelsPerGroup * taps});
  SmallVector<int64_t> flatShape{images, outChannels, positions};
  if (bValue)
    epilogue.bias = ctx.buffer(bValue);
  if (zValue)
    epilogue.residual = viewAs(b, loc, ctx.buffer(zValue), flatShape);
  Value y = viewAs(b, loc, ctx.buffer(op->getResult(0)), flatShape);
  auto index = [&](OpBuilder &ib, int64_t v) {
    return ib.create<arith::ConstantIndexOp>(loc, v).getResult();
  };

  MatmulProblem mm;
  mm.groups = groups;
  mm.rows = images * positions;
  mm.cols = outPerGroup;
  mm.depth = channelsPerGroup * taps;
  mm.loadA = [&](OpBuilder &lb, Location l, Value g, Value row, Value k) {
    ImplicitIndex ix = splitIndex(lb, l, row, k, out, kernel);
    Value image = ix.image, c = ix.channel;
    ArrayRef<Value> o = ix.position, t = ix.tap;
    SmallVector<Value> at{
        image,
        lb.create<arith::AddIOp>(
            l, lb.create<arith::MulIOp>(l, g, index(lb, channelsPerGroup)), c)};
    Value inside = lb.create<arith::ConstantIntOp>(l, 1, 1);
    for (size_t i = 0; i < out.size(); ++i) {
      Value pos = lb.create<arith::SubIOp>(
          l,
          lb.create<arith::AddIOp>(
              l, lb.create<arith::MulIOp>(l, o[i], index(lb, win.strides[i])),
              lb.create<arith::MulIOp>(l, t[i], index(lb, win.dilations[i]))),
          index(lb, win.padBegin[i]));
      // A position before the start wraps around to a large unsigned one.
      inside = lb.create<arith::AndIOp>(
          l, inside,
          lb.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, pos,
                                   index(lb, xs[2 + i])));
      at.push_back(pos);
    }
    return loadOrZero(lb, l, x, at, inside);
  };
  auto channel = [&](OpBuilder &ib, Location l, Value g, Value col) {
    return ib.create<arith::AddIOp>(
        l, ib.create<arith::MulIOp>(l, g, index(ib, outPerGroup)), col);
  };
  mm.loadB = [&](OpBuilder &lb, Location l, Value g, Value k, Value col) {
    return lb
        .create<memref::LoadOp>(l, w, ValueRange{channel(lb, l, g, col), k})
        .getResult();
  };
  mm.store = [&](OpBuilder &sb, Location l, Value g, Value row, Value col,
                 Value sum) {
    Value image = sb.create<arith::DivUIOp>(l, row, index(sb, positions));
    Value position = sb.create<arith::RemUIOp>(l, row, index(sb, positions));
    Value m = channel(sb, l, g, col);
    Value v = epilogue.apply(sb, l, sum, m, {image, m, position});
    sb.create<memref::StoreOp>(l, v, y, ValueRange{image, m, position});
  };
  buildMatmul(b, loc, mm);
  return TargetLowering::Lowered;
}

// conv_transpose in gather form: Y[n, g*MG + m, o] = sum over (c, tap t)
// of X[n, g*CG + c, i] W[g*CG + c, m, t] where o + pad = i*stride +
// t*dilation (no term where i is not a whole index inside X), then the
// bias: a thread or a tile per output, each output's terms in the order
// the reference scatters them (c, then the taps).
TargetLowering lowerConvTranspose(Operation *op,
                                  lowering::OpLoweringContext &ctx) {
  if (!allF32(op) || op->getNumOperands() < 2)
    return TargetLowering::Declined;
  Value xValue = op->getOperand(0), wValue = op->getOperand(1);
  Value bValue = op->getNumOperands() > 2 ? op->getOperand(2) : Value();
  if (bValue && isa<NoneType>(bValue.getType()))
    bValue = nullptr;
  ArrayRef<int64_t> xs = shapeOf(xValue), ws = shapeOf(wValue),
                    ys = shapeOf(op->getResult(0));
  int64_t groups = intAttr(op, "group", 1);
  if (xs.size() < 3 || ws.size() != xs.size() || ys.size() != xs.size() ||
      groups < 1 || xs[1] != ws[0] || ws[0] % groups != 0 ||
      ys[1] != ws[1] * groups || ys[0] != xs[0] ||
      (bValue && shapeOf(bValue) != ArrayRef<int64_t>{ys[1]}))
    return TargetLowering::Declined;
  Window win;
  {
    ScopedDiagnosticHandler quiet(op->getContext(),
                                  [](Diagnostic &) { return success(); });
    if (failed(convTransposeWindow(op, xs, ws, ys, win)))
      return TargetLowering::Declined;
  }
  ArrayRef<int64_t> kernel = ws.drop_front(2), in = xs.drop_front(2),
                    out = ys.drop_front(2);
  int64_t images = xs[0], inPerGroup = xs[1] / groups, outPerGroup = ws[1];
  int64_t positions = numElements(out), taps = numElements(kernel);
  if (numElements(ys) == 0)
    return TargetLowering::Lowered;

  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Value x = ctx.buffer(xValue);
  Value w = viewAs(b, loc, ctx.buffer(wValue), {ws[0], outPerGroup, taps});
  Epilogue epilogue; // the bias alone
  if (bValue)
    epilogue.bias = ctx.buffer(bValue);
  Value y =
      viewAs(b, loc, ctx.buffer(op->getResult(0)), {images, ys[1], positions});
  auto index = [&](OpBuilder &ib, int64_t v) {
    return ib.create<arith::ConstantIndexOp>(loc, v).getResult();
  };
  auto inChannel = [&](OpBuilder &ib, Location l, Value g, Value c) {
    return ib.create<arith::AddIOp>(
        l, ib.create<arith::MulIOp>(l, g, index(ib, inPerGroup)), c);
  };

  MatmulProblem mm;
  mm.groups = groups;
  mm.rows = images * positions;
  mm.cols = outPerGroup;
  mm.depth = inPerGroup * taps;
  mm.loadA = [&](OpBuilder &lb, Location l, Value g, Value row, Value k) {
    ImplicitIndex ix = splitIndex(lb, l, row, k, out, kernel);
    Value image = ix.image, c = ix.channel;
    ArrayRef<Value> o = ix.position, t = ix.tap;
    SmallVector<Value> at{image, inChannel(lb, l, g, c)};
    Value inside = lb.create<arith::ConstantIntOp>(l, 1, 1);
    for (size_t i = 0; i < out.size(); ++i) {
      // o + pad - t*dilation, a multiple of the stride inside X; a
      // negative one wraps around to a large unsigned value.
      Value shifted = lb.create<arith::SubIOp>(
          l, lb.create<arith::AddIOp>(l, o[i], index(lb, win.padBegin[i])),
          lb.create<arith::MulIOp>(l, t[i], index(lb, win.dilations[i])));
      Value stride = index(lb, win.strides[i]);
      Value pos = lb.create<arith::DivUIOp>(l, shifted, stride);
      Value whole = lb.create<arith::CmpIOp>(
          l, arith::CmpIPredicate::eq,
          lb.create<arith::RemUIOp>(l, shifted, stride), index(lb, 0));
      Value within =
          lb.create<arith::CmpIOp>(l, arith::CmpIPredicate::ult, shifted,
                                   index(lb, in[i] * win.strides[i]));
      inside = lb.create<arith::AndIOp>(
          l, inside, lb.create<arith::AndIOp>(l, whole, within));
      at.push_back(pos);
    }
    return loadOrZero(lb, l, x, at, inside);
  };
  mm.loadB = [&](OpBuilder &lb, Location l, Value g, Value k, Value col) {
    Value c = lb.create<arith::DivUIOp>(l, k, index(lb, taps));
    Value t = lb.create<arith::RemUIOp>(l, k, index(lb, taps));
    return lb
        .create<memref::LoadOp>(l, w,
                                ValueRange{inChannel(lb, l, g, c), col, t})
        .getResult();
  };
  mm.store = [&](OpBuilder &sb, Location l, Value g, Value row, Value col,
                 Value sum) {
    Value image = sb.create<arith::DivUIOp>(l, row, index(sb, positions));
    Value position = sb.create<arith::RemUIOp>(l, row, index(sb, positions));
    Value m = sb.create<arith::AddIOp>(
        l, sb.create<arith::MulIOp>(l, g, index(sb, outPerGroup)), col);
    Value v = epilogue.apply(sb, l, sum, m, {});
    sb.create<memref::StoreOp>(l, v, y, ValueRange{image, m, position});
  };
  buildMatmul(b, loc, mm);
  return TargetLowering::Lowered;
}

} // namespace mlcc::gpukernels
