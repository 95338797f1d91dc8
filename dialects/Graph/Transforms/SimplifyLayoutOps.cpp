//===- SimplifyLayoutOps.cpp - cancel, merge and sink layout ops ----------===//
//
// Exporters leave layout ops that undo or repeat each other: a transpose to
// NHWC and back around an elementwise op, reshape after unsqueeze after
// squeeze, a concat of flattened branches. Each is a full copy of its
// tensor at run time. With static shapes a chain of reshape-like ops is one
// reshape, two transposes are one (or none), and a transpose commutes with
// elementwise ops and with concat, so the copies merge. Every rewrite only
// moves data: the results are bit-identical.
//
// Cancelling and merging read past the intermediate op: when it has other
// users it stays for them (the number of layout ops does not grow),
// otherwise it goes. Sinking and the concat rewrites move a transpose or
// flatten only when its sole user is the op it moves past, so they never
// add one. Sinking happens only on the way to another transpose: the
// fusions that run next match the transposes where the exporter put them.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"
#include "PatternUtils.h"

#include "GraphDialect.h"

#include "llvm/ADT/DenseSet.h"

namespace mlcc::graph {
#define GEN_PASS_DEF_SIMPLIFYLAYOUTOPS
#include "Passes.h.inc"
} // namespace mlcc::graph

using namespace mlir;

namespace mlcc::graph {
namespace {

/// `t`'s permutation (ONNX default: the axes reversed) when its input is
/// ranked and the attribute is a permutation of its axes.
bool permOf(Operation *op, SmallVectorImpl<int64_t> &perm) {
  auto t = dyn_cast_or_null<TransposeOp>(op);
  if (!t)
    return false;
  auto type = dyn_cast<RankedTensorType>(t.getData().getType());
  if (!type)
    return false;
  int64_t rank = type.getRank();
  perm.clear();
  if (std::optional<ArrayAttr> attr = t.getPerm()) {
    for (Attribute a : *attr) {
      auto i = dyn_cast<IntegerAttr>(a);
      if (!i)
        return false;
      perm.push_back(i.getInt());
    }
  } else {
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  }
  if (static_cast<int64_t>(perm.size()) != rank)
    return false;
  SmallVector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return false;
    seen[p] = true;
  }
  return true;
}

bool isIdentity(ArrayRef<int64_t> perm) {
  for (auto [i, p] : llvm::enumerate(perm))
    if (p != static_cast<int64_t>(i))
      return false;
  return true;
}

ArrayAttr permAttr(MLIRContext *ctx, ArrayRef<int64_t> perm) {
  Builder b(ctx);
  return b.getI64ArrayAttr(perm);
}

bool feedsTerminator(Value v) {
  return llvm::any_of(v.getUsers(), [](Operation *user) {
    return user->hasTrait<OpTrait::IsTerminator>();
  });
}

/// Whether `result` may be replaced by `x`, an input of the ops computing
/// it: not when that would make a function result an argument or the same
/// value as another result, forms the importer never produces.
bool mayForward(Value result, Value x) {
  return !feedsTerminator(result) ||
         (!isa<BlockArgument>(x) && !feedsTerminator(x));
}

/// The producers of `op`'s operands that are ops, each once.
SmallVector<Operation *> producersOf(Operation *op) {
  SmallVector<Operation *> ops;
  for (Value v : op->getOperands())
    if (Operation *p = v.getDefiningOp())
      if (!llvm::is_contained(ops, p))
        ops.push_back(p);
  return ops;
}

/// Erases those of `ops` that nothing uses, then so their producers left
/// without users (the shape constant of a reshape the pass made and merged
/// again, say). An op may be reached on several paths (a producer feeding
/// two of them), so each is erased once and not looked at after.
void eraseIfDead(ArrayRef<Operation *> ops) {
  SmallVector<Operation *> worklist(ops.begin(), ops.end());
  DenseSet<Operation *> erased;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erased.contains(op) || !op->use_empty())
      continue;
    worklist.append(producersOf(op));
    erased.insert(op);
    op->erase();
  }
}

/// Replaces `op`'s single result by `v` and erases `op`, then those of
/// `producers` (and of their producers) left without users.
void replaceAndErase(Operation *op, Value v,
                     ArrayRef<Operation *> producers = {}) {
  op->getResult(0).replaceAllUsesWith(v);
  op->erase();
  eraseIfDead(producers);
}

/// A static, non-empty ranked type.
RankedTensorType staticType(Type t) {
  auto r = dyn_cast<RankedTensorType>(t);
  if (!r || !r.hasStaticShape() || r.getNumElements() == 0)
    return {};
  return r;
}

