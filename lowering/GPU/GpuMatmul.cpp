//===- GpuMatmul.cpp - graph.matmul and graph.gemm as tiled products ------===//
//
// matmul: one product per batch index of the result, each operand's batch
// index found by broadcasting (a dim of 1 repeats); a 1-D operand is a row
// (A) or a column (B) whose dim the result drops. gemm: Y = alpha A' B' +
// beta C with the transposes read in place and C broadcast, in the
// portable lowering's order (NN.cpp).
//
//===----------------------------------------------------------------------===//

#include "GpuKernels.h"
#include "TiledMatmul.h"

#include "DataMovementUtils.h"
#include "NNUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace mlcc::gpukernels {

using lowering::TargetLowering;
using portable::dm::viewAs;
using namespace portable::nn;

namespace {

/// The linear batch index into an operand with batch dims `operand` of
/// the result's linear batch index `g` (result batch dims `result`, the
/// operand's aligned to their end).
Value operandBatch(OpBuilder &b, Location loc, Value g,
                   ArrayRef<int64_t> result, ArrayRef<int64_t> operand) {
  Value linear = b.create<arith::ConstantIndexOp>(loc, 0);
  Value rest = g;
  int64_t stride = 1;
  size_t offset = result.size() - operand.size();
  for (size_t i = result.size(); i-- > 0;) {
    Value size = b.create<arith::ConstantIndexOp>(loc, result[i]);
    Value coord = b.create<arith::RemUIOp>(loc, rest, size);
    rest = b.create<arith::DivUIOp>(loc, rest, size);
    if (i < offset || operand[i - offset] == 1)
      continue;
    linear = b.create<arith::AddIOp>(
        loc, linear,
        b.create<arith::MulIOp>(loc, coord,
                                b.create<arith::ConstantIndexOp>(loc, stride)));
    stride *= operand[i - offset];
  }
  return linear;
}

} // namespace

TargetLowering lowerMatmul(Operation *op, lowering::OpLoweringContext &ctx) {
  if (!allF32(op) || op->getNumOperands() != 2)
    return TargetLowering::Declined;
  ArrayRef<int64_t> as = shapeOf(op->getOperand(0)),
                    bs = shapeOf(op->getOperand(1)),
                    ys = shapeOf(op->getResult(0));
  if (as.empty() || bs.empty())
    return TargetLowering::Declined;
  int64_t m = as.size() == 1 ? 1 : as[as.size() - 2], k = as.back();
  int64_t n = bs.size() == 1 ? 1 : bs.back();
  int64_t kb = bs.size() == 1 ? bs[0] : bs[bs.size() - 2];
  ArrayRef<int64_t> aBatch = as.drop_back(as.size() == 1 ? 1 : 2);
  ArrayRef<int64_t> bBatch = bs.drop_back(bs.size() == 1 ? 1 : 2);
  size_t batchRank = std::max(aBatch.size(), bBatch.size());
  SmallVector<int64_t> yBatch(batchRank, 1);
  for (size_t i = 0; i < batchRank; ++i) {
    int64_t ad = i + aBatch.size() >= batchRank
                     ? aBatch[i + aBatch.size() - batchRank]
                     : 1;
    int64_t bd = i + bBatch.size() >= batchRank
                     ? bBatch[i + bBatch.size() - batchRank]
                     : 1;
    if (ad != bd && ad != 1 && bd != 1)
      return TargetLowering::Declined;
    yBatch[i] = ad == 1 ? bd : ad;
  }
  int64_t groups = numElements(yBatch);
  if (k != kb || numElements(ys) != groups * m * n)
    return TargetLowering::Declined;
  if (groups * m * n == 0)
    return TargetLowering::Lowered;

  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Value a = viewAs(b, loc, ctx.buffer(op->getOperand(0)),
                   {numElements(aBatch), m, k});
  Value w = viewAs(b, loc, ctx.buffer(op->getOperand(1)),
                   {numElements(bBatch), k, n});
  Value y = viewAs(b, loc, ctx.buffer(op->getResult(0)), {groups, m, n});
  MatmulProblem mm;
  mm.groups = groups;
  mm.rows = m;
  mm.cols = n;
  mm.depth = k;
  mm.loadA = [&](OpBuilder &lb, Location l, Value g, Value row, Value kk) {
    Value batch = operandBatch(lb, l, g, yBatch, aBatch);
    return lb.create<memref::LoadOp>(l, a, ValueRange{batch, row, kk})
        .getResult();
  };
  mm.loadB = [&](OpBuilder &lb, Location l, Value g, Value kk, Value col) {
    Value batch = operandBatch(lb, l, g, yBatch, bBatch);
    return lb.create<memref::LoadOp>(l, w, ValueRange{batch, kk, col})
        .getResult();
  };
  mm.store = [&](OpBuilder &sb, Location l, Value g, Value row, Value col,
                 Value sum) {
    sb.create<memref::StoreOp>(l, sum, y, ValueRange{g, row, col});
  };
  buildMatmul(b, loc, mm);
  return TargetLowering::Lowered;
}

