//===- SPIRVMath.h - Math the GLSL extended instructions lack ---*- C++ -*-===//

#ifndef MLCC_LOWERING_VULKAN_SPIRVMATH_H
#define MLCC_LOWERING_VULKAN_SPIRVMATH_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
class SPIRVTypeConverter;
}

namespace mlcc::vulkan {

/// Rewrites `module`'s math ops into what GLSL.std.450 can compute.
mlir::LogicalResult prepareMathForSPIRV(mlir::ModuleOp module);

/// acos, asin and atan to their GL instructions.
void populateMathExtrasToSPIRV(mlir::SPIRVTypeConverter &converter,
                               mlir::RewritePatternSet &patterns);

} // namespace mlcc::vulkan

#endif // MLCC_LOWERING_VULKAN_SPIRVMATH_H
