//===- ExternalTool.h - Running a device toolchain's programs ---*- C++ -*-===//
//
// The GPU targets call their vendors' offline compilers when they are found
// (ptxas for cuda, xcrun metal/metallib for metal): through files, with
// what the tool prints kept for the error message.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_EXTERNALTOOL_H
#define MLCC_LOWERING_COMMON_EXTERNALTOOL_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlcc::lowering {

/// A temporary file ("mlcc-<stem>-XXXXXX.<extension>"), removed when this
/// goes out of scope.
class TempFile {
public:
  TempFile() = default;
  TempFile(const TempFile &) = delete;
  TempFile &operator=(const TempFile &) = delete;
  ~TempFile();
  /// Creates the file; an error says what `what` it was for.
  llvm::Error create(llvm::StringRef stem, llvm::StringRef extension,
                     llvm::StringRef what);
  llvm::StringRef path() const { return filePath; }

private:
  llvm::SmallString<128> filePath;
};

/// Writes `bytes` to `path`.
llvm::Error writeFile(llvm::StringRef path, llvm::StringRef bytes);

/// The exit status of `args` (args[0] the program) and what it printed on
/// stdout and stderr, trimmed; `launchError` is set when it did not start.
struct ToolRun {
  int exitCode = -1;
  std::string output;
  std::string launchError;
};
ToolRun runTool(llvm::ArrayRef<llvm::StringRef> args);

} // namespace mlcc::lowering

#endif // MLCC_LOWERING_COMMON_EXTERNALTOOL_H
