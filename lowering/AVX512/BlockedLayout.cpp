//===- BlockedLayout.cpp - NCHW <-> NCHW16c in the host code --------------===//

#include "BlockedLayout.h"
#include "Conv.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mlcc::avx512 {

MemRefType blockedType(MemRefType plain) {
  ArrayRef<int64_t> s = plain.getShape();
  return MemRefType::get({s[0], convBlocks(s[1]), s[2], s[3], kConvBlock},
                         plain.getElementType());
}

namespace {

/// Calls body(b, loc, n, c, h, w) in loops over n < N, cBegin <= c < cEnd,
/// h < H, w < W, w innermost.
template <typename Body>
void forEachNCHW(OpBuilder &b, Location loc, ArrayRef<int64_t> nhw,
                 int64_t cBegin, int64_t cEnd, Body body) {
  auto c = [&](int64_t v) -> Value {
    return b.create<arith::ConstantIndexOp>(loc, v);
  };
  SmallVector<Value> lbs{c(0), c(cBegin), c(0), c(0)};
  SmallVector<Value> ubs{c(nhw[0]), c(cEnd), c(nhw[1]), c(nhw[2])};
  SmallVector<Value> steps(4, c(1));
  scf::buildLoopNest(b, loc, lbs, ubs, steps,
                     [&](OpBuilder &nb, Location l, ValueRange iv) {
                       body(nb, l, iv[0], iv[1], iv[2], iv[3]);
                     });
}

/// (c / 16, c % 16) as indices.
std::pair<Value, Value> splitChannel(OpBuilder &b, Location loc, Value c) {
  Value block = b.create<arith::ConstantIndexOp>(loc, kConvBlock);
  return {b.create<arith::DivUIOp>(loc, c, block),
          b.create<arith::RemUIOp>(loc, c, block)};
}

} // namespace

void emitToBlocked(OpBuilder &b, Location loc, Value plain, Value blocked) {
  ArrayRef<int64_t> s = cast<MemRefType>(plain.getType()).getShape();
  forEachNCHW(b, loc, {s[0], s[2], s[3]}, 0, s[1],
              [&](OpBuilder &nb, Location l, Value n, Value c, Value h,
                  Value w) {
                Value v = nb.create<memref::LoadOp>(l, plain,
                                                    ValueRange{n, c, h, w});
                auto [cb, lane] = splitChannel(nb, l, c);
                nb.create<memref::StoreOp>(l, v, blocked,
                                           ValueRange{n, cb, h, w, lane});
              });
  int64_t padded = convBlocks(s[1]) * kConvBlock;
  if (padded == s[1])
    return;
  forEachNCHW(b, loc, {s[0], s[2], s[3]}, s[1], padded,
              [&](OpBuilder &nb, Location l, Value n, Value c, Value h,
                  Value w) {
                Value zero = nb.create<arith::ConstantOp>(
                    l, nb.getZeroAttr(
                           cast<MemRefType>(plain.getType()).getElementType()));
                auto [cb, lane] = splitChannel(nb, l, c);
                nb.create<memref::StoreOp>(l, zero, blocked,
                                           ValueRange{n, cb, h, w, lane});
              });
}

void emitFromBlocked(OpBuilder &b, Location loc, Value blocked, Value plain) {
  ArrayRef<int64_t> s = cast<MemRefType>(plain.getType()).getShape();
  forEachNCHW(b, loc, {s[0], s[2], s[3]}, 0, s[1],
              [&](OpBuilder &nb, Location l, Value n, Value c, Value h,
                  Value w) {
                auto [cb, lane] = splitChannel(nb, l, c);
                Value v = nb.create<memref::LoadOp>(
                    l, blocked, ValueRange{n, cb, h, w, lane});
                nb.create<memref::StoreOp>(l, v, plain,
                                           ValueRange{n, c, h, w});
              });
}

Value blockedOperand(Value v, OpLoweringContext &ctx, SelectionState &state) {
  auto it = state.blocked.find(v);
  if (it != state.blocked.end())
    return it->second;
  Value plain = ctx.buffer(v);
  Value blocked =
      ctx.allocate(blockedType(cast<MemRefType>(plain.getType())), v);
  emitToBlocked(ctx.builder(), ctx.loc(), plain, blocked);
  state.blocked[v] = blocked;
  return blocked;
}

void setBlockedResult(Value v, Value blocked, OpLoweringContext &ctx,
                      SelectionState &state) {
  state.blocked[v] = blocked;
  ctx.deferBuffer(v, [&ctx, blocked](Value plain) {
    emitFromBlocked(ctx.builder(), ctx.loc(), blocked, plain);
  });
}

} // namespace mlcc::avx512
