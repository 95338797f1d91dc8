//===- FusedOpDecomposition.h - Fused ops as ONNX-level ops -*- C++ -*-=======//
//
// Every op of GraphFusedOps.td stands for a group of ONNX-level ops; this
// builds that group again. A backend without a kernel for a fused op (the
// portable lowering, a new target) computes it through the ops it already
// lowers, and mlcc-decompose-fused-ops undoes the fusion passes for a whole
// function.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_DIALECTS_GRAPH_IR_FUSEDOPDECOMPOSITION_H
#define MLCC_DIALECTS_GRAPH_IR_FUSEDOPDECOMPOSITION_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"

namespace mlcc::graph {

/// Builds at `b`'s insertion point the graph ops that compute the single
/// result of the fused op `op` from its operands, with `op`'s location, and
/// returns the value that stands for that result. `op` itself is left
/// alone. Fails, building nothing, for an op that has no decomposition (not
/// a fused op, or an attribute value it does not know).
mlir::FailureOr<mlir::Value> decomposeFusedOp(mlir::Operation *op,
                                              mlir::OpBuilder &b);

} // namespace mlcc::graph

#endif // MLCC_DIALECTS_GRAPH_IR_FUSEDOPDECOMPOSITION_H
