//===- DataMovementGenerators.cpp - Values made from shapes -------------===//
//
// range, eye_like, constant_of_shape, shape and size: results computed from
// shapes, attributes and scalars rather than moved from an input. Most are
// folded away before lowering when their inputs are constant; these cover
// what is left.
//
//===----------------------------------------------------------------------===//

#include "DataMovementUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <limits>
#include <string>

using namespace mlir;

namespace mlcc::portable {

using namespace dm;

namespace {

Type elementTypeOf(Value buffer) {
  return cast<MemRefType>(buffer.getType()).getElementType();
}

//===----------------------------------------------------------------------===//
// graph.range
//===----------------------------------------------------------------------===//

/// Emits the run-time check that start, limit and delta (widened to f64 or
/// i64) give the `n` elements of the static result, counted as the
/// reference does: max(ceil((limit - start) / delta), 0), in double for
/// floats, which must be finite with a non-zero delta, and as a ceiling
/// division in int64 for integers, whose delta must be non-zero.
void checkRangeLength(PortableOp &p, Value start, Value limit, Value delta,
                      int64_t n) {
  OpBuilder &b = p.b;
  Location loc = p.loc;
  Type t = start.getType();
  Value bad;
  auto orInto = [&](Value c) {
    bad = bad ? b.create<arith::OrIOp>(loc, bad, c) : c;
  };
  if (isa<FloatType>(t)) {
    auto f64 = [&](double v) -> Value {
      return b.create<arith::ConstantOp>(loc, b.getF64FloatAttr(v));
    };
    // Unordered predicates: a NaN fails too.
    for (Value v : {start, limit, delta})
      orInto(b.create<arith::CmpFOp>(
          loc, arith::CmpFPredicate::UGE, b.create<math::AbsFOp>(loc, v),
          f64(std::numeric_limits<double>::infinity())));
    orInto(
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UEQ, delta, f64(0)));
    Value q = b.create<math::CeilOp>(
        loc, b.create<arith::DivFOp>(
                 loc, b.create<arith::SubFOp>(loc, limit, start), delta));
    Value count = b.create<arith::MaximumFOp>(loc, q, f64(0));
    orInto(b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, count,
                                   f64(static_cast<double>(n))));
  } else {
    Value zero = b.create<arith::ConstantIntOp>(loc, 0, 64);
    Value isZero =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, delta, zero);
    // A zero delta fails; divide by 1 instead so that the check itself
    // does not trap.
    Value divisor = b.create<arith::SelectOp>(
        loc, isZero, b.create<arith::ConstantIntOp>(loc, 1, 64), delta);
    Value q = b.create<arith::CeilDivSIOp>(
        loc, b.create<arith::SubIOp>(loc, limit, start), divisor);
    Value count = b.create<arith::MaxSIOp>(loc, q, zero);
    orInto(isZero);
    orInto(b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, count,
                                   b.create<arith::ConstantIntOp>(loc, n, 64)));
  }
  p.failIf(bad, "start, limit and delta do not give the " + std::to_string(n) +
                    " elements the model was compiled for");
}

