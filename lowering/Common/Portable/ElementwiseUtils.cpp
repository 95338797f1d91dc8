//===- ElementwiseUtils.cpp - Shared helpers of the elementwise family ----===//

#include "ElementwiseUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <cmath>

using namespace mlir;

namespace mlcc::portable::ew {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

TypeSet ElemType::typeClass() const {
  if (isa<FloatType>(tensor))
    return kFloat;
  auto it = cast<IntegerType>(tensor);
  if (it.getWidth() == 1)
    return kBool;
  return it.isUnsigned() ? kUnsigned : kSigned;
}

ElemType elemTypeOf(Type tensorElementType) {
  ElemType t;
  t.tensor = tensorElementType;
  t.storage = storageType(tensorElementType);
  t.compute = t.storage;
  if (t.storage.isF16() || t.storage.isBF16())
    t.compute = Float32Type::get(t.storage.getContext());
  return t;
}

ElemType elemTypeOf(Value graphValue) {
  return elemTypeOf(cast<ShapedType>(graphValue.getType()).getElementType());
}

LogicalResult checkOperandType(PortableOp &p, unsigned index, unsigned set) {
  Type type = p.op->getOperand(index).getType();
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return p.op->emitError() << "input " << index << " is missing";
  Type elem = shaped.getElementType();
  if (!isa<FloatType, IntegerType>(elem))
    return p.op->emitError() << "input " << index << " has type " << elem
                             << ", which the portable lowering does not "
                                "support";
  if (isa<FloatType>(elem) &&
      !(elem.isF16() || elem.isBF16() || elem.isF32() || elem.isF64()))
    return p.op->emitError() << "input " << index << " has type " << elem
                             << ", expected f16, bf16, f32 or f64";
  if (!(elemTypeOf(elem).typeClass() & set))
    return p.op->emitError() << "input " << index << " has type " << elem
                             << ", expected " << ref::typeSetName(set);
  return success();
}

LogicalResult checkPresent(PortableOp &p, unsigned count) {
  if (p.operands.size() < count)
    return p.op->emitError()
           << "expected " << count << " inputs, got " << p.operands.size();
  for (unsigned i = 0; i < count; ++i)
    if (!p.operands[i])
      return p.op->emitError() << "input " << i << " is missing";
  return success();
}

//===----------------------------------------------------------------------===//
// Scalar code
//===----------------------------------------------------------------------===//

Value Scalar::cst(Type type, double v) {
  if (auto ft = dyn_cast<FloatType>(type))
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(ft, v));
  return intCst(type, static_cast<int64_t>(v));
}

Value Scalar::intCst(Type type, int64_t v) {
  unsigned width = cast<IntegerType>(type).getWidth();
  // The APInt constructor keeps the low `width` bits of the pattern.
  APInt value(width, static_cast<uint64_t>(v));
  return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(type, value));
}

Value Scalar::boolCst(bool v) { return intCst(b.getI1Type(), v ? 1 : 0); }

Value Scalar::cmp(Cmp kind, const ElemType &t, Value a, Value c) {
  if (t.isFloat()) {
    // C++ comparisons: ordered, except != which is true on nan.
    arith::CmpFPredicate pred;
    switch (kind) {
    case Cmp::Eq:
      pred = arith::CmpFPredicate::OEQ;
      break;
    case Cmp::Ne:
      pred = arith::CmpFPredicate::UNE;
      break;
    case Cmp::Lt:
      pred = arith::CmpFPredicate::OLT;
      break;
    case Cmp::Le:
      pred = arith::CmpFPredicate::OLE;
      break;
    case Cmp::Gt:
      pred = arith::CmpFPredicate::OGT;
      break;
    case Cmp::Ge:
      pred = arith::CmpFPredicate::OGE;
      break;
    }
    return b.create<arith::CmpFOp>(loc, pred, a, c);
  }
  const bool sign = t.isSigned();
  arith::CmpIPredicate pred;
  switch (kind) {
  case Cmp::Eq:
    pred = arith::CmpIPredicate::eq;
    break;
  case Cmp::Ne:
    pred = arith::CmpIPredicate::ne;
    break;
  case Cmp::Lt:
    pred = sign ? arith::CmpIPredicate::slt : arith::CmpIPredicate::ult;
    break;
  case Cmp::Le:
    pred = sign ? arith::CmpIPredicate::sle : arith::CmpIPredicate::ule;
    break;
  case Cmp::Gt:
    pred = sign ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::ugt;
    break;
  case Cmp::Ge:
    pred = sign ? arith::CmpIPredicate::sge : arith::CmpIPredicate::uge;
    break;
  }
  return b.create<arith::CmpIOp>(loc, pred, a, c);
}

