//===- FuzzCommon.h - What the compiler's fuzz targets share ----*- C++ -*-===//
//
// An MLIR context per input (so that nothing one input interned survives
// into the next, and memory stays flat over millions of runs), diagnostics
// kept quiet, the simplify pipeline every target starts from, and the rule
// that turns a silent internal error into a finding.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_TEST_FUZZ_FUZZCOMMON_H
#define MLCC_TEST_FUZZ_FUZZCOMMON_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <string>
#include <vector>

namespace mlcc::fuzz {

/// Inputs past this are skipped: the parsers treat a large file the same
/// way, and small inputs keep each run fast enough to explore.
constexpr size_t kMaxInputBytes = 256 * 1024;

/// A folder that exists and is empty, for the external data of a fuzz
/// input (created once per process).
const std::string &emptyDirectory();

/// Aborts (a finding) when one of `errors` is an "internal error:": mlcc
/// made something it should not have, which a user would see as a bug.
void failOnInternalError(const std::vector<std::string> &errors);

class Session {
public:
  Session();
  mlir::MLIRContext &context() { return context_; }
  const std::string &emptyDir() const { return emptyDirectory(); }
  /// The simplify pipeline on `module`. It may fail (a model's shapes can
  /// be wrong), but what it leaves after succeeding must verify.
  void simplify(mlir::ModuleOp module);

private:
  mlir::MLIRContext context_;
  mlir::ScopedDiagnosticHandler quiet_;
};

} // namespace mlcc::fuzz

#endif // MLCC_TEST_FUZZ_FUZZCOMMON_H