LogicalResult lowerRange(PortableOp &p) {
  Value out = p.results[0];
  Type t = elementTypeOf(out);
  int64_t n = numElements(shapeOf(out));
  if (shapeOf(out).size() != 1)
    return p.op->emitError("range: result must be 1-D");
  for (unsigned i : {0u, 1u, 2u})
    if (numElements(shapeOf(p.operands[i])) != 1)
      return p.op->emitError("range: start, limit and delta must be scalars");
  bool isUnsigned = isUnsignedValue(p.op->getResult(0));
  // The reference computes start + i * delta in double for floats and in
  // int64 for integers, then converts to the element type.
  Type wide = isa<FloatType>(t) ? Type(p.b.getF64Type()) : p.b.getI64Type();
  auto widen = [&](Value v) -> Value {
    if (isa<FloatType>(t))
      return t.isF64() ? v : p.b.create<arith::ExtFOp>(p.loc, wide, v);
    return toI64(p.b, p.loc, v, isUnsigned);
  };
  Value start = widen(loadAt(p.b, p.loc, p.operands[0], 0));
  Value limit = widen(loadAt(p.b, p.loc, p.operands[1], 0));
  Value delta = widen(loadAt(p.b, p.loc, p.operands[2], 0));
  // The length is static; the scalars are read at run time and must agree.
  checkRangeLength(p, start, limit, delta, n);
  if (n == 0)
    return success();
  parallelNest(
      p.b, p.loc, {n}, [&](OpBuilder &b, Location loc, ValueRange ivs) {
        Value i = b.create<arith::IndexCastOp>(loc, b.getI64Type(), ivs[0]);
        Value v;
        if (isa<FloatType>(t)) {
          Value fi = b.create<arith::SIToFPOp>(loc, wide, i);
          v = b.create<arith::AddFOp>(loc, start,
                                      b.create<arith::MulFOp>(loc, fi, delta));
          if (!t.isF64())
            v = b.create<arith::TruncFOp>(loc, t, v);
        } else {
          v = b.create<arith::AddIOp>(loc, start,
                                      b.create<arith::MulIOp>(loc, i, delta));
          if (t != wide)
            v = b.create<arith::TruncIOp>(loc, t, v);
        }
        b.create<memref::StoreOp>(loc, v, out, ivs);
      });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.eye_like
//===----------------------------------------------------------------------===//

LogicalResult lowerEyeLike(PortableOp &p) {
  Value out = p.results[0];
  ArrayRef<int64_t> s = shapeOf(out);
  if (s.size() != 2)
    return p.op->emitError("eye_like: result must be 2-D");
  Type t = elementTypeOf(out);
  Value zero = zeroOf(p.b, p.loc, t), one = oneOf(p.b, p.loc, t);
  Value k = indexConst(p.b, p.loc, intAttr(p.op, "k", 0));
  // Ones where j - i == k.
  parallelNest(p.b, p.loc, s, [&](OpBuilder &b, Location loc, ValueRange ivs) {
    Value diff = b.create<arith::SubIOp>(loc, ivs[1], ivs[0]);
    Value on = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, diff, k);
    Value v = b.create<arith::SelectOp>(loc, on, one, zero);
    b.create<memref::StoreOp>(loc, v, out, ivs);
  });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.constant_of_shape
//===----------------------------------------------------------------------===//

/// The single element of the `value` attribute in storage type `t`; float
/// zero when absent.
FailureOr<Value> constantOfShapeValue(PortableOp &p, Type t) {
  auto attr = p.op->getAttrOfType<ElementsAttr>("value");
  if (!attr)
    return zeroOf(p.b, p.loc, t);
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense || dense.getNumElements() != 1)
    return p.op->emitError("constant_of_shape: value must be one dense "
                           "element");
  Attribute e = *dense.getValues<Attribute>().begin();
  if (auto f = dyn_cast<FloatAttr>(e))
    return Value(
        p.b.create<arith::ConstantOp>(p.loc, FloatAttr::get(t, f.getValue())));
  if (auto i = dyn_cast<IntegerAttr>(e))
    return Value(p.b.create<arith::ConstantOp>(
        p.loc, IntegerAttr::get(t, i.getValue())));
  return p.op->emitError("constant_of_shape: unsupported value element");
}

LogicalResult lowerConstantOfShape(PortableOp &p) {
  Value out = p.results[0];
  FailureOr<Value> v = constantOfShapeValue(p, elementTypeOf(out));
  if (failed(v))
    return failure();
  if (v->getType() != elementTypeOf(out))
    return p.op->emitError("constant_of_shape: value type differs from the "
                           "result type");
  if (numElements(shapeOf(out)) != 0)
    p.b.create<linalg::FillOp>(p.loc, ValueRange{*v}, ValueRange{out});
  return success();
}

//===----------------------------------------------------------------------===//
// graph.shape, graph.size
//===----------------------------------------------------------------------===//

/// Stores `values` into the row-major positions of an integer buffer.
void storeConstants(PortableOp &p, Value out, ArrayRef<int64_t> values) {
  Type t = elementTypeOf(out);
  ArrayRef<int64_t> s = shapeOf(out);
  for (size_t i = 0; i < values.size(); ++i) {
    Value v =
        p.b.create<arith::ConstantOp>(p.loc, p.b.getIntegerAttr(t, values[i]));
    SmallVector<Value> at;
    if (!s.empty())
      at.push_back(indexConst(p.b, p.loc, i));
    p.b.create<memref::StoreOp>(p.loc, v, out, at);
  }
}

LogicalResult lowerShape(PortableOp &p) {
  ArrayRef<int64_t> in = shapeOf(p.operands[0]);
  int64_t rank = in.size();
  int64_t start = intAttr(p.op, "start", 0), end = intAttr(p.op, "end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  SmallVector<int64_t> dims;
  for (int64_t d = start; d < end; ++d)
    dims.push_back(in[d]);
  if (numElements(shapeOf(p.results[0])) != static_cast<int64_t>(dims.size()))
    return p.op->emitError("shape: result size differs from the dim count");
  storeConstants(p, p.results[0], dims);
  return success();
}

LogicalResult lowerSize(PortableOp &p) {
  if (numElements(shapeOf(p.results[0])) != 1)
    return p.op->emitError("size: result must hold one element");
  storeConstants(p, p.results[0], {numElements(shapeOf(p.operands[0]))});
  return success();
}

} // namespace

void dm::registerGenerators(PortableRegistry &registry) {
  registry["graph.range"] = &lowerRange;
  registry["graph.eye_like"] = &lowerEyeLike;
  registry["graph.constant_of_shape"] = &lowerConstantOfShape;
  registry["graph.shape"] = &lowerShape;
  registry["graph.size"] = &lowerSize;
}

} // namespace mlcc::portable
