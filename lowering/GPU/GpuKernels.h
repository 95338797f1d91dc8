//===- GpuKernels.h - Hand-structured kernels of GPU targets ---*- C++ -*-===//
//
// The hot ops of every GPU target (vulkan now, cuda and metal next), as
// host IR that DeviceSchedule turns into kernels: workgroup loops
// (DeviceSchedule.h's kWorkgroupLoopAttr) using workgroup memory and
// barriers, written once in the gpu, scf, arith and memref dialects. An op
// they do not take (another element type, a shape they were not written
// for) is declined, and goes through the portable lowering's parallel
// loops like every other op.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_GPU_GPUKERNELS_H
#define MLCC_LOWERING_GPU_GPUKERNELS_H

#include "Target.h"

#include <string>

namespace mlcc::gpukernels {

/// What a target's GPUs have beyond what every GPU API promises.
struct GpuTraits {
  /// Threads that run in lockstep and exchange registers (gpu.shuffle):
  /// row reductions finish their trees with shuffles within the first
  /// such group instead of workgroup memory and barriers. 32 on NVIDIA
  /// GPUs; 0 where the size is not known at compile time.
  unsigned subgroupSize = 0;
  /// The device has no 64-bit floats (Metal, some Vulkan devices): a
  /// float64 tensor is refused at its op, and what the kernels compute in
  /// f64 for accuracy they compute in f32 (DemoteFloat64.h).
  bool noFloat64 = false;
};

/// Target::lowerOp for a GPU target.
lowering::TargetLowering lowerHotOp(mlir::Operation *op,
                                    lowering::OpLoweringContext &ctx,
                                    const GpuTraits &traits);

/// The ops by family (GpuFc.cpp, GpuMatmul.cpp, GpuConv.cpp,
/// GpuNormalization.cpp, GpuAttention.cpp).
lowering::TargetLowering lowerFc(mlir::Operation *op,
                                 lowering::OpLoweringContext &ctx);
lowering::TargetLowering lowerMatmul(mlir::Operation *op,
                                     lowering::OpLoweringContext &ctx);
lowering::TargetLowering lowerGemm(mlir::Operation *op,
                                   lowering::OpLoweringContext &ctx);
lowering::TargetLowering lowerConv(mlir::Operation *op,
                                   lowering::OpLoweringContext &ctx);
lowering::TargetLowering lowerConvTranspose(mlir::Operation *op,
                                            lowering::OpLoweringContext &ctx);
lowering::TargetLowering lowerSoftmax(mlir::Operation *op,
                                      lowering::OpLoweringContext &ctx,
                                      const GpuTraits &traits);
lowering::TargetLowering lowerLayerNorm(mlir::Operation *op,
                                        lowering::OpLoweringContext &ctx,
                                        const GpuTraits &traits);
lowering::TargetLowering lowerEmbedLayerNorm(mlir::Operation *op,
                                             lowering::OpLoweringContext &ctx,
                                             const GpuTraits &traits);
lowering::TargetLowering lowerAttention(mlir::Operation *op,
                                        lowering::OpLoweringContext &ctx,
                                        const GpuTraits &traits);

/// softmax (or log_softmax) of each row of x [rows, len] into y, a
/// workgroup per row.
void buildSoftmaxRows(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::Value y, int64_t rows, int64_t len, bool logarithm,
                      const GpuTraits &traits);

/// What fc and fused_conv apply to each sum in registers, in the reference
/// kernels' order: act(sum + bias[channel] + residual[at...]).
struct Epilogue {
  /// Null when the op has none.
  mlir::Value bias, residual;
  std::string activation = "none";
  double alpha = 0, beta = 0;

  /// The op's activation attributes (fused_conv, fc); no bias or residual.
  static Epilogue activationOf(mlir::Operation *op);
  mlir::Value apply(mlir::OpBuilder &b, mlir::Location loc, mlir::Value sum,
                    mlir::Value channel, mlir::ValueRange at) const;
};

/// Whether every tensor operand and result of `op` holds f32.
bool allF32(mlir::Operation *op);

} // namespace mlcc::gpukernels

#endif // MLCC_LOWERING_GPU_GPUKERNELS_H
