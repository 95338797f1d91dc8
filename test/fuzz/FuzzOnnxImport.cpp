//===- FuzzOnnxImport.cpp - libFuzzer target: model bytes to a graph ------===//
//
// Whole ONNX model bytes through the importer and the simplify pipeline
// (shape inference, constant folding, dead-code elimination): what
// `mlcc compile` does to a downloaded model before any target sees it.
// Every input must end in a module or in error messages; a crash, a
// sanitizer report, or an "internal error" (the importer or a pass made
// IR that does not verify) is a finding.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "mlcc/Import/OnnxImporter.h"

#include <cstdint>
#include <string>
#include <vector>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Model files past this are parsed the same way; the cap keeps each run
  // fast enough to explore.
  if (size > mlcc::fuzz::kMaxInputBytes)
    return -1;
  mlcc::fuzz::Session session;
  std::vector<std::string> errors;
  mlcc::ImportOptions options;
  // External data is looked up next to the model: an empty folder, so a
  // path inside it reads nothing and a path out of it is refused.
  OwningOpRef<ModuleOp> module = mlcc::importOnnxModelBytes(
      &session.context(),
      std::string(reinterpret_cast<const char *>(data), size),
      session.emptyDir(), "fuzz input", options, errors);
  mlcc::fuzz::failOnInternalError(errors);
  if (module)
    session.simplify(*module);
  return 0;
}
