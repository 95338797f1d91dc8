//===- FuseSkipLayerNorm.cpp - residual add + layer norm -> one op --------===//
//
// Every transformer block ends its attention and its feed-forward part with
// "add & norm":
//
//   h = add(x, residual)                 same shape
//   y = layer_norm(h, gamma, beta)       last axis
//
// The add is a full pass over the hidden state that writes h only for the
// layer norm to read it back. graph.skip_layer_norm forms the sum in the
// normalisation's first pass instead. The sum is rounded once, as the add
// rounds it, so the fused op computes exactly what the pair did.
//
// Runs before mlcc-fuse-fc: that pass would otherwise take the residual
// into the projection's epilogue and leave the layer norm alone; either
// way the add costs no pass of its own, and this one also covers residuals
// whose producer is not a matmul.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"
#include "PatternUtils.h"

#include "GraphDialect.h"

namespace mlcc::graph {
#define GEN_PASS_DEF_FUSESKIPLAYERNORM
#include "Passes.h.inc"
} // namespace mlcc::graph

using namespace mlir;

namespace mlcc::graph {
namespace {

/// Fuses the add feeding `ln`; false when the pair does not qualify.
bool fuse(LayerNormalizationOp ln) {
  Operation *op = ln.getOperation();
  for (unsigned i = 1; i < op->getNumResults(); ++i)
    if (!isa<NoneType>(op->getResult(i).getType()))
      return false;
  auto type = dyn_cast<RankedTensorType>(ln.getX().getType());
  auto axis = op->getAttrOfType<IntegerAttr>("axis");
  if (!type || !type.hasStaticShape() || type.getRank() < 1 ||
      !type.getElementType().isF32() ||
      (axis && axis.getInt() != -1 && axis.getInt() != type.getRank() - 1))
    return false;
  std::optional<float> epsilon = fusedNormEpsilon(ln);
  if (!epsilon)
    return false;
  auto add = ln.getX().getDefiningOp<AddOp>();
  if (!add || !ln.getX().hasOneUse())
    return false;
  // No broadcasting: a bias row is an fc's or a conv's, not a skip.
  Value x = add.getOperand(0), skip = add.getOperand(1);
  if (x.getType() != type || skip.getType() != type)
    return false;

  OpBuilder b(op);
  auto fused =
      b.create<SkipLayerNormOp>(op->getLoc(), type, x, skip, ln.getScale(),
                                ln.getB(), b.getF32FloatAttr(*epsilon));
  op->getResult(0).replaceAllUsesWith(fused.getResult());
  eraseGroup({op, add});
  return true;
}

struct FuseSkipLayerNorm : impl::FuseSkipLayerNormBase<FuseSkipLayerNorm> {
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
