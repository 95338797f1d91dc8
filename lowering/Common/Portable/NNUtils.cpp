//===- NNUtils.cpp - Shared pieces of the NN portable lowerings -----------===//

#include "NNUtils.h"

#include "llvm/ADT/APFloat.h"

#include <algorithm>
#include <limits>

using namespace mlir;

namespace mlcc::portable::nn {

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

int64_t intAttr(Operation *op, StringRef name, int64_t dflt) {
  if (auto a = op->getAttrOfType<IntegerAttr>(name))
    return a.getValue().getSExtValue();
  return dflt;
}

double floatAttr(Operation *op, StringRef name, double dflt) {
  if (auto a = op->getAttrOfType<FloatAttr>(name))
    return a.getValueAsDouble();
  // ONNX allows an integer literal where a float is expected.
  if (auto a = op->getAttrOfType<IntegerAttr>(name))
    return static_cast<double>(a.getValue().getSExtValue());
  return dflt;
}

std::string stringAttr(Operation *op, StringRef name, StringRef dflt) {
  if (auto a = op->getAttrOfType<StringAttr>(name))
    return a.getValue().str();
  return dflt.str();
}

SmallVector<int64_t> intsAttr(Operation *op, StringRef name) {
  SmallVector<int64_t> out;
  Attribute a = op->getAttr(name);
  if (auto arr = dyn_cast_or_null<ArrayAttr>(a)) {
    for (Attribute e : arr)
      if (auto i = dyn_cast<IntegerAttr>(e))
        out.push_back(i.getValue().getSExtValue());
  } else if (auto dense = dyn_cast_or_null<DenseI64ArrayAttr>(a)) {
    out.assign(dense.asArrayRef().begin(), dense.asArrayRef().end());
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

Type elementTypeOf(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<ShapedType>(v.getType()).getShape();
}

int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

bool isUnsignedInt(Type t) {
  auto it = dyn_cast<IntegerType>(t);
  return it && (it.isUnsigned() || it.getWidth() == 1);
}

bool isHalfFloat(Type t) { return t.isF16() || t.isBF16(); }

Type computeType(Type tensorElementType) {
  if (isHalfFloat(tensorElementType))
    return Float32Type::get(tensorElementType.getContext());
  return storageType(tensorElementType);
}

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

Value scalarConstant(OpBuilder &b, Location loc, Type t, double v) {
  if (auto ft = dyn_cast<FloatType>(t))
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(ft, v));
  if (t.isIndex())
    return b.create<arith::ConstantIndexOp>(loc, static_cast<int64_t>(v));
  return b.create<arith::ConstantOp>(
      loc, b.getIntegerAttr(t, static_cast<int64_t>(v)));
}

Value lowestConstant(OpBuilder &b, Location loc, Type tensorElementType) {
  Type st = storageType(tensorElementType);
  if (auto ft = dyn_cast<FloatType>(st))
    return b.create<arith::ConstantOp>(
        loc, b.getFloatAttr(ft, APFloat::getLargest(ft.getFloatSemantics(),
                                                    /*Negative=*/true)));
  unsigned width = st.getIntOrFloatBitWidth();
  APInt v = isUnsignedInt(tensorElementType) ? APInt::getZero(width)
                                             : APInt::getSignedMinValue(width);
  return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(st, v));
}

Value convertScalar(OpBuilder &b, Location loc, Value v, Type from, Type to) {
  Type fromS = storageType(from), toS = storageType(to);
  if (fromS == toS)
    return v;
  bool fromF = isa<FloatType>(fromS), toF = isa<FloatType>(toS);
  if (fromF && toF) {
    unsigned fw = fromS.getIntOrFloatBitWidth(),
             tw = toS.getIntOrFloatBitWidth();
    if (fw < tw)
      return b.create<arith::ExtFOp>(loc, toS, v);
    if (fw > tw)
      return b.create<arith::TruncFOp>(loc, toS, v);
    // f16 <-> bf16: through f32, which holds both exactly.
    Value wide = b.create<arith::ExtFOp>(loc, b.getF32Type(), v);
    return b.create<arith::TruncFOp>(loc, toS, wide);
  }
  if (!fromF && toF) {
    if (isUnsignedInt(from))
      return b.create<arith::UIToFPOp>(loc, toS, v);
    return b.create<arith::SIToFPOp>(loc, toS, v);
  }
  if (fromF && !toF) {
    if (isUnsignedInt(to))
      return b.create<arith::FPToUIOp>(loc, toS, v);
    return b.create<arith::FPToSIOp>(loc, toS, v);
  }
  unsigned fw = fromS.getIntOrFloatBitWidth(), tw = toS.getIntOrFloatBitWidth();
  if (fw > tw)
    return b.create<arith::TruncIOp>(loc, toS, v);
  if (isUnsignedInt(from))
    return b.create<arith::ExtUIOp>(loc, toS, v);
  return b.create<arith::ExtSIOp>(loc, toS, v);
}

Value addValues(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return b.create<arith::AddFOp>(loc, x, y);
  return b.create<arith::AddIOp>(loc, x, y);
}

Value subValues(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return b.create<arith::SubFOp>(loc, x, y);
  return b.create<arith::SubIOp>(loc, x, y);
}

Value mulValues(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return b.create<arith::MulFOp>(loc, x, y);
  return b.create<arith::MulIOp>(loc, x, y);
}

Value loadFirst(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  SmallVector<Value> indices(type.getRank(), zero);
  return b.create<memref::LoadOp>(loc, buffer, indices);
}

void quantRange(Type t, double &lo, double &hi) {
  unsigned width = t.getIntOrFloatBitWidth();
  if (isUnsignedInt(t)) {
    lo = 0;
    hi = static_cast<double>((uint64_t(1) << width) - 1);
  } else {
    lo = -static_cast<double>(uint64_t(1) << (width - 1));
    hi = static_cast<double>((uint64_t(1) << (width - 1)) - 1);
  }
}

Value requantize(OpBuilder &b, Location loc, Value v, Value zeroPoint,
                 Type outType) {
  Type f = v.getType();
  double lo, hi;
  quantRange(outType, lo, hi);
  Value r = b.create<math::RoundEvenOp>(loc, v);
  Value shifted = b.create<arith::AddFOp>(loc, r, zeroPoint);
  Value clamped =
      b.create<arith::MaxNumFOp>(loc, shifted, scalarConstant(b, loc, f, lo));
  clamped =
      b.create<arith::MinNumFOp>(loc, clamped, scalarConstant(b, loc, f, hi));
  Value isNan = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, r, r);
  clamped = b.create<arith::SelectOp>(loc, isNan, zeroPoint, clamped);
  // Every value of the range fits i32 exactly; narrow from there.
  Value i = b.create<arith::FPToSIOp>(loc, b.getI32Type(), clamped);
  Type st = storageType(outType);
  if (st.getIntOrFloatBitWidth() < 32)
    i = b.create<arith::TruncIOp>(loc, st, i);
  return i;
}

