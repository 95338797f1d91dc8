//===- FuzzCommon.cpp - What the compiler's fuzz targets share ------------===//

#include "FuzzCommon.h"

#include "GraphDialect.h"
#include "mlcc/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

using namespace mlir;

namespace mlcc::fuzz {

const std::string &emptyDirectory() {
  static const std::string dir = [] {
    char path[] = "/tmp/mlcc-fuzz-XXXXXX";
    if (!mkdtemp(path)) {
      std::perror("mkdtemp");
      std::abort();
    }
    return std::string(path);
  }();
  return dir;
}

void failOnInternalError(const std::vector<std::string> &errors) {
  for (const std::string &e : errors)
    // The importer's own lines start so; a node name may contain the words.
    if (llvm::StringRef(e).starts_with("internal error:")) {
      std::fprintf(stderr, "finding: %s\n", e.c_str());
      std::abort();
    }
}

Session::Session()
    : context_(MLIRContext::Threading::DISABLED),
      quiet_(&context_, [](Diagnostic &) { return success(); }) {
  context_.loadDialect<graph::GraphDialect, func::FuncDialect>();
}

void Session::simplify(ModuleOp module) {
  PassManager pm(&context_);
  // Verified once at the end instead of after every pass: a pass that
  // leaves invalid IR is reported as a finding below, not as a failure a
  // model's error could also cause.
  pm.enableVerifier(false);
  buildSimplifyPipeline(pm, PipelineOptions{});
  if (failed(pm.run(module)))
    return;
  if (failed(verify(module))) {
    std::fprintf(stderr, "finding: the simplify pipeline left IR that does "
                         "not verify\n");
    std::abort();
  }
}

} // namespace mlcc::fuzz
