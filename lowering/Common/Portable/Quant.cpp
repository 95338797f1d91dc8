//===- Quant.cpp - Portable lowering of linear (de)quantization -----------===//
//
// quantize and dequantize (per tensor or per axis: the scale and zero point
// are read through an indexing map, so one elementwise linalg.generic does
// both) and dynamic_quantize_linear (a min/max reduction, scalar scale and
// zero point, then the elementwise quantization). Arithmetic follows the
// reference: f32 unless an operand is f64, round half to even, saturation,
// NaN to the zero point.
//
//===----------------------------------------------------------------------===//

#include "NNUtils.h"

using namespace mlir;

namespace mlcc::portable::nn {
namespace {

/// Indexing of a scale or zero point against x: per tensor (a scalar or
/// one element) or per index of the `axis` attribute (default 1).
LogicalResult quantParamExprs(Operation *op, Value x, Value param,
                              SmallVector<AffineExpr> &exprs) {
  MLIRContext *ctx = op->getContext();
  ArrayRef<int64_t> xs = shapeOf(x), ps = shapeOf(param);
  if (ps.size() > 1)
    return op->emitError("scale and zero point must be scalars or 1-D");
  int64_t axis = 0;
  if (numElements(ps) != 1) {
    int64_t rank = static_cast<int64_t>(xs.size());
    axis = intAttr(op, "axis", 1);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank || xs[axis] != ps[0])
      return op->emitError("per-axis scale of ")
             << ps[0] << " elements does not match axis " << axis << " of x";
  }
  exprs = paramExprs(ctx, param, getAffineDimExpr(axis, ctx));
  return success();
}

// What QuantizeLinear and DequantizeLinear share: x, a scale and an
// optional zero point broadcast along `axis` (or scalars), one result of
// x's shape, computed elementwise.
struct QuantOperands {
  Value x, scale, zero, y;
  Type xType, sType, zType, yType;
  SmallVector<AffineExpr> sExprs, zExprs;

  LogicalResult read(PortableOp &p) {
    Operation *op = p.op;
    x = p.operands[0];
    scale = p.operands[1];
    zero = p.operands.size() > 2 ? p.operands[2] : Value();
    y = p.results[0];
    xType = elementTypeOf(op->getOperand(0));
    sType = elementTypeOf(op->getOperand(1));
    zType = zero ? elementTypeOf(op->getOperand(2)) : Type();
    yType = elementTypeOf(op->getResult(0));
    if (failed(quantParamExprs(op, x, scale, sExprs)) ||
        (zero && failed(quantParamExprs(op, x, zero, zExprs))))
      return failure();
    return success();
  }

  /// One linalg.generic over x's elements: `body(x, scale, zero or null)`
  /// gives y's element.
  void build(PortableOp &p,
             function_ref<Value(OpBuilder &, Location, Value, Value, Value)>
                 body) {
    MLIRContext *ctx = p.b.getContext();
    unsigned rank = shapeOf(x).size();
    GenericBuilder g(rank);
    int ix = g.addInput(x, dimExprs(ctx, allDims(rank)));
    int is = g.addInput(scale, sExprs);
    int iz = g.addInput(zero, zExprs);
    g.addOutput(y, dimExprs(ctx, allDims(rank)));
    g.build(p.b, p.loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
      return SmallVector<Value>{
          body(nb, nl, args[ix], args[is], iz >= 0 ? args[iz] : Value())};
    });
  }
};

// Operands: x, y_scale, y_zero_point (optional; its type, u8 by default,
// is the result's).
LogicalResult lowerQuantize(PortableOp &p) {
  QuantOperands q;
  if (failed(q.read(p)))
    return failure();
  if (!isa<IntegerType>(q.yType))
    return p.op->emitError("quantize: the result must be an integer type");
  // f32 like onnxruntime unless an operand is f64.
  Type ct = q.xType.isF64() || q.sType.isF64() ? Type(p.b.getF64Type())
                                               : Type(p.b.getF32Type());
  q.build(p, [&](OpBuilder &nb, Location nl, Value x, Value s, Value z) {
    Value xv = convertScalar(nb, nl, x, q.xType, ct);
    Value sv = convertScalar(nb, nl, s, q.sType, ct);
    Value v = nb.create<arith::DivFOp>(nl, xv, sv);
    Value zp = z ? convertScalar(nb, nl, z, q.zType, ct)
                 : scalarConstant(nb, nl, ct, 0.0);
    return requantize(nb, nl, v, zp, q.yType);
  });
  return success();
}