//===----------------------------------------------------------------------===//
// Loops and buffers
//===----------------------------------------------------------------------===//

int GenericBuilder::addInput(Value buffer, ArrayRef<AffineExpr> exprs) {
  assert(outputs.empty() && "inputs go before outputs");
  if (!buffer)
    return -1;
  inputs.push_back(buffer);
  inMaps.push_back(
      AffineMap::get(numDims, 0, exprs, buffer.getType().getContext()));
  return static_cast<int>(inputs.size()) - 1;
}

int GenericBuilder::addOutput(Value buffer, ArrayRef<AffineExpr> exprs) {
  outputs.push_back(buffer);
  outMaps.push_back(
      AffineMap::get(numDims, 0, exprs, buffer.getType().getContext()));
  return static_cast<int>(inputs.size() + outputs.size()) - 1;
}

void GenericBuilder::build(
    OpBuilder &b, Location loc,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> body) {
  SmallVector<utils::IteratorType> iters(numDims,
                                         utils::IteratorType::parallel);
  for (unsigned d : reductions)
    iters[d] = utils::IteratorType::reduction;
  SmallVector<AffineMap> maps(inMaps);
  maps.append(outMaps.begin(), outMaps.end());
  b.create<linalg::GenericOp>(loc, inputs, outputs, maps, iters,
                              [&](OpBuilder &nb, Location nl, ValueRange args) {
                                SmallVector<Value> ys = body(nb, nl, args);
                                nb.create<linalg::YieldOp>(nl, ys);
                              });
}

