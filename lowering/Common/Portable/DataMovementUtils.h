//===- DataMovementUtils.h - Data movement helpers ------------*- C++ -*-===//
//
// The data movement lowerings (reshape, transpose, concat, slice, gather,
// scatter, pad, ...) copy elements without looking at them, so they share a
// few building blocks: views of whole buffers with another shape, copies
// through linalg.generic with an affine source map, scf loop nests for
// data-dependent addressing, and index operands that fold to constants when
// the graph gives them as graph.constant and are loaded at run time
// otherwise.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_PORTABLE_DATAMOVEMENTUTILS_H
#define MLCC_LOWERING_COMMON_PORTABLE_DATAMOVEMENTUTILS_H

#include "PortableLowering.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace mlcc::portable {

namespace dm {

// The parts of the family kept in their own files; both are called by
// registerPortableDataMovement.
void registerIndexing(PortableRegistry &registry);
void registerGenerators(PortableRegistry &registry);

using LoopBody = llvm::function_ref<void(mlir::OpBuilder &, mlir::Location,
                                         mlir::ValueRange)>;

//===--- Types and attributes ---------------------------------------------===//

/// The static shape of a buffer (memref) or tensor value.
llvm::ArrayRef<int64_t> shapeOf(mlir::Value shaped);
int64_t numElements(llvm::ArrayRef<int64_t> shape);
/// Whether graph value `v` holds unsigned integers (the buffers cannot tell).
bool isUnsignedValue(mlir::Value graphValue);

int64_t intAttr(mlir::Operation *op, llvm::StringRef name, int64_t dflt);
std::string strAttr(mlir::Operation *op, llvm::StringRef name,
                    llvm::StringRef dflt);
/// An integer array attribute; false when absent.
bool intsAttr(mlir::Operation *op, llvm::StringRef name,
              llvm::SmallVectorImpl<int64_t> &out);
/// Maps `axis` in [-rank, rank) to [0, rank); false when out of range.
bool normalizeAxis(int64_t axis, int64_t rank, int64_t &out);

/// The values of operand `i` of the graph op when it is an integer
/// graph.constant (dense or resource); false otherwise (absent operand,
/// value computed at run time).
bool constantInts(mlir::Operation *op, unsigned i,
                  llvm::SmallVectorImpl<int64_t> &out);

//===--- Scalars ----------------------------------------------------------===//

mlir::Value indexConst(mlir::OpBuilder &b, mlir::Location loc, int64_t v);
/// Zero / one of a storage element type (float, integer or i1).
mlir::Value zeroOf(mlir::OpBuilder &b, mlir::Location loc, mlir::Type t);
mlir::Value oneOf(mlir::OpBuilder &b, mlir::Location loc, mlir::Type t);
/// A scalar of any storage type as an index (floats truncate toward zero,
/// integers extend by `isUnsigned`).
mlir::Value toIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                    bool isUnsigned);
/// A scalar of any storage type as i64, as toIndex.
mlir::Value toI64(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                  bool isUnsigned);
/// Element `linear` (row-major) of a buffer, at constant coordinates.
mlir::Value loadAt(mlir::OpBuilder &b, mlir::Location loc, mlir::Value buffer,
                   int64_t linear);
/// Element `linear` of operand `i` as an index: a constant when the graph
/// operand is a graph.constant, otherwise loaded from its buffer.
mlir::Value operandIndexAt(PortableOp &p, unsigned i, int64_t linear);

/// idx < 0 ? idx + dim : idx, then clamped into [0, dim).
mlir::Value normalizeIndex(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value idx, int64_t dim);
/// max(lo, min(v, hi)) on index values.
mlir::Value clampIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                       int64_t lo, int64_t hi);

//===--- Buffers and loops ------------------------------------------------===//

/// The same contiguous buffer seen with another static shape (same count).
mlir::Value viewAs(mlir::OpBuilder &b, mlir::Location loc, mlir::Value buffer,
                   llvm::ArrayRef<int64_t> shape);
/// Copies all elements of `src` into `dst` in row-major order (same count,
/// any shapes): one memcpy.
void copyFlat(mlir::OpBuilder &b, mlir::Location loc, mlir::Value src,
              mlir::Value dst);
/// dst[d0..dn-1] = src[srcExprs(d0..dn-1)] for every element of dst, as a
/// linalg.generic. Pure-dim source results must span the whole source dim
/// (linalg's verifier checks it); use a subview otherwise.
void copyGeneric(mlir::OpBuilder &b, mlir::Location loc, mlir::Value src,
                 mlir::Value dst, llvm::ArrayRef<mlir::AffineExpr> srcExprs);
/// An scf.for nest over `shape` (nothing when it is empty of elements; the
/// body runs once, without loops, for rank 0): for bodies that write
/// through indices from data (scatters), where iterations may collide.
void loopNest(mlir::OpBuilder &b, mlir::Location loc,
              llvm::ArrayRef<int64_t> shape, LoopBody body);
/// The same as one scf.parallel, for bodies that write only the elements
/// their induction variables name (see ParallelLoops.h).
void parallelNest(mlir::OpBuilder &b, mlir::Location loc,
                  llvm::ArrayRef<int64_t> shape, LoopBody body);

} // namespace dm
} // namespace mlcc::portable

#endif // MLCC_LOWERING_COMMON_PORTABLE_DATAMOVEMENTUTILS_H
