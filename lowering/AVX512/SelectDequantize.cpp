//===- SelectDequantize.cpp - DequantizeLinear computed only if read -----===//
//
// In a QDQ graph every quantised layer reads its input and its weight
// through a DequantizeLinear, and the int8 selectors (SelectQdqGemm.cpp,
// SelectQuantConv.cpp) read the quantised tensors instead: computing the
// f32 values would be a pass over every activation and, for the weights,
// over every weight at every run. So on a --cpu with AVX512-VNNI, a
// dequantize whose users are all ops those selectors may take writes
// nothing; its f32 buffer is made (by the loop below, where it is needed)
// only if a user is lowered some other way after all. The quantised input
// lives as long as the result (HostBuilder::computeLastUses), so it is
// still there then.
//
//===----------------------------------------------------------------------===//

#include "PackPanels.h"
#include "QuantSelection.h"
#include "SelectionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

bool int8Consumer(Operation *user) {
  StringRef name = user->getName().stripDialect();
  return name == "matmul" || name == "gemm" || name == "fc" || name == "conv" ||
         name == "fused_conv";
}

/// out[i] = (q[i] - zero[c]) * scale[c], c the index along `axis` (0 for a
/// per-tensor scale).
void emitDequantize(OpLoweringContext &ctx, Value q, Value scale, Value zero,
                    const Dequantized &d, bool unsignedQ, Value out) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  ArrayRef<int64_t> shape = cast<MemRefType>(out.getType()).getShape();
  int64_t count = 1, inner = 1;
  for (int64_t s : shape)
    count *= s;
  int64_t channels = static_cast<int64_t>(d.scale.size());
  for (size_t i = d.axis + 1; channels > 1 && i < shape.size(); ++i)
    inner *= shape[i];
  Value qs = view(b, loc, ctx.buffer(q), {count});
  Value outs = view(b, loc, out, {count});
  Value scales = view(b, loc, ctx.buffer(scale), {channels});
  Value zeros = isa<NoneType>(zero.getType())
                    ? Value()
                    : view(b, loc, ctx.buffer(zero), {channels});
  Type f32 = b.getF32Type();
  auto toFloat = [&](OpBuilder &b, Value v) -> Value {
    return unsignedQ ? b.create<arith::UIToFPOp>(loc, f32, v).getResult()
                     : b.create<arith::SIToFPOp>(loc, f32, v).getResult();
  };
  forLoop(b, loc, count, [&](OpBuilder &b, Value i) {
    Value c =
        channels == 1
            ? indexConst(b, loc, 0)
            : b.create<arith::RemUIOp>(
                   loc,
                   b.create<arith::DivUIOp>(loc, i, indexConst(b, loc, inner)),
                   indexConst(b, loc, channels))
                  .getResult();
    Value x = toFloat(b, b.create<memref::LoadOp>(loc, qs, ValueRange{i}));
    if (zeros)
      x = b.create<arith::SubFOp>(
          loc, x,
          toFloat(b, b.create<memref::LoadOp>(loc, zeros, ValueRange{c})));
    x = b.create<arith::MulFOp>(
        loc, x, b.create<memref::LoadOp>(loc, scales, ValueRange{c}));
    b.create<memref::StoreOp>(loc, x, outs, ValueRange{i});
  });
}

} // namespace

TargetLowering selectDequantize(Operation *op, OpLoweringContext &ctx,
                                SelectionState &state) {
  if (op->getName().getStringRef() != "graph.dequantize" ||
      !state.cpu.has(MLCC_CPU_AVX512_VNNI) || !isF32Tensor(op->getResult(0)))
    return TargetLowering::Declined;
  Value result = op->getResult(0);
  Dequantized d;
  if (result.use_empty() || !llvm::all_of(result.getUsers(), int8Consumer) ||
      !dequantizedFrom(ctx, result, d))
    return TargetLowering::Declined;
  Value q = op->getOperand(0), scale = op->getOperand(1),
        zero = op->getOperand(2);
  bool unsignedQ = isUnsignedTensor(q);
  ctx.deferBuffer(result, [&ctx, q, scale, zero, d, unsignedQ](Value out) {
    emitDequantize(ctx, q, scale, zero, d, unsignedQ, out);
  });
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
