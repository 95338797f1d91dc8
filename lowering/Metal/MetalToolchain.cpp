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

#include "MetalTarget.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

namespace mlcc::metal {
namespace {

// Removes a temporary file when it goes out of scope.
struct TempFile {
  llvm::SmallString<128> path;
  ~TempFile() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
};

int runQuietly(llvm::StringRef program, llvm::ArrayRef<llvm::StringRef> args,
               llvm::StringRef log) {
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log, log};
  return llvm::sys::ExecuteAndWait(program, args, std::nullopt, redirects);
}

std::string readLog(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
      llvm::MemoryBuffer::getFile(path);
  return text ? (*text)->getBuffer().trim().str() : "";
}

} // namespace

MetalToolchain findMetalToolchain(bool ios) {
  MetalToolchain toolchain;
  llvm::ErrorOr<std::string> xcrun = llvm::sys::findProgramByName("xcrun");
  if (!xcrun)
    return toolchain;
  std::string sdk = ios ? "iphoneos" : "macosx";
  // Xcode's command-line tools may lack the Metal toolchain (a separate
  // download since Xcode 16): then MSL only.
  for (llvm::StringRef tool : {"metal", "metallib"}) {
    llvm::StringRef args[] = {*xcrun, "-sdk", sdk, "--find", tool};
    if (runQuietly(*xcrun, args, "/dev/null") != 0)
      return toolchain;
  }
  toolchain.xcrun = *xcrun;
  toolchain.sdk = sdk;
  return toolchain;
}

llvm::Expected<std::vector<uint8_t>>
compileMetallib(const MetalToolchain &toolchain, const std::string &source,
                const std::string &kernelName) {
  TempFile metalFile, airFile, libFile, log;
  for (auto [file, extension] : {std::pair{&metalFile, "metal"},
                                 {&airFile, "air"},
                                 {&libFile, "metallib"},
                                 {&log, "log"}})
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "mlcc-" + kernelName, extension, file->path))
      return llvm::createStringError(ec, "cannot create a file for metal");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(metalFile.path, ec);
    if (ec)
      return llvm::createStringError(ec, "cannot write the MSL for metal");
    os << source;
  }
  std::string std =
      (toolchain.sdk == "iphoneos" ? "-std=ios-metal" : "-std=macos-metal") +
      std::to_string(kMslMajor) + "." + std::to_string(kMslMinor);
  llvm::StringRef compile[] = {toolchain.xcrun, "-sdk", toolchain.sdk,
                               "metal",         std,    "-c",
                               metalFile.path,  "-o",   airFile.path};
  if (runQuietly(toolchain.xcrun, compile, log.path) != 0)
    return llvm::createStringError("xcrun metal rejects kernel %s: %s",
                                   kernelName.c_str(),
                                   readLog(log.path).c_str());
  llvm::StringRef link[] = {toolchain.xcrun, "-sdk", toolchain.sdk, "metallib",
                            airFile.path,    "-o",   libFile.path};
  if (runQuietly(toolchain.xcrun, link, log.path) != 0)
    return llvm::createStringError("xcrun metallib fails on kernel %s: %s",
                                   kernelName.c_str(),
                                   readLog(log.path).c_str());
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> lib =
      llvm::MemoryBuffer::getFile(libFile.path);
  if (!lib || (*lib)->getBufferSize() == 0)
    return llvm::createStringError("xcrun metallib wrote no library for "
                                   "kernel %s",
                                   kernelName.c_str());
  return std::vector<uint8_t>((*lib)->getBufferStart(), (*lib)->getBufferEnd());
}

} // namespace mlcc::metal
