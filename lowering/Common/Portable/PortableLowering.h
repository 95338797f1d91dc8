//===- PortableLowering.h - Graph ops through MLIR's own dialects -*- C++ -*-===//
//
// The long tail: every graph op that a target has no hand-written kernel for
// is lowered here, into linalg/scf/arith/math/memref code inside the host
// entry function, and from there through MLIR's conversions to LLVM IR in
// the same object. Nothing here is target-specific; a target's own kernels
// (lowering/AVX512) take the ops they are best at first.
//
// A lowering receives the graph op (for its attributes and tensor types) and
// one buffer per operand and per result: a memref with the tensor's static
// shape, identity layout and the *storage* element type (storageType()),
// already allocated. It writes every element of every result buffer and
// nothing else. Operand buffers are read-only and never alias a result.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_PORTABLE_PORTABLELOWERING_H
#define MLCC_LOWERING_COMMON_PORTABLE_PORTABLELOWERING_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/ValueRange.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <string>

namespace mlcc::portable {

/// What a lowering gets for one op.
struct PortableOp {
  /// The graph op; its operands/results keep their tensor types (so
  /// signedness of ui8/ui16/... is visible there).
  mlir::Operation *op;
  /// Insertion point inside the host entry function.
  mlir::OpBuilder &b;
  mlir::Location loc;
  /// One memref per operand of `op`, in order; a null Value for a `none`
  /// (absent optional) operand. Read-only.
  llvm::SmallVector<mlir::Value> operands;
  /// One memref per result of `op`, in order. Write-only.
  llvm::SmallVector<mlir::Value> results;
  /// Run-time extents (graph/RunTimeExtents.h). For each result with dims
  /// known only at run time (the outputs of nonzero, compress, unique,
  /// non_max_suppression), a memref<rank x i64> where the lowering stores
  /// the result's actual dims; null for the other results. Such a result's
  /// buffer has the bound shape of its type, and the lowering writes it in
  /// that (padded) layout: the elements of the actual extents, zeros in the
  /// rest, so that ops reading the padding (gathers) stay in range. For
  /// each operand with run-time extents, operandExtents holds its dims the
  /// same way (read-only); null for the others.
  llvm::SmallVector<mlir::Value> resultExtents, operandExtents;
  /// Emits a run-time check at the builder's point: when `cond` (i1) holds,
  /// the entry returns MLCC_SHAPE_MISMATCH with `what` after the node's
  /// name. For scalar operands read at run time that must agree with the
  /// static shapes the op was compiled for (a window's size, STFT's frame
  /// length); the lowering still writes only inside its buffers.
  std::function<void(mlir::Value cond, const std::string &what)> failIf;
};

/// Emits code computing `p.op`'s results. On an unsupported case (an
/// attribute value, a dtype) emits an error on p.op naming what is
/// unsupported and fails.
using PortableLoweringFn = mlir::LogicalResult (*)(PortableOp &p);

/// Lowerings by op name ("graph.add").
using PortableRegistry = llvm::StringMap<PortableLoweringFn>;

/// All families, registered once.
const PortableRegistry &portableRegistry();

// One function per family (one .cpp each), called by portableRegistry().
void registerPortableElementwise(PortableRegistry &registry);
void registerPortableDataMovement(PortableRegistry &registry);
void registerPortableReductions(PortableRegistry &registry);
void registerPortableNN(PortableRegistry &registry);
void registerPortableFused(PortableRegistry &registry); // Fused.cpp
void registerPortableFc(PortableRegistry &registry);    // NNFc.cpp
void registerPortableStencil(PortableRegistry &registry); // Stencil.cpp
void registerPortableResize(PortableRegistry &registry);  // Resize.cpp
void registerPortableRecurrent(PortableRegistry &registry); // Recurrent.cpp
void registerPortableSampling(PortableRegistry &registry);  // Sampling.cpp
void registerPortableSignal(PortableRegistry &registry);    // Signal.cpp
void registerPortableDataDependent(
    PortableRegistry &registry); // DataDependent.cpp

/// The element type buffers use for a tensor element type: unsigned
/// integers become signless of the same width (arith is signless; the
/// lowering picks the unsigned ops from the tensor type); others are kept
/// (i1 for bool: one byte per element in memory).
mlir::Type storageType(mlir::Type tensorElementType);

/// The memref type of a buffer holding a value of `tensorType` (static);
/// memref<0xT> for every tensor without elements.
mlir::MemRefType bufferType(mlir::Type tensorType);

} // namespace mlcc::portable

#endif // MLCC_LOWERING_COMMON_PORTABLE_PORTABLELOWERING_H