/// Both types static with the same shape (element types aside).
bool sameShape(Type a, Type b) {
  RankedTensorType ra = staticType(a), rb = staticType(b);
  return ra && rb && ra.getShape() == rb.getShape();
}

//===----------------------------------------------------------------------===//
// Reshape-like chains
//===----------------------------------------------------------------------===//

/// reshape, flatten, squeeze, unsqueeze with static, non-empty types on
/// both sides: it only relabels the dims of the data.
bool isStaticReshapeLike(Operation *op) {
  if (!op || !isa<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(op))
    return false;
  RankedTensorType in = staticType(op->getOperand(0).getType());
  RankedTensorType out = staticType(op->getResult(0).getType());
  return in && out && in.getElementType() == out.getElementType() &&
         in.getNumElements() == out.getNumElements();
}

/// A reshape of `x` to `type`'s static shape, at `b`'s insertion point.
Value reshapeTo(OpBuilder &b, Location loc, Value x, RankedTensorType type) {
  MLIRContext *ctx = b.getContext();
  auto shapeType =
      RankedTensorType::get({type.getRank()}, IntegerType::get(ctx, 64));
  auto shape =
      b.create<ConstantOp>(loc, cast<ElementsAttr>(DenseIntElementsAttr::get(
                                    shapeType, type.getShape())));
  return b.create<ReshapeOp>(loc, type, x, shape, IntegerAttr());
}

/// r2(r1(x)) -> reshape(x) or x; r(x) -> x when r keeps x's shape.
bool simplifyReshape(Operation *op) {
  if (!isStaticReshapeLike(op))
    return false;
  Value x = op->getOperand(0);
  Operation *inner = x.getDefiningOp();
  bool chain = isStaticReshapeLike(inner);
  if (chain)
    x = inner->getOperand(0);
  Value result = op->getResult(0);
  if (x.getType() == result.getType()) {
    if (!mayForward(result, x))
      return false;
    replaceAndErase(op, x, producersOf(op));
    return true;
  }
  if (!chain)
    return false;
  OpBuilder b(op);
  Value r =
      reshapeTo(b, op->getLoc(), x, cast<RankedTensorType>(result.getType()));
  replaceAndErase(op, r, producersOf(op));
  return true;
}

//===----------------------------------------------------------------------===//
// Transposes
//===----------------------------------------------------------------------===//

/// transpose(transpose(x, p1), p2) -> transpose(x, p1[p2[i]]) or x;
/// transpose(x, identity) -> x.
bool simplifyTranspose(Operation *op) {
  SmallVector<int64_t> p2, p1;
  if (!permOf(op, p2))
    return false;
  Value x = op->getOperand(0);
  Operation *inner = x.getDefiningOp();
  bool chain = permOf(inner, p1);
  SmallVector<int64_t> perm(p2);
  if (chain) {
    x = inner->getOperand(0);
    for (auto [i, p] : llvm::enumerate(p2))
      perm[i] = p1[p];
  }
  Value result = op->getResult(0);
  if (isIdentity(perm)) {
    if (x.getType() != result.getType() || !mayForward(result, x))
      return false;
    replaceAndErase(op, x, producersOf(op));
    return true;
  }
  if (!chain)
    return false;
  OpBuilder b(op);
  Value t = b.create<TransposeOp>(op->getLoc(), result.getType(), x,
                                  permAttr(op->getContext(), perm));
  replaceAndErase(op, t, producersOf(op));
  return true;
}

//===----------------------------------------------------------------------===//
// Sinking a transpose below elementwise ops
//===----------------------------------------------------------------------===//

/// How `op`'s operands would sink a transpose with `perm`: true when each
/// operand is either none, a value of one element whose rank is at most the
/// result's (broadcasting it ignores the layout), or a transpose with
/// `perm`, of the result's static shape, used only by `op`; at least one is
/// the last kind. `transposes` receives those (each once).
bool sinkable(Operation *op, ArrayRef<int64_t> perm,
              SmallVectorImpl<Operation *> &transposes) {
  if (!isElementwise(op))
    return false;
  auto resultType = staticType(op->getResult(0).getType());
  if (!resultType)
    return false;
  transposes.clear();
  SmallVector<int64_t> p;
  for (Value v : op->getOperands()) {
    if (isa<NoneType>(v.getType()))
      continue;
    Operation *t = v.getDefiningOp();
    if (permOf(t, p)) {
      auto type = staticType(v.getType());
      if (ArrayRef<int64_t>(p) != perm || !type ||
          type.getShape() != resultType.getShape() ||
          !llvm::all_of(v.getUsers(),
                        [&](Operation *user) { return user == op; }))
        return false;
      if (!llvm::is_contained(transposes, t))
        transposes.push_back(t);
      continue;
    }
    auto type = staticType(v.getType());
    if (!type || type.getNumElements() != 1 ||
        type.getRank() > resultType.getRank())
      return false;
  }
  return !transposes.empty();
}

