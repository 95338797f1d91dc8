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
  // Before the layout simplification, which cancels the transposes it
  // leaves, and before mlcc-fuse-fc and mlcc-fuse-attention, which take
  // the matmuls it makes.
  if (enabled("mlcc-decompose-einsum"))
    fpm.addPass(graph::createDecomposeEinsum());
  // Before the fusions: they match the layout ops this one leaves.
  if (enabled("mlcc-simplify-layout-ops"))
    fpm.addPass(graph::createSimplifyLayoutOps());
  // Before mlcc-conv-to-stencil, which takes the conv's pads as offsets.
  if (enabled("mlcc-fold-pad"))
    fpm.addPass(graph::createFoldPad());
  // Before the epilogue fusions, which take graph.gelu as an activation.
  if (enabled("mlcc-fuse-layer-norm"))
    fpm.addPass(graph::createFuseLayerNorm());
  if (enabled("mlcc-fuse-gelu"))
    fpm.addPass(graph::createFuseGelu());
  // After mlcc-fuse-layer-norm, which forms the layer norm it ends in.
  if (enabled("mlcc-fuse-embed-layer-norm"))
    fpm.addPass(graph::createFuseEmbedLayerNorm());
  // After mlcc-fuse-layer-norm; before mlcc-fuse-fc, which would take the
  // residual add into a projection's epilogue.
  if (enabled("mlcc-fuse-skip-layer-norm"))
    fpm.addPass(graph::createFuseSkipLayerNorm());
  if (enabled("mlcc-fold-batch-norm"))
    fpm.addPass(graph::createFoldBatchNorm());
  // After the batch-norm fold (which gives a conv a bias: then it stays a
  // conv), before the epilogue fusion.
  if (enabled("mlcc-conv-to-stencil"))
    fpm.addPass(graph::createConvToStencil());
  if (enabled("mlcc-fuse-conv-epilogue"))
    fpm.addPass(graph::createFuseConvEpilogue());
  // After the passes that form activations (graph.gelu): fc absorbs them.
  if (enabled("mlcc-fuse-fc"))
    fpm.addPass(graph::createFuseFc());
  // Matches the reshapes and transposes around the projections, whatever
  // the projections became.
  if (enabled("mlcc-fuse-attention"))
    fpm.addPass(graph::createFuseAttention());
  if (enabled("mlcc-dce"))
    fpm.addPass(graph::createDeadCodeElimination());
}

void registerPassesAndPipelines() {
  graph::registerGraphPasses();
  PassPipelineRegistration<>(
      "mlcc-simplify",
      "Shape inference, constant folding, CSE, einsums as matmuls, "
      "transpose/reshape "
      "cancelling and sinking, LayerNorm and GELU "
      "recognition, embedding + layer norm, residual add + layer norm, "
      "zero pads into convs and average pools, conv/gemm/matmul + batch-norm "
      "folding, conv and fc epilogue fusion, attention fusion and dead-code "
      "elimination",
      [](OpPassManager &pm) { buildSimplifyPipeline(pm, PipelineOptions()); });
}

} // namespace mlcc
