//===- GpuTarget.cpp - A GPU target: the hot kernels and an API -----------===//

#include "GpuTarget.h"

namespace mlcc::gpukernels {

lowering::TargetLowering GpuTarget::lowerOp(mlir::Operation *op,
                                            lowering::OpLoweringContext &ctx) {
  return lowerHotOp(op, ctx, traits);
}

} // namespace mlcc::gpukernels