Value Scalar::isNan(Value x) {
  return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, x, x);
}

Value Scalar::select(Value cond, Value a, Value c) {
  return b.create<arith::SelectOp>(loc, cond, a, c);
}

Value Scalar::add(const ElemType &t, Value a, Value c) {
  if (t.isFloat())
    return b.create<arith::AddFOp>(loc, a, c);
  return b.create<arith::AddIOp>(loc, a, c);
}

Value Scalar::sub(const ElemType &t, Value a, Value c) {
  if (t.isFloat())
    return b.create<arith::SubFOp>(loc, a, c);
  return b.create<arith::SubIOp>(loc, a, c);
}

Value Scalar::mul(const ElemType &t, Value a, Value c) {
  if (t.isFloat())
    return b.create<arith::MulFOp>(loc, a, c);
  return b.create<arith::MulIOp>(loc, a, c);
}

Value Scalar::div(Value a, Value c) {
  return b.create<arith::DivFOp>(loc, a, c);
}

Value Scalar::andI(Value a, Value c) {
  return b.create<arith::AndIOp>(loc, a, c);
}

Value Scalar::orI(Value a, Value c) {
  return b.create<arith::OrIOp>(loc, a, c);
}

Value Scalar::load(const ElemType &t, Value stored) {
  if (t.storage.isF16())
    return b.create<arith::ExtFOp>(loc, t.compute, stored);
  if (!t.storage.isBF16())
    return stored;
  // bf16 is the high half of an f32: done with integer ops so that nothing
  // depends on the backend's bf16 support.
  Type i16 = b.getI16Type(), i32 = b.getI32Type();
  Value bits = b.create<arith::BitcastOp>(loc, i16, stored);
  Value wide = b.create<arith::ExtUIOp>(loc, i32, bits);
  Value shifted = b.create<arith::ShLIOp>(loc, wide, intCst(i32, 16));
  return b.create<arith::BitcastOp>(loc, t.compute, shifted);
}

Value Scalar::store(const ElemType &t, Value computed) {
  if (t.storage.isF16())
    return b.create<arith::TruncFOp>(loc, t.storage, computed);
  if (!t.storage.isBF16())
    return computed;
  // floatToBf16 of the reference: round to nearest even, nan stays a quiet
  // nan with its sign.
  Type i16 = b.getI16Type(), i32 = b.getI32Type();
  Value x = b.create<arith::BitcastOp>(loc, i32, computed);
  Value absx = andI(x, intCst(i32, 0x7fffffff));
  Value nan = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ugt, absx,
                                      intCst(i32, 0x7f800000));
  Value high = b.create<arith::ShRUIOp>(loc, x, intCst(i32, 16));
  Value quiet = orI(high, intCst(i32, 0x40));
  Value rounding = b.create<arith::AddIOp>(loc, intCst(i32, 0x7fff),
                                           andI(high, intCst(i32, 1)));
  Value rounded = b.create<arith::ShRUIOp>(
      loc, b.create<arith::AddIOp>(loc, x, rounding), intCst(i32, 16));
  Value bits = b.create<arith::TruncIOp>(loc, i16, select(nan, quiet, rounded));
  return b.create<arith::BitcastOp>(loc, t.storage, bits);
}

Value Scalar::toF64(const ElemType &t, Value v) {
  Type f64 = b.getF64Type();
  if (t.isFloat())
    return t.compute.isF64() ? v : b.create<arith::ExtFOp>(loc, f64, v);
  if (t.isSigned())
    return b.create<arith::SIToFPOp>(loc, f64, v);
  return b.create<arith::UIToFPOp>(loc, f64, v);
}

Value Scalar::f64ToIntSaturating(const ElemType &t, Value d) {
  Type type = t.compute;
  unsigned w = cast<IntegerType>(type).getWidth();
  const bool sign = t.isSigned();
  // The limits as doubles, as static_cast<double> rounds them (2^63 for
  // INT64_MAX); a value at or past them saturates.
  const double lo = sign ? -std::ldexp(1.0, w - 1) : 0.0;
  const double hi = sign ? std::ldexp(1.0, w - 1) - 1 : std::ldexp(1.0, w) - 1;
  const int64_t loBits =
      sign ? static_cast<int64_t>(-(uint64_t(1) << (w - 1))) : 0;
  const int64_t hiBits =
      sign ? static_cast<int64_t>((uint64_t(1) << (w - 1)) - 1)
           : static_cast<int64_t>(w == 64 ? ~uint64_t(0)
                                          : (uint64_t(1) << w) - 1);
  // An out-of-range conversion is poison, but only in the arm the selects
  // below drop.
  Value r = sign ? Value(b.create<arith::FPToSIOp>(loc, type, d))
                 : Value(b.create<arith::FPToUIOp>(loc, type, d));
  Type f64 = b.getF64Type();
  r = select(
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGE, d, cst(f64, hi)),
      intCst(type, hiBits), r);
  r = select(
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLE, d, cst(f64, lo)),
      intCst(type, loBits), r);
  return select(isNan(d), intCst(type, 0), r);
}

