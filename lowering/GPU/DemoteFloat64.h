//===- DemoteFloat64.h - Kernels for devices without 64-bit floats -*- C++
//-*-===//
//
// The portable lowerings compute some f32 ops in f64 for accuracy (batch
// norm's scale, running sums, window functions, determinants), in
// registers and in scratch buffers of the arena. Metal has no 64-bit
// floats, nor do many Vulkan devices (shaderFloat64): for them that
// arithmetic is done in f32 instead. A model with a float64 tensor of its
// own is refused before (GpuTraits::noFloat64), so every f64 buffer a
// kernel sees is scratch that every kernel demotes alike: it keeps its
// element count, and its f32 elements fill the first half of its bytes.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_GPU_DEMOTEFLOAT64_H
#define MLCC_LOWERING_GPU_DEMOTEFLOAT64_H

#include "Target.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlcc::gpukernels {

/// Whether `op` has an f64 operand or result (a scalar, or a shaped type
/// of f64 elements).
bool touchesFloat64(mlir::Operation *op);

/// Rewrites every f64 value of `kernel` (a module with one gpu.func) as
/// f32: constants rounded, f32<->f64 casts dropped, buffers and
/// kernel-local arrays of f64 made f32. Errors name the op (a bitcast of
/// f64 bits) and `device` ("metal") as the reason. Sets `out.demotedFloat64`
/// when the kernel had f64 values.
mlir::LogicalResult demoteFloat64(mlir::ModuleOp kernel, llvm::StringRef device,
                                  lowering::DeviceKernelCode &out);

} // namespace mlcc::gpukernels

#endif // MLCC_LOWERING_GPU_DEMOTEFLOAT64_H
