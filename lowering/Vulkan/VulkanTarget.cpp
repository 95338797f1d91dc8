//===- VulkanTarget.cpp - The Vulkan GPU backend --------------------------===//

#include "VulkanTarget.h"

#include "DemoteFloat64.h"
#include "GpuTarget.h"

namespace mlcc::vulkan {
namespace {

class VulkanBackend : public lowering::DeviceBackend {
public:
  VulkanBackend(unsigned subgroupSize, bool noFloat64)
      : subgroupSize(subgroupSize), noFloat64(noFloat64) {}
  // runtime/include/mlcc/device.h's MLCC_DEVICE_API_VULKAN.
  uint32_t api() const override { return 1; }
  // The largest minStorageBufferOffsetAlignment Vulkan allows.
  uint64_t bufferAlignment() const override { return 256; }
  mlir::LogicalResult compileKernel(mlir::ModuleOp kernel,
                                    lowering::DeviceKernelCode &out) override {
    if (noFloat64 &&
        failed(gpukernels::demoteFloat64(kernel, "--vulkan-no-float64", out)))
      return mlir::failure();
    return compileSPIRVKernel(kernel, out, subgroupSize);
  }

private:
  unsigned subgroupSize;
  bool noFloat64;
};

} // namespace

std::unique_ptr<lowering::Target> createVulkanTarget(unsigned subgroupSize,
                                                     bool noFloat64) {
  return std::make_unique<gpukernels::GpuTarget>(
      "vulkan", std::make_unique<VulkanBackend>(subgroupSize, noFloat64),
      gpukernels::GpuTraits{subgroupSize, noFloat64});
}

} // namespace mlcc::vulkan
