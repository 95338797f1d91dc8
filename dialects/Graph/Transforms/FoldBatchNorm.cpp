//===- FoldBatchNorm.cpp - conv/gemm + batch_norm -> conv/gemm ------------===//
//
// Inference BatchNormalization after a convolution is an affine map per
// output channel, so it folds into the conv's weights and bias: the model
// loses a full pass over every activation it normalises. The same holds for
// a transposed convolution (its weights are laid out input channel first)
// and for a gemm or matmul with constant B whose 2-D [N, C] output the BN
// normalises per column (a Linear layer followed by BatchNorm1d). A conv
// whose weight is a DequantizeLinear of constant integers (a QDQ model that
// kept its batch norms, as `mlcc quantize` writes them) folds too: the
// integers stay, the factor goes into each output channel's scale, so the
// conv keeps its int8 kernel.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"
#include "PatternUtils.h"

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

/// The batch norm's parameters as one affine map per channel: y * s[c] +
/// t[c] after the fold, given the producer's bias `bias` (absent: 0).
struct ChannelAffine {
  std::vector<double> s;
  std::vector<float> t;
};

/// Reads `bn`'s parameters for `channels` channels; false when they are
/// not f32 constants of that size, or when a training output is used.
bool channelAffine(BatchNormalizationOp bn, int64_t channels,
                   const ref::Tensor *bias, ChannelAffine &a) {
  Operation *op = bn.getOperation();
  for (unsigned i = 1; i < op->getNumResults(); ++i)
    if (!isa<NoneType>(op->getResult(i).getType()))
      return false;
  ref::Tensor scale, shift, mean, var;
  if (!constantF32(op->getOperand(1), scale) ||
      !constantF32(op->getOperand(2), shift) ||
      !constantF32(op->getOperand(3), mean) ||
      !constantF32(op->getOperand(4), var))
    return false;
  for (const ref::Tensor *t : {&scale, &shift, &mean, &var})
    if (t->numel() != channels)
      return false;
  if (bias && bias->numel() != channels)
    return false;
  double epsilon = 1e-5;
  if (auto attr = op->getAttrOfType<FloatAttr>("epsilon"))
    epsilon = attr.getValueAsDouble();
  a.s.resize(channels);
  a.t.resize(channels);
  for (int64_t o = 0; o < channels; ++o) {
    a.s[o] = scale.data<float>()[o] /
             std::sqrt(double(var.data<float>()[o]) + epsilon);
    double b = bias ? bias->data<float>()[o] : 0.0;
    a.t[o] = static_cast<float>((b - mean.data<float>()[o]) * a.s[o] +
                                shift.data<float>()[o]);
  }
  return true;
}

