//===- KernelSelection.h - Graph ops -> AVX-512 kernels ---------*- C++ -*-===//
//
// One function per op family (one file each, Select*.cpp) decides whether
// the op instance fits a generated kernel (dtype, layout, constant weights)
// and, if so, generates it and emits its call.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELSELECTION_H
#define MLCC_LOWERING_AVX512_KERNELSELECTION_H

#include "Conv.h"
#include "Eltwise.h"
#include "Target.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlcc::avx512 {

using lowering::OpLoweringContext;
using lowering::TargetLowering;

/// What the target remembers from op to op within one model.
struct SelectionState {
  /// The --cpu: which instruction sets (VNNI, BF16, AMX) kernels may use.
  lowering::CpuTarget cpu;
  /// --precision bf16: f32 layers with constant weights compute in bf16
  /// (f32 accumulation; the --cpu has AVX512_BF16).
  bool bf16Precision = false;
  /// --winograd: the largest Winograd tile (outputs a side: 4, 2), 0 for
  /// direct convs only.
  int64_t winogradTile = 4;
  /// --strassen: large f32 GEMMs with constant B as one level of Strassen
  /// (StrassenGemm.h).
  bool strassen = true;
  /// Graph values also (or only) held in NCHW16c, and their buffers: conv
  /// chains stay blocked, and elementwise ops on them run blocked too.
  llvm::DenseMap<mlir::Value, mlir::Value> blocked;
  /// f32 buffers (plain or NCHW16c) already rounded to bf16, and the copy:
  /// the readers of one activation (BERT's q, k, v) round it once.
  llvm::DenseMap<mlir::Value, mlir::Value> bf16;
  /// Ops already done by their producer's kernels (an activation in its
  /// epilogue, a depthwise conv in an expanding conv's bands): their result
  /// is that (blocked) buffer, or none when only another such op reads it.
  /// selectEltwise, tried first, hands it on.
  llvm::DenseMap<mlir::Operation *, mlir::Value> fused;
  /// Channel concats whose NCHW16c result some inputs' producers wrote
  /// into directly (allocateBlocked): the result's buffer, and the inputs
  /// written so, which the concat then does not copy.
  llvm::DenseMap<mlir::Operation *, mlir::Value> concatBuffers;
  llvm::DenseSet<mlir::Value> writtenInPlace;
};

/// Dispatches `op` to the family below that handles its kind.
TargetLowering selectKernel(mlir::Operation *op, OpLoweringContext &ctx,
                            SelectionState &state);
/// x * s with x [1, C, H, W] in NCHW16c (C a multiple of 16) and s [1, C, 1,
/// 1] computed at run time (a squeeze-and-excitation scale): the batch
/// norm's per-channel kernel on the blocked buffer, instead of a reorder to
/// NCHW and back around a broadcasting multiply.
TargetLowering selectChannelScale(mlir::Operation *op, OpLoweringContext &ctx,
                                  SelectionState &state);

TargetLowering selectEltwise(mlir::Operation *op, OpLoweringContext &ctx,
                             SelectionState &state);
TargetLowering selectGemm(mlir::Operation *op, OpLoweringContext &ctx,
                          SelectionState &state);
TargetLowering selectQuantGemm(mlir::Operation *op, OpLoweringContext &ctx,
                               SelectionState &state);
TargetLowering selectQdqGemm(mlir::Operation *op, OpLoweringContext &ctx,
                             SelectionState &state);
TargetLowering selectQuantConv(mlir::Operation *op, OpLoweringContext &ctx,
                               SelectionState &state);
TargetLowering selectBf16Gemm(mlir::Operation *op, OpLoweringContext &ctx,
                              SelectionState &state);
TargetLowering selectQuantize(mlir::Operation *op, OpLoweringContext &ctx,
                              SelectionState &state);
TargetLowering selectDequantize(mlir::Operation *op, OpLoweringContext &ctx,
                                SelectionState &state);
TargetLowering selectConv(mlir::Operation *op, OpLoweringContext &ctx,
                          SelectionState &state);
/// A 1-D or 2-D f32 transposed conv with constant weights: one direct conv
/// kernel per output phase, each writing its lattice of the NCHW16c output.
TargetLowering selectConvTranspose(mlir::Operation *op, OpLoweringContext &ctx,
                                   SelectionState &state);
