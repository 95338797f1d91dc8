//===- MetalTarget.h - The Metal GPU backend --------------------*- C++ -*-===//
//
// --target metal: the kernels of the Vulkan target (the same SPIR-V, one
// module per kernel) translated to Metal Shading Language by SPIRV-Cross,
// compiled to a metallib too where Apple's toolchain is found, and a host
// schedule for an Apple host (Mach-O, arm64 or x86-64). The runtime's
// Metal device layer (runtime/metal) runs them on macOS and iOS.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_METAL_METALTARGET_H
#define MLCC_LOWERING_METAL_METALTARGET_H

#include "Target.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace mlcc::metal {

/// The MSL version every kernel is written for: 2.3 (macOS 11, iOS 14),
/// the first that lets buffers hold 64-bit integers (SPIRV-Cross refuses
/// them before), which int64 tensors need. Every Mac that runs macOS 11
/// and every Apple-silicon Mac has it.
constexpr unsigned kMslMajor = 2, kMslMinor = 3;

/// The host when --triple is not given: Apple silicon Macs.
constexpr const char *kDefaultTriple = "arm64-apple-macosx11.0.0";

/// Apple's offline shader compiler (`xcrun metal`, `xcrun metallib`), when
/// found on PATH at compile time.
struct MetalToolchain {
  std::string xcrun; // empty: none; the object carries MSL only
  std::string sdk;   // macosx or iphoneos
};

MetalToolchain findMetalToolchain(bool ios);

/// Compiles one MSL translation unit to a metallib with the toolchain;
/// the compiler's output in the error.
llvm::Expected<std::vector<uint8_t>>
compileMetallib(const MetalToolchain &toolchain, const std::string &source,
                const std::string &kernelName);

/// `triple`: an Apple triple (TargetOptions::triple; empty for the
/// default), checked here.
llvm::Expected<std::unique_ptr<lowering::Target>>
createMetalTarget(const std::string &triple);

/// Translates one kernel's SPIR-V words (compileSPIRVKernel's output) to
/// MSL, buffer (0, i) at [[buffer(i)]]; the entry point keeps the kernel's
/// name. Errors are emitted on `kernel`'s location.
mlir::LogicalResult translateToMSL(mlir::Location kernel,
                                   llvm::ArrayRef<uint8_t> spirv,
                                   const std::string &entryPoint,
                                   unsigned numBindings, bool ios,
                                   std::string &msl);

} // namespace mlcc::metal

#endif // MLCC_LOWERING_METAL_METALTARGET_H
