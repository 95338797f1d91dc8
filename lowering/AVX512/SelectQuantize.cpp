//===- SelectQuantize.cpp - QuantizeLinear -> an AVX-512 kernel -----------===//
//
// A graph.quantize from f32 to u8 or s8 runs as one generated kernel
// (Kernels/Quantize.h): per tensor, its scale and zero point constants in
// the code or, when they are graph inputs, read as it runs; per slice of
// its axis, the scales and zero points read from their buffers. When its
// input is held in NCHW16c (a conv's output), it quantises the blocked
// buffer and its result stays blocked: the int8 convs (SelectQuantConv.cpp)
// read their input from there, so a conv chain never goes through NCHW.
// The padding lanes quantise whatever they hold; the int8 convs give them
// weights equal to the zero point, so they add nothing.
//
//===----------------------------------------------------------------------===//

#include "BlockedLayout.h"
#include "KernelABI.h"
#include "QuantSelection.h"
#include "Quantize.h"
#include "SelectionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace mlcc::avx512 {

TargetLowering selectQuantize(Operation *op, OpLoweringContext &ctx,
                              SelectionState &state) {
  if (op->getName().getStringRef() != "graph.quantize" ||
      op->getNumOperands() < 2)
    return TargetLowering::Declined;
  Value x = op->getOperand(0), result = op->getResult(0);
  Value scale = op->getOperand(1);
  Value zeroPoint = op->getNumOperands() > 2 ? op->getOperand(2) : Value();
  QuantizeSpec spec;
  std::vector<int32_t> zero{0};
  if (!isF32Tensor(x) || !isInt8Tensor(result))
    return TargetLowering::Declined;
  // Per slice of the axis: [outer, channels, inner], the scales and zero
  // points read from their buffers when the kernel runs.
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t axis = intAttr(op, "axis", 1);
  if (axis < 0)
    axis += rank;
  auto scaleType = dyn_cast<RankedTensorType>(scale.getType());
  if (scaleType && scaleType.getRank() == 1 && axis >= 0 && axis < rank &&
      scaleType.getNumElements() == shape[axis] && shape[axis] > 1) {
    if (!runtimeScalars(scale, shape[axis], false) ||
        (zeroPoint && !runtimeScalars(zeroPoint, shape[axis], true)))
      return TargetLowering::Declined;
    spec.runtimeParameters = true;
    spec.channels = shape[axis];
    for (int64_t i = 0; i < axis; ++i)
      spec.outer *= shape[i];
    spec.n = 1;
    for (int64_t i = axis + 1; i < rank; ++i)
      spec.n *= shape[i];
  } else if (!constantScalar(ctx, scale, spec.scale) ||
             (zeroPoint && !constantInts(ctx, zeroPoint, zero)) ||
             zero.size() != 1) {
    // Read when the kernel runs: one scale and one zero point.
    if (!runtimeScalars(scale, 1, false) ||
        (zeroPoint && !runtimeScalars(zeroPoint, 1, true)))
      return TargetLowering::Declined;
    spec.runtimeParameters = true;
  }
  spec.name = nodeName(op);
  spec.zero = zero[0];
  spec.signedOutput = !isUnsignedTensor(result);

  auto held = state.blocked.find(x);
  bool perSlice = spec.channels > 1;
  bool blocked = held != state.blocked.end() && !perSlice;
  Value src = blocked ? held->second : ctx.buffer(x);
  Value dst;
  if (blocked) {
    auto plain =
        MemRefType::get(shapeOf(result), ctx.builder().getIntegerType(8));
    dst = ctx.allocate(blockedType(plain), result);
  } else {
    dst = ctx.buffer(result);
  }
  if (!perSlice)
    spec.n = cast<MemRefType>(src.getType()).getNumElements();
  std::vector<uint8_t> code;
  if (ref::Status s = generateQuantize(spec, code); s.failed())
    return failed(op, s);
  std::string symbol = ctx.addKernel(spec.name + "_quantize", std::move(code));
  // mlcc_eltwise_args: src[4], dst, n.
  OpBuilder &b = ctx.builder();
  Value zero64 = b.create<arith::ConstantIntOp>(ctx.loc(), 0, 64);
  SmallVector<Value> fields(MLCC_ELTWISE_MAX_SRC, zero64);
  fields[0] = ctx.address(src);
  if (spec.runtimeParameters) {
    fields[1] = ctx.address(ctx.buffer(scale));
    if (zeroPoint && !isa<NoneType>(zeroPoint.getType()))
      fields[2] = ctx.address(ctx.buffer(zeroPoint));
  }
  fields.push_back(ctx.address(dst));
  fields.push_back(b.create<arith::ConstantIntOp>(
      ctx.loc(), spec.outer * spec.channels * spec.n, 64));
  ctx.callKernel(symbol, fields);
  if (blocked)
    setBlockedResult(result, dst, ctx, state);
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