ref::Tensor rowTensor(const std::vector<float> &v) {
  ref::Tensor t(ref::DType::F32, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

/// Replaces `producer` (whose only user is `bn`) by a clone with `weight`
/// at operand 1 and `bias` at operand 2, carrying the BN's name; both are
/// built before `bn`.
void replaceWithClone(BatchNormalizationOp bn, Operation *producer,
                      Value weight, Value bias) {
  Operation *op = bn.getOperation();
  OpBuilder b(op);
  Operation *folded = b.clone(*producer);
  folded->setOperand(1, weight);
  folded->setOperand(2, bias);
  // The folded op carries the BN node's name: its output is the BN's.
  folded->setLoc(op->getLoc());
  op->getResult(0).replaceAllUsesWith(folded->getResult(0));
  op->erase();
  producer->erase();
}

/// replaceWithClone with constant weights and bias.
void replaceWithClone(BatchNormalizationOp bn, Operation *producer,
                      const ref::Tensor &w, const ref::Tensor &bias) {
  OpBuilder b(bn);
  Location loc = producer->getLoc();
  replaceWithClone(bn, producer, constantOf(b, loc, w),
                   constantOf(b, loc, bias));
}

/// The constant weights and optional constant bias (operands 1 and 2) of
/// the op producing `bn`'s input, when the BN is its only user.
Operation *producerOf(BatchNormalizationOp bn, ref::Tensor &w,
                      ref::Tensor &bias, bool &hasBias) {
  Operation *producer = bn->getOperand(0).getDefiningOp();
  if (!producer || producer->getNumOperands() < 3 ||
      !producer->getResult(0).hasOneUse() ||
      !constantF32(producer->getOperand(1), w))
    return nullptr;
  Value b = producer->getOperand(2);
  hasBias = !isa<NoneType>(b.getType());
  if (hasBias && !constantF32(b, bias))
    return nullptr;
  return producer;
}

/// conv: W [C_out, C_in / group, k...], each output channel's weights
/// contiguous.
bool foldIntoConv(BatchNormalizationOp bn) {
  ref::Tensor w, bias;
  bool hasBias;
  Operation *conv = producerOf(bn, w, bias, hasBias);
  if (!conv || !isa<ConvOp>(conv))
    return false;
  int64_t oc = w.rank() > 0 ? w.dim(0) : 0;
  ChannelAffine a;
  if (!channelAffine(bn, oc, hasBias ? &bias : nullptr, a))
    return false;
  int64_t perChannel = oc ? w.numel() / oc : 0;
  ref::Tensor newW(ref::DType::F32, w.shape());
  for (int64_t o = 0; o < oc; ++o)
    for (int64_t i = 0; i < perChannel; ++i)
      newW.data<float>()[o * perChannel + i] =
          static_cast<float>(w.data<float>()[o * perChannel + i] * a.s[o]);
  replaceWithClone(bn, conv, newW, rowTensor(a.t));
  return true;
}

/// A conv bias given as DequantizeLinear(int32 constant, f32 scale), a QDQ
/// model's form, as f32 values; false for any other producer.
bool dequantizedBias(Value v, ref::Tensor &bias) {
  auto dq = v.getDefiningOp<DequantizeLinearOp>();
  ref::Tensor q, scale, zero;
  if (!dq || !constantTensor(dq.getX(), q) ||
      !constantF32(dq.getXScale(), scale) || q.rank() != 1 ||
      (scale.numel() != 1 && scale.numel() != q.numel()))
    return false;
  bool hasZero = !isa<NoneType>(dq.getXZeroPoint().getType());
  if (hasZero && (!constantTensor(dq.getXZeroPoint(), zero) ||
                  zero.numel() != scale.numel()))
    return false;
  bias = ref::Tensor(ref::DType::F32, q.shape());
  for (int64_t o = 0; o < q.numel(); ++o) {
    int64_t at = scale.numel() == 1 ? 0 : o;
    double z = hasZero ? zero.getDouble(at) : 0.0;
    bias.data<float>()[o] =
        static_cast<float>((q.getDouble(o) - z) * scale.data<float>()[at]);
  }
  return true;
}

/// conv with W = DequantizeLinear(q, scale, zero) of constants, per tensor
/// or per output channel (axis 0): W' = W * s is (q' - zero) * scale' with
/// scale'[o] = scale[o] * |s[o]| and q' = q where s[o] >= 0, q' = 2 zero -
/// q (the negated channel) where s[o] < 0. The weight becomes per-channel.
/// Nothing folds when a negated integer leaves its type's range (-128 of
/// a symmetric s8), or the bias is neither f32 nor a dequantized int32.
bool foldIntoQdqConv(BatchNormalizationOp bn) {
  Operation *conv = bn->getOperand(0).getDefiningOp();
  if (!conv || !isa<ConvOp>(conv) || !conv->getResult(0).hasOneUse())
    return false;
  auto dq = conv->getOperand(1).getDefiningOp<DequantizeLinearOp>();
  ref::Tensor q, scale, zero, bias;
  if (!dq || !dq->hasOneUse() || !constantTensor(dq.getX(), q) ||
      (q.dtype() != ref::DType::I8 && q.dtype() != ref::DType::U8) ||
      q.rank() < 1 || !constantF32(dq.getXScale(), scale))
    return false;
  int64_t oc = q.dim(0), rank = q.rank();
  int64_t axis = dq.getAxisAttr() ? dq.getAxisAttr().getInt() : 1;
  bool perTensor = scale.numel() == 1 && scale.rank() <= 1;
  if (!perTensor && (scale.numel() != oc || (axis != 0 && axis != -rank)))
    return false;
  bool hasZero = !isa<NoneType>(dq.getXZeroPoint().getType());
  if (hasZero && (!constantTensor(dq.getXZeroPoint(), zero) ||
                  zero.dtype() != q.dtype() || zero.numel() != scale.numel()))
    return false;
  Value b = conv->getOperand(2);
  bool hasBias = !isa<NoneType>(b.getType());
  if (hasBias && !constantF32(b, bias) && !dequantizedBias(b, bias))
    return false;
  ChannelAffine a;
  if (!channelAffine(bn, oc, hasBias ? &bias : nullptr, a))
    return false;

  const double lo = q.dtype() == ref::DType::I8 ? -128 : 0;
  const double hi = q.dtype() == ref::DType::I8 ? 127 : 255;
  int64_t perChannel = q.numel() / oc;
  ref::Tensor newQ = q.clone();
  ref::Tensor newScale(ref::DType::F32, {oc});
  ref::Tensor newZero(q.dtype(), {oc});
  for (int64_t o = 0; o < oc; ++o) {
    int64_t at = perTensor ? 0 : o;
    double z = hasZero ? zero.getDouble(at) : 0.0;
    newZero.setDouble(o, z);
    newScale.data<float>()[o] =
        static_cast<float>(scale.data<float>()[at] * std::fabs(a.s[o]));
    if (a.s[o] >= 0)
      continue;
    for (int64_t i = o * perChannel; i < (o + 1) * perChannel; ++i) {
      double negated = 2 * z - q.getDouble(i);
      if (negated < lo || negated > hi)
        return false;
      newQ.setDouble(i, negated);
    }
  }

  OpBuilder builder(bn);
  Location loc = dq->getLoc();
  auto weight = builder.create<DequantizeLinearOp>(
      loc, dq.getType(), constantOf(builder, loc, newQ),
      constantOf(builder, loc, newScale), constantOf(builder, loc, newZero),
      builder.getI64IntegerAttr(0));
  Operation *oldBias = b.getDefiningOp();
  replaceWithClone(bn, conv, weight, constantOf(builder, loc, rowTensor(a.t)));
  dq->erase();
  if (oldBias && oldBias->use_empty() && isa<DequantizeLinearOp>(oldBias))
    oldBias->erase();
  return true;
}

/// conv_transpose: W [C_in, C_out / group, k...]; input channel ci of
/// group g = ci / (C_in / group) feeds output channels g * (C_out / group)
/// + j.
bool foldIntoConvTranspose(BatchNormalizationOp bn) {
  ref::Tensor w, bias;
  bool hasBias;
  Operation *convT = producerOf(bn, w, bias, hasBias);
  if (!convT || !isa<ConvTransposeOp>(convT) || w.rank() < 2)
    return false;
  int64_t group = 1;
  if (auto attr = convT->getAttrOfType<IntegerAttr>("group"))
    group = attr.getInt();
  int64_t cin = w.dim(0), perGroup = w.dim(1);
  if (group < 1 || cin % group != 0)
    return false;
  int64_t oc = perGroup * group;
  ChannelAffine a;
  if (!channelAffine(bn, oc, hasBias ? &bias : nullptr, a))
    return false;
  int64_t taps = perGroup ? w.numel() / (cin * perGroup) : 0;
  ref::Tensor newW(ref::DType::F32, w.shape());
  for (int64_t ci = 0; ci < cin; ++ci)
    for (int64_t j = 0; j < perGroup; ++j) {
      double s = a.s[ci / (cin / group) * perGroup + j];
      int64_t base = (ci * perGroup + j) * taps;
      for (int64_t i = 0; i < taps; ++i)
        newW.data<float>()[base + i] =
            static_cast<float>(w.data<float>()[base + i] * s);
    }
  replaceWithClone(bn, convT, newW, rowTensor(a.t));
  return true;
}

/// gemm and matmul with a constant B on a 2-D [N, C] activation: the BN
/// normalises columns, so column c of B' (row c when transB) scales by
/// s[c]. Gemm's C must be a row (or absent); it becomes the folded bias,
/// beta 1. A matmul gets an add of the bias row after it.
bool foldIntoProduct(BatchNormalizationOp bn) {
  Operation *op = bn.getOperation();
  auto xType = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  Operation *producer = op->getOperand(0).getDefiningOp();
  if (!xType || xType.getRank() != 2 || !xType.hasStaticShape() || !producer ||
      !isa<GemmOp, MatMulOp>(producer) || !producer->getResult(0).hasOneUse())
    return false;
  ref::Tensor w;
  if (!constantF32(producer->getOperand(1), w) || w.rank() != 2)
    return false;
  // transA changes only A: Y's columns are B's columns either way.
  bool isGemm = isa<GemmOp>(producer);
  auto tb = producer->getAttrOfType<IntegerAttr>("transB");
  bool transB = isGemm && tb && tb.getInt() != 0;
  int64_t channels = xType.getDimSize(1);
  if (w.dim(transB ? 0 : 1) != channels)
    return false;
  // Gemm's C as a row of `channels` values, times beta.
  ref::Tensor bias;
  bool hasBias = false;
  if (isGemm && producer->getNumOperands() > 2 &&
      !isa<NoneType>(producer->getOperand(2).getType())) {
    ref::Tensor c;
    if (!constantF32(producer->getOperand(2), c) || c.rank() > 2 ||
        (c.rank() == 2 && c.dim(0) != 1))
      return false;
    int64_t last = c.rank() ? c.dim(c.rank() - 1) : 1;
    if (last != channels && last != 1)
      return false;
    float beta = 1.0f;
    if (auto attr = producer->getAttrOfType<FloatAttr>("beta"))
      beta = static_cast<float>(attr.getValueAsDouble());
    bias = ref::Tensor(ref::DType::F32, {channels});
    for (int64_t j = 0; j < channels; ++j)
      bias.data<float>()[j] = beta * c.data<float>()[last == 1 ? 0 : j];
    hasBias = true;
  }
  ChannelAffine a;
  if (!channelAffine(bn, channels, hasBias ? &bias : nullptr, a))
    return false;
  ref::Tensor newW(ref::DType::F32, w.shape());
  int64_t cols = w.dim(1);
  for (int64_t i = 0; i < w.dim(0); ++i)
    for (int64_t j = 0; j < cols; ++j)
      newW.data<float>()[i * cols + j] = static_cast<float>(
          w.data<float>()[i * cols + j] * a.s[transB ? i : j]);
  if (isGemm) {
    Operation *gemm = producer;
    if (gemm->getNumOperands() < 3)
      return false;
    gemm->setAttr("beta",
                  FloatAttr::get(Float32Type::get(op->getContext()), 1.0));
    replaceWithClone(bn, gemm, newW, rowTensor(a.t));
    return true;
  }
  OpBuilder b(op);
  Value wConst = constantOf(b, producer->getLoc(), newW);
  Operation *mm = b.clone(*producer);
  mm->setOperand(1, wConst);
  Value biasConst = constantOf(b, producer->getLoc(), rowTensor(a.t));
  auto add = b.create<AddOp>(op->getLoc(), op->getResult(0).getType(),
                             mm->getResult(0), biasConst);
  op->getResult(0).replaceAllUsesWith(add.getResult());
  op->erase();
  producer->erase();
  return true;
}

struct FoldBatchNorm : impl::FoldBatchNormBase<FoldBatchNorm> {
  void runOnOperation() override {
    SmallVector<BatchNormalizationOp> candidates;
    getOperation().walk(
        [&](BatchNormalizationOp bn) { candidates.push_back(bn); });
    for (BatchNormalizationOp bn : candidates)
      (void)(foldIntoConv(bn) || foldIntoQdqConv(bn) ||
             foldIntoConvTranspose(bn) || foldIntoProduct(bn));
  }
};

} // namespace
} // namespace mlcc::graph
