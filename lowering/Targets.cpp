//===- Targets.cpp - The backends by --target name ------------------------===//

#include "Targets.h"
#include "AVX512Target.h"
#include "VulkanTarget.h"

namespace mlcc::lowering {

std::vector<std::string> targetNames() { return {"avx512", "vulkan"}; }

std::unique_ptr<Target> createTarget(llvm::StringRef name) {
  if (name == "avx512")
    return avx512::createAVX512Target();
  if (name == "vulkan")
    return vulkan::createVulkanTarget();
  return nullptr;
}

} // namespace mlcc::lowering
