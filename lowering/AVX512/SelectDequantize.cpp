//===- SelectDequantize.cpp - DequantizeLinear, computed only if read -----===//
//
// DequantizeLinear from u8, s8 or int32 runs as a generated kernel
// (Kernels/Quantize.h), per tensor or per slice of its axis, its scales and
// zero points read from their buffers (constants or graph inputs). A
// per-tensor one whose input is held in NCHW16c (a blocked QuantizeLinear's
// result) dequantizes the blocked buffer, and its result stays blocked.
//
// In a QDQ graph every quantised layer reads its input and its weight
// through a DequantizeLinear, and the int8 selectors (SelectQdqGemm.cpp,
// SelectQuantConv.cpp) read the quantised tensors instead: computing the
// f32 values would be a pass over every activation and, for the weights,
// over every weight at every run. So on a --cpu with AVX512-VNNI, a
// dequantize whose users are all ops those selectors may take writes
// nothing; its f32 buffer is made (by the kernel, where it is needed)
// only if a user is lowered some other way after all. The quantised input
// lives as long as the result (HostBuilder::computeLastUses), so it is
// still there then.
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

namespace {

bool int8Consumer(Operation *user) {
  StringRef name = user->getName().stripDialect();
  return name == "matmul" || name == "gemm" || name == "fc" || name == "conv" ||
         name == "fused_conv";
}

/// The kernel's view of `op`: [outer, channels, inner] of its input, and
/// the input's type; false for anything else (a scale that is neither one
/// value nor one per slice of the axis, a zero point of another count).
bool planDequantize(Operation *op, DequantizeSpec &spec) {
  Value q = op->getOperand(0), scale = op->getOperand(1),
        zero = op->getOperand(2), y = op->getResult(0);
  auto qType = dyn_cast<RankedTensorType>(q.getType());
  auto scaleType = dyn_cast<RankedTensorType>(scale.getType());
  if (!isF32Tensor(y) || !qType || !qType.hasStaticShape() || !scaleType ||
      !scaleType.hasStaticShape() || !scaleType.getElementType().isF32() ||
      scaleType.getRank() > 1)
    return false;
  Type element = qType.getElementType();
  if (isInt8Tensor(q))
    spec.type = isUnsignedTensor(q) ? QuantizedType::U8 : QuantizedType::S8;
  else if (element.isInteger(32) && !element.isUnsignedInteger())
    spec.type = QuantizedType::I32;
  else
    return false;
  spec.hasZero = !isa<NoneType>(zero.getType());
  if (spec.hasZero) {
    auto zeroType = dyn_cast<RankedTensorType>(zero.getType());
    if (!zeroType || zeroType.getElementType() != element ||
        !zeroType.hasStaticShape() ||
        zeroType.getNumElements() != scaleType.getNumElements())
      return false;
  }
  ArrayRef<int64_t> shape = qType.getShape();
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t count = scaleType.getNumElements();
  spec.outer = 1;
  spec.channels = 1;
  spec.inner = qType.getNumElements();
  if (count == 1 && scaleType.getRank() == 0)
    return true;
  int64_t axis = intAttr(op, "axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank || shape[axis] != count)
    return count == 1;
  spec.channels = count;
  spec.inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    spec.outer *= shape[i];
  for (int64_t i = axis + 1; i < rank; ++i)
    spec.inner *= shape[i];
  return spec.outer > 0;
}

/// Calls the kernel of `spec` on `src` into `dst`.
bool emitDequantize(Operation *op, OpLoweringContext &ctx,
                    const DequantizeSpec &spec, Value src, Value dst) {
  std::vector<uint8_t> code;
  if (ref::Status s = generateDequantize(spec, code); s.failed()) {
    (void)failed(op, s);
    return false;
  }
  std::string symbol =
      ctx.addKernel(spec.name + "_dequantize", std::move(code));
  // mlcc_eltwise_args: src[4], dst, n.
  OpBuilder &b = ctx.builder();
  Value zero64 = b.create<arith::ConstantIntOp>(ctx.loc(), 0, 64);
  SmallVector<Value> fields(MLCC_ELTWISE_MAX_SRC, zero64);
  fields[0] = ctx.address(src);
  fields[1] = ctx.address(ctx.buffer(op->getOperand(1)));
  if (spec.hasZero)
    fields[2] = ctx.address(ctx.buffer(op->getOperand(2)));
  fields.push_back(ctx.address(dst));
  fields.push_back(b.create<arith::ConstantIntOp>(
      ctx.loc(), spec.outer * spec.channels * spec.inner, 64));
  ctx.callKernel(symbol, fields);
  return true;
}

} // namespace

TargetLowering selectDequantize(Operation *op, OpLoweringContext &ctx,
                                SelectionState &state) {
  DequantizeSpec spec;
  if (op->getName().getStringRef() != "graph.dequantize" ||
      op->getNumOperands() < 3 || !planDequantize(op, spec))
    return TargetLowering::Declined;
  spec.name = nodeName(op);
  Value q = op->getOperand(0), result = op->getResult(0);
  Dequantized d;
  if (state.cpu.has(MLCC_CPU_AVX512_VNNI) && !result.use_empty() &&
      llvm::all_of(result.getUsers(), int8Consumer) &&
      dequantizedFrom(ctx, result, d)) {
    ctx.deferBuffer(result, [op, &ctx, spec, q](Value out) {
      (void)emitDequantize(op, ctx, spec, ctx.buffer(q), out);
    });
    return TargetLowering::Lowered;
  }
  auto held = state.blocked.find(q);
  bool blocked = held != state.blocked.end() && spec.channels == 1;
  Value src = blocked ? held->second : ctx.buffer(q);
  Value dst;
  if (blocked) {
    auto plain = MemRefType::get(shapeOf(result), ctx.builder().getF32Type());
    dst = ctx.allocate(blockedType(plain), result);
    spec.inner = cast<MemRefType>(src.getType()).getNumElements();
  } else {
    dst = ctx.buffer(result);
  }
  if (!emitDequantize(op, ctx, spec, src, dst))
    return TargetLowering::Failed;
  if (blocked)
    setBlockedResult(result, dst, ctx, state);
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
