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
  let summary = "Folds inference BatchNormalization into the conv or gemm before it";
  let description = [{
    conv(x, W, b) followed by batch_norm(scale, B, mean, var) becomes one
    conv with W' = W * s and b' = (b - mean) * s + B per output channel,
    s = scale / sqrt(var + epsilon), computed now in double precision. The
    same for conv_transpose (W is [C_in, C_out / group, k...]: each output
    channel's slices are scaled), and for gemm or matmul with a constant B
    on a 2-D [N, C] output, per column: gemm's C (a row, times beta) is
    b, a matmul gains an add of b'. Only when the producer's result has no
    other user, the weights, bias and all the normalisation parameters are
    f32 constants, and the batch_norm's training outputs are unused.
  }];
}

def FuseFc : Pass<"mlcc-fuse-fc", "mlir::func::FuncOp"> {
  let summary = "Fuses matmul + bias + residual add + activation into fc";
  let description = [{
    graph.matmul(X, W) with W a constant f32 K x N, followed by an add of a
    constant bias that broadcasts as one row of N (either operand order),
    an add of a residual of the result's static type, and an activation
    (relu, leaky_relu, clip with constant bounds, sigmoid, tanh,
    hard_swish, graph.gelu, or silu as x * sigmoid(x)), each part optional,
    becomes one graph.fc. graph.gemm with transA = 0, alpha = 1, constant B
    and a constant row C (or none) becomes one too, but only when a
    residual or an activation follows it. Only when every value inside the
    group has no other user.
  }];
}

def FuseConvEpilogue
    : Pass<"mlcc-fuse-conv-epilogue", "mlir::func::FuncOp"> {
  let summary = "Fuses conv + bias + residual + activation into fused_conv";
  let description = [{
    A graph.conv followed by an add of a constant per-channel bias ([C,1,1],
    folded into the conv's bias), an add of a residual of the conv's static
    type (either operand order) and an activation (relu, leaky_relu, clip
    with constant bounds, sigmoid, tanh, hard_swish, graph.gelu, or silu as
    x * sigmoid(x)), each part optional, becomes one graph.fused_conv. Only
    when every value inside the group has no other user. Runs after
    mlcc-fold-batch-norm.
  }];
}

def DecomposeFusedOps
    : Pass<"mlcc-decompose-fused-ops", "mlir::func::FuncOp"> {
  let summary = "Rewrites fused ops into the ONNX-level ops they stand for";
  let description = [{
    The inverse of the fusion passes, through decomposeFusedOp
    (dialects/Graph/IR/FusedOpDecomposition.h): graph.fused_conv becomes
    conv, add and its activation's ops again. For a backend that has no
    kernel for a fused op; the portable lowering uses the same function op
    by op.
  }];
}

def FuseGelu : Pass<"mlcc-fuse-gelu", "mlir::func::FuncOp"> {
  let summary = "Recognises GELU in its erf and tanh forms as graph.gelu";
  let description = [{
    x * (1 + erf(x / sqrt 2)) * 0.5 becomes graph.gelu (approximate =
    "none"), x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))) * 0.5
    graph.gelu (approximate = "tanh"): x / sqrt 2 also as a mul by
    1 / sqrt 2, x^3 as pow(x, 3) or two muls, the 0.5 on x, on the sum or
    on the product, adds and muls with either operand order. Constants
    are one-element float constants within a relative 1e-4 of these (the
    exponent exactly 3). Only when every value inside the group has no
    other user.
  }];
}

def FuseLayerNorm : Pass<"mlcc-fuse-layer-norm", "mlir::func::FuncOp"> {
  let summary = "Recognises decomposed LayerNormalization as graph.layer_norm";
  let description = [{
    mean = reduce_mean(x) over the last axis (keepdims), d = x - mean,
    var = reduce_mean(pow(d, 2) or d * d), y = d / sqrt(var + eps) (or
    d * reciprocal(sqrt(var + eps))), then optionally y * gamma and
    y + beta with constants holding one value per last-axis element (or
    one value) becomes graph.layer_norm(x, gamma or ones, beta or none)
    with axis = -1 and epsilon = eps: the form of torch exports before
    opset 17. Only when every value inside the group has no other user.
  }];
}

def FuseAttention : Pass<"mlcc-fuse-attention", "mlir::func::FuncOp"> {
  let summary = "Fuses multi-head self-attention into graph.attention";
  let description = [{
    reshape(transpose<0,2,1,3>(matmul(softmax<-1>(matmul(Qh, Kh) * scale
    [+ mask]), Vh))) to [B, S, H*D], where Qh, Vh are Q, V [B, S, H*D]
    reshaped to [B, S, H, D] and transposed <0,2,1,3>, Kh is K reshaped and
    transposed <0,2,3,1> (or <0,2,1,3> then <0,1,3,2>), and the scaling is
    a div or mul by a one-element constant on the scores or on Qh (a div,
    or a scaling of Qh, only by a power of two), becomes one
    graph.attention(Q, K, V, mask or none). Only when every value inside
    the group has one user, all shapes are static f32, and the mask
    broadcasts to [B, H, S, S]. Runs after the other fusions.
  }];
}

