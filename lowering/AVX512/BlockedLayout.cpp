//===- BlockedLayout.cpp - NCHW <-> NCHW16c in the host code --------------===//
//
// A conversion between the layouts is a reorder kernel (BlockedReorder.h)
// for tensors of 32-bit elements, else loops in the host code: the loops,
// an element at a time, took 0.12 ms of UNet's 0.95 at batch 2 (its one
// conversion, after a concat of a Resize's output; Zen 5).
//
//===----------------------------------------------------------------------===//

#include "BlockedLayout.h"
#include "BlockedReorder.h"
#include "Conv.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// [N, C, H, W] of a plain [N, C, L], [N, C, H, W] or [N, C, D, H, W]: a
/// 1-D conv's tensor is blocked as one row, a 3-D conv's as D x H rows.
SmallVector<int64_t, 4> rowsShape(ArrayRef<int64_t> s) {
  if (s.size() == 3)
    return {s[0], s[1], 1, s[2]};
  if (s.size() == 5)
    return {s[0], s[1], s[2] * s[3], s[4]};
  return SmallVector<int64_t, 4>(s);
}

/// The plain tensor's indices of row `h` (of rowsShape) and pixel `w`.
SmallVector<Value> plainIndices(OpBuilder &b, Location loc,
                                ArrayRef<int64_t> s, Value n, Value c, Value h,
                                Value w) {
  if (s.size() == 3)
    return {n, c, w};
  if (s.size() != 5)
    return {n, c, h, w};
  Value rows = b.create<arith::ConstantIndexOp>(loc, s[3]);
  return {n, c, b.create<arith::DivUIOp>(loc, h, rows),
          b.create<arith::RemUIOp>(loc, h, rows), w};
}

} // namespace

MemRefType blockedType(MemRefType plain) {
  SmallVector<int64_t, 4> s = rowsShape(plain.getShape());
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

/// Converts between `plain` and `blocked` (to the blocked layout with
/// `toBlocked`) with a reorder kernel; false when the tensor is not one a
/// kernel takes.
bool callReorderKernel(OpLoweringContext &ctx, Value plain, Value blocked,
                       bool toBlocked) {
  auto type = cast<MemRefType>(plain.getType());
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      type.getElementTypeBitWidth() != 32)
    return false;
  SmallVector<int64_t, 4> s = rowsShape(type.getShape());
  BlockedReorderSpec spec;
  spec.n = s[0];
  spec.c = s[1];
  spec.pixels = s[2] * s[3];
  spec.toBlocked = toBlocked;
  std::vector<uint8_t> code;
  if (generateBlockedReorder(spec, code).failed())
    return false;
  std::string symbol =
      ctx.addKernel(toBlocked ? "to_nchw16c" : "to_nchw", std::move(code));
  Value from = ctx.address(toBlocked ? plain : blocked),
        to = ctx.address(toBlocked ? blocked : plain);
  ctx.callKernel(symbol, {from, to});
  return true;
}

} // namespace

