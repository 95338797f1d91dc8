//===- CudaTarget.cpp - The CUDA GPU backend ------------------------------===//

#include "CudaTarget.h"

#include "GpuTarget.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Error.h"

#include <algorithm>

namespace mlcc::cuda {
namespace {

// The architectures LLVM 19's NVPTX backend writes PTX for, each with the
// oldest PTX version that has it: the lowest driver that can JIT the PTX.
struct ArchPtx {
  unsigned arch;
  unsigned ptx;
};
constexpr ArchPtx kArchs[] = {{75, 63}, {80, 70}, {86, 71},
                              {87, 74}, {89, 78}, {90, 78}};

class CudaBackend : public lowering::DeviceBackend {
public:
  explicit CudaBackend(CudaOptions options) : options(std::move(options)) {}
  // runtime/include/mlcc/device.h's MLCC_DEVICE_API_CUDA.
  uint32_t api() const override { return 2; }
  // CUDA binds any address; the shared layer's bases keep the Vulkan
  // contract (and 256 bytes is what cudaMalloc aligns to).
  uint64_t bufferAlignment() const override { return 256; }
  mlir::LogicalResult compileKernel(mlir::ModuleOp kernel,
                                    lowering::DeviceKernelCode &out) override {
    return compileCudaKernel(kernel, options, out);
  }

private:
  CudaOptions options;
};

} // namespace

unsigned ptxVersionFor(unsigned arch) {
  for (const ArchPtx &a : kArchs)
    if (a.arch == arch)
      return a.ptx;
  return 0;
}

llvm::Expected<std::vector<unsigned>> parseGpuArchs(llvm::StringRef list) {
  std::vector<unsigned> archs;
  llvm::SmallVector<llvm::StringRef> names;
  list.split(names, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef given : names) {
    given = given.trim();
    llvm::StringRef name = given;
    unsigned arch = 0;
    if (!name.consume_front("sm_") || name.getAsInteger(10, arch) ||
        ptxVersionFor(arch) == 0) {
      std::string known;
      for (const ArchPtx &a : kArchs)
        known += (known.empty() ? "sm_" : ", sm_") + std::to_string(a.arch);
      return llvm::createStringError(
          "--gpu-arch: '%s' is not an architecture the cuda target writes "
          "PTX for (%s)",
          given.str().c_str(), known.c_str());
    }
    archs.push_back(arch);
  }
  if (archs.empty())
    return llvm::createStringError("--gpu-arch: no architecture given");
  llvm::sort(archs);
  archs.erase(std::unique(archs.begin(), archs.end()), archs.end());
  return archs;
}

std::unique_ptr<lowering::Target> createCudaTarget(CudaOptions options) {
  // Every NVIDIA GPU runs warps of 32 threads.
  return std::make_unique<gpukernels::GpuTarget>(
      "cuda", std::make_unique<CudaBackend>(std::move(options)),
      gpukernels::GpuTraits{/*subgroupSize=*/32});
}

} // namespace mlcc::cuda
