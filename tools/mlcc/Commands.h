//===- Commands.h - the subcommands of the mlcc tool ------------*- C++ -*-===//

#ifndef MLCC_TOOLS_MLCC_COMMANDS_H
#define MLCC_TOOLS_MLCC_COMMANDS_H

#include "mlcc/Driver/Driver.h"

#include <string>
#include <vector>

namespace mlcc::cli {

/// Options every subcommand that reads a model shares.
struct ModelOptions {
  std::string model;
  std::vector<std::string> dims; // "name=value"
  std::vector<std::string> disabledPasses;
  std::string pipeline = "simplify";
  bool printIRAfterAll = false;
  bool timing = false;
};

struct CompileOptions {
  ModelOptions model;
  std::string target = "ref";
  std::string emit = "obj";
  std::string output;
};

struct RunOptions {
  ModelOptions model;
  std::string target = "ref";
  std::string data;
  bool check = false;
  double rtol = 1e-3;
  double atol = 1e-5;
  std::string save;
};

struct InspectOptions {
  ModelOptions model;
};

int runCompile(const CompileOptions &options);
int runRun(const RunOptions &options);
int runInspect(const InspectOptions &options);

/// Loads the model and runs the chosen pipeline; prints errors to stderr.
/// Null on failure.
mlir::OwningOpRef<mlir::ModuleOp> loadAndSimplify(mlir::MLIRContext &ctx,
                                                  const ModelOptions &options);

/// Prints "mlcc: error: <line>" for each line.
void printErrors(const std::vector<std::string> &errors);

} // namespace mlcc::cli

#endif // MLCC_TOOLS_MLCC_COMMANDS_H