TargetLowering selectPool(mlir::Operation *op, OpLoweringContext &ctx,
                          SelectionState &state);
TargetLowering selectConcat(mlir::Operation *op, OpLoweringContext &ctx,
                            SelectionState &state);
TargetLowering selectBatchNorm(mlir::Operation *op, OpLoweringContext &ctx,
                               SelectionState &state);

/// Whether the direct conv kernels cover the spec's group: 1, depthwise, or
/// (2-D) groups whose channels fill whole blocks in chunks of a few groups.
bool directConvGroupSupported(const ConvSpec &spec);
/// The direct conv kernels of a planned conv and their calls over the thread
/// pool (chunks of groups, images, bands of rows or chunks of channel
/// blocks; the whole conv on one thread). `weights`, in the conv's layout
/// [OC, C / group, (KD,) KH, KW], are packed here. src, bias, dst and
/// residual are addresses (0 for no bias or residual) of NCHW16c tensors
/// (src plain for spec.plainInput). Fails after reporting on `op`.
mlir::LogicalResult emitConvCalls(mlir::Operation *op, OpLoweringContext &ctx,
                                  const ConvSpec &spec,
                                  llvm::ArrayRef<float> weights,
                                  mlir::Value src, mlir::Value bias,
                                  mlir::Value dst, mlir::Value residual);

/// Whether a planned conv runs as Winograd (a 3x3 or 5x5 window), and its
/// lowering (WinogradConv.cpp): `weights` [OC, C, r, r], `residual` and the
/// following `activation` (its epilogue already in spec) as selectConv has
/// them.
bool winogradApplies(const ConvSpec &spec);
TargetLowering lowerWinogradConv(mlir::Operation *op, OpLoweringContext &ctx,
                                 SelectionState &state, const ConvSpec &spec,
                                 const std::vector<float> &weights,
                                 mlir::Value residual,
                                 mlir::Operation *activation);
TargetLowering selectNormalization(mlir::Operation *op, OpLoweringContext &ctx,
                                   SelectionState &state);
TargetLowering selectEmbedLayerNorm(mlir::Operation *op,
                                    OpLoweringContext &ctx,
                                    SelectionState &state);
TargetLowering selectAttention(mlir::Operation *op, OpLoweringContext &ctx,
                               SelectionState &state);
TargetLowering selectReduce(mlir::Operation *op, OpLoweringContext &ctx,
                            SelectionState &state);
TargetLowering selectStencil(mlir::Operation *op, OpLoweringContext &ctx,
                             SelectionState &state);
TargetLowering selectLrn(mlir::Operation *op, OpLoweringContext &ctx,
                         SelectionState &state);
TargetLowering selectGather(mlir::Operation *op, OpLoweringContext &ctx,
                            SelectionState &state);
TargetLowering selectResize(mlir::Operation *op, OpLoweringContext &ctx,
                            SelectionState &state);
/// graph.transpose of 4-byte elements that moves the last dim
/// (SelectTranspose.cpp).
TargetLowering selectTranspose(mlir::Operation *op, OpLoweringContext &ctx,
                               SelectionState &state);
/// f32 graph.grid_sample, bilinear or nearest, zeros or border padding
/// (SelectGridSample.cpp).
TargetLowering selectGridSample(mlir::Operation *op, OpLoweringContext &ctx,
                                SelectionState &state);
TargetLowering selectRecurrent(mlir::Operation *op, OpLoweringContext &ctx,
                               SelectionState &state);

/// The unary op `op` as a chain element (relu, clip with constant bounds,
/// leaky_relu, sigmoid, ...); false for anything else.
bool activationOf(mlir::Operation *op, OpLoweringContext &ctx, EltwiseOp &e);

/// When `v`'s only user is an activation, returns it (with the activation
/// in `e`) so the producer applies it in its epilogue; null otherwise.
mlir::Operation *fusableActivation(mlir::Value v, OpLoweringContext &ctx,
                                   EltwiseOp &e);

/// Appends the activation of a fused op (graph.fused_conv: the `activation`
/// attributes of GraphFusedOps.td) to `ops`; false for one the injector
/// lacks. SelectConv.cpp.
bool fusedActivationOf(mlir::Operation *op, std::vector<EltwiseOp> &ops);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELSELECTION_H
