//===- SelectConcat.cpp - Channel concat in the blocked layout ------------===//
//
// A concat along the channels of NCHW activations that are all held in
// NCHW16c (conv outputs: SqueezeNet's fire modules, DenseNet, Inception)
// is, per image, its inputs' blocks one after the other, as long as every
// input but the last fills whole blocks of 16 channels. Then each image of
// each input is one contiguous copy (a memcpy) into the blocked result,
// which stays blocked for the next conv: no conversion to NCHW and back,
// which cost more than the copy itself. The last input's padding lanes
// become the result's. Better still, the producers of a one-image concat's
// inputs write their blocks into its result themselves (allocateBlocked in
// BlockedLayout.h), and only the inputs no kernel wrote so are copied.
//
//===----------------------------------------------------------------------===//

#include "BlockedLayout.h"
#include "Conv.h"
#include "SelectionUtils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// Images past which the per-image copies would bloat the host code.
constexpr int64_t kMaxImages = 64;

/// [n, first block, blocks...] of a blocked [N, CB, H, W, 16] buffer.
Value imageBlocks(OpBuilder &b, Location loc, Value blocked, int64_t n,
                  int64_t firstBlock, int64_t blocks) {
  ArrayRef<int64_t> s = cast<MemRefType>(blocked.getType()).getShape();
  SmallVector<int64_t> offsets{n, firstBlock, 0, 0, 0},
      sizes{1, blocks, s[2], s[3], s[4]}, strides(5, 1);
  return b.create<memref::SubViewOp>(loc, blocked, offsets, sizes, strides);
}

} // namespace

TargetLowering selectConcat(Operation *op, OpLoweringContext &ctx,
                            SelectionState &state) {
  if (op->getName().stripDialect() != "concat")
    return TargetLowering::Declined;
  Value result = op->getResult(0);
  // Producers already wrote into the result (allocateBlocked checked the
  // shapes): the other inputs are copied in, converted first if plain.
  auto written = state.concatBuffers.find(op);
  const bool inPlace = written != state.concatBuffers.end();
  if (!inPlace) {
    const int64_t axis = intAttr(op, "axis", 0);
    if (!isF32Tensor(result) || shapeOf(result).size() != 4 ||
        (axis != 1 && axis != -3) || shapeOf(result)[0] > kMaxImages)
      return TargetLowering::Declined;
    const unsigned count = op->getNumOperands();
    for (unsigned i = 0; i < count; ++i) {
      Value in = op->getOperand(i);
      if (!state.blocked.count(in) ||
          (i + 1 < count && shapeOf(in)[1] % kConvBlock != 0))
        return TargetLowering::Declined;
    }
  }
  Value out = inPlace ? written->second : allocateBlocked(result, ctx, state);
  OpBuilder &b = ctx.builder();
  for (int64_t n = 0; n < shapeOf(result)[0]; ++n) {
    int64_t firstBlock = 0;
    for (Value in : op->getOperands()) {
      const int64_t blocks = convBlocks(shapeOf(in)[1]);
      if (!state.writtenInPlace.count(in))
        b.create<memref::CopyOp>(
            ctx.loc(),
            imageBlocks(b, ctx.loc(), blockedOperand(in, ctx, state), n, 0,
                        blocks),
            imageBlocks(b, ctx.loc(), out, n, firstBlock, blocks));
      firstBlock += blocks;
    }
  }
  setBlockedResult(result, out, ctx, state);
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
