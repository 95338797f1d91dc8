//===- DataMovementUtils.cpp - Helpers shared by the data movement family -===//

#include "DataMovementUtils.h"
#include "ParallelLoops.h"

#include "GraphDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;

namespace mlcc::portable::dm {

//===----------------------------------------------------------------------===//
// Types and attributes
//===----------------------------------------------------------------------===//

ArrayRef<int64_t> shapeOf(Value shaped) {
  return cast<ShapedType>(shaped.getType()).getShape();
}

int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

bool isUnsignedValue(Value graphValue) {
  auto t = dyn_cast<ShapedType>(graphValue.getType());
  auto it = t ? dyn_cast<IntegerType>(t.getElementType()) : IntegerType();
  return it && it.isUnsigned();
}

int64_t intAttr(Operation *op, StringRef name, int64_t dflt) {
  if (auto a = op->getAttrOfType<IntegerAttr>(name))
    return a.getValue().getSExtValue();
  return dflt;
}

std::string strAttr(Operation *op, StringRef name, StringRef dflt) {
  if (auto a = op->getAttrOfType<StringAttr>(name))
    return a.getValue().str();
  return dflt.str();
}

bool intsAttr(Operation *op, StringRef name, SmallVectorImpl<int64_t> &out) {
  Attribute a = op->getAttr(name);
  if (!a)
    return false;
  out.clear();
  if (auto arr = dyn_cast<DenseI64ArrayAttr>(a)) {
    out.append(arr.asArrayRef().begin(), arr.asArrayRef().end());
    return true;
  }
  auto arr = dyn_cast<ArrayAttr>(a);
  if (!arr)
    return false;
  for (Attribute e : arr) {
    auto i = dyn_cast<IntegerAttr>(e);
    if (!i)
      return false;
    out.push_back(i.getValue().getSExtValue());
  }
  return true;
}

bool normalizeAxis(int64_t axis, int64_t rank, int64_t &out) {
  if (axis < -rank || axis >= rank)
    return false;
  out = axis < 0 ? axis + rank : axis;
  return true;
}

/// Integers from the raw little-endian bytes of a resource blob.
static bool intsFromBlob(ArrayRef<char> data, unsigned width, bool isUnsigned,
                         int64_t count, SmallVectorImpl<int64_t> &out) {
  if (width % 8 != 0 || width > 64 ||
      static_cast<int64_t>(data.size()) != count * (width / 8))
    return false;
  unsigned bytes = width / 8;
  for (int64_t i = 0; i < count; ++i) {
    uint64_t raw = 0;
    std::memcpy(&raw, data.data() + i * bytes, bytes);
    APInt v(width, raw);
    out.push_back(isUnsigned ? static_cast<int64_t>(v.getZExtValue())
                             : v.getSExtValue());
  }
  return true;
}

bool constantInts(Operation *op, unsigned i, SmallVectorImpl<int64_t> &out) {
  if (i >= op->getNumOperands())
    return false;
  auto cst = op->getOperand(i).getDefiningOp<graph::ConstantOp>();
  if (!cst)
    return false;
  ElementsAttr attr = cst.getValue();
  auto type = cast<ShapedType>(attr.getType());
  auto it = dyn_cast<IntegerType>(type.getElementType());
  if (!it)
    return false;
  out.clear();
  if (auto dense = dyn_cast<DenseIntElementsAttr>(attr)) {
    for (const APInt &v : dense.getValues<APInt>())
      out.push_back(it.isUnsigned() ? static_cast<int64_t>(v.getZExtValue())
                                    : v.getSExtValue());
    return true;
  }
  if (auto res = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    return blob && intsFromBlob(blob->getData(), it.getWidth(), it.isUnsigned(),
                                type.getNumElements(), out);
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIndexOp>(loc, v);
}

Value zeroOf(OpBuilder &b, Location loc, Type t) {
  if (isa<FloatType>(t))
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(t, 0.0));
  return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(t, 0));
}

Value oneOf(OpBuilder &b, Location loc, Type t) {
  if (isa<FloatType>(t))
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(t, 1.0));
  return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(t, 1));
}

Value toI64(OpBuilder &b, Location loc, Value v, bool isUnsigned) {
  Type i64 = b.getI64Type();
  Type t = v.getType();
  if (t == i64)
    return v;
  if (t.isIndex())
    return b.createOrFold<arith::IndexCastOp>(loc, i64, v);
  if (isa<FloatType>(t))
    return b.create<arith::FPToSIOp>(loc, i64, v);
  auto it = cast<IntegerType>(t);
  if (it.getWidth() > 64)
    return b.create<arith::TruncIOp>(loc, i64, v);
  if (isUnsigned || it.getWidth() == 1)
    return b.createOrFold<arith::ExtUIOp>(loc, i64, v);
  return b.createOrFold<arith::ExtSIOp>(loc, i64, v);
}

