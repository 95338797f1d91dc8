//===- SelectConv.cpp - Conv -> AVX-512 direct convolution kernels --------===//
//
// f32 2-D convolution, dense (group 1) or depthwise, with constant weights
// (packed now into OIhw16i16o) and explicit pads: the input is reordered to
// NCHW16c in a scratch buffer, the generated kernel runs, and the output is
// reordered back.
//
//===----------------------------------------------------------------------===//

#include "BlockedLayout.h"
#include "ChunkedKernelCalls.h"
#include "Conv.h"
#include "KernelABI.h"
#include "SelectionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// Fills the spec's geometry from the op; false for what the kernel does
/// not cover.
bool planConv(Operation *op, ConvSpec &spec) {
  ArrayRef<int64_t> x = shapeOf(op->getOperand(0)),
                    w = shapeOf(op->getOperand(1));
  if (x.size() != 4 || w.size() != 4)
    return false;
  std::string autoPad = stringAttr(op, "auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID")
    return false;
  std::vector<int64_t> strides = intsAttr(op, "strides"),
                       dilations = intsAttr(op, "dilations"),
                       pads = intsAttr(op, "pads");
  if ((!strides.empty() && strides.size() != 2) ||
      (!dilations.empty() && dilations.size() != 2) ||
      (!pads.empty() && pads.size() != 4))
    return false;
  spec.n = x[0];
  spec.c = x[1];
  spec.h = x[2];
  spec.w = x[3];
  spec.oc = w[0];
  spec.kernel[0] = w[2];
  spec.kernel[1] = w[3];
  for (int i = 0; i < 2; ++i) {
    spec.strides[i] = strides.empty() ? 1 : strides[i];
    spec.dilations[i] = dilations.empty() ? 1 : dilations[i];
  }
  for (int i = 0; i < 4 && !pads.empty() && autoPad == "NOTSET"; ++i)
    spec.pads[i] = pads[i];
  spec.group = intAttr(op, "group", 1);
  bool depthwise = spec.group == spec.c && spec.oc == spec.c && w[1] == 1;
  return spec.group == 1 ? w[1] == spec.c : depthwise && spec.group > 1;
}

/// On a pool of several threads, the output channel blocks are split over
/// the threads, each block computed by a kernel generated for 16 output
/// channels (and one for a last, narrower block) at offsets into the
/// weights, bias and output; on one thread the whole-conv kernel runs.
LogicalResult emitThreadedConv(Operation *op, OpLoweringContext &ctx,
                               const ConvSpec &spec, StringRef wholeKernel,
                               ArrayRef<Value> fields) {
  int64_t blocks = convBlocks(spec.oc);
  auto generate = [&](int64_t oc, std::string &symbol) {
    ConvSpec part = spec;
    part.oc = oc;
    std::vector<uint8_t> code;
    if (ref::Status s = generateConv(part, code); s.failed()) {
      op->emitError() << s.message();
      return false;
    }
    symbol = ctx.addKernel(spec.name + "_block", std::move(code));
    return true;
  };
  std::string blockKernel, tailKernel;
  int64_t tail = spec.oc - (blocks - 1) * kConvBlock;
  if (!generate(kConvBlock, blockKernel) ||
      (tail != kConvBlock && !generate(tail, tailKernel)))
    return failure();
  int64_t oh, ow;
  (void)convOutputSize(spec, oh, ow);
  int64_t weightBlockBytes =
      convBlocks(spec.c) * spec.kernel[0] * spec.kernel[1] * 256 * 4;
  // src, weights, bias, dst.
  emitChunkedKernelCalls(
      ctx, {wholeKernel.str(), blockKernel, tailKernel, blocks}, fields,
      {0, weightBlockBytes, spec.bias ? kConvBlock * 4 : 0,
       oh * ow * kConvBlock * 4});
  return success();
}

} // namespace

TargetLowering selectConv(Operation *op, OpLoweringContext &ctx,
                          SelectionState &state) {
  if (op->getName().stripDialect() != "conv")
    return TargetLowering::Declined;
  Value x = op->getOperand(0), weight = op->getOperand(1),
        bias = op->getOperand(2), y = op->getResult(0);
  std::vector<float> w;
  if (!isF32Tensor(x) || !isF32Tensor(y) || !constantFloats(ctx, weight, w))
    return TargetLowering::Declined;
  bool hasBias = !isa<NoneType>(bias.getType());
  if (hasBias && !isF32Tensor(bias))
    return TargetLowering::Declined;
  ConvSpec spec;
  spec.name = nodeName(op);
  spec.bias = hasBias;
  int64_t oh, ow;
  if (!planConv(op, spec) || convOutputSize(spec, oh, ow).failed() ||
      shapeOf(y) != ArrayRef<int64_t>{spec.n, spec.oc, oh, ow})
    return TargetLowering::Declined;
  EltwiseOp act;
  Operation *activation = fusableActivation(y, ctx, act);
  if (activation)
    spec.epilogue.push_back(act);

  std::vector<float> packed;
  if (spec.group == 1)
    packConvWeights(w.data(), spec.oc, spec.c, spec.kernel[0], spec.kernel[1],
                    packed);
  else
    packDepthwiseConvWeights(w.data(), spec.c, spec.kernel[0], spec.kernel[1],
                             packed);
  std::vector<uint8_t> code;
  if (ref::Status s = generateConv(spec, code); s.failed())
    return failed(op, s);
  std::string symbol = ctx.addKernel(spec.name, std::move(code));

  // The input in NCHW16c (a previous conv's output already is); the output
  // stays blocked until an op needs it plain.
  OpBuilder &b = ctx.builder();
  Value xBlocked = blockedOperand(x, ctx, state);
  auto yType = MemRefType::get(shapeOf(y), b.getF32Type());
  Value yBlocked =
      ctx.allocate(blockedType(yType), activation ? activation->getResult(0) : y);
  Value weights = ctx.addData(spec.name + "_packed", bytesOf(packed));
  Value biasAddress = hasBias ? ctx.address(ctx.buffer(bias))
                              : b.create<arith::ConstantIntOp>(ctx.loc(), 0, 64);
  SmallVector<Value> fields{ctx.address(xBlocked), weights, biasAddress,
                            ctx.address(yBlocked)};
  // mlcc_conv_args: src, weights, bias, dst.
  if (spec.group != 1 || spec.n != 1 || convBlocks(spec.oc) < 2) {
    ctx.callKernel(symbol, fields);
  } else if (failed(emitThreadedConv(op, ctx, spec, symbol, fields))) {
    return TargetLowering::Failed;
  }
  if (activation)
    state.fused[activation] = yBlocked;
  else
    setBlockedResult(y, yBlocked, ctx, state);
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
