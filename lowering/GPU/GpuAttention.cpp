//===- GpuAttention.cpp - graph.attention in three kernels ----------------===//
//
// Per batch b and head h (one group of the tiled products): the scores
// S = Q_h K_h^T * scale + mask, a tiled product reading the heads in place
// ([B, S, H*D] columns h*D..), into a scratch [B*H, S, S]; its softmax
// rows, a workgroup each; then Y_h = softmax(S) V_h, written into Y's
// columns of head h. No transposed copy of Q, K, V or Y, as the
// decomposition's reshapes and transposes would make.
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

TargetLowering lowerAttention(Operation *op, lowering::OpLoweringContext &ctx,
                              const GpuTraits &traits) {
  if (!allF32(op) || op->getNumOperands() != 4)
    return TargetLowering::Declined;
  ArrayRef<int64_t> ys = shapeOf(op->getResult(0));
  int64_t heads = intAttr(op, "num_heads", 0);
  if (ys.size() != 3 || heads <= 0 || ys[2] % heads != 0 ||
      shapeOf(op->getOperand(0)) != ys || shapeOf(op->getOperand(1)) != ys ||
      shapeOf(op->getOperand(2)) != ys)
    return TargetLowering::Declined;
  int64_t batch = ys[0], seq = ys[1], width = ys[2], dim = width / heads;
  // The mask's dims aligned to [B, H, S, S]'s end; a dim of 1 repeats.
  Value maskValue = op->getOperand(3);
  SmallVector<int64_t> full{batch, heads, seq, seq}, maskShape;
  if (!isa<NoneType>(maskValue.getType())) {
    maskShape.assign(shapeOf(maskValue).begin(), shapeOf(maskValue).end());
    if (maskShape.size() > 4)
      return TargetLowering::Declined;
    for (size_t i = 0; i < maskShape.size(); ++i)
      if (maskShape[i] != 1 && maskShape[i] != full[4 - maskShape.size() + i])
        return TargetLowering::Declined;
  }
  if (numElements(ys) == 0)
    return TargetLowering::Lowered;
  double scale = floatAttr(op, "scale", 1.0);

  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Value q = ctx.buffer(op->getOperand(0)), k = ctx.buffer(op->getOperand(1)),
        v = ctx.buffer(op->getOperand(2)), y = ctx.buffer(op->getResult(0));
  Value mask = maskShape.empty() ? Value() : ctx.buffer(maskValue);
  Type f32 = b.getF32Type();
  Value scores = ctx.scratch(MemRefType::get({batch * heads, seq, seq}, f32));
  auto index = [&](OpBuilder &ib, int64_t c) {
    return ib.create<arith::ConstantIndexOp>(loc, c).getResult();
  };
  // Group g is (batch g / H, head g % H); head h's feature e is column
  // h*D + e of Q, K, V and Y.
  auto batchOf = [&](OpBuilder &ib, Value g) {
    return ib.create<arith::DivUIOp>(loc, g, index(ib, heads)).getResult();
  };
  auto column = [&](OpBuilder &ib, Value g, Value e) {
    Value head = ib.create<arith::RemUIOp>(loc, g, index(ib, heads));
    return ib
        .create<arith::AddIOp>(
            loc, ib.create<arith::MulIOp>(loc, head, index(ib, dim)), e)
        .getResult();
  };
  auto load = [&](OpBuilder &ib, Value buffer, Value g, Value token,
                  Value e) -> Value {
    return ib.create<memref::LoadOp>(
        loc, buffer, ValueRange{batchOf(ib, g), token, column(ib, g, e)});
  };

  MatmulProblem qk;
  qk.groups = batch * heads;
  qk.rows = seq;
  qk.cols = seq;
  qk.depth = dim;
  qk.loadA = [&](OpBuilder &lb, Location, Value g, Value i, Value e) {
    return load(lb, q, g, i, e);
  };
  qk.loadB = [&](OpBuilder &lb, Location, Value g, Value e, Value j) {
    return load(lb, k, g, j, e);
  };
  qk.store = [&](OpBuilder &sb, Location l, Value g, Value i, Value j,
                 Value sum) {
    Value s =
        sb.create<arith::MulFOp>(l, sum, scalarConstant(sb, l, f32, scale));
    if (mask) {
      Value coords[] = {batchOf(sb, g),
                        sb.create<arith::RemUIOp>(l, g, index(sb, heads)), i,
                        j};
      SmallVector<Value> at;
      for (size_t d = 0; d < maskShape.size(); ++d)
        at.push_back(maskShape[d] == 1 ? index(sb, 0)
                                       : coords[4 - maskShape.size() + d]);
      s = sb.create<arith::AddFOp>(l, s,
                                   sb.create<memref::LoadOp>(l, mask, at));
    }
    sb.create<memref::StoreOp>(l, s, scores, ValueRange{g, i, j});
  };
  buildMatmul(b, loc, qk);

  Value rowsView = viewAs(b, loc, scores, {batch * heads * seq, seq});
  buildSoftmaxRows(b, loc, rowsView, rowsView, batch * heads * seq, seq,
                   /*logarithm=*/false, traits);

  MatmulProblem pv;
  pv.groups = batch * heads;
  pv.rows = seq;
  pv.cols = dim;
  pv.depth = seq;
  pv.loadA = [&](OpBuilder &lb, Location l, Value g, Value i, Value j) {
    return lb.create<memref::LoadOp>(l, scores, ValueRange{g, i, j})
        .getResult();
  };
  pv.loadB = [&](OpBuilder &lb, Location, Value g, Value j, Value e) {
    return load(lb, v, g, j, e);
  };
  pv.store = [&](OpBuilder &sb, Location l, Value g, Value i, Value e,
                 Value sum) {
    sb.create<memref::StoreOp>(l, sum, y,
                               ValueRange{batchOf(sb, g), i, column(sb, g, e)});
  };
  buildMatmul(b, loc, pv);
  return TargetLowering::Lowered;
}

} // namespace mlcc::gpukernels