SmallVector<unsigned> allDims(unsigned rank) {
  SmallVector<unsigned> dims;
  for (unsigned i = 0; i < rank; ++i)
    dims.push_back(i);
  return dims;
}

SmallVector<AffineExpr> dimExprs(MLIRContext *ctx, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> out;
  for (unsigned d : dims)
    out.push_back(getAffineDimExpr(d, ctx));
  return out;
}

SmallVector<AffineExpr> paramExprs(MLIRContext *ctx, Value buffer,
                                   AffineExpr axisDim) {
  ArrayRef<int64_t> shape = shapeOf(buffer);
  if (shape.empty())
    return {};
  SmallVector<AffineExpr> out(shape.size(), getAffineConstantExpr(0, ctx));
  if (numElements(shape) != 1)
    out.back() = axisDim;
  return out;
}

Value Scratch::alloc(ArrayRef<int64_t> shape, Type elementType) {
  auto type = MemRefType::get(shape, elementType);
  Value buffer = b.create<memref::AllocOp>(loc, type, b.getI64IntegerAttr(64));
  buffers.push_back(buffer);
  return buffer;
}

void Scratch::release() {
  for (Value buffer : buffers)
    b.create<memref::DeallocOp>(loc, buffer);
  buffers.clear();
}

void fillBuffer(OpBuilder &b, Location loc, Value buffer, Value value) {
  unsigned rank = shapeOf(buffer).size();
  MLIRContext *ctx = b.getContext();
  GenericBuilder g(rank);
  SmallVector<unsigned> all = allDims(rank);
  g.addOutput(buffer, dimExprs(ctx, all));
  g.build(b, loc, [&](OpBuilder &, Location, ValueRange) {
    return SmallVector<Value>{value};
  });
}

void copyBuffer(OpBuilder &b, Location loc, Value src, Value dst,
                function_ref<Value(OpBuilder &, Location, Value)> convert) {
  unsigned rank = shapeOf(dst).size();
  MLIRContext *ctx = b.getContext();
  SmallVector<unsigned> all = allDims(rank);
  GenericBuilder g(rank);
  g.addInput(src, dimExprs(ctx, all));
  g.addOutput(dst, dimExprs(ctx, all));
  g.build(b, loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value v = convert ? convert(nb, nl, args[0]) : args[0];
    return SmallVector<Value>{v};
  });
}

Value subview(OpBuilder &b, Location loc, Value buffer,
              ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes) {
  SmallVector<int64_t> strides(sizes.size(), 1);
  return b.create<memref::SubViewOp>(loc, buffer, offsets, sizes, strides);
}

Accumulator Accumulator::create(Scratch &scratch, Value result,
                                Type tensorType) {
  Accumulator acc;
  acc.result = acc.buffer = result;
  acc.tensorType = tensorType;
  if (isHalfFloat(tensorType)) {
    acc.separate = true;
    acc.buffer = scratch.alloc(shapeOf(result), computeType(tensorType));
  }
  return acc;
}

void Accumulator::finish(OpBuilder &b, Location loc) const {
  if (!separate)
    return;
  Type f32 = computeType(tensorType);
  copyBuffer(b, loc, buffer, result, [&](OpBuilder &nb, Location nl, Value v) {
    return convertScalar(nb, nl, v, f32, tensorType);
  });
}

//===----------------------------------------------------------------------===//
// Conv and pool windows
//===----------------------------------------------------------------------===//

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

