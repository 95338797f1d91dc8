//===- FoldBatchNorm.cpp - conv + batch_norm -> conv ----------------------===//
//
// Inference BatchNormalization after a convolution is an affine map per
// output channel, so it folds into the conv's weights and bias: the model
// loses a full pass over every activation it normalises.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "GraphDialect.h"
#include "mlcc/Reference/MlirBridge.h"

#include <cmath>

namespace mlcc::graph {
#define GEN_PASS_DEF_FOLDBATCHNORM
#include "Passes.h.inc"
} // namespace mlcc::graph

using namespace mlir;

namespace mlcc::graph {
namespace {

bool constantF32(Value v, ref::Tensor &t) {
  auto c = v.getDefiningOp<ConstantOp>();
  return c && c.getValue().getElementType().isF32() &&
         tensorFromElementsAttr(c.getValue(), t).ok();
}

/// Folds `bn` into the conv producing its input; false when it does not
/// apply.
bool foldIntoConv(BatchNormalizationOp bn) {
  Operation *op = bn.getOperation();
  for (unsigned i = 1; i < op->getNumResults(); ++i)
    if (!isa<NoneType>(op->getResult(i).getType()))
      return false;
  auto conv = op->getOperand(0).getDefiningOp<ConvOp>();
  if (!conv || !conv->getResult(0).hasOneUse())
    return false;
  ref::Tensor w, bias, scale, shift, mean, var;
  Value convBias = conv->getOperand(2);
  bool hasBias = !isa<NoneType>(convBias.getType());
  if (!constantF32(conv->getOperand(1), w) ||
      (hasBias && !constantF32(convBias, bias)) ||
      !constantF32(op->getOperand(1), scale) ||
      !constantF32(op->getOperand(2), shift) ||
      !constantF32(op->getOperand(3), mean) ||
      !constantF32(op->getOperand(4), var))
    return false;
  int64_t oc = w.rank() > 0 ? w.dim(0) : 0;
  for (const ref::Tensor *t : {&scale, &shift, &mean, &var})
    if (t->numel() != oc)
      return false;
  if (hasBias && bias.numel() != oc)
    return false;
  double epsilon = 1e-5;
  if (auto a = op->getAttrOfType<FloatAttr>("epsilon"))
    epsilon = a.getValueAsDouble();

  int64_t perChannel = oc ? w.numel() / oc : 0;
  ref::Tensor newW(ref::DType::F32, w.shape());
  ref::Tensor newBias(ref::DType::F32, {oc});
  for (int64_t o = 0; o < oc; ++o) {
    double s = scale.data<float>()[o] /
               std::sqrt(double(var.data<float>()[o]) + epsilon);
    for (int64_t i = 0; i < perChannel; ++i)
      newW.data<float>()[o * perChannel + i] =
          static_cast<float>(w.data<float>()[o * perChannel + i] * s);
    double b = hasBias ? bias.data<float>()[o] : 0.0;
    newBias.data<float>()[o] = static_cast<float>(
        (b - mean.data<float>()[o]) * s + shift.data<float>()[o]);
  }

  OpBuilder b(op);
  MLIRContext *ctx = op->getContext();
  Value wConst = b.create<ConstantOp>(conv.getLoc(),
                                      elementsAttrFromTensor(ctx, newW));
  Value biasConst = b.create<ConstantOp>(
      conv.getLoc(), elementsAttrFromTensor(ctx, newBias));
  Operation *folded = b.clone(*conv.getOperation());
  folded->setOperand(1, wConst);
  folded->setOperand(2, biasConst);
  // The folded conv carries the BN node's name: its output is the BN's.
  folded->setLoc(op->getLoc());
  op->getResult(0).replaceAllUsesWith(folded->getResult(0));
  op->erase();
  conv->erase();
  return true;
}

struct FoldBatchNorm : impl::FoldBatchNormBase<FoldBatchNorm> {
  void runOnOperation() override {
    SmallVector<BatchNormalizationOp> candidates;
    getOperation().walk([&](BatchNormalizationOp bn) { candidates.push_back(bn); });
    for (BatchNormalizationOp bn : candidates)
      foldIntoConv(bn);
  }
};

} // namespace
} // namespace mlcc::graph
