//===- ReductionsSupport.cpp - Helpers of the reduction lowerings ---------===//

#include "ReductionsSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace mlcc::portable::red {

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

Elem elemOf(Value tensor) {
  Type t = cast<ShapedType>(tensor.getType()).getElementType();
  Elem e;
  e.storage = storageType(t);
  if (auto ft = dyn_cast<FloatType>(t)) {
    e.isFloat = true;
    e.width = ft.getWidth();
  } else if (auto it = dyn_cast<IntegerType>(t)) {
    e.width = it.getWidth();
    // bool compares as unsigned (false < true).
    e.isUnsigned = it.isUnsigned() || e.width == 1;
  }
  return e;
}

ArrayRef<int64_t> shapeOf(Value tensor) {
  return cast<ShapedType>(tensor.getType()).getShape();
}

int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

void splitAtAxis(ArrayRef<int64_t> shape, int64_t axis, int64_t &outer,
                 int64_t &len, int64_t &inner) {
  outer = numElements(shape.take_front(axis));
  len = shape[axis];
  inner = numElements(shape.drop_front(axis + 1));
}

//===----------------------------------------------------------------------===//
// Attributes and constant operands
//===----------------------------------------------------------------------===//

int64_t intAttr(Operation *op, StringRef name, int64_t dflt) {
  if (auto a = op->getAttrOfType<IntegerAttr>(name))
    return a.getValue().getSExtValue();
  return dflt;
}

double floatAttr(Operation *op, StringRef name, float dflt) {
  if (auto a = op->getAttrOfType<FloatAttr>(name))
    return a.getValueAsDouble();
  return static_cast<double>(dflt);
}

std::optional<SmallVector<int64_t>> intsAttr(Operation *op, StringRef name) {
  auto a = op->getAttrOfType<ArrayAttr>(name);
  if (!a)
    return std::nullopt;
  SmallVector<int64_t> v;
  for (Attribute e : a)
    if (auto i = dyn_cast<IntegerAttr>(e))
      v.push_back(i.getValue().getSExtValue());
  return v;
}

bool hasOperand(Operation *op, unsigned i) {
  return i < op->getNumOperands() &&
         !isa<NoneType>(op->getOperand(i).getType());
}

std::optional<SmallVector<int64_t>> constInts(Value v) {
  DenseIntElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  SmallVector<int64_t> r;
  for (const APInt &x : attr.getValues<APInt>())
    r.push_back(x.getSExtValue());
  return r;
}

FailureOr<int64_t> normalizeAxis(Operation *op, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1) ||
      (rank == 0 && axis != 0 && axis != -1))
    return op->emitError() << "axis " << axis << " is out of range for rank "
                           << rank;
  return axis < 0 ? axis + rank : axis;
}

//===----------------------------------------------------------------------===//
// Constants and conversions
//===----------------------------------------------------------------------===//

Value cIndex(Builder &b, int64_t v) {
  return b.create<arith::ConstantIndexOp>(v);
}

Value cInt(Builder &b, Type t, int64_t v) {
  unsigned w = cast<IntegerType>(t).getWidth();
  APInt ap(64, static_cast<uint64_t>(v));
  return b.create<arith::ConstantOp>(
      b.getIntegerAttr(t, w < 64 ? ap.trunc(w) : ap));
}

Value cFloat(Builder &b, Type t, double v) {
  return b.create<arith::ConstantOp>(b.getFloatAttr(t, v));
}

Value cF64(Builder &b, double v) { return cFloat(b, b.getF64Type(), v); }

Type computeFloatType(const Elem &e) {
  MLIRContext *ctx = e.storage.getContext();
  return e.width == 64 ? Type(Float64Type::get(ctx))
                       : Type(Float32Type::get(ctx));
}

Value toCompute(Builder &b, Value v, const Elem &e) {
  if (!e.isFloat)
    return v;
  Type ct = computeFloatType(e);
  return v.getType() == ct ? v : b.create<arith::ExtFOp>(ct, v).getResult();
}

Value fromCompute(Builder &b, Value v, const Elem &e) {
  if (v.getType() == e.storage)
    return v;
  return b.create<arith::TruncFOp>(e.storage, v);
}

Value toF64(Builder &b, Value v, const Elem &e) {
  Type f64 = b.getF64Type();
  if (v.getType() == f64)
    return v;
  if (isa<FloatType>(v.getType()))
    return b.create<arith::ExtFOp>(f64, v);
  if (e.isUnsigned)
    return b.create<arith::UIToFPOp>(f64, v);
  return b.create<arith::SIToFPOp>(f64, v);
}