Value Scalar::convert(const ElemType &from, const ElemType &to, Value v) {
  if (from.tensor == to.tensor)
    return v;
  if (to.isFloat()) {
    auto dst = cast<FloatType>(to.compute);
    if (from.isFloat()) {
      unsigned fw = cast<FloatType>(from.compute).getWidth();
      if (fw < dst.getWidth())
        return b.create<arith::ExtFOp>(loc, dst, v);
      if (fw > dst.getWidth())
        return b.create<arith::TruncFOp>(loc, dst, v);
      return v;
    }
    if (from.isSigned())
      return b.create<arith::SIToFPOp>(loc, dst, v);
    return b.create<arith::UIToFPOp>(loc, dst, v);
  }
  if (to.isBool()) {
    // `v != 0`: nan is true, as in C and numpy.
    Value zero = cst(from.compute, 0.0);
    return cmp(Cmp::Ne, from, v, zero);
  }
  if (from.isFloat())
    return f64ToIntSaturating(to, toF64(from, v));
  // Integer to integer wraps like a C cast; the source's signedness picks
  // the extension.
  unsigned fw = cast<IntegerType>(from.compute).getWidth();
  unsigned tw = cast<IntegerType>(to.compute).getWidth();
  if (fw > tw)
    return b.create<arith::TruncIOp>(loc, to.compute, v);
  if (fw < tw) {
    if (from.isSigned())
      return b.create<arith::ExtSIOp>(loc, to.compute, v);
    return b.create<arith::ExtUIOp>(loc, to.compute, v);
  }
  return v;
}

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> inShape,
                       ArrayRef<int64_t> outShape) {
  const size_t rank = outShape.size();
  const size_t offset = rank - inShape.size();
  SmallVector<AffineExpr> exprs;
  for (size_t i = 0; i < inShape.size(); ++i) {
    const size_t d = offset + i;
    if (inShape[i] == 1 && outShape[d] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(d, ctx));
  }
  return AffineMap::get(rank, 0, exprs, ctx);
}

void buildElementwise(OpBuilder &b, Location loc, ValueRange inputs,
                      ValueRange outputs, BodyFn body,
                      ArrayRef<AffineMap> inputMaps) {
  auto outType = cast<MemRefType>(outputs[0].getType());
  ArrayRef<int64_t> shape = outType.getShape();
  if (outType.getNumElements() == 0)
    return;
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  if (inputMaps.empty()) {
    for (Value in : inputs)
      maps.push_back(
          broadcastMap(ctx, cast<MemRefType>(in.getType()).getShape(), shape));
  } else {
    maps.append(inputMaps.begin(), inputMaps.end());
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    maps.push_back(AffineMap::getMultiDimIdentityMap(shape.size(), ctx));
  SmallVector<utils::IteratorType> iterators(shape.size(),
                                             utils::IteratorType::parallel);
  const size_t numInputs = inputs.size();
  b.create<linalg::GenericOp>(
      loc, inputs, outputs, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Scalar s{nb, nloc};
        SmallVector<Value> results = body(s, args.take_front(numInputs));
        nb.create<linalg::YieldOp>(nloc, results);
      });
}

void buildCopy(OpBuilder &b, Location loc, Value from, Value to) {
  buildElementwise(b, loc, from, to, [](Scalar &, ValueRange in) {
    return SmallVector<Value>{in[0]};
  });
}

Value loadScalar(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<Value> indices(type.getRank(),
                             b.create<arith::ConstantIndexOp>(loc, 0));
  return b.create<memref::LoadOp>(loc, buffer, indices);
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

double floatAttr(Operation *op, StringRef name, float dflt) {
  if (auto a = op->getAttrOfType<FloatAttr>(name))
    return static_cast<float>(a.getValueAsDouble());
  if (auto a = op->getAttrOfType<IntegerAttr>(name))
    return static_cast<float>(a.getValue().getSExtValue());
  return dflt;
}

int64_t intAttr(Operation *op, StringRef name, int64_t dflt) {
  if (auto a = op->getAttrOfType<IntegerAttr>(name))
    return a.getValue().getSExtValue();
  return dflt;
}

} // namespace mlcc::portable::ew
