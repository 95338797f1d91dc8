//===- VulkanTarget.cpp - The Vulkan GPU backend --------------------------===//

#include "VulkanTarget.h"

#include "GpuKernels.h"

namespace mlcc::vulkan {
namespace {

class VulkanBackend : public lowering::DeviceBackend {
public:
  // runtime/include/mlcc/device.h's MLCC_DEVICE_API_VULKAN.
  uint32_t api() const override { return 1; }
  // The largest minStorageBufferOffsetAlignment Vulkan allows.
  uint64_t bufferAlignment() const override { return 256; }
  mlir::LogicalResult compileKernel(mlir::ModuleOp kernel,
                                    lowering::DeviceKernelCode &out) override {
    return compileSPIRVKernel(kernel, out);
  }
};

class VulkanTarget : public lowering::Target {
public:
  llvm::StringRef name() const override { return "vulkan"; }
  // The host schedule runs on the application's x86-64 CPU; it only
  // computes addresses and calls the runtime.
  llvm::StringRef hostCpu() const override { return "x86-64"; }
  lowering::TargetLowering lowerOp(mlir::Operation *op,
                                   lowering::OpLoweringContext &ctx) override {
    return gpukernels::lowerHotOp(op, ctx);
  }
  lowering::DeviceBackend *device() override { return &backend; }

private:
  VulkanBackend backend;
};

} // namespace

std::unique_ptr<lowering::Target> createVulkanTarget() {
  return std::make_unique<VulkanTarget>();
}

} // namespace mlcc::vulkan