void intLimits(const Elem &e, int64_t &lowest, int64_t &highest) {
  if (e.isUnsigned) {
    lowest = 0;
    highest = -1; // all ones
    return;
  }
  lowest = e.width == 64 ? std::numeric_limits<int64_t>::min()
                         : -(int64_t(1) << (e.width - 1));
  highest = e.width == 64 ? std::numeric_limits<int64_t>::max()
                          : (int64_t(1) << (e.width - 1)) - 1;
}

/// double -> integer of `e`, saturating, nan -> 0.
static Value saturatingFromF64(Builder &b, Value v, const Elem &e) {
  Type t = e.storage;
  if (e.width == 1) // bool(v): anything but 0 (nan included) is true
    return b.create<arith::CmpFOp>(arith::CmpFPredicate::UNE, v, cF64(b, 0.0));
  int64_t loBits, hiBits;
  intLimits(e, loBits, hiBits);
  double lo = e.isUnsigned ? 0.0 : -std::ldexp(1.0, e.width - 1);
  double hi = e.isUnsigned ? std::ldexp(1.0, e.width) - 1.0
                           : std::ldexp(1.0, e.width - 1) - 1.0;
  // The unselected fptosi of an out-of-range value is poison, which select
  // does not propagate.
  Value r = e.isUnsigned ? b.create<arith::FPToUIOp>(t, v).getResult()
                         : b.create<arith::FPToSIOp>(t, v).getResult();
  Value low =
      b.create<arith::CmpFOp>(arith::CmpFPredicate::OLE, v, cF64(b, lo));
  Value high =
      b.create<arith::CmpFOp>(arith::CmpFPredicate::OGE, v, cF64(b, hi));
  r = b.create<arith::SelectOp>(low, cInt(b, t, loBits), r);
  r = b.create<arith::SelectOp>(high, cInt(b, t, hiBits), r);
  return b.create<arith::SelectOp>(isNan(b, v), cInt(b, t, 0), r);
}

Value fromF64(Builder &b, Value v, const Elem &e) {
  if (!e.isFloat)
    return saturatingFromF64(b, v, e);
  Type ct = computeFloatType(e);
  if (ct != v.getType())
    v = b.create<arith::TruncFOp>(ct, v);
  return fromCompute(b, v, e);
}

Value toI64(Builder &b, Value v, const Elem &e) {
  Type i64 = b.getI64Type();
  if (v.getType() == i64)
    return v;
  if (e.isUnsigned)
    return b.create<arith::ExtUIOp>(i64, v);
  return b.create<arith::ExtSIOp>(i64, v);
}

Value toIndex(Builder &b, Value v) {
  if (v.getType().isIndex())
    return v;
  if (isa<FloatType>(v.getType()))
    v = b.create<arith::FPToSIOp>(b.getI64Type(), v);
  return b.create<arith::IndexCastOp>(b.getIndexType(), v);
}

Value isNan(Builder &b, Value v) {
  return b.create<arith::CmpFOp>(arith::CmpFPredicate::UNO, v, v);
}

Value accAdd(Builder &b, Value acc, Value x) {
  return b.create<arith::AddFOp>(acc, x, arith::FastMathFlags::reassoc);
}

Value accMul(Builder &b, Value acc, Value x) {
  return b.create<arith::MulFOp>(acc, x, arith::FastMathFlags::reassoc);
}
Value addF(Builder &b, Value x, Value y) {
  return b.create<arith::AddFOp>(x, y);
}
Value subF(Builder &b, Value x, Value y) {
  return b.create<arith::SubFOp>(x, y);
}
Value mulF(Builder &b, Value x, Value y) {
  return b.create<arith::MulFOp>(x, y);
}
Value divF(Builder &b, Value x, Value y) {
  return b.create<arith::DivFOp>(x, y);
}
Value cmpF(Builder &b, arith::CmpFPredicate pred, Value x, Value y) {
  return b.create<arith::CmpFOp>(pred, x, y);
}
Value stdMin(Builder &b, Value x, Value y) {
  return b.create<arith::SelectOp>(cmpF(b, arith::CmpFPredicate::OLT, y, x), y,
                                   x);
}
Value stdMax(Builder &b, Value x, Value y) {
  return b.create<arith::SelectOp>(cmpF(b, arith::CmpFPredicate::OLT, x, y), y,
                                   x);
}

Value nanMax(Builder &b, Value acc, Value x) {
  // take x when x > acc or x is nan, unless acc already is nan.
  Value gt = b.create<arith::CmpFOp>(arith::CmpFPredicate::UGT, x, acc);
  Value accOrdered =
      b.create<arith::CmpFOp>(arith::CmpFPredicate::ORD, acc, acc);
  Value take = b.create<arith::AndIOp>(gt, accOrdered);
  return b.create<arith::SelectOp>(take, x, acc);
}