Value toIndex(OpBuilder &b, Location loc, Value v, bool isUnsigned) {
  if (v.getType().isIndex())
    return v;
  return b.createOrFold<arith::IndexCastOp>(loc, b.getIndexType(),
                                            toI64(b, loc, v, isUnsigned));
}

Value loadAt(OpBuilder &b, Location loc, Value buffer, int64_t linear) {
  ArrayRef<int64_t> shape = shapeOf(buffer);
  SmallVector<Value> idx(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = indexConst(b, loc, shape[d] ? linear % shape[d] : 0);
    linear = shape[d] ? linear / shape[d] : 0;
  }
  return b.create<memref::LoadOp>(loc, buffer, idx);
}

Value operandIndexAt(PortableOp &p, unsigned i, int64_t linear) {
  SmallVector<int64_t> values;
  if (constantInts(p.op, i, values) &&
      linear < static_cast<int64_t>(values.size()))
    return indexConst(p.b, p.loc, values[linear]);
  Value v = loadAt(p.b, p.loc, p.operands[i], linear);
  return toIndex(p.b, p.loc, v, isUnsignedValue(p.op->getOperand(i)));
}

Value clampIndex(OpBuilder &b, Location loc, Value v, int64_t lo, int64_t hi) {
  v = b.createOrFold<arith::MinSIOp>(loc, v, indexConst(b, loc, hi));
  return b.createOrFold<arith::MaxSIOp>(loc, v, indexConst(b, loc, lo));
}

Value normalizeIndex(OpBuilder &b, Location loc, Value idx, int64_t dim) {
  Value dimV = indexConst(b, loc, dim);
  Value neg = b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, idx,
                                            indexConst(b, loc, 0));
  Value wrapped = b.createOrFold<arith::AddIOp>(loc, idx, dimV);
  idx = b.createOrFold<arith::SelectOp>(loc, neg, wrapped, idx);
  // TODO(issue 5): error status. An index outside [-dim, dim) is an error
  // in ONNX; until the driver has a status path it is clamped so that the
  // access stays inside the buffer.
  return clampIndex(b, loc, idx, 0, std::max<int64_t>(dim - 1, 0));
}

//===----------------------------------------------------------------------===//
// Buffers and loops
//===----------------------------------------------------------------------===//

Value viewAs(OpBuilder &b, Location loc, Value buffer,
             ArrayRef<int64_t> shape) {
  auto type = cast<MemRefType>(buffer.getType());
  if (type.getShape() == shape)
    return buffer;
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * std::max<int64_t>(shape[d + 1], 1);
  auto viewType = MemRefType::get(shape, type.getElementType());
  return b.create<memref::ReinterpretCastOp>(loc, viewType, buffer,
                                             /*offset=*/0, shape, strides);
}

void copyFlat(OpBuilder &b, Location loc, Value src, Value dst) {
  if (numElements(shapeOf(dst)) == 0)
    return;
  // Identity layouts on both sides: memref.copy becomes one memcpy.
  b.create<memref::CopyOp>(loc, viewAs(b, loc, src, shapeOf(dst)), dst);
}

void copyGeneric(OpBuilder &b, Location loc, Value src, Value dst,
                 ArrayRef<AffineExpr> srcExprs) {
  if (numElements(shapeOf(dst)) == 0)
    return;
  unsigned rank = shapeOf(dst).size();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, srcExprs, ctx),
                                 AffineMap::getMultiDimIdentityMap(rank, ctx)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  b.create<linalg::GenericOp>(
      loc, ValueRange{src}, ValueRange{dst}, maps, iters,
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        nb.create<linalg::YieldOp>(nloc, args[0]);
      });
}

void loopNest(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
              LoopBody body) {
  if (numElements(shape) == 0)
    return;
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t d : shape) {
    lbs.push_back(indexConst(b, loc, 0));
    ubs.push_back(indexConst(b, loc, d));
    steps.push_back(indexConst(b, loc, 1));
  }
  scf::buildLoopNest(b, loc, lbs, ubs, steps, body);
}

void parallelNest(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  LoopBody body) {
  if (numElements(shape) == 0)
    return;
  ImplicitLocOpBuilder ib(loc, b);
  parallelLoops(ib, shape, [&](ImplicitLocOpBuilder &nb, ValueRange ivs) {
    body(nb, nb.getLoc(), ivs);
  });
}

} // namespace mlcc::portable::dm
