//===- Targets.cpp - The backends by --target name ------------------------===//

#include "Targets.h"
#include "AVX512Target.h"
#include "CudaTarget.h"
#include "MetalTarget.h"
#include "VulkanTarget.h"

namespace mlcc::lowering {

std::vector<std::string> targetNames() {
  return {"avx512", "vulkan", "cuda", "metal"};
}

llvm::Expected<std::unique_ptr<Target>>
createTarget(llvm::StringRef name, const TargetOptions &options) {
  if (name != "cuda" &&
      (!options.gpuArchs.empty() || !options.cudaPath.empty()))
    return llvm::createStringError("--gpu-arch and --cuda-path are options of "
                                   "--target cuda");
  if (name != "metal" && !options.triple.empty())
    return llvm::createStringError("--triple is an option of --target metal "
                                   "(the other targets' hosts are x86-64 "
                                   "Linux)");
  if (name != "avx512" && !options.cpu.empty())
    return llvm::createStringError("--cpu is an option of --target avx512");
  const bool bf16 = options.precision == "bf16";
  if (!options.precision.empty() && options.precision != "fp32" && !bf16)
    return llvm::createStringError("--precision must be fp32 or bf16, not '" +
                                   options.precision + "'");
  if (name != "avx512" && bf16)
    return llvm::createStringError(
        "--precision bf16 is an option of --target avx512");
  const llvm::StringRef winograd = options.winograd;
  if (!winograd.empty() && winograd != "auto" && winograd != "f2" &&
      winograd != "off")
    return llvm::createStringError("--winograd must be auto, f2 or off, not '" +
                                   options.winograd + "'");
  if (name != "avx512" && !winograd.empty() && winograd != "auto")
    return llvm::createStringError("--winograd is an option of --target "
                                   "avx512");
  const llvm::StringRef strassen = options.strassen;
  if (!strassen.empty() && strassen != "auto" && strassen != "off")
    return llvm::createStringError("--strassen must be auto or off, not '" +
                                   options.strassen + "'");
  if (name != "avx512" && strassen == "off")
    return llvm::createStringError("--strassen is an option of --target "
                                   "avx512");
  if (name == "avx512") {
    llvm::Expected<CpuTarget> cpu = resolveCpu(options.cpu);
    if (!cpu)
      return cpu.takeError();
    if (bf16 && !cpu->has(MLCC_CPU_AVX512_BF16))
      return llvm::createStringError(
          "--precision bf16 needs a --cpu with avx512_bf16 (cooperlake, "
          "sapphirerapids, znver4, znver5, or native on such a machine); '" +
          cpu->name + "' has none");
    const int64_t winogradTile = winograd == "off"  ? 0
                                 : winograd == "f2" ? 2
                                                    : 4;
    return avx512::createAVX512Target(std::move(*cpu), bf16, winogradTile,
                                      strassen != "off");
  }
  if (name != "vulkan" &&
      (options.vulkanSubgroupSize || options.vulkanNoFloat64))
    return llvm::createStringError("--vulkan-subgroup-size and "
                                   "--vulkan-no-float64 are options of "
                                   "--target vulkan");
  if (name == "vulkan")
    return vulkan::createVulkanTarget(options.vulkanSubgroupSize,
                                      options.vulkanNoFloat64);
  if (name == "cuda") {
    cuda::CudaOptions cuda;
    llvm::Expected<std::vector<unsigned>> archs = cuda::parseGpuArchs(
        options.gpuArchs.empty() ? cuda::kDefaultArchs : options.gpuArchs);
    if (!archs)
      return archs.takeError();
    cuda.archs = std::move(*archs);
    llvm::Expected<cuda::CudaToolkit> toolkit =
        cuda::findCudaToolkit(options.cudaPath);
    if (!toolkit)
      return toolkit.takeError();
    cuda.toolkit = std::move(*toolkit);
    return cuda::createCudaTarget(std::move(cuda));
  }
  if (name == "metal")
    return metal::createMetalTarget(options.triple);
  return llvm::createStringError("unknown target '%s'", name.str().c_str());
}

} // namespace mlcc::lowering