TargetLowering lowerGemm(Operation *op, lowering::OpLoweringContext &ctx) {
  if (!allF32(op) || op->getNumOperands() < 2)
    return TargetLowering::Declined;
  bool transA = intAttr(op, "transA", 0) != 0;
  bool transB = intAttr(op, "transB", 0) != 0;
  double alpha = floatAttr(op, "alpha", 1.0), beta = floatAttr(op, "beta", 1.0);
  ArrayRef<int64_t> as = shapeOf(op->getOperand(0)),
                    bs = shapeOf(op->getOperand(1)),
                    ys = shapeOf(op->getResult(0));
  Value cValue =
      op->getNumOperands() > 2 && beta != 0.0 ? op->getOperand(2) : Value();
  if (cValue && isa<NoneType>(cValue.getType()))
    cValue = nullptr;
  if (as.size() != 2 || bs.size() != 2 || ys.size() != 2 ||
      (cValue && shapeOf(cValue).size() > 2))
    return TargetLowering::Declined;
  int64_t m = transA ? as[1] : as[0], k = transA ? as[0] : as[1];
  int64_t n = transB ? bs[0] : bs[1];
  if ((transB ? bs[1] : bs[0]) != k || ys != ArrayRef<int64_t>{m, n})
    return TargetLowering::Declined;
  if (m * n == 0)
    return TargetLowering::Lowered;

  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Value a = ctx.buffer(op->getOperand(0));
  Value w = ctx.buffer(op->getOperand(1));
  Value c = cValue ? ctx.buffer(cValue) : Value();
  Value y = ctx.buffer(op->getResult(0));
  SmallVector<int64_t> cs =
      c ? SmallVector<int64_t>(shapeOf(cValue)) : SmallVector<int64_t>();
  MatmulProblem mm;
  mm.rows = m;
  mm.cols = n;
  mm.depth = k;
  mm.loadA = [&](OpBuilder &lb, Location l, Value, Value row, Value kk) {
    return lb
        .create<memref::LoadOp>(
            l, a, transA ? ValueRange{kk, row} : ValueRange{row, kk})
        .getResult();
  };
  mm.loadB = [&](OpBuilder &lb, Location l, Value, Value kk, Value col) {
    return lb
        .create<memref::LoadOp>(
            l, w, transB ? ValueRange{col, kk} : ValueRange{kk, col})
        .getResult();
  };
  mm.store = [&](OpBuilder &sb, Location l, Value, Value row, Value col,
                 Value sum) {
    Type f32 = sb.getF32Type();
    Value v = sum;
    if (alpha != 1.0)
      v = sb.create<arith::MulFOp>(l, v, scalarConstant(sb, l, f32, alpha));
    if (c) {
      // C's dims aligned to Y's end; a dim of 1 repeats.
      SmallVector<Value> at;
      Value zero = sb.create<arith::ConstantIndexOp>(l, 0);
      for (size_t i = 0; i < cs.size(); ++i) {
        size_t j = 2 - cs.size() + i;
        at.push_back(cs[i] == 1 && ys[j] != 1 ? zero : (j == 0 ? row : col));
      }
      Value cv = sb.create<memref::LoadOp>(l, c, at);
      if (beta != 1.0)
        cv = sb.create<arith::MulFOp>(l, cv, scalarConstant(sb, l, f32, beta));
      v = sb.create<arith::AddFOp>(l, v, cv);
    }
    sb.create<memref::StoreOp>(l, v, y, ValueRange{row, col});
  };
  buildMatmul(b, loc, mm);
  return TargetLowering::Lowered;
}

} // namespace mlcc::gpukernels
