//===- SelectNormalization.cpp - Softmax and LayerNorm -> AVX-512 kernels -===//
//
// Over the last axis only, which is where models put them (attention
// scores, classifier logits, transformer hidden states): rows x cols with
// every row contiguous. Other axes go to the portable lowering.
// graph.skip_layer_norm is layer_norm's kernel reading a second row.
//
//===----------------------------------------------------------------------===//

#include "KernelABI.h"
#include "Normalization.h"
#include "SelectionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

bool isLastAxis(Operation *op, Value x, int64_t fallback) {
  int64_t rank = shapeOf(x).size();
  int64_t axis = intAttr(op, "axis", fallback);
  return rank > 0 && (axis == rank - 1 || axis == -1);
}

TargetLowering selectSoftmax(Operation *op, OpLoweringContext &ctx, bool log) {
  Value x = op->getOperand(0), y = op->getResult(0);
  if (!isF32Tensor(x) || !isLastAxis(op, x, -1))
    return TargetLowering::Declined;
  SoftmaxSpec spec;
  spec.name = nodeName(op);
  spec.log = log;
  spec.cols = shapeOf(x).back();
  spec.rows = spec.cols ? numElements(x) / spec.cols : 0;
  if (spec.rows == 0 || spec.cols == 0)
    return TargetLowering::Declined;
  std::vector<uint8_t> code;
  if (ref::Status s = generateSoftmax(spec, code); s.failed())
    return failed(op, s);
  std::string symbol = ctx.addKernel(spec.name, std::move(code));
  // mlcc_softmax_args: src, dst.
  ctx.callKernel(symbol, {ctx.address(ctx.buffer(x)),
                          ctx.address(ctx.buffer(y))});
  return TargetLowering::Lowered;
}

/// graph.layer_norm (X, Scale, B) or graph.skip_layer_norm (X, Skip,
/// Scale, B).
TargetLowering selectLayerNorm(Operation *op, OpLoweringContext &ctx,
                               bool hasSkip) {
  unsigned first = hasSkip ? 2 : 1;
  Value x = op->getOperand(0), scale = op->getOperand(first),
        bias = op->getOperand(first + 1), y = op->getResult(0);
  for (unsigned i = 1; i < op->getNumResults(); ++i)
    if (!isa<NoneType>(op->getResult(i).getType()))
      return TargetLowering::Declined;
  if (!isF32Tensor(x) || !isF32Tensor(scale) || !isLastAxis(op, x, -1))
    return TargetLowering::Declined;
  if (hasSkip && op->getOperand(1).getType() != x.getType())
    return TargetLowering::Declined;
  LayerNormSpec spec;
  spec.name = nodeName(op);
  spec.cols = shapeOf(x).back();
  spec.rows = spec.cols ? numElements(x) / spec.cols : 0;
  // With a range of lengths, the rows of the run's positions only.
  Value rows = spec.rows ? lengthRows(op, ctx, y, spec.rows) : Value();
  spec.runTimeRows = static_cast<bool>(rows);
  spec.epsilon = floatAttr(op, "epsilon", 1e-5f);
  spec.skip = hasSkip;
  bool hasBias = !isa<NoneType>(bias.getType());
  if (spec.rows == 0 || numElements(scale) != spec.cols ||
      (hasBias && (!isF32Tensor(bias) || numElements(bias) != spec.cols)))
    return TargetLowering::Declined;
  std::vector<uint8_t> code;
  if (ref::Status s = generateLayerNorm(spec, code); s.failed())
    return failed(op, s);
  std::string symbol = ctx.addKernel(spec.name, std::move(code));
  Value beta = hasBias ? ctx.address(ctx.buffer(bias))
                       : ctx.addData(spec.name + "_zero_bias",
                                     bytesOf(std::vector<float>(spec.cols)));
  // mlcc_layer_norm_args: src, gamma, beta, dst, skip.
  SmallVector<Value> args = {ctx.address(ctx.buffer(x)),
                             ctx.address(ctx.buffer(scale)), beta,
                             ctx.address(ctx.buffer(y))};
  if (hasSkip || rows)
    args.push_back(
        hasSkip ? ctx.address(ctx.buffer(op->getOperand(1)))
                : ctx.builder().create<arith::ConstantIntOp>(ctx.loc(), 0, 64));
  if (rows)
    args.push_back(rows);
  ctx.callKernel(symbol, args);
  return TargetLowering::Lowered;
}

} // namespace

TargetLowering selectNormalization(Operation *op, OpLoweringContext &ctx,
                              SelectionState &) {
  StringRef name = op->getName().stripDialect();
  if (name == "softmax" || name == "log_softmax")
    return selectSoftmax(op, ctx, name == "log_softmax");
  if (name == "layer_norm" || name == "skip_layer_norm")
    return selectLayerNorm(op, ctx, name == "skip_layer_norm");
  return TargetLowering::Declined;
}

} // namespace mlcc::avx512
