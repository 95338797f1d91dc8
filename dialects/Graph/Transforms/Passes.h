//===- Passes.h - graph dialect passes --------------------------*- C++ -*-===//

#ifndef MLCC_DIALECTS_GRAPH_TRANSFORMS_PASSES_H
#define MLCC_DIALECTS_GRAPH_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlcc::graph {

#define GEN_PASS_DECL
#include "Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Passes.h.inc"

/// Refines the result types of `op` with its shape helper. Fails (after
/// emitting an error on `op`) when the helper rejects the operands or
/// contradicts a static declared type. Ops without a helper are left alone.
mlir::LogicalResult refineResultTypes(mlir::Operation *op);

/// Evaluates `op` with its reference kernel when all its operands are
/// constant (for graph.shape / graph.size: when the operand type is static)
/// and its results are static and at most `maxBytes`; then replaces the
/// results with graph.constant and erases `op`. `replacements`, if given,
/// receives the values that now stand for the results (the op's own results
/// when it was not folded). Fails, after an error on `op`, only when the
/// kernel rejects the constant operands.
mlir::LogicalResult
foldConstantOp(mlir::Operation *op, int64_t maxBytes,
               llvm::SmallVectorImpl<mlir::Value> *replacements = nullptr);

/// Makes the function's type match what its return op returns.
void updateFunctionType(mlir::func::FuncOp func);

} // namespace mlcc::graph

#endif // MLCC_DIALECTS_GRAPH_TRANSFORMS_PASSES_H