Value nanMin(Builder &b, Value acc, Value x) {
  Value lt = b.create<arith::CmpFOp>(arith::CmpFPredicate::ULT, x, acc);
  Value accOrdered =
      b.create<arith::CmpFOp>(arith::CmpFPredicate::ORD, acc, acc);
  Value take = b.create<arith::AndIOp>(lt, accOrdered);
  return b.create<arith::SelectOp>(take, x, acc);
}

//===----------------------------------------------------------------------===//
// Buffers and loops
//===----------------------------------------------------------------------===//

Value view(Builder &b, Value buf, ArrayRef<int64_t> shape) {
  auto src = cast<MemRefType>(buf.getType());
  if (src.getShape() == shape)
    return buf;
  // Row-major strides. The identity layout implies the same ones except
  // with a dim of size 0, where MLIR leaves some of them dynamic: an
  // explicit strided layout then (nothing is accessed anyway).
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  auto type = MemRefType::get(shape, src.getElementType());
  SmallVector<int64_t> implied;
  int64_t offset = 0;
  if (failed(getStridesAndOffset(type, implied, offset)) ||
      ArrayRef<int64_t>(implied) != ArrayRef<int64_t>(strides))
    type = MemRefType::get(
        shape, src.getElementType(),
        StridedLayoutAttr::get(b.getContext(), /*offset=*/0, strides));
  return b.create<memref::ReinterpretCastOp>(type, buf, 0, shape, strides);
}

void shapeBuffers(Builder &b, PortableOp &p) {
  auto fix = [&](Value &buf, Value graphValue) {
    if (buf && isa<ShapedType>(graphValue.getType()))
      buf = view(b, buf, shapeOf(graphValue));
  };
  for (auto [i, buf] : llvm::enumerate(p.operands))
    fix(buf, p.op->getOperand(i));
  for (auto [i, buf] : llvm::enumerate(p.results))
    fix(buf, p.op->getResult(i));
}

Value load(Builder &b, Value buf, ValueRange idx) {
  return b.create<memref::LoadOp>(buf, idx);
}

void store(Builder &b, Value v, Value buf, ValueRange idx) {
  b.create<memref::StoreOp>(v, buf, idx);
}

static void boundsOf(Builder &b, ArrayRef<int64_t> ubs,
                     SmallVectorImpl<Value> &lbv, SmallVectorImpl<Value> &ubv,
                     SmallVectorImpl<Value> &steps) {
  Value zero = cIndex(b, 0), one = cIndex(b, 1);
  for (int64_t u : ubs) {
    lbv.push_back(zero);
    ubv.push_back(cIndex(b, u));
    steps.push_back(one);
  }
}

void loops(Builder &b, ArrayRef<int64_t> ubs, LoopBody body) {
  SmallVector<Value> lbv, ubv, steps;
  boundsOf(b, ubs, lbv, ubv, steps);
  scf::buildLoopNest(b, b.getLoc(), lbv, ubv, steps,
                     [&](OpBuilder &ob, Location loc, ValueRange ivs) {
                       Builder nb(loc, ob);
                       body(nb, ivs);
                     });
}

SmallVector<Value> loops(Builder &b, ArrayRef<int64_t> ubs, ValueRange init,
                         ReduceBody body) {
  SmallVector<Value> lbv, ubv, steps;
  boundsOf(b, ubs, lbv, ubv, steps);
  scf::LoopNest nest = scf::buildLoopNest(
      b, b.getLoc(), lbv, ubv, steps, init,
      [&](OpBuilder &ob, Location loc, ValueRange ivs, ValueRange acc) {
        Builder nb(loc, ob);
        SmallVector<Value> r = body(nb, ivs, acc);
        return scf::ValueVector(r.begin(), r.end());
      });
  return SmallVector<Value>(nest.results.begin(), nest.results.end());
}

SmallVector<Value> loop(Builder &b, Value lb, Value ub, ValueRange init,
                        ReduceBody body) {
  auto forOp = b.create<scf::ForOp>(
      lb, ub, cIndex(b, 1), init,
      [&](OpBuilder &ob, Location loc, Value iv, ValueRange acc) {
        Builder nb(loc, ob);
        SmallVector<Value> r = body(nb, iv, acc);
        nb.create<scf::YieldOp>(r);
      });
  return SmallVector<Value>(forOp.getResults().begin(),
                            forOp.getResults().end());
}

