//===- ExternalTool.cpp - Running a device toolchain's programs -----------===//

#include "ExternalTool.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

namespace mlcc::lowering {

TempFile::~TempFile() {
  if (!filePath.empty())
    llvm::sys::fs::remove(filePath);
}

llvm::Error TempFile::create(llvm::StringRef stem, llvm::StringRef extension,
                             llvm::StringRef what) {
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "mlcc-" + stem, extension, filePath))
    return llvm::createStringError(ec, "cannot create a file for %s",
                                   what.str().c_str());
  return llvm::Error::success();
}

llvm::Error writeFile(llvm::StringRef path, llvm::StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return llvm::createStringError(ec, "cannot write '%s'", path.str().c_str());
  os << bytes;
  os.close();
  if (os.has_error()) {
    ec = os.error();
    os.clear_error();
    return llvm::createStringError(ec, "cannot write '%s'", path.str().c_str());
  }
  return llvm::Error::success();
}

ToolRun runTool(llvm::ArrayRef<llvm::StringRef> args) {
  ToolRun run;
  TempFile log;
  if (llvm::Error err = log.create("tool", "log", args.front())) {
    run.launchError = llvm::toString(std::move(err));
    return run;
  }
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.path(),
                                                log.path()};
  run.exitCode = llvm::sys::ExecuteAndWait(args.front(), args, std::nullopt,
                                           redirects, /*SecondsToWait=*/0,
                                           /*MemoryLimit=*/0, &run.launchError);
  if (llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
          llvm::MemoryBuffer::getFile(log.path()))
    run.output = (*text)->getBuffer().trim().str();
  return run;
}

} // namespace mlcc::lowering
