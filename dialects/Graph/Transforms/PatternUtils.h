//===- PatternUtils.h - Small matchers the fusion passes share --*- C++ -*-===//
//
// The questions every fusion pass asks while walking a group of ops: is
// this value used once, what is the binary op's other operand, is this op
// elementwise, what is this constant's data; and a constant of data.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_DIALECTS_GRAPH_TRANSFORMS_PATTERNUTILS_H
#define MLCC_DIALECTS_GRAPH_TRANSFORMS_PATTERNUTILS_H

#include "GraphDialect.h"
#include "mlcc/Reference/MlirBridge.h"

#include <optional>

namespace mlcc::graph {

/// The single user of `v`, when it has exactly one use; else null.
inline mlir::Operation *soleUser(mlir::Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

/// If the binary `op` has `v` as one operand, the other one; else null.
inline mlir::Value otherOperand(mlir::Operation *op, mlir::Value v) {
  if (op->getOperand(0) == v)
    return op->getOperand(1);
  if (op->getOperand(1) == v)
    return op->getOperand(0);
  return nullptr;
}

/// Ops that compute each output element from the same element of each
/// operand (operands of the output's shape; size-1 ones broadcast).
inline bool isElementwise(mlir::Operation *op) {
  return op->getNumResults() == 1 &&
         mlir::isa<AbsOp, CastOp, CeilOp, CeluOp, ClipOp, CosOp, EluOp, ErfOp,
                   ExpOp, FloorOp, GeluOp, HardSigmoidOp, HardSwishOp,
                   IdentityOp, IsNaNOp, LeakyReluOp, LogOp, NegOp, NotOp,
                   ReciprocalOp, ReluOp, RoundOp, SeluOp, SigmoidOp, SignOp,
                   SinOp, SoftplusOp, SoftsignOp, SqrtOp, TanhOp,
                   ThresholdedReluOp, AddOp, SubOp, MulOp, DivOp, PowOp, AndOp,
                   OrOp, EqualOp, LessOp, GreaterOp, WhereOp>(op);
}

/// The data of `v` when it is a graph.constant, of any element type.
inline bool constantTensor(mlir::Value v, ref::Tensor &t) {
  auto c = v.getDefiningOp<ConstantOp>();
  return c && tensorFromElementsAttr(c.getValue(), t).ok();
}

/// The data of `v` when it is a graph.constant of f32 elements.
inline bool constantF32(mlir::Value v, ref::Tensor &t) {
  auto c = v.getDefiningOp<ConstantOp>();
  return c && c.getValue().getElementType().isF32() && constantTensor(v, t);
}

/// A graph.constant holding `t`.
inline mlir::Value constantOf(mlir::OpBuilder &b, mlir::Location loc,
                              const ref::Tensor &t) {
  return b.create<ConstantOp>(loc, elementsAttrFromTensor(b.getContext(), t));
}

/// Whether a fused norm op (skip_layer_norm, embed_layer_norm) can take the
/// place of `ln`, whose X is ranked: graph.layer_norm also takes a scale or
/// bias that broadcasts and any epsilon, a fused op only vectors of X's last
/// dim (or none) and an epsilon finite and >= 0. The epsilon when it can
/// (ONNX's default 1e-5 when `ln` has none), else nullopt.
inline std::optional<float> fusedNormEpsilon(LayerNormalizationOp ln) {
  int64_t dim =
      mlir::cast<mlir::RankedTensorType>(ln.getX().getType()).getShape().back();
  for (mlir::Value v : {mlir::Value(ln.getScale()), ln.getB()}) {
    if (mlir::isa<mlir::NoneType>(v.getType()))
      continue;
    auto t = mlir::dyn_cast<mlir::RankedTensorType>(v.getType());
    if (!t || t.getRank() != 1 || t.getDimSize(0) != dim)
      return std::nullopt;
  }
  float epsilon = ln.getEpsilonAttr()
                      ? ln.getEpsilonAttr().getValue().convertToFloat()
                      : 1e-5f;
  if (!isFusedOpEpsilon(epsilon))
    return std::nullopt;
  return epsilon;
}

/// Erases the ops of a replaced group, in whatever order they are listed:
/// each goes once nothing uses it. Every user of a group op must be in the
/// group (or already gone).
inline void eraseGroup(llvm::ArrayRef<mlir::Operation *> ops) {
  llvm::SmallVector<mlir::Operation *> pending(ops.begin(), ops.end());
  while (!pending.empty())
    for (auto it = pending.begin(); it != pending.end();) {
      if ((*it)->use_empty()) {
        (*it)->erase();
        it = pending.erase(it);
      } else {
        ++it;
      }
    }
}

} // namespace mlcc::graph

#endif // MLCC_DIALECTS_GRAPH_TRANSFORMS_PATTERNUTILS_H