void parallelBlocks(Builder &b, llvm::ArrayRef<int64_t> outer, int64_t inner,
                    llvm::ArrayRef<mlir::Type> types,
                    llvm::function_ref<void(
                        Builder &, mlir::ValueRange outerIvs, mlir::Value i0,
                        mlir::Value n, llvm::ArrayRef<mlir::Value> state)>
                        body) {
  llvm::SmallVector<int64_t> dims(outer.begin(), outer.end());
  dims.push_back((inner + kBlock - 1) / kBlock);
  int64_t iterations = numElements(dims);
  if (iterations == 0)
    return;
  llvm::SmallVector<mlir::Value> buffers;
  for (mlir::Type t : types)
    buffers.push_back(b.create<mlir::memref::AllocOp>(
        mlir::MemRefType::get({iterations * kBlock}, t),
        b.getI64IntegerAttr(64)));
  parallelLoops(b, dims, [&](Builder &b, mlir::ValueRange ivs) {
    mlir::Value i0 =
        b.create<mlir::arith::MulIOp>(ivs.back(), cIndex(b, kBlock));
    mlir::Value rest = b.create<mlir::arith::SubIOp>(cIndex(b, inner), i0);
    mlir::Value n = b.create<mlir::arith::MinSIOp>(rest, cIndex(b, kBlock));
    // The iteration's row: its linear index (last dim fastest) * kBlock.
    mlir::Value row = cIndex(b, 0);
    for (auto [iv, d] : llvm::zip(ivs, dims))
      row = b.create<mlir::arith::AddIOp>(
          b.create<mlir::arith::MulIOp>(row, cIndex(b, d)), iv);
    mlir::Value offset = b.create<mlir::arith::MulIOp>(row, cIndex(b, kBlock));
    llvm::SmallVector<mlir::Value> state;
    for (mlir::Value buf : buffers)
      state.push_back(b.create<mlir::memref::SubViewOp>(
          buf, llvm::ArrayRef<mlir::OpFoldResult>{offset},
          llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(kBlock)},
          llvm::ArrayRef<mlir::OpFoldResult>{b.getIndexAttr(1)}));
    body(b, ivs.drop_back(), i0, n, state);
  });
  for (mlir::Value buf : buffers)
    b.create<mlir::memref::DeallocOp>(buf);
}

void blocks(Builder &b, int64_t inner,
            function_ref<void(Builder &, Value i0, Value n)> body) {
  b.create<scf::ForOp>(
      cIndex(b, 0), cIndex(b, inner), cIndex(b, kBlock), ValueRange{},
      [&](OpBuilder &ob, Location loc, Value i0, ValueRange) {
        Builder nb(loc, ob);
        Value rest = nb.create<arith::SubIOp>(cIndex(nb, inner), i0);
        Value n = nb.create<arith::MinSIOp>(rest, cIndex(nb, kBlock));
        body(nb, i0, n);
        nb.create<scf::YieldOp>();
      });
}

void each(Builder &b, Value n, function_ref<void(Builder &, Value ii)> fn) {
  loop(b, cIndex(b, 0), n, {}, [&](Builder &b, ValueRange ii, ValueRange) {
    fn(b, ii[0]);
    return SmallVector<Value>{};
  });
}

void ifThenElse(Builder &b, Value cond, function_ref<void(Builder &)> thenFn,
                function_ref<void(Builder &)> elseFn) {
  auto thenBuilder = [&](OpBuilder &ob, Location loc) {
    Builder nb(loc, ob);
    thenFn(nb);
    nb.create<scf::YieldOp>();
  };
  auto elseBuilder = [&](OpBuilder &ob, Location loc) {
    Builder nb(loc, ob);
    elseFn(nb);
    nb.create<scf::YieldOp>();
  };
  if (elseFn)
    b.create<scf::IfOp>(cond, thenBuilder, elseBuilder);
  else
    b.create<scf::IfOp>(cond, thenBuilder);
}

static void dispatchFrom(Builder &b, unsigned i, unsigned count,
                         function_ref<Value(Builder &, unsigned)> cond,
                         function_ref<void(Builder &, unsigned)> emit) {
  if (i + 1 >= count) {
    emit(b, i);
    return;
  }
  ifThenElse(
      b, cond(b, i), [&](Builder &nb) { emit(nb, i); },
      [&](Builder &nb) { dispatchFrom(nb, i + 1, count, cond, emit); });
}

void dispatch(Builder &b, unsigned count,
              function_ref<Value(Builder &, unsigned)> cond,
              function_ref<void(Builder &, unsigned)> emit) {
  if (count != 0)
    dispatchFrom(b, 0, count, cond, emit);
}

} // namespace mlcc::portable::red
