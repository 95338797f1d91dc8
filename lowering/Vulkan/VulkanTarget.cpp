//===- VulkanTarget.cpp - The Vulkan GPU backend --------------------------===//

#include "VulkanTarget.h"

#include "GpuTarget.h"

namespace mlcc::vulkan {
namespace {

class VulkanBackend : public lowering::DeviceBackend {
public:
  explicit VulkanBackend(unsigned subgroupSize) : subgroupSize(subgroupSize) {}
  // runtime/include/mlcc/device.h's MLCC_DEVICE_API_VULKAN.
  uint32_t api() const override { return 1; }
  // The largest minStorageBufferOffsetAlignment Vulkan allows.
  uint64_t bufferAlignment() const override { return 256; }
  mlir::LogicalResult compileKernel(mlir::ModuleOp kernel,
                                    lowering::DeviceKernelCode &out) override {
    return compileSPIRVKernel(kernel, out, subgroupSize);
  }

private:
  unsigned subgroupSize;
};

} // namespace

std::unique_ptr<lowering::Target> createVulkanTarget(unsigned subgroupSize) {
  return std::make_unique<gpukernels::GpuTarget>(
      "vulkan", std::make_unique<VulkanBackend>(subgroupSize),
      gpukernels::GpuTraits{subgroupSize});
}

} // namespace mlcc::vulkan
