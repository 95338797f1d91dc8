//===- FuseAttention.cpp - BERT self-attention -> graph.attention ---------===//
//
// A transformer export spells multi-head attention as a dozen ops: each of
// the Q, K, V projections reshaped to [B, S, H, D] and transposed to put
// the heads first (K to [B, H, D, S]), a batched matmul for the scores, a
// scaling by 1/sqrt(D), an additive mask, a softmax over the keys, a second
// matmul with V, and a transpose and reshape back to [B, S, H*D]. Each of
// them a pass over memory, and the [B, H, S, S] scores written and read
// four times. One graph.attention carries the whole group, so a backend can
// work head by head on data that stays in cache.
//
// Matched from the final reshape back, as the BERT exports have it:
//   Y = reshape(transpose<0,2,1,3>(matmul(softmax<-1>(S [+ mask]), Vh)))
//   S = matmul(Qh, Kh) [/ c | * c]          (scale on the scores)
//   Qh = transpose<0,2,1,3>(reshape(Q)) [/ c | * c]   (or on Q)
//   Kh = transpose<0,2,3,1>(reshape(K))
//      | transpose<0,1,3,2>(transpose<0,2,1,3>(reshape(K)))
//   Vh = transpose<0,2,1,3>(reshape(V))
// with c a one-element f32 constant. The fused op multiplies the scores by
// `scale`; so that this rounds as the group did, a division, or a scaling
// of Q, is taken only when c is a power of two (1/sqrt(64) in BERT). Every
// value inside the group has exactly one user, every shape is static and
// f32, Q, K and V are [B, S, H*D] with the same B, S, H, D, and the mask
// broadcasts to the [B, H, S, S] scores without widening them.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "GraphDialect.h"
#include "mlcc/Reference/MlirBridge.h"

#include <cmath>

namespace mlcc::graph {
#define GEN_PASS_DEF_FUSEATTENTION
#include "Passes.h.inc"
} // namespace mlcc::graph

using namespace mlir;

