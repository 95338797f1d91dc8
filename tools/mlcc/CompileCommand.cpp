//===- CompileCommand.cpp - mlcc compile ----------------------------------===//

#include "Commands.h"

#include "mlcc/Pipelines/Pipelines.h"

#include "mlir/IR/AsmState.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <iostream>

using namespace mlir;

namespace mlcc::cli {

void printErrors(const std::vector<std::string> &errors) {
  for (const std::string &e : errors)
    std::cerr << "mlcc: error: " << e << "\n";
}

OwningOpRef<ModuleOp> loadAndSimplify(MLIRContext &ctx,
                                      const ModelOptions &options) {
  ImportOptions import;
  for (const std::string &d : options.dims) {
    size_t eq = d.find('=');
    char *end = nullptr;
    long long value = eq == std::string::npos
                          ? -1
                          : std::strtoll(d.c_str() + eq + 1, &end, 10);
    if (eq == std::string::npos || eq == 0 || !end || *end || value < 0) {
      printErrors({"--dim '" + d + "' must be NAME=VALUE with VALUE >= 0"});
      return nullptr;
    }
    import.dims[d.substr(0, eq)] = value;
  }
  std::vector<std::string> errors;
  OwningOpRef<ModuleOp> module = loadModel(ctx, options.model, import, errors);
  if (!module) {
    printErrors(errors);
    return nullptr;
  }
  if (options.pipeline == "none")
    return module;
  PassManager pm(&ctx);
  if (options.printIRAfterAll) {
    ctx.disableMultithreading();
    pm.enableIRPrinting();
  }
  if (options.timing)
    pm.enableTiming();
  PipelineOptions pipeline;
  pipeline.disabledPasses = options.disabledPasses;
  buildSimplifyPipeline(pm, pipeline);
  if (failed(runPasses(*module, pm, errors))) {
    printErrors(errors);
    return nullptr;
  }
  return module;
}

int runCompile(const CompileOptions &options) {
  MLIRContext ctx;
  if (options.emit != "mlir") {
    printErrors({"--emit obj for target '" + options.target +
                 "' is not available in this build yet; use --emit mlir"});
    return 1;
  }
  OwningOpRef<ModuleOp> module = loadAndSimplify(ctx, options.model);
  if (!module)
    return 1;
  // ToolOutputFile deletes the file unless keep() is called: an error never
  // leaves a half-written file behind.
  std::string errorMessage;
  auto out = openOutputFile(options.output.empty() ? "-" : options.output,
                            &errorMessage);
  if (!out) {
    printErrors({errorMessage});
    return 1;
  }
  module->print(out->os());
  out->keep();
  return 0;
}

} // namespace mlcc::cli