/// True when sinking a transpose with `perm` below `op` and on down the
/// chain of elementwise sole users reaches another transpose, which then
/// absorbs it. Sinking for its own sake would only move the copy, and
/// would take the transposes the attention matcher looks for (a scaling
/// of the transposed query) out of their places.
bool reachesTranspose(Operation *op, ArrayRef<int64_t> perm) {
  for (int depth = 0; depth < 64; ++depth) {
    Operation *user = soleUser(op->getResult(0));
    if (!user)
      return false;
    if (isa<TransposeOp>(user))
      return true;
    // After the sinking, `op`'s result is a transpose with `perm`.
    if (!isElementwise(user) || !staticType(user->getResult(0).getType()) ||
        !sameShape(op->getResult(0).getType(), user->getResult(0).getType()))
      return false;
    SmallVector<int64_t> p;
    for (Value v : user->getOperands()) {
      if (v == op->getResult(0) || isa<NoneType>(v.getType()))
        continue;
      Operation *t = v.getDefiningOp();
      if (permOf(t, p)) {
        if (ArrayRef<int64_t>(p) != perm || !soleUser(v) ||
            !sameShape(v.getType(), user->getResult(0).getType()))
          return false;
        continue;
      }
      auto type = staticType(v.getType());
      if (!type || type.getNumElements() != 1 ||
          type.getRank() >
              cast<RankedTensorType>(user->getResult(0).getType()).getRank())
        return false;
    }
    op = user;
  }
  return false;
}

/// op(transpose(a, p), transpose(b, p)) -> transpose(op(a, b), p), with
/// one-element operands left as they are.
bool sinkTranspose(Operation *op) {
  if (!isElementwise(op))
    return false;
  SmallVector<int64_t> perm;
  bool found = llvm::any_of(op->getOperands(), [&](Value v) {
    return permOf(v.getDefiningOp(), perm);
  });
  SmallVector<Operation *> transposes;
  if (!found || !sinkable(op, perm, transposes) || !reachesTranspose(op, perm))
    return false;
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<int64_t> shape(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    shape[p] = resultType.getDimSize(i);
  OpBuilder b(op);
  Operation *moved = b.clone(*op);
  for (OpOperand &operand : moved->getOpOperands())
    if (Operation *t = operand.get().getDefiningOp();
        t && llvm::is_contained(transposes, t))
      operand.set(t->getOperand(0));
  moved->getResult(0).setType(
      RankedTensorType::get(shape, resultType.getElementType()));
  moved->setLoc(transposes.front()->getLoc());
  Value t = b.create<TransposeOp>(op->getLoc(), resultType, moved->getResult(0),
                                  permAttr(op->getContext(), perm));
  replaceAndErase(op, t, transposes);
  return true;
}

//===----------------------------------------------------------------------===//
// Concat
//===----------------------------------------------------------------------===//

/// `op`'s axis in [0, rank), or -1 when out of range.
int64_t axisOf(Operation *op, int64_t rank, int64_t defaultAxis) {
  int64_t axis = defaultAxis;
  if (auto attr = op->getAttrOfType<IntegerAttr>("axis"))
    axis = attr.getInt();
  if (axis < 0)
    axis += rank;
  return axis >= 0 && axis < rank ? axis : -1;
}

/// A flatten's axis in [0, rank] for an input of rank `rank`, or -1.
int64_t flattenAxis(Operation *op, int64_t rank) {
  int64_t axis = 1;
  if (auto attr = op->getAttrOfType<IntegerAttr>("axis"))
    axis = attr.getInt();
  if (axis < 0)
    axis += rank;
  return axis >= 0 && axis <= rank ? axis : -1;
}

/// The producers of `concat`'s inputs when each is an op `pred` accepts
/// and all its users are `concat`; each once.
template <typename Pred>
bool inputProducers(Operation *concat, SmallVectorImpl<Operation *> &ops,
                    Pred pred) {
  for (Value v : concat->getOperands()) {
    Operation *p = v.getDefiningOp();
    if (!p || !pred(p) || !llvm::all_of(v.getUsers(), [&](Operation *user) {
          return user == concat;
        }))
      return false;
    if (!llvm::is_contained(ops, p))
      ops.push_back(p);
  }
  return !ops.empty();
}

/// concat(transpose(a, p), transpose(b, p), axis) ->
/// transpose(concat(a, b, axis = p[axis]), p).
bool concatOfTransposes(Operation *op) {
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!resultType || op->getNumOperands() == 0)
    return false;
  SmallVector<int64_t> perm, p;
  if (!permOf(op->getOperand(0).getDefiningOp(), perm))
    return false;
  SmallVector<Operation *> transposes;
  if (!inputProducers(op, transposes,
                      [&](Operation *t) { return permOf(t, p) && p == perm; }))
    return false;
  int64_t axis = axisOf(op, resultType.getRank(), 0);
  if (axis < 0 || static_cast<int64_t>(perm.size()) != resultType.getRank())
    return false;
  SmallVector<int64_t> shape(perm.size());
  for (auto [i, q] : llvm::enumerate(perm))
    shape[q] = resultType.getDimSize(i);
  SmallVector<Value> inputs;
  for (Value v : op->getOperands())
    inputs.push_back(v.getDefiningOp()->getOperand(0));
  OpBuilder b(op);
  MLIRContext *ctx = op->getContext();
  auto concat = b.create<ConcatOp>(
      transposes.front()->getLoc(),
      RankedTensorType::get(shape, resultType.getElementType()), inputs,
      b.getI64IntegerAttr(perm[axis]));
  Value t = b.create<TransposeOp>(op->getLoc(), resultType, concat,
                                  permAttr(ctx, perm));
  replaceAndErase(op, t, transposes);
  return true;
}

