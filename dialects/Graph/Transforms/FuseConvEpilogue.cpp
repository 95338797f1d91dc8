//===- FuseConvEpilogue.cpp - conv + bias + residual + act -> fused_conv --===//
//
// After a convolution, CNNs apply a per-channel bias, add a skip connection
// and an activation: each a full pass over the conv's output in memory. One
// graph.fused_conv carries the whole group, so a backend applies the
// epilogue to the accumulators while they are still in registers (ResNet's
// conv + Add + Relu, MobileNet's conv + Clip(0, 6) and conv + Add).
//
// From each graph.conv the group grows along sole users, in this order:
//   1. graph.add of a constant per-channel bias ([C, 1, 1] or [1, C, 1, 1]),
//      folded into the conv's bias;
//   2. graph.add of a residual of exactly the conv's (static) type, in
//      either operand order;
//   3. one activation: relu, leaky_relu, clip with constant bounds, sigmoid,
//      tanh, hard_swish, graph.gelu, or x * sigmoid(x) (silu).
// Every value inside the group has no user outside it, so nothing computed
// in between is lost. Runs after mlcc-fold-batch-norm, which has moved the
// batch norms into the convs' weights and bias already.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"
#include "PatternUtils.h"

#include "GraphDialect.h"
#include "mlcc/Reference/MlirBridge.h"

#include <limits>

namespace mlcc::graph {
#define GEN_PASS_DEF_FUSECONVEPILOGUE
#include "Passes.h.inc"
} // namespace mlcc::graph

using namespace mlir;