void emitToBlocked(OpBuilder &b, Location loc, Value plain, Value blocked) {
  ArrayRef<int64_t> shape = cast<MemRefType>(plain.getType()).getShape();
  SmallVector<int64_t, 4> s = rowsShape(shape);
  forEachNCHW(b, loc, {s[0], s[2], s[3]}, 0, s[1],
              [&](OpBuilder &nb, Location l, Value n, Value c, Value h,
                  Value w) {
                Value v = nb.create<memref::LoadOp>(
                    l, plain, plainIndices(nb, l, shape, n, c, h, w));
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
  ArrayRef<int64_t> shape = cast<MemRefType>(plain.getType()).getShape();
  SmallVector<int64_t, 4> s = rowsShape(shape);
  forEachNCHW(b, loc, {s[0], s[2], s[3]}, 0, s[1],
              [&](OpBuilder &nb, Location l, Value n, Value c, Value h,
                  Value w) {
                auto [cb, lane] = splitChannel(nb, l, c);
                Value v = nb.create<memref::LoadOp>(
                    l, blocked, ValueRange{n, cb, h, w, lane});
                nb.create<memref::StoreOp>(
                    l, v, plain, plainIndices(nb, l, shape, n, c, h, w));
              });
}

Value blockedOperand(Value v, OpLoweringContext &ctx, SelectionState &state) {
  auto it = state.blocked.find(v);
  if (it != state.blocked.end())
    return it->second;
  Value plain = ctx.buffer(v);
  Value blocked =
      ctx.allocate(blockedType(cast<MemRefType>(plain.getType())), v);
  if (!callReorderKernel(ctx, plain, blocked, /*toBlocked=*/true))
    emitToBlocked(ctx.builder(), ctx.loc(), plain, blocked);
  state.blocked[v] = blocked;
  return blocked;
}

namespace {

/// The concat that `v` can be written into (allocateBlocked), or null.
Operation *inPlaceConcatOf(Value v) {
  if (!v.hasOneUse())
    return nullptr;
  // In v's block: a concat inside a loop body would write its other
  // inputs every iteration into a buffer that must outlive the loop.
  Operation *concat = *v.getUsers().begin();
  if (concat->getName().stripDialect() != "concat" ||
      concat->getBlock() != v.getParentBlock())
    return nullptr;
  auto type = dyn_cast<RankedTensorType>(concat->getResult(0).getType());
  auto axis = concat->getAttrOfType<IntegerAttr>("axis");
  if (!type || !type.hasStaticShape() || !type.getElementType().isF32() ||
      type.getRank() != 4 || type.getDimSize(0) != 1 || !axis ||
      (axis.getInt() != 1 && axis.getInt() != -3))
    return nullptr;
  for (Value in : concat->getOperands().drop_back())
    if (cast<ShapedType>(in.getType()).getDimSize(1) % kConvBlock != 0)
      return nullptr;
  return concat;
}

MemRefType blockedTypeOf(Value v) {
  auto t = cast<ShapedType>(v.getType());
  return blockedType(MemRefType::get(t.getShape(), t.getElementType()));
}

} // namespace

Value allocateBlocked(Value v, OpLoweringContext &ctx, SelectionState &state) {
  MemRefType type = blockedTypeOf(v);
  if (Operation *concat = inPlaceConcatOf(v)) {
    Value &whole = state.concatBuffers[concat];
    if (!whole)
      whole = allocateBlocked(concat->getResult(0), ctx, state);
    // v's blocks follow those of the inputs before it.
    ArrayRef<int64_t> s = cast<ShapedType>(v.getType()).getShape();
    int64_t blocksBefore = 0;
    for (Value in : concat->getOperands()) {
      if (in == v)
        break;
      blocksBefore += cast<ShapedType>(in.getType()).getDimSize(1) / kConvBlock;
    }
    const int64_t blockBytes = s[2] * s[3] * kConvBlock * sizeof(float);
    if (Value view = ctx.viewInside(whole, blocksBefore * blockBytes, type)) {
      state.writtenInPlace.insert(v);
      return view;
    }
  }
  return ctx.allocate(type, v);
}

void setBlockedResult(Value v, Value blocked, OpLoweringContext &ctx,
                      SelectionState &state) {
  state.blocked[v] = blocked;
  ctx.deferBuffer(v, [&ctx, blocked](Value plain) {
    if (!callReorderKernel(ctx, plain, blocked, /*toBlocked=*/false))
      emitFromBlocked(ctx.builder(), ctx.loc(), blocked, plain);
  });
}

void setBlockedResultOrFused(Value v, Operation *activation, Value blocked,
                             OpLoweringContext &ctx, SelectionState &state) {
  if (activation)
    state.fused[activation] = blocked;
  else
    setBlockedResult(v, blocked, ctx, state);
}

} // namespace mlcc::avx512
