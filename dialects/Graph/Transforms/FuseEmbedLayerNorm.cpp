//===- FuseEmbedLayerNorm.cpp - embeddings + layer norm -> one op ---------===//
//
// A BERT export starts with
//
//   e = gather(word_embeddings, input_ids)          axis 0
//   e = add(e, position_embeddings[positions])      folded to a constant
//   e = add(e, token_type_embeddings[types])        folded to a constant
//   y = layer_norm(e, gamma, beta)                  last axis
//
// three passes over [B, S, D] and a gather. graph.embed_layer_norm does the
// row lookup, one add of the two constants summed now, and the
// normalisation in one op. Summing the constants first rounds once where
// the group rounded twice (within an ulp of the addends).
//
//===----------------------------------------------------------------------===//

#include "Passes.h"
#include "PatternUtils.h"

#include "GraphDialect.h"
#include "mlcc/Reference/MlirBridge.h"

namespace mlcc::graph {
#define GEN_PASS_DEF_FUSEEMBEDLAYERNORM
#include "Passes.h.inc"
} // namespace mlcc::graph

using namespace mlir;

namespace mlcc::graph {
namespace {

/// The add's operand other than `v`, when it is a constant that broadcasts
/// to `v`'s shape without changing it.
Value constantAddend(AddOp add, Value v) {
  Value other = add.getOperand(0) == v ? add.getOperand(1) : add.getOperand(0);
  auto vType = cast<RankedTensorType>(v.getType());
  auto oType = dyn_cast<RankedTensorType>(other.getType());
  if (other == v || !other.getDefiningOp<ConstantOp>() || !oType ||
      !oType.hasStaticShape() || oType.getRank() > vType.getRank() ||
      add.getType() != vType)
    return nullptr;
  int64_t shift = vType.getRank() - oType.getRank();
  for (int64_t i = 0; i < oType.getRank(); ++i)
    if (oType.getDimSize(i) != 1 &&
        oType.getDimSize(i) != vType.getDimSize(shift + i))
      return nullptr;
  return other;
}

/// A [B, S, D] addend's first item when every item is the same: a constant
/// folded from token types of zeros is the same [S, D] block for each item
/// of the batch (and would tie the fused op to one batch).
void dropRepeatedItems(ref::Tensor &t) {
  if (t.shape().size() != 3 || t.shape()[0] <= 1)
    return;
  int64_t itemSize = t.numel() / t.shape()[0];
  const float *d = t.data<float>();
  for (int64_t i = itemSize; i < t.numel(); ++i)
    if (d[i] != d[i % itemSize])
      return;
  ref::Shape shape = t.shape();
  shape[0] = 1;
  t = ref::Tensor::fromBytes(ref::DType::F32, shape, d);
}

/// Fuses the group ending in `ln`; false when it is not one.
bool fuse(LayerNormalizationOp ln) {
  Operation *op = ln.getOperation();
  for (unsigned i = 1; i < op->getNumResults(); ++i)
    if (!isa<NoneType>(op->getResult(i).getType()))
      return false;
  auto type = dyn_cast<RankedTensorType>(ln.getX().getType());
  auto axis = op->getAttrOfType<IntegerAttr>("axis");
  if (!type || !type.hasStaticShape() || type.getRank() != 3 ||
      !type.getElementType().isF32() ||
      (axis && axis.getInt() != -1 && axis.getInt() != 2))
    return false;
  std::optional<float> epsilon = fusedNormEpsilon(ln);
  if (!epsilon)
    return false;

  // Back from the layer norm: one or two constant adds, then the gather.
  SmallVector<Value> addends;
  SmallVector<Operation *> group;
  Value x = ln.getX();
  while (auto add = x.getDefiningOp<AddOp>()) {
    if (!x.hasOneUse() || addends.size() == 2)
      return false;
    Value lhs = add.getOperand(0), rhs = add.getOperand(1);
    Value inner = lhs.getDefiningOp<ConstantOp>() ? rhs : lhs;
    Value addend = constantAddend(add, inner);
    if (!addend)
      return false;
    addends.push_back(addend);
    group.push_back(add);
    x = inner;
  }
  auto gather = x.getDefiningOp<GatherOp>();
  if (!gather || !x.hasOneUse() || addends.empty())
    return false;
  auto gatherAxis = gather->getAttrOfType<IntegerAttr>("axis");
  auto tableType = dyn_cast<RankedTensorType>(gather.getData().getType());
  auto idsType = dyn_cast<RankedTensorType>(gather.getIndices().getType());
  ref::Tensor table;
  if ((gatherAxis && gatherAxis.getInt() != 0) || !tableType ||
      tableType.getRank() != 2 || !idsType || idsType.getRank() != 2 ||
      !isa<IntegerType>(idsType.getElementType()) ||
      !gather.getData().getDefiningOp<ConstantOp>())
    return false;
  group.push_back(gather);

  // The addends summed in f32 into one constant of the first's shape
  // broadcast to [1, S, D] at most.
  ref::Tensor sum;
  if (!constantF32(addends[0], sum))
    return false;
  dropRepeatedItems(sum);
  if (addends.size() == 2) {
    ref::Tensor second;
    if (!constantF32(addends[1], second))
      return false;
    dropRepeatedItems(second);
    if (second.shape() != sum.shape())
      return false;
    float *s = sum.data<float>();
    const float *t = second.data<float>();
    for (int64_t i = 0; i < sum.numel(); ++i)
      s[i] += t[i];
  }

  OpBuilder b(op);
  Value addend = addends[0];
  if (addends.size() == 2 ||
      sum.shape() !=
          ref::Shape(cast<RankedTensorType>(addend.getType()).getShape()))
    addend = b.create<ConstantOp>(
        op->getLoc(), elementsAttrFromTensor(b.getContext(), sum));
  auto fused = b.create<EmbedLayerNormOp>(
      op->getLoc(), type, gather.getIndices(), gather.getData(), addend,
      ln.getScale(), ln.getB(), b.getF32FloatAttr(*epsilon));
  op->getResult(0).replaceAllUsesWith(fused.getResult());
  group.push_back(op);
  eraseGroup(group);
  return true;
}

struct FuseEmbedLayerNorm
    : impl::FuseEmbedLayerNormBase<FuseEmbedLayerNorm> {
  void runOnOperation() override {
    SmallVector<LayerNormalizationOp> norms;
    getOperation().walk(
        [&](LayerNormalizationOp op) { norms.push_back(op); });
    for (LayerNormalizationOp ln : norms)
      fuse(ln);
  }
};

} // namespace
} // namespace mlcc::graph
