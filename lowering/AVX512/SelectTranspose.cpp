//===- SelectTranspose.cpp - Transpose -> AVX-512 kernels -----------------===//
//
// graph.transpose of 4-byte elements (f32, i32, u32) with static shapes that
// moves the input's last dim: Kernels/Transpose.h's tiled 2-D transposes.
// Transposes that keep the last dim (row copies), other element sizes and
// more than three outer dims after merging go to the portable lowering.
//
//===----------------------------------------------------------------------===//

#include "KernelABI.h"
#include "SelectionUtils.h"
#include "Transpose.h"

using namespace mlir;

namespace mlcc::avx512 {

TargetLowering selectTranspose(Operation *op, OpLoweringContext &ctx,
                               SelectionState &) {
  if (op->getName().stripDialect() != "transpose")
    return TargetLowering::Declined;
  Value x = op->getOperand(0), y = op->getResult(0);
  auto type = dyn_cast<RankedTensorType>(x.getType());
  if (!type || !type.hasStaticShape() ||
      !type.getElementType().isIntOrFloat() ||
      type.getElementType().getIntOrFloatBitWidth() != 32)
    return TargetLowering::Declined;
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  std::vector<int64_t> perm = intsAttr(op, "perm");
  if (perm.empty())
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d)
      perm.push_back(d);
  for (int64_t &d : perm)
    if (d < 0)
      d += static_cast<int64_t>(shape.size());
  TransposeSpec spec;
  if (!planTranspose(shape, perm, spec))
    return TargetLowering::Declined;
  spec.name = nodeName(op);
  std::vector<uint8_t> code;
  if (ref::Status s = generateTranspose(spec, code); s.failed())
    return TargetLowering::Declined; // strides past 2 GiB: portable
  std::string symbol = ctx.addKernel(spec.name, std::move(code));
  // mlcc_transpose_args: src, dst.
  ctx.callKernel(symbol,
                 {ctx.address(ctx.buffer(x)), ctx.address(ctx.buffer(y))});
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
