//===- GraphFusedOpVerifiers.cpp - checks of the optimizer's fused ops ----===//
//
// The fusion passes only form these ops from groups they have checked, but
// a hand-written or edited graph (mlcc-opt, tests, a .mlir model) reaches
// the backends too, and their kernels are generated from the attributes:
// an unknown activation or a head count that does not divide the hidden
// size is rejected here, with the op named, instead of deep in a backend.
// Dynamic dims are never an error.
//
//===----------------------------------------------------------------------===//

#include "GraphDialect.h"

#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace mlcc::graph;

llvm::ArrayRef<llvm::StringLiteral> mlcc::graph::fusedActivations() {
  static constexpr llvm::StringLiteral kActivations[] = {
      "none", "relu", "leaky_relu", "clip",      "sigmoid",
      "tanh", "silu", "gelu",       "gelu_tanh", "hard_swish"};
  return kActivations;
}

bool mlcc::graph::isFusedOpEpsilon(float epsilon) {
  return std::isfinite(epsilon) && epsilon >= 0.0f;
}

namespace {

RankedTensorType ranked(Value v) {
  return dyn_cast<RankedTensorType>(v.getType());
}

LogicalResult checkActivation(Operation *op, StringRef activation) {
  if (!llvm::is_contained(fusedActivations(), activation))
    return op->emitOpError("unknown activation '") << activation << "'";
  return success();
}

LogicalResult checkEpsilon(Operation *op, float epsilon) {
  if (!isFusedOpEpsilon(epsilon))
    return op->emitOpError("epsilon must be finite and >= 0, got ")
           << epsilon;
  return success();
}

/// A residual operand (or none) must have the result's shape.
LogicalResult checkSameShape(Operation *op, Value v, StringRef name,
                             Value like) {
  RankedTensorType t = ranked(v), l = ranked(like);
  if (!t || !l)
    return success();
  if (failed(verifyCompatibleShape(t.getShape(), l.getShape())))
    return op->emitOpError()
           << name << " has shape " << t << ", expected that of " << l;
  return success();
}

/// `v` (or none) must be a vector of `n` elements when both are static.
LogicalResult checkVector(Operation *op, Value v, StringRef name, int64_t n) {
  RankedTensorType t = ranked(v);
  if (!t)
    return success();
  if (t.getRank() != 1)
    return op->emitOpError() << name << " must have rank 1, got " << t;
  if (!ShapedType::isDynamic(n) && !t.isDynamicDim(0) && t.getDimSize(0) != n)
    return op->emitOpError() << name << " has " << t.getDimSize(0)
                             << " elements, expected " << n;
  return success();
}

int64_t lastDim(Value v) {
  RankedTensorType t = ranked(v);
  return t && t.getRank() > 0 ? t.getDimSize(t.getRank() - 1)
                              : ShapedType::kDynamic;
}

} // namespace

// graph.gelu
LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError("approximate must be 'none' or 'tanh', got '")
           << getApproximate() << "'";
  return success();
}

// graph.fused_conv
LogicalResult FusedConvOp::verify() {
  RankedTensorType x = ranked(getX()), w = ranked(getW());
  if (x && w && (x.getRank() < 3 || w.getRank() != x.getRank()))
    return emitOpError("expected X of rank >= 3 and W of X's rank, got ")
           << x << " and " << w;
  if (failed(checkActivation(*this, getActivation())))
    return failure();
  return checkSameShape(*this, getZ(), "residual Z", getY());
}

// graph.fc
LogicalResult FcOp::verify() {
  RankedTensorType x = ranked(getX()), w = ranked(getW());
  if (x && x.getRank() < 2)
    return emitOpError("X must have rank >= 2, got ") << x;
  if (w && w.getRank() != 2)
    return emitOpError("W must be K x N, got ") << w;
  if (x && w && !x.isDynamicDim(x.getRank() - 1) && !w.isDynamicDim(0) &&
      x.getDimSize(x.getRank() - 1) != w.getDimSize(0))
    return emitOpError("X's last dim ")
           << x.getDimSize(x.getRank() - 1) << " is not W's K "
           << w.getDimSize(0);
  if (failed(checkActivation(*this, getActivation())) ||
      failed(checkVector(*this, getB(), "bias B",
                         w ? w.getDimSize(1) : ShapedType::kDynamic)))
    return failure();
  return checkSameShape(*this, getZ(), "residual Z", getY());
}

// graph.attention
LogicalResult AttentionOp::verify() {
  int64_t heads = getNumHeads();
  if (heads <= 0)
    return emitOpError("num_heads must be > 0, got ") << heads;
  if (!std::isfinite(getScale().convertToFloat()))
    return emitOpError("scale must be finite");
  for (auto [v, name] : {std::pair{getQ(), "Q"}, {getK(), "K"}, {getV(), "V"}}) {
    RankedTensorType t = ranked(v);
    if (t && t.getRank() != 3)
      return emitOpError() << name << " must be [B, S, H*D], got " << t;
    int64_t hidden = lastDim(v);
    if (!ShapedType::isDynamic(hidden) && hidden % heads != 0)
      return emitOpError() << name << "'s last dim " << hidden
                           << " is not divisible by num_heads " << heads;
  }
  return success();
}

// graph.embed_layer_norm
LogicalResult EmbedLayerNormOp::verify() {
  RankedTensorType ids = ranked(getIds()), table = ranked(getTable());
  if (ids && (ids.getRank() != 2 || !isa<IntegerType>(ids.getElementType())))
    return emitOpError("Ids must be integers [B, S], got ") << ids;
  if (table && table.getRank() != 2)
    return emitOpError("Table must be [V, D], got ") << table;
  int64_t dim = lastDim(getTable());
  if (failed(checkEpsilon(*this, getEpsilon().convertToFloat())) ||
      failed(checkVector(*this, getScale(), "Scale", dim)))
    return failure();
  return checkVector(*this, getB(), "B", dim);
}

// graph.skip_layer_norm
LogicalResult SkipLayerNormOp::verify() {
  int64_t dim = lastDim(getX());
  if (failed(checkEpsilon(*this, getEpsilon().convertToFloat())) ||
      failed(checkSameShape(*this, getSkip(), "Skip", getX())) ||
      failed(checkVector(*this, getScale(), "Scale", dim)))
    return failure();
  return checkVector(*this, getB(), "B", dim);
}
