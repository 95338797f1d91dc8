//===- Passes.td - graph dialect passes -----------------------*- tablegen -*-===//

#ifndef MLCC_GRAPH_PASSES
#define MLCC_GRAPH_PASSES

include "mlir/Pass/PassBase.td"

def ShapeInference : Pass<"mlcc-shape-inference", "mlir::func::FuncOp"> {
  let summary = "Refines result types with each op's shape helper";
  let description = [{
    Walks the function in order and calls each op's shape helper (the one the
    reference executor uses) with its operands' types and constant values,
    replacing dynamic dims of the results with the inferred static ones.
    Function result types follow. A contradiction between a declared static
    dim and the inferred one is an error naming the op.
  }];
}

def FoldConstants : Pass<"mlcc-fold-constants", "mlir::func::FuncOp"> {
  let summary = "Evaluates ops whose operands are all constant";
  let description = [{
    Runs such ops with the reference kernels and replaces their results with
    graph.constant. Types are refined on the way (as in
    mlcc-shape-inference), so shape-computing chains such as
    Shape -> Gather -> Unsqueeze -> Concat -> Reshape collapse in one sweep.
    Results larger than `max-bytes` are left alone.
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"256 << 20",
           "Largest result (in bytes) that is folded">,
  ];
}

def DeadCodeElimination : Pass<"mlcc-dce", "mlir::func::FuncOp"> {
  let summary = "Removes ops whose results are unused and that have no effects";
  let description = [{
    Deletes side-effect-free ops with no users, repeatedly, inside regions
    too. Values listed in a graph.control_dependency's `after` are uses, so
    ops that must run first survive even though nothing reads their data.
  }];
}

def FoldBatchNorm : Pass<"mlcc-fold-batch-norm", "mlir::func::FuncOp"> {
  let summary = "Folds inference BatchNormalization into the conv before it";
  let description = [{
    conv(x, W, b) followed by batch_norm(scale, B, mean, var) becomes one
    conv with W' = W * s and b' = (b - mean) * s + B per output channel,
    s = scale / sqrt(var + epsilon), computed now in double precision. Only
    when the conv's result has no other user, the weights and all the
    normalisation parameters are f32 constants, and the batch_norm's
    training outputs are unused.
  }];
}

#endif // MLCC_GRAPH_PASSES
