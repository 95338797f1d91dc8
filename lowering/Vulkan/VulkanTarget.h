//===- VulkanTarget.h - The Vulkan GPU backend ------------------*- C++ -*-===//
//
// --target vulkan: the hot ops through the GPU targets' hand-structured
// kernels (lowering/GPU), every op through the shared GPU kernel layer
// (DeviceSchedule), each kernel compiled to its own SPIR-V module for
// Vulkan 1.1 compute (Shader capability, storage buffers). The runtime's
// Vulkan device layer (runtime/src/VulkanDevice.c) runs them; on this
// project's machines that is Mesa's lavapipe.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_VULKAN_VULKANTARGET_H
#define MLCC_LOWERING_VULKAN_VULKANTARGET_H

#include "Target.h"

#include <memory>

namespace mlcc::vulkan {

/// With `subgroupSize` (TargetOptions::vulkanSubgroupSize) the kernels
/// may shuffle within subgroups of that size; with `noFloat64` they compute
/// in f32 where they would in f64 (DemoteFloat64.h), as metal's do.
std::unique_ptr<lowering::Target> createVulkanTarget(unsigned subgroupSize = 0,
                                                     bool noFloat64 = false);

/// Compiles one kernel module (DeviceBackend::compileKernel's contract) to
/// SPIR-V words, for subgroups of `subgroupSize` where it is not 0.
mlir::LogicalResult compileSPIRVKernel(mlir::ModuleOp kernel,
                                       lowering::DeviceKernelCode &out,
                                       unsigned subgroupSize = 0);

} // namespace mlcc::vulkan

#endif // MLCC_LOWERING_VULKAN_VULKANTARGET_H