def FuseEmbedLayerNorm : Pass<"mlcc-fuse-embed-layer-norm",
                              "mlir::func::FuncOp"> {
  let summary = "Fuses an embedding lookup, added embeddings and layer norm";
  let description = [{
    layer_norm(gather(Table, Ids) + C1 (+ C2)) over the last axis, with a
    constant f32 table [V, D], gather on axis 0 and constant addends (a
    BERT export's position and token-type embeddings, folded to constants
    [1, S, D]), becomes one graph.embed_layer_norm whose addend is C1 + C2,
    added now. Only when the intermediates have one user each and the layer
    norm's mean and inverse std-dev results are unused.
  }];
}

def FuseSkipLayerNorm : Pass<"mlcc-fuse-skip-layer-norm",
                             "mlir::func::FuncOp"> {
  let summary = "Fuses a residual add into the layer norm that follows it";
  let description = [{
    layer_norm(add(a, b)) over the last axis, with f32 a and b of the same
    static shape, becomes graph.skip_layer_norm(a, b, Scale, B): the sum is
    formed in the normalisation's first pass. Only when the add has no
    other user and the layer norm's mean and inverse std-dev results are
    unused.
  }];
}

def DecomposeEinsum : Pass<"mlcc-decompose-einsum", "mlir::func::FuncOp"> {
  let summary = "Rewrites two-operand einsums into transposes, reshapes and a matmul";
  let description = [{
    With f32 operands of static shapes: the labels in both operands and the
    output are a batch, those in both operands only are summed, the others
    each operand's free dims; the operands are transposed and reshaped to
    [batch, M, K] and [batch, K, N] (2-D without batch labels), multiplied,
    and the product reshaped and transposed to the output. Einsums with a
    diagonal, a label summed within one operand, a broadcast dim of 1 or an
    empty dim stay as they are.
  }];
}

def SimplifyLayoutOps : Pass<"mlcc-simplify-layout-ops",
                             "mlir::func::FuncOp"> {
  let summary = "Cancels, merges and sinks transposes and reshapes";
  let description = [{
    With static shapes: a chain of reshape, flatten, squeeze and unsqueeze
    becomes one reshape to the last shape, or nothing when that is the
    input's shape; transpose(transpose(x, p1), p2) becomes
    transpose(x, p1[p2[i]]), or x for the identity. A transpose on every
    non-scalar operand of an elementwise op (same perm, each used only
    there) moves below it when that takes it on to another transpose.
    concat(transpose(a, p), transpose(b, p), axis) becomes
    transpose(concat(a, b, p[axis]), p), and a concat of flattens of inputs
    that differ in the first dim of the concatenated group becomes a
    flatten of their concat. Data movement only: bit-identical results.
  }];
}

def FoldPad : Pass<"mlcc-fold-pad", "mlir::func::FuncOp"> {
  let summary = "Folds a zero Pad into the conv or average pool after it";
  let description = [{
    A Pad of zeros on the spatial dims (constant mode, value 0, constant
    pads >= 0, none on N and C) whose users all read it as the input of a
    conv or an average pool with explicit pads (auto_pad NOTSET or VALID)
    goes: each user reads the Pad's input with its pads made larger by the
    Pad's, and an average pool counts them (count_include_pad = 1). A pool
    needs ceil_mode 0, and count_include_pad = 1 or no pads of its own.
    A Pad whose pads are all 0 is replaced by its input.
  }];
}

def ConvToStencil : Pass<"mlcc-conv-to-stencil", "mlir::func::FuncOp"> {
  let summary = "Single-channel convolutions become graph.stencil";
  let description = [{
    An f32 conv from one channel to one channel with constant weights, no
    bias, group 1 and "same"-sized output (ceil(input / stride)) is a
    weighted window sum with zero padding: graph.stencil with `sum`, the
    conv's pads as negative offsets, its strides and dilations. Backends
    keep it in the plain layout instead of padding one channel to a block.
  }];
}

def BoundRunTimeExtents : Pass<"mlcc-bound-run-time-extents",
                               "mlir::func::FuncOp"> {
  let summary = "Gives data-dependent dims their bound, the extent a run-time value";
  let description = [{
    For a compiled target: the results of NonZero, Compress, Unique and
    NonMaxSuppression get the bound shape (the most they can hold for the
    operands' static shapes), and the dims whose actual extent the op
    computes at run time are recorded in `graph.run_time_extents`. Ops that
    only move elements (elementwise, gathers, transposes, reshapes that keep
    the dim) are refined to bound shapes too, each such result dim recording
    the operand dim whose extent it has. Function results list their
    run-time dims. Any other use of such a value is an error naming the op.
    See dialects/Graph/IR/RunTimeExtents.h.
  }];
}

#endif // MLCC_GRAPH_PASSES
