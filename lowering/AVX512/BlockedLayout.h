//===- BlockedLayout.h - NCHW <-> NCHW16c in the host code ------*- C++ -*-===//
//
// The conv kernels read and write channel-blocked activations (Conv.h). A
// conv's output stays blocked for the ops that can take it so (the next
// conv, elementwise ops); the plain NCHW copy is made only if another op
// asks for it. The conversions are loops emitted into the host function.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_BLOCKEDLAYOUT_H
#define MLCC_LOWERING_AVX512_BLOCKEDLAYOUT_H

#include "KernelSelection.h"

#include "mlir/IR/Builders.h"

namespace mlcc::avx512 {

/// memref<N x ceil(C/16) x H x W x 16 x f32> for a plain [N, C, H, W]; a
/// 1-D conv's [N, C, L] is one row (N x CB x 1 x L x 16), a 3-D conv's
/// [N, C, D, H, W] D x H rows (N x CB x DH x W x 16).
mlir::MemRefType blockedType(mlir::MemRefType plain);

/// blocked = plain in NCHW16c, the padding lanes past C set to 0.
void emitToBlocked(mlir::OpBuilder &b, mlir::Location loc, mlir::Value plain,
                   mlir::Value blocked);

/// plain = blocked without its padding lanes.
void emitFromBlocked(mlir::OpBuilder &b, mlir::Location loc,
                     mlir::Value blocked, mlir::Value plain);

/// The NCHW16c buffer of the f32 [N, C, H, W] graph value `v`: the one
/// already recorded in `state`, or a new one converted from v's buffer now
/// (kept for v's other users).
mlir::Value blockedOperand(mlir::Value v, OpLoweringContext &ctx,
                           SelectionState &state);

/// A new NCHW16c buffer for the f32 [N, C, H, W] graph value `v`, which
/// the caller's kernel writes. When v's one use is a channel concat of one
/// image whose inputs before the last fill whole blocks, the buffer is
/// v's blocks inside the concat's blocked result (allocated with the first
/// such producer; recorded in state.concatBuffers and writtenInPlace), so
/// that the concat copies nothing for v.
mlir::Value allocateBlocked(mlir::Value v, OpLoweringContext &ctx,
                            SelectionState &state);

/// Records `blocked` as the NCHW16c buffer of the op result `v`, whose
/// plain buffer is then written only if an op asks for it.
void setBlockedResult(mlir::Value v, mlir::Value blocked,
                      OpLoweringContext &ctx, SelectionState &state);

/// As setBlockedResult for v, or, when the kernel applied v's only user
/// `activation` in its epilogue (null: none), records `blocked` as that
/// activation's result in state.fused.
void setBlockedResultOrFused(mlir::Value v, mlir::Operation *activation,
                             mlir::Value blocked, OpLoweringContext &ctx,
                             SelectionState &state);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_BLOCKEDLAYOUT_H
