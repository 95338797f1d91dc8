//===- FusedOpDecomposition.cpp - Fused ops as their ONNX-level ops -------===//

#include "FusedOpDecomposition.h"

#include "GraphDialect.h"

#include <limits>

using namespace mlir;

namespace mlcc::graph {
namespace {

/// Creates a one-result graph op `name` with `operands`, result type `type`
/// and `attrs`.
Value create(OpBuilder &b, Location loc, StringRef name, ValueRange operands,
             Type type, ArrayRef<NamedAttribute> attrs = {}) {
  OperationState state(loc, "graph." + name.str());
  state.addOperands(operands);
  state.addTypes(type);
  state.addAttributes(attrs);
  return b.create(state)->getResult(0);
}

/// A rank-0 constant of `type`'s element type (a float), or `none` when it
/// is the default `dflt` of the bound it stands for.
Value clipBound(OpBuilder &b, Location loc, Type type, float value,
                float dflt) {
  if (value == dflt)
    return b.create<NoneOp>(loc);
  auto elem = cast<FloatType>(cast<ShapedType>(type).getElementType());
  auto scalar = RankedTensorType::get({}, elem);
  return b.create<ConstantOp>(
      loc, DenseElementsAttr::get(scalar, b.getFloatAttr(elem, value)));
}

/// act(x) with the activation encoding of GraphFusedOps.td; null for an
/// unknown activation.
Value activation(OpBuilder &b, Location loc, Operation *op, Value x) {
  auto name = op->getAttrOfType<StringAttr>("activation");
  StringRef act = name ? name.getValue() : "none";
  auto floatAttr = [&](StringRef attr) {
    auto a = op->getAttrOfType<FloatAttr>(attr);
    return a ? static_cast<float>(a.getValueAsDouble()) : 0.0f;
  };
  Type type = x.getType();
  if (act == "none")
    return x;
  if (act == "relu" || act == "sigmoid" || act == "tanh" || act == "hard_swish")
    return create(b, loc, act, x, type);
  if (act == "leaky_relu")
    return create(b, loc, act, x, type,
                  b.getNamedAttr("alpha", b.getF32FloatAttr(
                                              floatAttr("activation_alpha"))));
  if (act == "clip") {
    Value lo = clipBound(b, loc, type, floatAttr("activation_alpha"),
                         std::numeric_limits<float>::lowest());
    Value hi = clipBound(b, loc, type, floatAttr("activation_beta"),
                         std::numeric_limits<float>::max());
    return create(b, loc, "clip", {x, lo, hi}, type);
  }
  if (act == "silu") {
    Value s = create(b, loc, "sigmoid", x, type);
    return create(b, loc, "mul", {x, s}, type);
  }
  if (act == "gelu" || act == "gelu_tanh")
    return create(
        b, loc, "gelu", x, type,
        b.getNamedAttr("approximate",
                       b.getStringAttr(act == "gelu" ? "none" : "tanh")));
  return {};
}

/// graph.fused_conv: conv, then add of the residual, then the activation.
FailureOr<Value> decomposeFusedConv(FusedConvOp op, OpBuilder &b) {
  auto act = op->getAttrOfType<StringAttr>("activation");
  if (act && !llvm::is_contained(fusedActivations(), act.getValue()))
    return failure();
  Location loc = op.getLoc();
  Type type = op.getResult().getType();
  SmallVector<NamedAttribute> convAttrs;
  for (NamedAttribute a : op->getAttrs())
    if (!a.getName().getValue().starts_with("activation"))
      convAttrs.push_back(a);
  Value y = create(b, loc, "conv", {op.getX(), op.getW(), op.getB()}, type,
                   convAttrs);
  if (!isa<NoneType>(op.getZ().getType()))
    y = create(b, loc, "add", {y, op.getZ()}, type);
  return activation(b, loc, op, y);
}

/// graph.attention: per head, softmax(Q_h K_h^T * scale + mask) V_h, with
/// the heads split and joined by reshapes and transposes, as the exports
/// spell it. Static [B, S, H*D] f32 operands only.
FailureOr<Value> decomposeAttention(AttentionOp op, OpBuilder &b) {
  auto type = dyn_cast<RankedTensorType>(op.getResult().getType());
  int64_t heads = op.getNumHeads();
  if (!type || !type.hasStaticShape() || type.getRank() != 3 || heads <= 0 ||
      type.getDimSize(2) % heads != 0)
    return failure();
  Location loc = op.getLoc();
  Type elem = type.getElementType();
  int64_t batch = type.getDimSize(0), seq = type.getDimSize(1),
          dim = type.getDimSize(2) / heads;
  auto tensor = [&](ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, elem);
  };
  auto shapeOf = [&](ArrayRef<int64_t> shape) -> Value {
    auto t = RankedTensorType::get({static_cast<int64_t>(shape.size())},
                                   b.getI64Type());
    return b.create<ConstantOp>(loc, DenseElementsAttr::get(t, shape));
  };
  auto perm = [&](ArrayRef<int64_t> p) {
    return b.getNamedAttr("perm", b.getI64ArrayAttr(p));
  };
  SmallVector<int64_t> split = {batch, seq, heads, dim};
  Value splitShape = shapeOf(split);
  // [B, S, H*D] -> [B, S, H, D] -> permuted.
  auto heads4 = [&](Value x, ArrayRef<int64_t> p) {
    Value r = create(b, loc, "reshape", {x, splitShape}, tensor(split));
    SmallVector<int64_t> shape;
    for (int64_t i : p)
      shape.push_back(split[i]);
    return create(b, loc, "transpose", r, tensor(shape), perm(p));
  };
  Value qh = heads4(op.getQ(), {0, 2, 1, 3});
  Value kh = heads4(op.getK(), {0, 2, 3, 1});
  RankedTensorType scoresType = tensor({batch, heads, seq, seq});
  Value s = create(b, loc, "matmul", {qh, kh}, scoresType);
  Value scale = b.create<ConstantOp>(
      loc, DenseElementsAttr::get(
               RankedTensorType::get({}, elem),
               b.getFloatAttr(elem, op.getScale().convertToFloat())));
  s = create(b, loc, "mul", {s, scale}, scoresType);
  if (!isa<NoneType>(op.getMask().getType()))
    s = create(b, loc, "add", {s, op.getMask()}, scoresType);
  s = create(b, loc, "softmax", s, scoresType,
             b.getNamedAttr("axis", b.getI64IntegerAttr(-1)));
  Value vh = heads4(op.getV(), {0, 2, 1, 3});
  Value ctx =
      create(b, loc, "matmul", {s, vh}, tensor({batch, heads, seq, dim}));
  Value back =
      create(b, loc, "transpose", ctx, tensor(split), perm({0, 2, 1, 3}));
  return create(b, loc, "reshape", {back, shapeOf({batch, seq, heads * dim})},
                type);
}

/// layer_norm(x, scale, bias) over the last axis: the ops the layer norm
/// fusions end in.
Value lastAxisLayerNorm(OpBuilder &b, Location loc, Value x, Value scale,
                        Value bias, FloatAttr epsilon) {
  Type none = b.getNoneType();
  NamedAttribute attrs[] = {b.getNamedAttr("axis", b.getI64IntegerAttr(-1)),
                            b.getNamedAttr("epsilon", epsilon)};
  return b
      .create<LayerNormalizationOp>(loc, TypeRange{x.getType(), none, none},
                                    ValueRange{x, scale, bias}, attrs)
      .getResult(0);
}

/// graph.embed_layer_norm: gather, add, layer_norm.
FailureOr<Value> decomposeEmbedLayerNorm(EmbedLayerNormOp op, OpBuilder &b) {
  auto type = dyn_cast<RankedTensorType>(op.getResult().getType());
  if (!type)
    return failure();
  Location loc = op.getLoc();
  Value e = create(b, loc, "gather", {op.getTable(), op.getIds()}, type,
                   b.getNamedAttr("axis", b.getI64IntegerAttr(0)));
  e = create(b, loc, "add", {e, op.getAddend()}, type);
  return lastAxisLayerNorm(b, loc, e, op.getScale(), op.getB(),
                           op.getEpsilonAttr());
}

/// graph.skip_layer_norm: add, layer_norm.
FailureOr<Value> decomposeSkipLayerNorm(SkipLayerNormOp op, OpBuilder &b) {
  Type type = op.getResult().getType();
  Location loc = op.getLoc();
  Value sum = create(b, loc, "add", {op.getX(), op.getSkip()}, type);
  return lastAxisLayerNorm(b, loc, sum, op.getScale(), op.getB(),
                           op.getEpsilonAttr());
}

} // namespace

FailureOr<Value> decomposeFusedOp(Operation *op, OpBuilder &b) {
  if (auto conv = dyn_cast<FusedConvOp>(op))
    return decomposeFusedConv(conv, b);
  if (auto attention = dyn_cast<AttentionOp>(op))
    return decomposeAttention(attention, b);
  if (auto embed = dyn_cast<EmbedLayerNormOp>(op))
    return decomposeEmbedLayerNorm(embed, b);
  if (auto skip = dyn_cast<SkipLayerNormOp>(op))
    return decomposeSkipLayerNorm(skip, b);
  return failure();
}

} // namespace mlcc::graph
