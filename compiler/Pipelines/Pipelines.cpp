//===- Pipelines.cpp - the pass pipelines, built in one place -------------===//

#include "mlcc/Pipelines/Pipelines.h"

#include "Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include <algorithm>

using namespace mlir;

namespace mlcc {

void buildSimplifyPipeline(OpPassManager &pm, const PipelineOptions &options) {
  auto enabled = [&](const std::string &arg) {
    return std::find(options.disabledPasses.begin(),
                     options.disabledPasses.end(),
                     arg) == options.disabledPasses.end();
  };
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  if (enabled("mlcc-shape-inference"))
    fpm.addPass(graph::createShapeInference());
  if (enabled("mlcc-fold-constants"))
    fpm.addPass(graph::createFoldConstants());
  if (enabled("cse"))
    fpm.addPass(createCSEPass());
  if (enabled("mlcc-fold-batch-norm"))
    fpm.addPass(graph::createFoldBatchNorm());
  if (enabled("mlcc-dce"))
    fpm.addPass(graph::createDeadCodeElimination());
}

void registerPassesAndPipelines() {
  graph::registerGraphPasses();
  PassPipelineRegistration<>(
      "mlcc-simplify",
      "Shape inference, constant folding, CSE, conv+batch-norm folding and "
      "dead-code elimination",
      [](OpPassManager &pm) { buildSimplifyPipeline(pm, PipelineOptions()); });
}

} // namespace mlcc