namespace mlcc::graph {
namespace {

bool isStatic(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape();
}

/// A constant [C, 1, 1] or [1, C, 1, 1] f32 tensor added to a [N, C, H, W]
/// f32 conv output: one value per output channel.
bool perChannelConstant(Value v, Value convOut, ref::Tensor &t) {
  auto out = dyn_cast<RankedTensorType>(convOut.getType());
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!out || !type || !out.hasStaticShape() || !type.hasStaticShape() ||
      out.getRank() < 3 || !out.getElementType().isF32())
    return false;
  int64_t c = out.getDimSize(1);
  ArrayRef<int64_t> s = type.getShape();
  size_t spatial = out.getRank() - 2;
  SmallVector<int64_t> want(spatial + 1, 1), withBatch(spatial + 2, 1);
  want[0] = c;
  withBatch[1] = c;
  if (s != ArrayRef<int64_t>(want) && s != ArrayRef<int64_t>(withBatch))
    return false;
  return constantF32(v, t) && t.numel() == c;
}

/// A clip bound: absent (`dflt`) or a one-element float constant.
bool clipBound(Operation *clip, unsigned i, float dflt, float &value) {
  value = dflt;
  if (i >= clip->getNumOperands() ||
      isa<NoneType>(clip->getOperand(i).getType()))
    return true;
  auto c = clip->getOperand(i).getDefiningOp<ConstantOp>();
  ref::Tensor t;
  if (!c || !isa<FloatType>(c.getValue().getElementType()) ||
      tensorFromElementsAttr(c.getValue(), t).failed() || t.numel() != 1)
    return false;
  value = static_cast<float>(t.getDouble(0));
  return true;
}

/// A recognised group and what the fused op gets from it.
struct Epilogue {
  Value bias;              // the conv's
  bool hasNewBias = false; // then newBias replaces it:
  ref::Tensor newBias;     // the conv's bias + the per-channel constant
  Value residual;          // or null
  std::string activation = "none";
  float alpha = 0.0f, beta = 0.0f;
  /// The ops replaced, in program order, the conv first; the last one's
  /// result is the group's.
  SmallVector<Operation *> ops;
};

/// Matches the activation reading `v`; on success appends its ops.
bool matchActivation(Value v, Epilogue &e) {
  // silu: x * sigmoid(x), x's only two users.
  if (!v.hasOneUse() && std::distance(v.use_begin(), v.use_end()) == 2) {
    SigmoidOp sigmoid;
    MulOp mul;
    for (Operation *user : v.getUsers()) {
      if (auto s = dyn_cast<SigmoidOp>(user))
        sigmoid = s;
      else if (auto m = dyn_cast<MulOp>(user))
        mul = m;
    }
    if (!sigmoid || !mul || soleUser(sigmoid.getResult()) != mul ||
        otherOperand(mul, v) != sigmoid.getResult() ||
        mul.getResult().getType() != v.getType())
      return false;
    e.activation = "silu";
    e.ops.push_back(sigmoid);
    e.ops.push_back(mul);
    return true;
  }
  Operation *user = soleUser(v);
  if (!user || user->getNumResults() != 1 || user->getOperand(0) != v ||
      user->getResult(0).getType() != v.getType())
    return false;
  if (isa<ReluOp>(user)) {
    e.activation = "relu";
  } else if (isa<SigmoidOp>(user)) {
    e.activation = "sigmoid";
  } else if (isa<TanhOp>(user)) {
    e.activation = "tanh";
  } else if (isa<HardSwishOp>(user)) {
    e.activation = "hard_swish";
  } else if (auto gelu = dyn_cast<GeluOp>(user)) {
    e.activation = gelu.getApproximate() == "tanh" ? "gelu_tanh" : "gelu";
  } else if (isa<LeakyReluOp>(user)) {
    e.activation = "leaky_relu";
    e.alpha = 0.01f;
    if (auto a = user->getAttrOfType<FloatAttr>("alpha"))
      e.alpha = static_cast<float>(a.getValueAsDouble());
  } else if (isa<ClipOp>(user)) {
    // Absent bounds are ONNX's defaults, float's lowest and max.
    if (!clipBound(user, 1, std::numeric_limits<float>::lowest(), e.alpha) ||
        !clipBound(user, 2, std::numeric_limits<float>::max(), e.beta))
      return false;
    e.activation = "clip";
  } else {
    return false;
  }
  e.ops.push_back(user);
  return true;
}

/// Recognises the group that starts at `conv`; false when there is nothing
/// to fuse.
bool matchGroup(ConvOp conv, Epilogue &e) {
  Value cur = conv.getResult();
  Value bias = conv->getOperand(2);
  e.bias = bias;
  e.ops.push_back(conv);

  // 1. A constant per-channel bias.
  auto add = dyn_cast_or_null<AddOp>(soleUser(cur));
  ref::Tensor c;
  if (add && add.getResult().getType() == cur.getType() &&
      perChannelConstant(otherOperand(add, cur), cur, c)) {
    ref::Tensor old;
    bool hasBias = !isa<NoneType>(bias.getType());
    if (!hasBias || (constantF32(bias, old) && old.numel() == c.numel())) {
      e.hasNewBias = true;
      e.newBias = ref::Tensor(ref::DType::F32, {c.numel()});
      for (int64_t i = 0; i < c.numel(); ++i)
        e.newBias.data<float>()[i] =
            (hasBias ? old.data<float>()[i] : 0.0f) + c.data<float>()[i];
      e.ops.push_back(add);
      cur = add.getResult();
    }
  }

  // 2. A residual of the same shape.
  add = dyn_cast_or_null<AddOp>(soleUser(cur));
  if (add && isStatic(cur) && add.getResult().getType() == cur.getType()) {
    Value z = otherOperand(add, cur);
    if (z && z.getType() == cur.getType()) {
      e.residual = z;
      e.ops.push_back(add);
      cur = add.getResult();
    }
  }

  // 3. An activation.
  matchActivation(cur, e);
  return e.ops.size() > 1;
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

void fuse(ConvOp conv, Epilogue &e) {
  Operation *last = e.ops.back();
  OpBuilder b(last);
  Location loc = last->getLoc();
  Value bias = e.bias;
  if (e.hasNewBias)
    bias = b.create<ConstantOp>(
        conv.getLoc(), elementsAttrFromTensor(b.getContext(), e.newBias));
  Value residual = e.residual ? e.residual : noneBefore(last);
  OperationState state(loc, FusedConvOp::getOperationName());
  state.addOperands({conv->getOperand(0), conv->getOperand(1), bias, residual});
  state.addTypes(last->getResult(0).getType());
  state.addAttributes(conv->getAttrs());
  state.addAttribute("activation", b.getStringAttr(e.activation));
  state.addAttribute("activation_alpha", b.getF32FloatAttr(e.alpha));
  state.addAttribute("activation_beta", b.getF32FloatAttr(e.beta));
  // The fused op carries the last op's name: its output is that op's.
  Operation *fused = b.create(state);
  last->getResult(0).replaceAllUsesWith(fused->getResult(0));
  for (Operation *op : llvm::reverse(e.ops))
    op->erase();
}

struct FuseConvEpilogue : impl::FuseConvEpilogueBase<FuseConvEpilogue> {
  void runOnOperation() override {
    SmallVector<ConvOp> convs;
    getOperation().walk([&](ConvOp conv) { convs.push_back(conv); });
    for (ConvOp conv : convs) {
      Epilogue e;
      if (matchGroup(conv, e))
        fuse(conv, e);
    }
  }
};

} // namespace
} // namespace mlcc::graph
