//===- RunTimeExtents.h - Dims known only when the model runs ---*- C++ -*-===//
//
// Ops such as NonZero, Compress, Unique and NonMaxSuppression give results
// whose length depends on the data. A compiled target computes them in a
// buffer of the bound shape (the most the op can give, known from its
// operands' static shapes) and keeps the actual extent as a run-time value
// beside it. mlcc-bound-run-time-extents writes the bound shapes into the
// types and records, for each result dim, where its extent comes from:
//
//   graph.run_time_extents = [array<i64: -1, -2>, array<i64>]
//
// one array per result (empty for a result whose shape is static), one
// entry per dim: kStaticExtent (the type's dim is exact), kOwnExtent (the op
// itself computes the extent at run time) or an operand's dim (encoded by
// operandExtent(k, j): the dim equals dim j of operand k, as in a gather's
// result dims that come from its indices). A function result whose dims
// are bounds lists those dims in the same attribute (a result attribute),
// so that the model's interface says which output extents come at run
// time. Anything else about the value (element type, static dims) is as
// usual.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_DIALECTS_GRAPH_IR_RUNTIMEEXTENTS_H
#define MLCC_DIALECTS_GRAPH_IR_RUNTIMEEXTENTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace mlcc::graph {

/// On an op of a variant of a range of lengths (`mlcc compile --dim
/// seq=1..512`, compiled for a bucket of them) that mixes positions along
/// that dim (attention over its keys): the op must compute over the run's
/// length only (OpLoweringContext::runTimeLength), never the padding past
/// it. A unit attribute, set by the driver's proof (mlcc/Driver/PaddedDim.h).
constexpr llvm::StringLiteral kRunTimeLengthAttr = "graph.run_time_length";

/// On an op of such a variant whose first result has that dim: its axis
/// there (an i64). Its lowering may
/// compute the positions before the run's length only, leaving the padding
/// of its results unwritten (the proof shows nothing reads it into a
/// position before the length).
constexpr llvm::StringLiteral kPaddedAxisAttr = "graph.padded_axis";

/// The attribute's name, on ops and on function results.
constexpr llvm::StringLiteral kRunTimeExtentsAttr = "graph.run_time_extents";

constexpr int64_t kStaticExtent = -1;
constexpr int64_t kOwnExtent = -2;
/// Dims per operand in the encoding (ranks are far below this).
constexpr int64_t kMaxExtentRank = 64;

inline int64_t operandExtent(unsigned operand, unsigned dim) {
  return static_cast<int64_t>(operand) * kMaxExtentRank + dim;
}
inline unsigned extentOperand(int64_t source) {
  return static_cast<unsigned>(source / kMaxExtentRank);
}
inline unsigned extentOperandDim(int64_t source) {
  return static_cast<unsigned>(source % kMaxExtentRank);
}

/// Where each dim of `v` (an op result) gets its extent; empty when every
/// dim is static.
llvm::SmallVector<int64_t> extentSources(mlir::Value v);
/// Whether some dim of `v` is known only at run time.
bool hasRunTimeExtents(mlir::Value v);
/// Records the sources of result `i` of `op` (empty: static).
void setExtentSources(mlir::Operation *op, unsigned i,
                      llvm::ArrayRef<int64_t> sources);

/// The dims of function result `i` that are bounds, their extents known
/// only at run time (empty when none).
llvm::SmallVector<int64_t> runTimeOutputDims(mlir::func::FuncOp func,
                                             unsigned i);

} // namespace mlcc::graph

#endif // MLCC_DIALECTS_GRAPH_IR_RUNTIMEEXTENTS_H
