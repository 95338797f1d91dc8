//===- NN.cpp - Portable lowering of the NN family: matrix products -------===//
//
// matmul (numpy semantics: 1-D operands, broadcast batch dims), gemm,
// matmul_integer and qlinear_matmul as one linalg.generic over
// (batch..., m, k, n): n innermost, so the inner loop runs along contiguous
// rows of B and of the output and vectorises (the reference kernel's i-k-j
// order). The rest of the family lives in NNConv.cpp, NNPool.cpp,
// NNEinsum.cpp and Quant.cpp; this file also registers all of it.
//
//===----------------------------------------------------------------------===//

#include "NNUtils.h"

using namespace mlir;

namespace mlcc::portable {
namespace {

using namespace nn;

//===----------------------------------------------------------------------===//
// The batched product
//===----------------------------------------------------------------------===//

/// One product acc[batch..., m, n] += (A - aZero) x (B - bZero), with the
/// numpy conventions for 1-D operands (no m or n dim) and broadcast batch
/// dims. Elements are converted from their tensor types to accType first.
struct Product {
  Value a, b, aZero, bZero, acc;
  Type aType, bType, aZeroType, bZeroType, accType;
  /// gemm's transA: A is [K, M].
  bool transA = false;
};

struct ProductDims {
  bool aVec = false, bVec = false;
  unsigned batchRank = 0, numDims = 0;
  int mDim = -1, kDim = -1, nDim = -1; // loop dims; -1 where absent
};

LogicalResult productDims(Operation *op, const Product &p, ProductDims &d) {
  ArrayRef<int64_t> a = shapeOf(p.a), b = shapeOf(p.b), y = shapeOf(p.acc);
  if (a.empty() || b.empty())
    return op->emitError("matrix product operands must have rank >= 1");
  d.aVec = a.size() == 1;
  d.bVec = b.size() == 1;
  unsigned matRank = (d.aVec ? 0 : 1) + (d.bVec ? 0 : 1);
  if (y.size() < matRank)
    return op->emitError("matrix product result rank ")
           << y.size() << " does not fit the operands";
  d.batchRank = y.size() - matRank;
  unsigned aBatch = a.size() - (d.aVec ? 1 : 2);
  unsigned bBatch = b.size() - (d.bVec ? 1 : 2);
  if (aBatch > d.batchRank || bBatch > d.batchRank)
    return op->emitError("matrix product batch dims do not fit the result");
  unsigned next = d.batchRank;
  d.mDim = d.aVec ? -1 : static_cast<int>(next++);
  d.kDim = static_cast<int>(next++);
  d.nDim = d.bVec ? -1 : static_cast<int>(next++);
  d.numDims = next;
  int64_t ka = p.transA ? a[0] : a.back();
  int64_t kb = d.bVec ? b[0] : b[b.size() - 2];
  if (ka != kb)
    return op->emitError("matrix product contracted dims differ: ")
           << ka << " vs " << kb;
  return success();
}

/// Batch dims of an operand, right-aligned against the result's: a dim of
/// size 1 against a larger one broadcasts (index 0).
SmallVector<AffineExpr> batchExprs(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                   unsigned rank, ArrayRef<int64_t> y,
                                   unsigned batchRank) {
  SmallVector<AffineExpr> exprs;
  unsigned off = batchRank - rank;
  for (unsigned i = 0; i < rank; ++i) {
    unsigned j = off + i;
    if (shape[i] == 1 && y[j] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(j, ctx));
  }
  return exprs;
}

LogicalResult emitProduct(Operation *op, OpBuilder &b, Location loc,
                          const Product &p) {
  ProductDims d;
  if (failed(productDims(op, p, d)))
    return failure();
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> as = shapeOf(p.a), bs = shapeOf(p.b), ys = shapeOf(p.acc);
  auto dim = [&](int i) { return getAffineDimExpr(i, ctx); };

  SmallVector<AffineExpr> aExprs =
      batchExprs(ctx, as, as.size() - (d.aVec ? 1 : 2), ys, d.batchRank);
  if (!d.aVec && p.transA) {
    aExprs.push_back(dim(d.kDim));
    aExprs.push_back(dim(d.mDim));
  } else {
    if (!d.aVec)
      aExprs.push_back(dim(d.mDim));
    aExprs.push_back(dim(d.kDim));
  }
  SmallVector<AffineExpr> bExprs =
      batchExprs(ctx, bs, bs.size() - (d.bVec ? 1 : 2), ys, d.batchRank);
  bExprs.push_back(dim(d.kDim));
  if (!d.bVec)
    bExprs.push_back(dim(d.nDim));
  SmallVector<AffineExpr> yExprs;
  for (unsigned i = 0; i < d.batchRank; ++i)
    yExprs.push_back(dim(i));
  if (!d.aVec)
    yExprs.push_back(dim(d.mDim));
  if (!d.bVec)
    yExprs.push_back(dim(d.nDim));

  // Zero points: per tensor, per row of A, per column of B.
  auto zeroExprs = [&](Value zp, int axisDim,
                       const char *what) -> FailureOr<SmallVector<AffineExpr>> {
    if (!zp)
      return SmallVector<AffineExpr>();
    if (numElements(shapeOf(zp)) != 1 && axisDim < 0)
      return op->emitError() << what << " must be a scalar for a 1-D operand";
    return paramExprs(
        ctx, zp, axisDim < 0 ? getAffineConstantExpr(0, ctx) : dim(axisDim));
  };
  auto aZeroExprs = zeroExprs(p.aZero, d.mDim, "the zero point of A");
  auto bZeroExprs = zeroExprs(p.bZero, d.nDim, "the zero point of B");
  if (failed(aZeroExprs) || failed(bZeroExprs))
    return failure();

  GenericBuilder g(d.numDims);
  int ia = g.addInput(p.a, aExprs);
  int ib = g.addInput(p.b, bExprs);
  int iaz = g.addInput(p.aZero, *aZeroExprs);
  int ibz = g.addInput(p.bZero, *bZeroExprs);
  int iy = g.addOutput(p.acc, yExprs);
  g.setReduction(d.kDim);
  g.build(b, loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value x = convertScalar(nb, nl, args[ia], p.aType, p.accType);
    Value w = convertScalar(nb, nl, args[ib], p.bType, p.accType);
    if (iaz >= 0)
      x = subValues(nb, nl, x,
                    convertScalar(nb, nl, args[iaz], p.aZeroType, p.accType));
    if (ibz >= 0)
      w = subValues(nb, nl, w,
                    convertScalar(nb, nl, args[ibz], p.bZeroType, p.accType));
    return SmallVector<Value>{
        addValues(nb, nl, args[iy], mulValues(nb, nl, x, w))};
  });
  return success();
}

Value zeroOf(OpBuilder &b, Location loc, Type t) {
  return scalarConstant(b, loc, t, 0.0);
}

//===----------------------------------------------------------------------===//
// graph.matmul
//===----------------------------------------------------------------------===//

LogicalResult lowerMatmul(PortableOp &p) {
  Operation *op = p.op;
  Type t = elementTypeOf(op->getResult(0));
  Scratch scratch(p.b, p.loc);
  Accumulator acc = Accumulator::create(scratch, p.results[0], t);
  Type accType = computeType(t);
  fillBuffer(p.b, p.loc, acc.buffer, zeroOf(p.b, p.loc, accType));
  Product prod;
  prod.a = p.operands[0];
  prod.b = p.operands[1];
  prod.acc = acc.buffer;
  prod.aType = elementTypeOf(op->getOperand(0));
  prod.bType = elementTypeOf(op->getOperand(1));
  prod.accType = accType;
  if (failed(emitProduct(op, p.b, p.loc, prod)))
    return failure();
  acc.finish(p.b, p.loc);
  return success();
}

//===----------------------------------------------------------------------===//
// graph.gemm
//===----------------------------------------------------------------------===//

/// Indexing of gemm's C [M, N], [N], [1], [] or [M, 1] against Y [M, N]
/// over loop dims (m, n): unidirectional broadcasting.
SmallVector<AffineExpr> gemmBiasExprs(MLIRContext *ctx, ArrayRef<int64_t> c,
                                      ArrayRef<int64_t> y) {
  SmallVector<AffineExpr> exprs;
  for (size_t i = 0; i < c.size(); ++i) {
    size_t j = 2 - c.size() + i;
    if (c[i] == 1 && y[j] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(j, ctx));
  }
  return exprs;
}

/// v * factor for gemm's alpha/beta: in the float type itself, or for
/// integers through f32 as the reference does.
Value scaleBy(OpBuilder &b, Location loc, Value v, Type tensorType,
              double factor) {
  if (isa<FloatType>(v.getType()))
    return b.create<arith::MulFOp>(loc, v,
                                   scalarConstant(b, loc, v.getType(), factor));
  Type f32 = b.getF32Type();
  Value f = convertScalar(b, loc, v, tensorType, f32);
  f = b.create<arith::MulFOp>(loc, f, scalarConstant(b, loc, f32, factor));
  return convertScalar(b, loc, f, f32, tensorType);
}

LogicalResult lowerGemm(PortableOp &p) {
  Operation *op = p.op;
  OpBuilder &b = p.b;
  Location loc = p.loc;
  MLIRContext *ctx = b.getContext();
  Type t = elementTypeOf(op->getResult(0));
  bool transA = intAttr(op, "transA", 0) != 0;
  bool transB = intAttr(op, "transB", 0) != 0;
  double alpha = floatAttr(op, "alpha", 1.0), beta = floatAttr(op, "beta", 1.0);
  if (shapeOf(p.operands[0]).size() != 2 || shapeOf(p.operands[1]).size() != 2)
    return op->emitError("gemm operands must have rank 2");

  Scratch scratch(b, loc);
  Value bMat = p.operands[1];
  Type bType = elementTypeOf(op->getOperand(1));
  if (transB) {
    // A row-major copy of B^T keeps the inner loop (along n) contiguous.
    ArrayRef<int64_t> bs = shapeOf(bMat);
    Value bt = scratch.alloc({bs[1], bs[0]}, storageType(bType));
    GenericBuilder tg(2);
    tg.addInput(bMat, dimExprs(ctx, {1, 0}));
    tg.addOutput(bt, dimExprs(ctx, {0, 1}));
    tg.build(b, loc, [](OpBuilder &, Location, ValueRange args) {
      return SmallVector<Value>{args[0]};
    });
    bMat = bt;
  }

  Accumulator acc = Accumulator::create(scratch, p.results[0], t);
  Type accType = computeType(t);
  fillBuffer(b, loc, acc.buffer, zeroOf(b, loc, accType));
  Product prod;
  prod.a = p.operands[0];
  prod.b = bMat;
  prod.acc = acc.buffer;
  prod.aType = elementTypeOf(op->getOperand(0));
  prod.bType = bType;
  prod.accType = accType;
  prod.transA = transA;
  if (failed(emitProduct(op, b, loc, prod)))
    return failure();

  // Epilogue: Y = alpha * acc + beta * C, rounded into Y's type.
  Value c = p.operands.size() > 2 && beta != 0.0 ? p.operands[2] : Value();
  if (c && shapeOf(c).size() > 2)
    return op->emitError("gemm: C must have rank <= 2");
  if (alpha == 1.0 && !c && !acc.separate)
    return success();
  Type cType = c ? elementTypeOf(op->getOperand(2)) : Type();
  GenericBuilder g(2);
  int ia = acc.separate ? g.addInput(acc.buffer, dimExprs(ctx, {0, 1})) : -1;
  int ic =
      c ? g.addInput(c, gemmBiasExprs(ctx, shapeOf(c), shapeOf(p.results[0])))
        : -1;
  int iy = g.addOutput(p.results[0], dimExprs(ctx, {0, 1}));
  g.build(b, loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value v = args[ia >= 0 ? ia : iy];
    if (alpha != 1.0)
      v = scaleBy(nb, nl, v, t, alpha);
    if (ic >= 0) {
      Value cv = convertScalar(nb, nl, args[ic], cType, accType);
      if (beta != 1.0)
        cv = scaleBy(nb, nl, cv, t, beta);
      v = addValues(nb, nl, v, cv);
    }
    return SmallVector<Value>{convertScalar(nb, nl, v, accType, t)};
  });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.matmul_integer and graph.qlinear_matmul
//===----------------------------------------------------------------------===//

// Operands: A, B, a_zero_point, b_zero_point (both optional).
LogicalResult lowerMatmulInteger(PortableOp &p) {
  Operation *op = p.op;
  Type i32 = p.b.getI32Type();
  fillBuffer(p.b, p.loc, p.results[0], zeroOf(p.b, p.loc, i32));
  Product prod;
  prod.a = p.operands[0];
  prod.b = p.operands[1];
  prod.aZero = p.operands.size() > 2 ? p.operands[2] : Value();
  prod.bZero = p.operands.size() > 3 ? p.operands[3] : Value();
  prod.acc = p.results[0];
  prod.aType = elementTypeOf(op->getOperand(0));
  prod.bType = elementTypeOf(op->getOperand(1));
  if (prod.aZero)
    prod.aZeroType = elementTypeOf(op->getOperand(2));
  if (prod.bZero)
    prod.bZeroType = elementTypeOf(op->getOperand(3));
  prod.accType = i32;
  return emitProduct(op, p.b, p.loc, prod);
}

// Operands: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale,
// y_zero_point.
LogicalResult lowerQLinearMatmul(PortableOp &p) {
  Operation *op = p.op;
  OpBuilder &b = p.b;
  Location loc = p.loc;
  MLIRContext *ctx = b.getContext();
  if (p.operands.size() != 8)
    return op->emitError("qlinear_matmul: expected 8 operands");
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  Value y = p.results[0];
  Type yType = elementTypeOf(op->getResult(0));
  ArrayRef<int64_t> ys = shapeOf(y);
  Scratch scratch(b, loc);
  Value acc = scratch.alloc(ys, i32);
  fillBuffer(b, loc, acc, zeroOf(b, loc, i32));
  Product prod;
  prod.a = p.operands[0];
  prod.aZero = p.operands[2];
  prod.b = p.operands[3];
  prod.bZero = p.operands[5];
  prod.acc = acc;
  prod.aType = elementTypeOf(op->getOperand(0));
  prod.aZeroType = prod.aZero ? elementTypeOf(op->getOperand(2)) : Type();
  prod.bType = elementTypeOf(op->getOperand(3));
  prod.bZeroType = prod.bZero ? elementTypeOf(op->getOperand(5)) : Type();
  prod.accType = i32;
  if (failed(emitProduct(op, b, loc, prod)))
    return failure();

  // Requantize: y = sat(round(acc * a_scale[row] * b_scale[col] / y_scale)
  // + y_zero_point), the scale product in f32 as the reference does.
  bool aVec = shapeOf(prod.a).size() == 1, bVec = shapeOf(prod.b).size() == 1;
  unsigned rank = ys.size();
  int rowDim = aVec ? -1 : static_cast<int>(rank) - (bVec ? 1 : 2);
  int colDim = bVec ? -1 : static_cast<int>(rank) - 1;
  auto scaleExprs = [&](Value s,
                        int axis) -> FailureOr<SmallVector<AffineExpr>> {
    if (numElements(shapeOf(s)) != 1 && axis < 0)
      return op->emitError("qlinear_matmul: a per-axis scale needs a 2-D "
                           "operand");
    return paramExprs(ctx, s, getAffineDimExpr(axis < 0 ? 0 : axis, ctx));
  };
  auto aScale = scaleExprs(p.operands[1], rowDim);
  auto bScale = scaleExprs(p.operands[4], colDim);
  if (failed(aScale) || failed(bScale))
    return failure();
  if (numElements(shapeOf(p.operands[6])) != 1 ||
      numElements(shapeOf(p.operands[7])) != 1)
    return op->emitError("qlinear_matmul: y_scale and y_zero_point must be "
                         "scalars");
  SmallVector<unsigned> all = allDims(rank);
  GenericBuilder g(rank);
  int iacc = g.addInput(acc, dimExprs(ctx, all));
  int ias = g.addInput(p.operands[1], *aScale);
  int ibs = g.addInput(p.operands[4], *bScale);
  int iys = g.addInput(p.operands[6], paramExprs(ctx, p.operands[6], {}));
  int iyz = g.addInput(p.operands[7], paramExprs(ctx, p.operands[7], {}));
  g.addOutput(y, dimExprs(ctx, all));
  Type yzType = elementTypeOf(op->getOperand(7));
  g.build(b, loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value scale = nb.create<arith::MulFOp>(nl, args[ias], args[ibs]);
    scale = nb.create<arith::DivFOp>(nl, scale, args[iys]);
    Value v = convertScalar(nb, nl, args[iacc], i32, f32);
    v = nb.create<arith::MulFOp>(nl, v, scale);
    Value zp = convertScalar(nb, nl, args[iyz], yzType, f32);
    return SmallVector<Value>{requantize(nb, nl, v, zp, yType)};
  });
  return success();
}

} // namespace

void registerPortableNN(PortableRegistry &registry) {
  registry["graph.matmul"] = &lowerMatmul;
  registry["graph.gemm"] = &lowerGemm;
  registry["graph.matmul_integer"] = &lowerMatmulInteger;
  registry["graph.qlinear_matmul"] = &lowerQLinearMatmul;
  nn::registerConvLowerings(registry);
  nn::registerPoolLowerings(registry);
  nn::registerQuantLowerings(registry);
  nn::registerEinsumLowering(registry);
}

} // namespace mlcc::portable
