//===- SelectBatchNorm.cpp - Inference batch norms on NCHW16c -------------===//
//
// A batch norm that folding could not move into a conv (it follows a
// concat, as DenseNet's pre-activation ones do) is, in inference, a scale
// and shift per channel: on an input held in NCHW16c it runs there (the
// ChannelAffine kernel, with the activation after it fused), so the concat
// before it and the conv after it stay blocked. Without that the plain
// layout was made for it and the conv after it converted back.
//
// A squeeze-and-excitation scale (x * s, s [1, C, 1, 1] computed at run
// time) is the same kernel with the scale read from s's buffer and no
// shift (selectChannelScale). Both split big inputs over the threads by
// chunks of channel blocks.
//
//===----------------------------------------------------------------------===//

#include "BlockedLayout.h"
#include "ChannelAffine.h"
#include "ChunkedKernelCalls.h"
#include "Conv.h"
#include "KernelABI.h"
#include "SelectionUtils.h"

#include <cmath>

using namespace mlir;

namespace mlcc::avx512 {

namespace {
/// Below this much input the pool's dispatch costs more than it saves.
constexpr int64_t kThreadedBytes = int64_t(256) << 10;
/// Chunks of channel blocks a split aims for.
constexpr int64_t kChunks = 8;

/// y = act(x * scale[c] + shift[c]) on x's NCHW16c buffer (x is [N, C, H,
/// W]), an activation that is y's only user fused; the result stays
/// blocked. `scale` and `shift` are addresses of at least C floats, read
/// by whole blocks of 16.
TargetLowering emitChannelAffine(Operation *op, OpLoweringContext &ctx,
                                 SelectionState &state, Value x, Value y,
                                 Value scale, Value shift) {
  ArrayRef<int64_t> shape = shapeOf(x);
  const int64_t c = shape[1];
  ChannelAffineSpec spec;
  spec.name = nodeName(op);
  spec.n = shape[0];
  spec.c = c;
  spec.pixels = shape[2] * shape[3];
  EltwiseOp act;
  Operation *activation = fusableActivation(y, ctx, act);
  if (activation)
    spec.epilogue.push_back(act);
  auto generate = [&](const ChannelAffineSpec &part, StringRef suffix,
                      std::string &symbol) {
    return addGeneratedKernel(op, ctx, generateChannelAffine, part,
                              spec.name + suffix.str(), symbol);
  };
  ChunkedKernels kernels;
  if (!generate(spec, "", kernels.whole))
    return TargetLowering::Failed;
  Value out =
      allocateBlocked(activation ? activation->getResult(0) : y, ctx, state);
  // mlcc_channel_affine_args: src, scale, shift, dst.
  SmallVector<Value> fields{ctx.address(state.blocked[x]), scale, shift,
                            ctx.address(out)};
  // One image on several threads: chunks of channel blocks. Unsplit, the
  // thread running it also reads the half of its input that the other
  // thread's conv wrote, from that core: DenseNet's batch norms took 1.0 ms
  // of a run on 2 threads against 0.5 ms on 1, and splitting them took
  // the model from 11.6 to 11.2 ms on 2 threads (Zen 5).
  const int64_t blocks = convBlocks(c);
  const int64_t planeBytes = spec.pixels * kConvBlock * 4;
  if (ctx.oneThread() || spec.n != 1 || blocks < 2 ||
      blocks * planeBytes < kThreadedBytes) {
    ctx.callKernel(kernels.whole, fields);
  } else {
    const int64_t perChunk = (blocks + kChunks - 1) / kChunks;
    kernels.chunks = (blocks + perChunk - 1) / perChunk;
    // The kernel reads only the block count (the padding lanes' scale and
    // shift are 0): a last chunk of fewer blocks needs one of its own.
    const int64_t last = blocks - (kernels.chunks - 1) * perChunk;
    ChannelAffineSpec part = spec;
    part.c = perChunk * kConvBlock;
    if (!generate(part, "_blocks", kernels.chunk))
      return TargetLowering::Failed;
    part.c = last * kConvBlock;
    if (last != perChunk && !generate(part, "_blocks", kernels.tail))
      return TargetLowering::Failed;
    emitChunkedKernelCalls(ctx, kernels, fields,
                           {perChunk * planeBytes, perChunk * kConvBlock * 4,
                            perChunk * kConvBlock * 4, perChunk * planeBytes});
  }
  setBlockedResultOrFused(y, activation, out, ctx, state);
  return TargetLowering::Lowered;
}

} // namespace

TargetLowering selectBatchNorm(Operation *op, OpLoweringContext &ctx,
                               SelectionState &state) {
  if (op->getName().stripDialect() != "batch_norm" ||
      intAttr(op, "training_mode", 0) != 0)
    return TargetLowering::Declined;
  Value x = op->getOperand(0), y = op->getResult(0);
  for (Value statistic : op->getResults().drop_front())
    if (!isa<NoneType>(statistic.getType()) && !statistic.use_empty())
      return TargetLowering::Declined;
  if (!isF32Tensor(x) || shapeOf(x).size() != 4 || !state.blocked.count(x))
    return TargetLowering::Declined;
  ArrayRef<int64_t> shape = shapeOf(x);
  const int64_t c = shape[1];
  std::vector<float> params[4]; // scale, B, mean, var
  for (int i = 0; i < 4; ++i)
    if (!constantFloats(ctx, op->getOperand(1 + i), params[i]) ||
        static_cast<int64_t>(params[i].size()) != c)
      return TargetLowering::Declined;
  // y = x * a + b, a = scale / sqrt(var + eps), b = B - mean * a, as the
  // reference computes them (in double); the padding lanes give 0.
  const double eps = floatAttr(op, "epsilon", 1e-5f);
  std::vector<float> a(convBlocks(c) * kConvBlock, 0.0f), b(a.size(), 0.0f);
  for (int64_t ch = 0; ch < c; ++ch) {
    double scale = params[0][ch] / std::sqrt(double(params[3][ch]) + eps);
    a[ch] = static_cast<float>(scale);
    b[ch] = static_cast<float>(params[1][ch] - params[2][ch] * scale);
  }
  return emitChannelAffine(op, ctx, state, x, y,
                           ctx.addData(nodeName(op) + "_scale", bytesOf(a)),
                           ctx.addData(nodeName(op) + "_shift", bytesOf(b)));
}

TargetLowering selectChannelScale(Operation *op, OpLoweringContext &ctx,
                                  SelectionState &state) {
  if (op->getName().stripDialect() != "mul" || op->getNumOperands() != 2)
    return TargetLowering::Declined;
  Value y = op->getResult(0);
  for (int i = 0; i < 2; ++i) {
    Value x = op->getOperand(i), s = op->getOperand(1 - i);
    ArrayRef<int64_t> shape = shapeOf(x);
    if (!isF32Tensor(x) || !isF32Tensor(s) || !isF32Tensor(y) ||
        shape.size() != 4 || shape[0] != 1 || shapeOf(y) != shape ||
        !state.blocked.count(x) || ctx.constantValue(s))
      continue;
    // [1, C, 1, 1] or [C, 1, 1]: C contiguous floats. The kernel reads the
    // scale by whole blocks, so C must fill them.
    ArrayRef<int64_t> scale = shapeOf(s);
    const int64_t c = shape[1];
    if (c % kConvBlock != 0 || scale.size() < 3 || numElements(s) != c ||
        scale[scale.size() - 3] != c)
      continue;
    std::vector<float> zeros(c, 0.0f);
    return emitChannelAffine(
        op, ctx, state, x, y, ctx.address(ctx.buffer(s)),
        ctx.addData(nodeName(op) + "_shift", bytesOf(zeros)));
  }
  return TargetLowering::Declined;
}

} // namespace mlcc::avx512