/// concat(flatten(a, f), flatten(b, f), c) -> flatten(concat(a, b, d), f)
/// where a and b differ only in dim d, the first dim of the flattened
/// group the concat axis c is: d = 0 for c = 0, d = f for c = 1. Row r of
/// the result is then a's row r followed by b's, as in the concat of
/// their flattenings.
bool concatOfFlattens(Operation *op) {
  auto resultType = staticType(op->getResult(0).getType());
  if (!resultType || resultType.getRank() != 2 || op->getNumOperands() == 0)
    return false;
  int64_t c = axisOf(op, 2, 0);
  auto first = dyn_cast_or_null<FlattenOp>(op->getOperand(0).getDefiningOp());
  if (c < 0 || !first)
    return false;
  auto firstType = staticType(first.getInput().getType());
  if (!firstType)
    return false;
  int64_t rank = firstType.getRank();
  int64_t f = flattenAxis(first, rank);
  int64_t d = c == 0 ? 0 : f;
  if (f < 0 || (c == 0 && f < 1) || (c == 1 && f >= rank))
    return false;
  SmallVector<Operation *> flattens;
  if (!inputProducers(op, flattens, [&](Operation *p) {
        auto type = isa<FlattenOp>(p) ? staticType(p->getOperand(0).getType())
                                      : RankedTensorType();
        if (!type || type.getRank() != rank ||
            type.getElementType() != firstType.getElementType() ||
            flattenAxis(p, rank) != f)
          return false;
        for (int64_t i = 0; i < rank; ++i)
          if (i != d && type.getDimSize(i) != firstType.getDimSize(i))
            return false;
        return true;
      }))
    return false;
  SmallVector<int64_t> shape(firstType.getShape());
  shape[d] = 0;
  SmallVector<Value> inputs;
  for (Value v : op->getOperands()) {
    Value a = v.getDefiningOp()->getOperand(0);
    shape[d] += cast<RankedTensorType>(a.getType()).getDimSize(d);
    inputs.push_back(a);
  }
  OpBuilder b(op);
  auto concat = b.create<ConcatOp>(
      flattens.front()->getLoc(),
      RankedTensorType::get(shape, firstType.getElementType()), inputs,
      b.getI64IntegerAttr(d));
  Value flat = b.create<FlattenOp>(op->getLoc(), resultType, concat,
                                   b.getI64IntegerAttr(f));
  replaceAndErase(op, flat, flattens);
  return true;
}

struct SimplifyLayoutOps : impl::SimplifyLayoutOpsBase<SimplifyLayoutOps> {
  void runOnOperation() override {
    // Each rewrite erases the op it visits and only producers before it
    // (the post-order walk is done with them), and inserts before it; the
    // ops it creates are visited in the next sweep.
    for (int sweep = 0; sweep < 16; ++sweep) {
      bool changed = false;
      getOperation().walk([&](Operation *op) {
        if (isa<ConcatOp>(op))
          changed |= concatOfTransposes(op) || concatOfFlattens(op);
        else
          changed |=
              simplifyTranspose(op) || simplifyReshape(op) || sinkTranspose(op);
      });
      if (!changed)
        break;
    }
  }
};

} // namespace
} // namespace mlcc::graph
