//===- MetalToolchain.cpp - metallibs with Apple's offline compiler -------===//
//
// The compiler never needs Apple's toolchain: the MSL source in the object
// is enough, and the runtime compiles it at create time. Where `xcrun`
// finds `metal` and `metallib` (a Mac with Xcode's command-line tools and
// the Metal toolchain), each kernel is compiled now as well: the object
// then carries a metallib that the runtime loads without compiling, and a
// kernel that Apple's compiler rejects fails the compile, not the app.
//
//===----------------------------------------------------------------------===//

#include "ExternalTool.h"
#include "MetalTarget.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

namespace mlcc::metal {

using lowering::runTool;
using lowering::TempFile;

MetalToolchain findMetalToolchain(bool ios) {
  MetalToolchain toolchain;
  llvm::ErrorOr<std::string> xcrun = llvm::sys::findProgramByName("xcrun");
  if (!xcrun)
    return toolchain;
  std::string sdk = ios ? "iphoneos" : "macosx";
  // Xcode's command-line tools may lack the Metal toolchain (a separate
  // download since Xcode 16): then MSL only.
  for (llvm::StringRef tool : {"metal", "metallib"})
    if (runTool({*xcrun, "-sdk", sdk, "--find", tool}).exitCode != 0)
      return toolchain;
  toolchain.xcrun = *xcrun;
  toolchain.sdk = sdk;
  return toolchain;
}

llvm::Expected<std::vector<uint8_t>>
compileMetallib(const MetalToolchain &toolchain, const std::string &source,
                const std::string &kernelName) {
  TempFile metalFile, airFile, libFile;
  for (auto [file, extension] : {std::pair{&metalFile, "metal"},
                                 {&airFile, "air"},
                                 {&libFile, "metallib"}})
    if (llvm::Error err = file->create(kernelName, extension, "xcrun metal"))
      return std::move(err);
  if (llvm::Error err = lowering::writeFile(metalFile.path(), source))
    return std::move(err);
  std::string std =
      (toolchain.sdk == "iphoneos" ? "-std=ios-metal" : "-std=macos-metal") +
      std::to_string(kMslMajor) + "." + std::to_string(kMslMinor);
  lowering::ToolRun compile =
      runTool({toolchain.xcrun, "-sdk", toolchain.sdk, "metal", std, "-c",
               metalFile.path(), "-o", airFile.path()});
  if (compile.exitCode != 0)
    return llvm::createStringError(
        "xcrun metal rejects kernel %s: %s%s", kernelName.c_str(),
        compile.launchError.c_str(), compile.output.c_str());
  lowering::ToolRun link =
      runTool({toolchain.xcrun, "-sdk", toolchain.sdk, "metallib",
               airFile.path(), "-o", libFile.path()});
  if (link.exitCode != 0)
    return llvm::createStringError("xcrun metallib fails on kernel %s: %s%s",
                                   kernelName.c_str(), link.launchError.c_str(),
                                   link.output.c_str());
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> lib =
      llvm::MemoryBuffer::getFile(libFile.path());
  if (!lib || (*lib)->getBufferSize() == 0)
    return llvm::createStringError("xcrun metallib wrote no library for "
                                   "kernel %s",
                                   kernelName.c_str());
  return std::vector<uint8_t>((*lib)->getBufferStart(), (*lib)->getBufferEnd());
}

} // namespace mlcc::metal
