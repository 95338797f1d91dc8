//===- KernelPreparation.h - What every GPU API's compile shares -*- C++
//-*-===//
//
// DeviceBackend::compileKernel gets a module with one gpu.func kernel; each
// API's compiler (SPIR-V, NVVM) starts the same way: it reads what a launch
// needs from the function, then lowers affine and the arith ops that have
// no direct form and cleans up, before its own conversion.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_GPU_KERNELPREPARATION_H
#define MLCC_LOWERING_GPU_KERNELPREPARATION_H

#include "Target.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlcc::gpukernels {

/// The kernel of `module`, with its name, buffer count (the parameter
/// words' argument aside) and workgroup size written into `out`.
mlir::gpu::GPUFuncOp describeKernel(mlir::ModuleOp module,
                                    lowering::DeviceKernelCode &out);

/// lower-affine, arith-expand, canonicalize, cse on `module`.
mlir::LogicalResult simplifyKernel(mlir::ModuleOp module);

} // namespace mlcc::gpukernels

#endif // MLCC_LOWERING_GPU_KERNELPREPARATION_H
