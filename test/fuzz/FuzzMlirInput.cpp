//===- FuzzMlirInput.cpp - libFuzzer target: graph-dialect .mlir text -----===//
//
// `mlcc compile model.mlir` parses graph-dialect text, verifies it and runs
// the simplify pipeline on it. The parser and the ops' verifiers must turn
// any text into a module or a diagnostic; the passes must not crash on any
// module that verifies.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "mlir/Parser/Parser.h"

#include <cstdint>
#include <string>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > mlcc::fuzz::kMaxInputBytes)
    return -1;
  mlcc::fuzz::Session session;
  // MLIR's lexer stops at a NUL after the text, as the files mlcc reads
  // have (llvm::MemoryBuffer): a std::string keeps one after its data.
  std::string text(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, &session.context());
  if (module)
    session.simplify(*module);
  return 0;
}
