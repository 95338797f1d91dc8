//===- MetalTarget.cpp - The Metal GPU backend ----------------------------===//

#include "MetalTarget.h"

#include "DemoteFloat64.h"
#include "GpuTarget.h"
#include "VulkanTarget.h"
#include "mlcc/device.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/TargetParser/Triple.h"

#include <cstring>

using namespace mlir;

namespace mlcc::metal {
namespace {

// The kernel header (mlcc/device.h), the source with its NUL, then the
// metallib at an 8-byte boundary.
std::vector<uint8_t> writeKernelCode(const std::string &msl,
                                     const std::vector<uint8_t> &metallib) {
  mlcc_metal_kernel_header header = {};
  std::memcpy(header.magic, MLCC_METAL_KERNEL_MAGIC, sizeof(header.magic));
  header.msl_version = kMslMajor * 10000 + kMslMinor * 100;
  header.source_offset = sizeof(header);
  header.source_bytes = msl.size() + 1;
  uint64_t end = header.source_offset + header.source_bytes;
  if (!metallib.empty()) {
    header.metallib_offset = (end + 7) / 8 * 8;
    header.metallib_bytes = metallib.size();
    end = header.metallib_offset + metallib.size();
  }
  std::vector<uint8_t> code(end, 0);
  std::memcpy(code.data(), &header, sizeof(header));
  std::memcpy(code.data() + header.source_offset, msl.c_str(),
              header.source_bytes);
  if (!metallib.empty())
    std::memcpy(code.data() + header.metallib_offset, metallib.data(),
                metallib.size());
  return code;
}

class MetalBackend : public lowering::DeviceBackend {
public:
  MetalBackend(bool ios, MetalToolchain toolchain)
      : ios(ios), toolchain(std::move(toolchain)) {}
  // runtime/include/mlcc/device.h's MLCC_DEVICE_API_METAL.
  uint32_t api() const override { return MLCC_DEVICE_API_METAL; }
  // setBuffer:offset: wants 256-byte offsets for constant buffers on Macs
  // with AMD and Intel GPUs; Apple's GPUs take any multiple of 4.
  uint64_t bufferAlignment() const override { return 256; }
  LogicalResult compileKernel(ModuleOp kernel,
                              lowering::DeviceKernelCode &out) override {
    // The SPIR-V of --target vulkan --vulkan-no-float64 (so lavapipe runs
    // what becomes MSL), without subgroup shuffles: the SIMD width of
    // Intel Macs' GPUs varies from kernel to kernel.
    if (failed(gpukernels::demoteFloat64(kernel, "metal", out)))
      return failure();
    Location loc = kernel.getLoc();
    kernel.walk([&](gpu::GPUFuncOp fn) { loc = fn.getLoc(); });
    if (failed(vulkan::compileSPIRVKernel(kernel, out)))
      return failure();
    std::string msl;
    if (failed(translateToMSL(loc, out.code, out.name, out.numBuffers + 1, ios,
                              msl)))
      return failure();
    std::vector<uint8_t> metallib;
    if (!toolchain.xcrun.empty()) {
      llvm::Expected<std::vector<uint8_t>> lib =
          compileMetallib(toolchain, msl, out.name);
      if (!lib)
        return emitError(loc) << llvm::toString(lib.takeError());
      metallib = std::move(*lib);
    }
    out.code = writeKernelCode(msl, metallib);
    out.assembly = std::move(msl);
    return success();
  }

private:
  bool ios;
  MetalToolchain toolchain;
};

// An Apple triple with an OS version (Mach-O records the lowest OS the
// object runs on): without one, the first with the kernels' MSL version
// (macOS 11, iOS 14).
llvm::Expected<llvm::Triple> parseTriple(const std::string &given) {
  llvm::Triple triple(
      llvm::Triple::normalize(given.empty() ? kDefaultTriple : given));
  bool arch = triple.getArch() == llvm::Triple::aarch64 ||
              triple.getArch() == llvm::Triple::x86_64;
  bool os = triple.getVendor() == llvm::Triple::Apple &&
            (triple.isMacOSX() || triple.getOS() == llvm::Triple::IOS);
  if (!arch || !os)
    return llvm::createStringError(
        "--triple '%s': --target metal writes objects for Apple hosts: "
        "arm64-apple-macos, x86_64-apple-macos or arm64-apple-ios",
        given.c_str());
  if (triple.getOSMajorVersion() == 0) {
    triple.setOSName(triple.isMacOSX() ? "macosx11.0.0" : "ios14.0.0");
  }
  return triple;
}

} // namespace

llvm::Expected<std::unique_ptr<lowering::Target>>
createMetalTarget(const std::string &givenTriple) {
  llvm::Expected<llvm::Triple> triple = parseTriple(givenTriple);
  if (!triple)
    return triple.takeError();
  bool ios = triple->getOS() == llvm::Triple::IOS;
  gpukernels::GpuHost host;
  host.triple = triple->str();
  host.cpu = triple->getArch() == llvm::Triple::aarch64 ? "generic" : "x86-64";
  return std::make_unique<gpukernels::GpuTarget>(
      "metal", std::make_unique<MetalBackend>(ios, findMetalToolchain(ios)),
      gpukernels::GpuTraits{/*subgroupSize=*/0, /*noFloat64=*/true},
      std::move(host));
}

} // namespace mlcc::metal
