//===- GpuFc.cpp - graph.fc as a tiled matrix product ---------------------===//
//
// Y = act(X W + B + Z) with X seen as [rows, K]: the tiled product
// (TiledMatmul.h) with the bias, the residual and the activation applied
// to each sum before it is stored, in the reference kernel's order.
//
//===----------------------------------------------------------------------===//

#include "GpuKernels.h"
#include "TiledMatmul.h"

#include "DataMovementUtils.h"
#include "GraphDialect.h"
#include "NNUtils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace mlcc::gpukernels {

using lowering::TargetLowering;
using portable::dm::viewAs;
using namespace portable::nn;

TargetLowering lowerFc(Operation *op, lowering::OpLoweringContext &ctx) {
  ArrayRef<int64_t> xs = shapeOf(op->getOperand(0)),
                    ws = shapeOf(op->getOperand(1));
  Epilogue epilogue = Epilogue::activationOf(op);
  // What the portable lowering would reject, it reports.
  if (!allF32(op) || xs.size() < 2 || ws.size() != 2 || xs.back() != ws[0] ||
      !llvm::is_contained(graph::fusedActivations(),
                          StringRef(epilogue.activation)))
    return TargetLowering::Declined;
  int64_t k = ws[0], n = ws[1];
  int64_t rows = numElements(xs.drop_back());
  if (rows == 0 || n == 0)
    return TargetLowering::Lowered; // no element to write

  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Value x = viewAs(b, loc, ctx.buffer(op->getOperand(0)), {rows, k});
  Value w = ctx.buffer(op->getOperand(1));
  epilogue.bias = ctx.buffer(op->getOperand(2));
  if (Value z = ctx.buffer(op->getOperand(3)))
    epilogue.residual = viewAs(b, loc, z, {rows, n});
  Value y = viewAs(b, loc, ctx.buffer(op->getResult(0)), {rows, n});

  MatmulProblem mm;
  mm.rows = rows;
  mm.cols = n;
  mm.depth = k;
  mm.loadA = [&](OpBuilder &lb, Location l, Value, Value row, Value kk) {
    return lb.create<memref::LoadOp>(l, x, ValueRange{row, kk}).getResult();
  };
  mm.loadB = [&](OpBuilder &lb, Location l, Value, Value kk, Value col) {
    return lb.create<memref::LoadOp>(l, w, ValueRange{kk, col}).getResult();
  };
  mm.store = [&](OpBuilder &sb, Location l, Value, Value row, Value col,
                 Value sum) {
    Value v = epilogue.apply(sb, l, sum, col, {row, col});
    sb.create<memref::StoreOp>(l, v, y, ValueRange{row, col});
  };
  buildMatmul(b, loc, mm);
  return TargetLowering::Lowered;
}

} // namespace mlcc::gpukernels
