//===- SelectPool.cpp - Pooling ops -> AVX-512 kernels --------------------===//
//
// 2-D max/average pooling and the global pools on f32 NCHW, with explicit
// pads (auto_pad NOTSET) and no indices output; the window, strides and pads
// are baked into the generated code.
//
//===----------------------------------------------------------------------===//

#include "KernelABI.h"
#include "Pool.h"
#include "SelectionUtils.h"

using namespace mlir;

namespace mlcc::avx512 {

TargetLowering selectPool(Operation *op, OpLoweringContext &ctx,
                              SelectionState &) {
  StringRef name = op->getName().stripDialect();
  PoolSpec spec;
  if (name == "max_pool")
    spec.kind = PoolKind::Max;
  else if (name == "average_pool")
    spec.kind = PoolKind::Average;
  else if (name == "global_max_pool")
    spec.kind = PoolKind::GlobalMax;
  else if (name == "global_average_pool")
    spec.kind = PoolKind::GlobalAverage;
  else
    return TargetLowering::Declined;
  Value x = op->getOperand(0), y = op->getResult(0);
  if (!isF32Tensor(x) || shapeOf(x).size() != 4)
    return TargetLowering::Declined;
  for (unsigned i = 1; i < op->getNumResults(); ++i)
    if (!isa<NoneType>(op->getResult(i).getType()))
      return TargetLowering::Declined;
  ArrayRef<int64_t> shape = shapeOf(x);
  spec.name = nodeName(op);
  spec.n = shape[0];
  spec.c = shape[1];
  spec.h = shape[2];
  spec.w = shape[3];
  if (spec.kind == PoolKind::Max || spec.kind == PoolKind::Average) {
    if (stringAttr(op, "auto_pad", "NOTSET") != "NOTSET" ||
        intAttr(op, "storage_order", 0) != 0)
      return TargetLowering::Declined;
    std::vector<int64_t> kernel = intsAttr(op, "kernel_shape"),
                         strides = intsAttr(op, "strides"),
                         dilations = intsAttr(op, "dilations"),
                         pads = intsAttr(op, "pads");
    if (kernel.size() != 2 || (!strides.empty() && strides.size() != 2) ||
        (!dilations.empty() && dilations.size() != 2) ||
        (!pads.empty() && pads.size() != 4))
      return TargetLowering::Declined;
    for (int i = 0; i < 2; ++i) {
      spec.kernel[i] = kernel[i];
      spec.strides[i] = strides.empty() ? 1 : strides[i];
      spec.dilations[i] = dilations.empty() ? 1 : dilations[i];
    }
    // ONNX pads are (top, left, bottom, right), as PoolSpec's.
    for (int i = 0; i < 4 && !pads.empty(); ++i)
      spec.pads[i] = pads[i];
    spec.ceilMode = intAttr(op, "ceil_mode", 0) != 0;
    spec.countIncludePad = intAttr(op, "count_include_pad", 0) != 0;
  }
  int64_t oh, ow;
  if (poolOutputSize(spec, oh, ow).failed() ||
      shapeOf(y) != ArrayRef<int64_t>{spec.n, spec.c, oh, ow})
    return TargetLowering::Declined;
  std::vector<uint8_t> code;
  if (ref::Status s = generatePool(spec, code); s.failed())
    return failed(op, s);
  std::string symbol = ctx.addKernel(spec.name, std::move(code));
  // mlcc_pool_args: src, dst.
  ctx.callKernel(symbol, {ctx.address(ctx.buffer(x)),
                          ctx.address(ctx.buffer(y))});
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