// Operands: x, x_scale, x_zero_point (optional). The result has the
// scale's type.
LogicalResult lowerDequantize(PortableOp &p) {
  QuantOperands q;
  if (failed(q.read(p)))
    return failure();
  if (!isa<IntegerType>(q.xType) || !isa<FloatType>(q.yType))
    return p.op->emitError("dequantize: expected an integer x and a float "
                           "result");
  Type i64 = p.b.getI64Type(), f64 = p.b.getF64Type();
  q.build(p, [&](OpBuilder &nb, Location nl, Value x, Value s, Value z) {
    // (x - zp) is an exact integer and its product with an f32 scale is
    // exact in f64, so one rounding into the result type matches the
    // reference.
    Value v = convertScalar(nb, nl, x, q.xType, i64);
    if (z)
      v = nb.create<arith::SubIOp>(nl, v, convertScalar(nb, nl, z, q.zType, i64));
    Value f = nb.create<arith::SIToFPOp>(nl, f64, v);
    f = nb.create<arith::MulFOp>(nl, f, convertScalar(nb, nl, s, q.sType, f64));
    return convertScalar(nb, nl, f, f64, q.yType);
  });
  return success();
}

/// Stores `v` as element 0 of a buffer of any rank.
void storeFirst(OpBuilder &b, Location loc, Value v, Value buffer) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  SmallVector<Value> indices(shapeOf(buffer).size(), zero);
  b.create<memref::StoreOp>(loc, v, buffer, indices);
}

// Results: y (u8), y_scale (f32 scalar), y_zero_point (u8 scalar).
LogicalResult lowerDynamicQuantize(PortableOp &p) {
  Operation *op = p.op;
  OpBuilder &b = p.b;
  Location loc = p.loc;
  MLIRContext *ctx = b.getContext();
  if (p.results.size() != 3)
    return op->emitError("dynamic_quantize_linear: expected 3 results");
  Value x = p.operands[0];
  Type xType = elementTypeOf(op->getOperand(0));
  Type yType = elementTypeOf(op->getResult(0));
  Type zType = elementTypeOf(op->getResult(2));
  Type f32 = b.getF32Type();
  if (!isa<FloatType>(xType))
    return op->emitError("dynamic_quantize_linear: x must be a float type");
  unsigned rank = shapeOf(x).size();

  // The range always includes 0 so that 0 is exactly representable; NaN
  // is skipped (minnum/maxnum), like std::min/max in the reference.
  Scratch scratch(b, loc);
  Value lo = scratch.alloc({}, f32), hi = scratch.alloc({}, f32);
  Value zeroF = scalarConstant(b, loc, f32, 0.0);
  b.create<memref::StoreOp>(loc, zeroF, lo, ValueRange{});
  b.create<memref::StoreOp>(loc, zeroF, hi, ValueRange{});
  GenericBuilder rg(rank);
  rg.addInput(x, dimExprs(ctx, allDims(rank)));
  rg.addOutput(lo, {});
  rg.addOutput(hi, {});
  for (unsigned i = 0; i < rank; ++i)
    rg.setReduction(i);
  rg.build(b, loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value v = convertScalar(nb, nl, args[0], xType, f32);
    return SmallVector<Value>{nb.create<arith::MinNumFOp>(nl, args[1], v),
                              nb.create<arith::MaxNumFOp>(nl, args[2], v)};
  });

  Value mn = b.create<memref::LoadOp>(loc, lo, ValueRange{});
  Value mx = b.create<memref::LoadOp>(loc, hi, ValueRange{});
  Value scale =
      b.create<arith::DivFOp>(loc, b.create<arith::SubFOp>(loc, mx, mn),
                              scalarConstant(b, loc, f32, 255.0));
  Value nonZero =
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::ONE, scale, zeroF);
  Value zp = b.create<math::RoundEvenOp>(
      loc, b.create<arith::DivFOp>(loc, b.create<arith::SubFOp>(loc, zeroF, mn),
                                   scale));
  zp = b.create<arith::MaxNumFOp>(loc, zp, zeroF);
  zp = b.create<arith::MinNumFOp>(loc, zp, scalarConstant(b, loc, f32, 255.0));
  zp = b.create<arith::SelectOp>(loc, nonZero, zp, zeroF);
  storeFirst(b, loc, scale, p.results[1]);
  storeFirst(b, loc, convertScalar(b, loc, zp, f32, zType), p.results[2]);

  GenericBuilder g(rank);
  g.addInput(x, dimExprs(ctx, allDims(rank)));
  g.addOutput(p.results[0], dimExprs(ctx, allDims(rank)));
  g.build(b, loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value v = convertScalar(nb, nl, args[0], xType, f32);
    Value q = nb.create<arith::DivFOp>(nl, v, scale);
    q = nb.create<arith::SelectOp>(nl, nonZero, q, zeroF);
    return SmallVector<Value>{requantize(nb, nl, q, zp, yType)};
  });
  return success();
}

} // namespace

void registerQuantLowerings(PortableRegistry &registry) {
  registry["graph.quantize"] = &lowerQuantize;
  registry["graph.dequantize"] = &lowerDequantize;
  registry["graph.dynamic_quantize_linear"] = &lowerDynamicQuantize;
}

} // namespace mlcc::portable::nn