namespace mlcc::graph {
namespace {

RankedTensorType staticF32(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.hasStaticShape() || !t.getElementType().isF32())
    return {};
  return t;
}

bool hasPerm(Operation *op, ArrayRef<int64_t> perm) {
  auto t = dyn_cast_or_null<TransposeOp>(op);
  if (!t)
    return false;
  auto attr = t->getAttrOfType<ArrayAttr>("perm");
  if (!attr || attr.size() != perm.size())
    return false;
  for (auto [a, p] : llvm::zip(attr, perm)) {
    auto i = dyn_cast<IntegerAttr>(a);
    if (!i || i.getInt() != p)
      return false;
  }
  return true;
}

/// The value of a one-element f32 constant.
bool scalarF32(Value v, float &value) {
  auto c = v.getDefiningOp<ConstantOp>();
  ref::Tensor t;
  if (!c || !c.getValue().getElementType().isF32() ||
      tensorFromElementsAttr(c.getValue(), t).failed() || t.numel() != 1)
    return false;
  value = static_cast<float>(t.getDouble(0));
  return true;
}

bool powerOfTwo(float c) {
  int exp;
  return std::isfinite(c) && c > 0.0f && std::frexp(c, &exp) == 0.5f;
}

/// What a recognised group gives the fused op.
struct Group {
  Value q, k, v, mask; // mask null when there is none
  int64_t heads = 0, headDim = 0, batch = 0, seq = 0;
  float scale = 1.0f;
  bool scaled = false;
  SmallVector<Operation *> ops; // to erase, users before producers
};

/// `op` (a value of the group) has one user; then records it.
bool take(Group &g, Operation *op) {
  if (!op || op->getNumResults() != 1 || !op->getResult(0).hasOneUse())
    return false;
  g.ops.push_back(op);
  return true;
}

/// x / c or x * c (either order for the product): returns x and sets the
/// scale. `exactOnly`: c must be a power of two even for a product.
Value matchScale(Group &g, Value v, bool exactOnly) {
  Operation *op = v.getDefiningOp();
  float c;
  Value x;
  float scale;
  bool exact;
  if (auto div = dyn_cast_or_null<DivOp>(op)) {
    if (!scalarF32(div->getOperand(1), c))
      return {};
    x = div->getOperand(0);
    scale = 1.0f / c;
    exact = powerOfTwo(c);
  } else if (auto mul = dyn_cast_or_null<MulOp>(op)) {
    if (scalarF32(mul->getOperand(1), c))
      x = mul->getOperand(0);
    else if (scalarF32(mul->getOperand(0), c))
      x = mul->getOperand(1);
    else
      return {};
    scale = c;
    exact = !exactOnly || powerOfTwo(c);
  } else {
    return {};
  }
  // graph.attention takes a finite scale only: a NaN or an infinity (or a
  // division by zero) stays in the graph, where it makes what ONNX says.
  if (!exact || !std::isfinite(scale) || g.scaled ||
      x.getType() != v.getType() || !take(g, op))
    return {};
  g.scale = scale;
  g.scaled = true;
  return x;
}

/// transpose<perm>(reshape(x)) with x [B, S, H*D] and the reshape's result
/// [B, S, H, D]; returns x and sets or checks B, S, H, D.
Value matchHeads(Group &g, Value v, ArrayRef<int64_t> perm) {
  Operation *t = v.getDefiningOp();
  if (!hasPerm(t, perm) || !take(g, t))
    return {};
  auto reshape = t->getOperand(0).getDefiningOp<ReshapeOp>();
  if (!reshape || !take(g, reshape))
    return {};
  Value x = reshape->getOperand(0);
  RankedTensorType in = staticF32(x), out = staticF32(reshape.getResult());
  if (!in || !out || in.getRank() != 3 || out.getRank() != 4)
    return {};
  ArrayRef<int64_t> s = out.getShape();
  if (in.getDimSize(0) != s[0] || in.getDimSize(1) != s[1] ||
      in.getDimSize(2) != s[2] * s[3])
    return {};
  if (g.heads == 0) {
    g.batch = s[0];
    g.seq = s[1];
    g.heads = s[2];
    g.headDim = s[3];
  } else if (g.batch != s[0] || g.seq != s[1] || g.heads != s[2] ||
             g.headDim != s[3]) {
    return {};
  }
  return x;
}

/// K's side of the scores: [B, H, D, S] from [B, S, H*D].
Value matchKeys(Group &g, Value v) {
  size_t mark = g.ops.size();
  if (Value k = matchHeads(g, v, {0, 2, 3, 1}))
    return k;
  g.ops.truncate(mark);
  Operation *t = v.getDefiningOp();
  if (!hasPerm(t, {0, 1, 3, 2}) || !take(g, t))
    return {};
  return matchHeads(g, t->getOperand(0), {0, 2, 1, 3});
}

/// S [* scale] from matmul(Qh [* scale], Kh).
bool matchScores(Group &g, Value s) {
  Value raw = s;
  if (Value x = matchScale(g, s, /*exactOnly=*/false))
    raw = x;
  auto mm = raw.getDefiningOp<MatMulOp>();
  if (!mm || !take(g, mm))
    return false;
  Value qh = mm->getOperand(0);
  if (Value x = matchScale(g, qh, /*exactOnly=*/true))
    qh = x;
  g.q = matchHeads(g, qh, {0, 2, 1, 3});
  if (!g.q)
    return false;
  g.k = matchKeys(g, mm->getOperand(1));
  if (!g.k)
    return false;
  RankedTensorType type = staticF32(mm.getResult());
  return type &&
         type.getShape() == ArrayRef<int64_t>{g.batch, g.heads, g.seq, g.seq};
}

/// A static f32 mask of rank <= 4 whose every dim is 1 or the scores'.
bool supportedMask(Value mask, RankedTensorType scores) {
  RankedTensorType m = staticF32(mask);
  if (!m || m.getRank() > 4)
    return false;
  for (int64_t i = 0; i < m.getRank(); ++i) {
    int64_t d = m.getDimSize(m.getRank() - 1 - i);
    if (d != 1 && d != scores.getDimSize(3 - i))
      return false;
  }
  return true;
}

bool matchGroup(ReshapeOp root, Group &g) {
  RankedTensorType out = staticF32(root.getResult());
  if (!out || out.getRank() != 3)
    return false;
  g.ops.push_back(root);
  Operation *back = root->getOperand(0).getDefiningOp();
  if (!hasPerm(back, {0, 2, 1, 3}) || !take(g, back))
    return false;
  auto pv = back->getOperand(0).getDefiningOp<MatMulOp>();
  if (!pv || !take(g, pv))
    return false;
  auto softmax = pv->getOperand(0).getDefiningOp<SoftmaxOp>();
  if (!softmax || !take(g, softmax))
    return false;
  RankedTensorType probs = staticF32(softmax.getResult());
  auto axis = softmax->getAttrOfType<IntegerAttr>("axis");
  if (!probs || probs.getRank() != 4 || !axis ||
      (axis.getInt() != -1 && axis.getInt() != 3))
    return false;
  Value s = softmax->getOperand(0);
  if (auto add = s.getDefiningOp<AddOp>()) {
    if (!take(g, add) || add.getResult().getType() != probs)
      return false;
    size_t mark = g.ops.size();
    for (unsigned i = 0; i < 2 && !g.mask; ++i) {
      g.ops.truncate(mark);
      g.scale = 1.0f;
      g.scaled = false;
      g.heads = 0;
      if (matchScores(g, add->getOperand(i)))
        g.mask = add->getOperand(1 - i);
    }
    if (!g.mask || !supportedMask(g.mask, probs))
      return false;
  } else if (!matchScores(g, s)) {
    return false;
  }
  g.v = matchHeads(g, pv->getOperand(1), {0, 2, 1, 3});
  if (!g.v)
    return false;
  // Every ONNX-level shape agrees with [B, S, H*D] -> [B, H, S, S] ->
  // [B, S, H*D].
  RankedTensorType qType = staticF32(g.q);
  return probs.getShape() ==
             ArrayRef<int64_t>{g.batch, g.heads, g.seq, g.seq} &&
         qType == staticF32(g.k) && qType == staticF32(g.v) && out == qType &&
         staticF32(back->getResult(0)).getShape() ==
             ArrayRef<int64_t>{g.batch, g.seq, g.heads, g.headDim};
}

/// A `none` value that `user` may use: the first in its block when it comes
/// before `user`, else a new one at the start of the block.
Value noneBefore(Operation *user) {
  Block *block = user->getBlock();
  for (Operation &op : *block) {
    if (&op == user)
      break;
    if (auto none = dyn_cast<NoneOp>(op))
      return none.getResult();
  }
  OpBuilder b = OpBuilder::atBlockBegin(block);
  return b.create<NoneOp>(block->getParentOp()->getLoc()).getResult();
}

void fuse(ReshapeOp root, Group &g) {
  OpBuilder b(root);
  Value mask = g.mask ? g.mask : noneBefore(root);
  OperationState state(root.getLoc(), AttentionOp::getOperationName());
  state.addOperands({g.q, g.k, g.v, mask});
  state.addTypes(root.getResult().getType());
  state.addAttribute("num_heads", b.getI64IntegerAttr(g.heads));
  state.addAttribute("scale", b.getF32FloatAttr(g.scale));
  Operation *fused = b.create(state);
  root.getResult().replaceAllUsesWith(fused->getResult(0));
  // g.ops lists users before the values they use.
  for (Operation *op : g.ops)
    op->erase();
}

struct FuseAttention : impl::FuseAttentionBase<FuseAttention> {
  void runOnOperation() override {
    SmallVector<ReshapeOp> roots;
    getOperation().walk([&](ReshapeOp r) { roots.push_back(r); });
    for (ReshapeOp root : roots) {
      Group g;
      if (matchGroup(root, g))
        fuse(root, g);
    }
  }
};

} // namespace
} // namespace mlcc::graph