LogicalResult readWindow(Operation *op, ArrayRef<int64_t> in,
                         ArrayRef<int64_t> kernel, bool ceilMode, Window &w,
                         SmallVector<int64_t> &out) {
  size_t nd = kernel.size();
  w.kernel.assign(kernel.begin(), kernel.end());
  w.strides = intsAttr(op, "strides");
  if (w.strides.empty())
    w.strides.assign(nd, 1);
  w.dilations = intsAttr(op, "dilations");
  if (w.dilations.empty())
    w.dilations.assign(nd, 1);
  SmallVector<int64_t> pads = intsAttr(op, "pads");
  if (pads.empty())
    pads.assign(2 * nd, 0);
  if (w.strides.size() != nd || w.dilations.size() != nd ||
      pads.size() != 2 * nd || in.size() != nd)
    return op->emitError("strides, dilations and pads must have one value per "
                         "spatial dim (pads two), for ")
           << nd << " spatial dims";
  w.padBegin.assign(pads.begin(), pads.begin() + nd);
  w.padEnd.assign(pads.begin() + nd, pads.end());
  for (size_t i = 0; i < nd; ++i)
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1 ||
        w.padBegin[i] < 0 || w.padEnd[i] < 0)
      return op->emitError("kernel, strides and dilations must be >= 1 and "
                           "pads >= 0");

  std::string autoPad = stringAttr(op, "auto_pad", "NOTSET");
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  if (!same && autoPad != "NOTSET" && autoPad != "VALID" && !autoPad.empty())
    return op->emitError("unsupported auto_pad '") << autoPad << "'";
  out.assign(nd, 0);
  for (size_t i = 0; i < nd; ++i) {
    int64_t s = w.strides[i], span = w.span(i);
    if (same) {
      out[i] = ceilDiv(in[i], s);
      int64_t total = std::max<int64_t>(0, (out[i] - 1) * s + span - in[i]);
      // The odd pad goes to the end for SAME_UPPER, the start for SAME_LOWER.
      int64_t small = total / 2;
      w.padBegin[i] = autoPad == "SAME_UPPER" ? small : total - small;
      w.padEnd[i] = total - w.padBegin[i];
      continue;
    }
    if (autoPad == "VALID")
      w.padBegin[i] = w.padEnd[i] = 0;
    int64_t room = in[i] + w.padBegin[i] + w.padEnd[i] - span;
    if (room < 0)
      return op->emitError("window of extent ")
             << span << " does not fit spatial dim " << i << " of size "
             << in[i] << " plus its pads";
    out[i] = (ceilMode ? ceilDiv(room, s) : room / s) + 1;
    if (ceilMode && (out[i] - 1) * s >= in[i] + w.padBegin[i])
      --out[i];
  }
  return success();
}

SmallVector<int64_t> paddedLengths(ArrayRef<int64_t> in,
                                   ArrayRef<int64_t> outDims, const Window &w) {
  SmallVector<int64_t> lengths;
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t needed =
        outDims[i] > 0 ? (outDims[i] - 1) * w.strides[i] + w.span(i) : 0;
    lengths.push_back(std::max(w.padBegin[i] + in[i], needed));
  }
  return lengths;
}

Value padInput(OpBuilder &b, Location loc, Scratch &scratch, Value x,
               ArrayRef<int64_t> padBegin, ArrayRef<int64_t> lengths,
               Type elementType, Value padValue,
               function_ref<Value(OpBuilder &, Location, Value)> convert) {
  ArrayRef<int64_t> shape = shapeOf(x);
  bool padded = false;
  for (size_t i = 0; i < lengths.size(); ++i)
    padded |= padBegin[i] != 0 || lengths[i] != shape[i + 2];
  if (!padded && !convert)
    return x;
  SmallVector<int64_t> full{shape[0], shape[1]};
  full.append(lengths.begin(), lengths.end());
  Value buffer = scratch.alloc(full, elementType);
  if (padded)
    fillBuffer(b, loc, buffer, padValue);
  SmallVector<int64_t> offsets{0, 0};
  offsets.append(padBegin.begin(), padBegin.end());
  Value inner = padded ? subview(b, loc, buffer, offsets, shape) : buffer;
  copyBuffer(b, loc, x, inner, convert);
  return buffer;
}

} // namespace mlcc::portable::nn
