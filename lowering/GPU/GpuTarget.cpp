//===- GpuTarget.cpp - A GPU target: the hot kernels and an API -----------===//

#include "GpuTarget.h"
#include "DemoteFloat64.h"

namespace mlcc::gpukernels {

lowering::TargetLowering GpuTarget::lowerOp(mlir::Operation *op,
                                            lowering::OpLoweringContext &ctx) {
  // Every f64 the kernels then see is the lowerings' own (accumulators,
  // scratch), which DemoteFloat64 makes f32 consistently in every kernel.
  if (traits.noFloat64 && touchesFloat64(op)) {
    op->emitError() << lowering::describeOp(op) << ": --target " << targetName
                    << (targetName == "vulkan" ? " --vulkan-no-float64" : "")
                    << ": a float64 tensor, which the device cannot hold (it "
                       "has no 64-bit floats)";
    return lowering::TargetLowering::Failed;
  }
  return lowerHotOp(op, ctx, traits);
}

} // namespace mlcc::gpukernels
