//===- Pipelines.h - the pass pipelines, built in one place -----*- C++ -*-===//

#ifndef MLCC_PIPELINES_PIPELINES_H
#define MLCC_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace mlcc {

struct PipelineOptions {
  /// Pass arguments (e.g. "mlcc-fold-constants") to leave out.
  std::vector<std::string> disabledPasses;
};

/// Shape inference, constant folding and dead-code elimination: the graph
/// every target starts from.
void buildSimplifyPipeline(mlir::OpPassManager &pm,
                           const PipelineOptions &options);

/// Registers the passes and the named pipelines with MLIR's registries, so
/// mlcc-opt runs exactly what mlcc runs.
void registerPassesAndPipelines();

} // namespace mlcc

#endif // MLCC_PIPELINES_PIPELINES_H
