//===- ConvChannelPasses.cpp - A conv summed in passes over channels ------===//
//
// The direct conv kernel keeps a group of output channel blocks in
// registers and walks all of its weights for every block of output pixels.
// When a group's weights do not fit in L2 beside the input rows (ResNet-50's
// 3x3 convs on 512 channels: 590 KB per group of 32 output channels), every
// pixel block reads them again from L3, and the conv runs at half of the
// FMA peak.
//
// Such a conv runs as passes over slices of its input channel blocks, each
// a direct conv of its own (packed weights of its slice, the input moved to
// the slice's first block) whose groups fit: the first pass writes Y (plus
// the conv's residual, if any), each later one adds Y as its residual, and
// only the last applies the bias and the activation. Y is read and written
// once more per pass, a small cost beside a conv of that many weights.
//
//===----------------------------------------------------------------------===//

#include "ConvChannelPasses.h"
#include "SelectionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <algorithm>

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// The most weight bytes of one group of output channel blocks in a pass:
/// a quarter of a 1 MiB L2 (Zen 4 and 5), with room for the input rows and
/// the next group's prefetch.
constexpr int64_t kPassGroupBytes = 256 * 1024;

int64_t kernelTaps(const ConvSpec &spec) {
  return spec.depthKernel * spec.kernel[0] * spec.kernel[1];
}

} // namespace

int64_t convChannelPassBlocks(const ConvSpec &spec) {
  // One image: the kernel's image stride of X follows its own channels, so a
  // slice of a batch would step by the slice's, not the whole tensor's.
  if (spec.n != 1 || spec.group != 1 || spec.plainInput ||
      spec.dstFrame[0] != 0)
    return 0;
  // A group's weights for one input channel block: 16 x 16 per tap and
  // output block.
  const int64_t blockBytes =
      convGroupBlocks(spec) * kConvBlock * kConvBlock * kernelTaps(spec) * 4;
  const int64_t blocks = convBlocks(spec.c);
  if (blocks * blockBytes <= kPassGroupBytes)
    return 0;
  const int64_t most = std::max<int64_t>(1, kPassGroupBytes / blockBytes);
  const int64_t passes = (blocks + most - 1) / most;
  return (blocks + passes - 1) / passes;
}

LogicalResult emitConvChannelPasses(Operation *op, OpLoweringContext &ctx,
                                    const ConvSpec &spec,
                                    ArrayRef<float> weights, Value src,
                                    Value bias, Value dst, Value residual) {
  const int64_t perPass = convChannelPassBlocks(spec) * kConvBlock;
  const int64_t taps = kernelTaps(spec);
  const int64_t srcBlockBytes = spec.d * spec.h * spec.w * kConvBlock * 4;
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Value none = b.create<arith::ConstantIntOp>(loc, 0, 64);
  for (int64_t c0 = 0; c0 < spec.c; c0 += perPass) {
    const bool first = c0 == 0, last = c0 + perPass >= spec.c;
    ConvSpec part = spec;
    part.c = std::min(perPass, spec.c - c0);
    part.bias = spec.bias && last;
    part.residual = spec.residual || !first;
    if (!last)
      part.epilogue.clear();
    // [OC, C, taps] -> [OC, part.c, taps] of channels [c0, c0 + part.c).
    std::vector<float> slice(static_cast<size_t>(spec.oc * part.c * taps));
    for (int64_t o = 0; o < spec.oc; ++o)
      std::copy_n(weights.data() + (o * spec.c + c0) * taps, part.c * taps,
                  slice.data() + o * part.c * taps);
    Value partSrc =
        b.create<arith::AddIOp>(loc, src,
                                b.create<arith::ConstantIntOp>(
                                    loc, c0 / kConvBlock * srcBlockBytes, 64));
    if (failed(emitConvCalls(op, ctx, part, slice, partSrc,
                             part.bias ? bias : none, dst,
                             first ? residual : dst)))
      return failure();
  }
  return success();
}

} // namespace mlcc::avx512
