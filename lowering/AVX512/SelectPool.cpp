//===- SelectPool.cpp - Pooling ops -> AVX-512 kernels --------------------===//
//
// 2-D and 1-D max/average pooling and the global pools on f32 NCHW (or
// NCL: a 1-D pool is the 2-D one of an image one row high), with explicit
// pads (auto_pad NOTSET) and no indices output; the window, strides and pads
// are baked into the generated code. An input held in NCHW16c (a conv's
// output) is pooled in that layout, and the result stays blocked; there
// the planes are split over the threads.
//
//===----------------------------------------------------------------------===//

#include "BlockedLayout.h"
#include "ChunkedKernelCalls.h"
#include "Conv.h"
#include "KernelABI.h"
#include "Pool.h"
#include "SelectionUtils.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// Input bytes from which a blocked pool is split over the threads.
constexpr int64_t kThreadedPoolBytes = int64_t(256) << 10;
/// Chunks of planes it is split into, at most.
constexpr int64_t kPoolChunks = 8;

/// The pool over NCHW16c: its planes (an image's 16 channels) are
/// independent and contiguous in input and output, so on several threads
/// chunks of planes run a kernel generated for one chunk (and one for a
/// smaller last chunk).
TargetLowering lowerBlockedPool(Operation *op, OpLoweringContext &ctx,
                                SelectionState &state, const PoolSpec &spec,
                                int64_t outPlane) {
  Value x = op->getOperand(0), y = op->getResult(0);
  auto generate = [&](int64_t planes, StringRef suffix, std::string &symbol) {
    PoolSpec part = spec;
    if (planes) {
      part.n = 1;
      part.c = planes * kConvBlock;
    }
    return addGeneratedKernel(op, ctx, generateBlockedPool, part,
                              spec.name + suffix.str(), symbol);
  };
  ChunkedKernels kernels;
  if (!generate(0, "_blocked", kernels.whole))
    return TargetLowering::Failed;
  Value yBlocked = allocateBlocked(y, ctx, state);
  // mlcc_pool_args: src, dst.
  SmallVector<Value> fields{ctx.address(state.blocked[x]),
                            ctx.address(yBlocked)};
  const int64_t planes = spec.n * convBlocks(spec.c);
  const int64_t inPlaneBytes = spec.h * spec.w * kConvBlock * 4;
  if (ctx.oneThread() || planes < 2 ||
      planes * inPlaneBytes < kThreadedPoolBytes) {
    ctx.callKernel(kernels.whole, fields);
  } else {
    const int64_t most = std::min(planes, kPoolChunks);
    const int64_t perChunk = (planes + most - 1) / most;
    kernels.chunks = (planes + perChunk - 1) / perChunk;
    const int64_t last = planes - (kernels.chunks - 1) * perChunk;
    if (!generate(perChunk, "_planes", kernels.chunk) ||
        (last != perChunk && !generate(last, "_planes", kernels.tail)))
      return TargetLowering::Failed;
    emitChunkedKernelCalls(ctx, kernels, fields,
                           {perChunk * inPlaneBytes,
                            perChunk * outPlane * kConvBlock * 4});
  }
  setBlockedResult(y, yBlocked, ctx, state);
  return TargetLowering::Lowered;
}

} // namespace

TargetLowering selectPool(Operation *op, OpLoweringContext &ctx,
                          SelectionState &state) {
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
  ArrayRef<int64_t> shape = shapeOf(x);
  // Spatial axes: 2, or 1 (taken as H = 1).
  const size_t axes = shape.size() - 2;
  if (!isF32Tensor(x) || (axes != 1 && axes != 2))
    return TargetLowering::Declined;
  for (unsigned i = 1; i < op->getNumResults(); ++i)
    if (!isa<NoneType>(op->getResult(i).getType()))
      return TargetLowering::Declined;
  spec.name = nodeName(op);
  spec.n = shape[0];
  spec.c = shape[1];
  spec.h = axes == 2 ? shape[2] : 1;
  spec.w = shape.back();
  if (spec.kind == PoolKind::Max || spec.kind == PoolKind::Average) {
    if (stringAttr(op, "auto_pad", "NOTSET") != "NOTSET" ||
        intAttr(op, "storage_order", 0) != 0)
      return TargetLowering::Declined;
    std::vector<int64_t> kernel = intsAttr(op, "kernel_shape"),
                         strides = intsAttr(op, "strides"),
                         dilations = intsAttr(op, "dilations"),
                         pads = intsAttr(op, "pads");
    if (kernel.size() != axes ||
        (!strides.empty() && strides.size() != axes) ||
        (!dilations.empty() && dilations.size() != axes) ||
        (!pads.empty() && pads.size() != 2 * axes))
      return TargetLowering::Declined;
    // Axis i of the op is PoolSpec's axis first + i (1-D: W).
    const size_t first = 2 - axes;
    for (size_t i = 0; i < axes; ++i) {
      spec.kernel[first + i] = kernel[i];
      spec.strides[first + i] = strides.empty() ? 1 : strides[i];
      spec.dilations[first + i] = dilations.empty() ? 1 : dilations[i];
      // ONNX pads are the begins, then the ends; PoolSpec's (top, left,
      // bottom, right).
      if (!pads.empty()) {
        spec.pads[first + i] = pads[i];
        spec.pads[2 + first + i] = pads[axes + i];
      }
    }
    spec.ceilMode = intAttr(op, "ceil_mode", 0) != 0;
    spec.countIncludePad = intAttr(op, "count_include_pad", 0) != 0;
  }
  int64_t oh, ow;
  if (poolOutputSize(spec, oh, ow).failed())
    return TargetLowering::Declined;
  SmallVector<int64_t> expected{spec.n, spec.c};
  if (axes == 2)
    expected.push_back(oh);
  expected.push_back(ow);
  if (shapeOf(y) != ArrayRef<int64_t>(expected) || (axes == 1 && oh != 1))
    return TargetLowering::Declined;
  // A conv's output still in NCHW16c is pooled so, and stays blocked.
  if (state.blocked.count(x))
    return lowerBlockedPool(op, ctx, state, spec, oh * ow);
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
