//===- GraphFusedOps.td - ops the optimizer forms -------------*- tablegen -*-===//
//
// Ops that no importer writes: the fusion passes of dialects/Graph/Transforms
// replace a recognised group of ONNX-level ops with one of these, so a
// backend sees the whole computation (a conv and its epilogue, a GELU) at
// once and can generate one kernel for it. Each has a reference kernel with
// exactly the semantics of the group it replaces.
//
// The fused epilogue ops share one encoding of the activation:
//   activation        none | relu | leaky_relu | clip | sigmoid | tanh |
//                     silu | gelu | gelu_tanh | hard_swish
//   activation_alpha  leaky_relu's alpha; clip's lower bound
//   activation_beta   clip's upper bound
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_GRAPH_FUSED_OPS
#define MLCC_GRAPH_FUSED_OPS

include "GraphBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Their verifiers (GraphFusedOpVerifiers.cpp) check the attributes and the
// static shapes a backend relies on.
class Graph_FusedOp<string mnemonic, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat([Pure], traits)> {
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

// graph.gelu
def Graph_GeluOp : Graph_FusedOp<"gelu"> {
  let summary = "Gaussian error linear unit (ONNX Gelu-20)";
  let description = [{
    `approximate = "none"`: y = 0.5 x (1 + erf(x / sqrt(2))).
    `approximate = "tanh"`: y = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
    Formed by mlcc-fuse-gelu from either decomposed form (BERT and GPT
    exports), and imported from ONNX Gelu.

    Example:
    ```mlir
    %y = graph.gelu %x : (tensor<1x128x3072xf32>) -> tensor<1x128x3072xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$X,
                   DefaultValuedAttr<StrAttr, "\"none\"">:$approximate);
  let results = (outs AnyTensor:$Y);
}

// graph.fused_conv
def Graph_FusedConvOp : Graph_FusedOp<"fused_conv"> {
  let summary = "Convolution with its epilogue: act(conv(X, W, B) + Z)";
  let description = [{
    `graph.conv`'s operands and attributes, plus an optional residual `Z`
    (a tensor of the result's shape, or `none`) added after the bias, and an
    activation applied last (see the file comment for its encoding). A
    backend applies the whole epilogue to the accumulators in registers.
    Formed by mlcc-fuse-conv-epilogue.

    Example (a ResNet block's last conv):
    ```mlir
    %y = graph.fused_conv %x, %w, %b, %skip {activation = "relu", kernel_shape = [1, 1]}
        : (tensor<1x64x56x56xf32>, tensor<256x64x1x1xf32>, tensor<256xf32>,
           tensor<1x256x56x56xf32>) -> tensor<1x256x56x56xf32>
    ```
  }];
  let arguments = (ins
    AnyTensor:$X,
    AnyTensor:$W,
    AnyTensorOrNone:$B,
    AnyTensorOrNone:$Z,
    OptionalAttr<StrAttr>:$auto_pad,
    OptionalAttr<I64ArrayAttr>:$dilations,
    OptionalAttr<I64Attr>:$group,
    OptionalAttr<I64ArrayAttr>:$kernel_shape,
    OptionalAttr<I64ArrayAttr>:$pads,
    OptionalAttr<I64ArrayAttr>:$strides,
    DefaultValuedAttr<StrAttr, "\"none\"">:$activation,
    DefaultValuedAttr<F32Attr, "0.0f">:$activation_alpha,
    DefaultValuedAttr<F32Attr, "0.0f">:$activation_beta
  );
  let results = (outs AnyTensor:$Y);
}

// graph.fc
def Graph_FcOp : Graph_FusedOp<"fc"> {
  let summary = "Fully connected layer: act(X W + B + Z)";
  let description = [{
    `X` has rank >= 2 (its last dim is K; the leading dims are rows), `W` is
    K x N, `B` is N or `none`, `Z` is an optional residual of the result's
    shape (X's leading dims x N) or `none`; the activation (see the file
    comment) applies last. MatMul + Add (+ Add of a residual) (+ activation)
    with a constant W and B become one of these (mlcc-fuse-fc), so the GEMM
    kernel adds the bias and applies the activation in registers.

    Example:
    ```mlir
    %y = graph.fc %x, %w, %b, %none {activation = "gelu"}
        : (tensor<1x128x768xf32>, tensor<768x3072xf32>, tensor<3072xf32>, none)
        -> tensor<1x128x3072xf32>
    ```
  }];
  let arguments = (ins
    AnyTensor:$X,
    AnyTensor:$W,
    AnyTensorOrNone:$B,
    AnyTensorOrNone:$Z,
    DefaultValuedAttr<StrAttr, "\"none\"">:$activation,
    DefaultValuedAttr<F32Attr, "0.0f">:$activation_alpha,
    DefaultValuedAttr<F32Attr, "0.0f">:$activation_beta
  );
  let results = (outs AnyTensor:$Y);
}

// graph.attention
def Graph_AttentionOp : Graph_FusedOp<"attention"> {
  let summary = "Multi-head scaled dot-product attention";
  let description = [{
    `Q`, `K`, `V` are [B, S, H*D] (the projections' outputs), `mask` is an
    additive mask broadcastable to [B, H, S, S] (BERT: [B, 1, 1, S]) or
    `none`, `num_heads` is H. Y [B, S, H*D] is the concatenation over the
    heads h of softmax(Q_h K_h^T * scale + mask) V_h, the softmax over the
    last axis. Formed by mlcc-fuse-attention from the reshapes, transposes,
    matmuls, scaling, mask add and softmax of a BERT-style export.

    Example:
    ```mlir
    %y = graph.attention %q, %k, %v, %mask
        {num_heads = 12 : i64, scale = 1.250000e-01 : f32}
        : (tensor<1x128x768xf32>, tensor<1x128x768xf32>, tensor<1x128x768xf32>,
           tensor<1x1x1x128xf32>) -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins
    AnyTensor:$Q,
    AnyTensor:$K,
    AnyTensor:$V,
    AnyTensorOrNone:$mask,
    I64Attr:$num_heads,
    DefaultValuedAttr<F32Attr, "1.0f">:$scale
  );
  let results = (outs AnyTensor:$Y);
}

// graph.embed_layer_norm
def Graph_EmbedLayerNormOp : Graph_FusedOp<"embed_layer_norm"> {
  let summary = "Embedding lookup, added embeddings, layer norm: one op";
  let description = [{
    Y = layer_norm(Table[Ids] + Addend, Scale, B) over the last axis:
    `Ids` are integer indices [B, S] into the rows of `Table` [V, D],
    `Addend` broadcasts to [B, S, D] (a BERT export's position and
    token-type embeddings, added up at compile time), `Scale` and `B` are
    [D] (`B` may be `none`). Formed by mlcc-fuse-embed-layer-norm from
    Gather + Add (+ Add) + LayerNormalization.

    Example:
    ```mlir
    %y = graph.embed_layer_norm %ids, %table, %pos, %gamma, %beta {epsilon = 1.0e-12 : f32}
        : (tensor<1x128xi64>, tensor<30522x768xf32>, tensor<1x128x768xf32>,
           tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins
    AnyTensor:$Ids,
    AnyTensor:$Table,
    AnyTensor:$Addend,
    AnyTensor:$Scale,
    AnyTensorOrNone:$B,
    DefaultValuedAttr<F32Attr, "1.0e-5f">:$epsilon
  );
  let results = (outs AnyTensor:$Y);
}

// graph.skip_layer_norm
def Graph_SkipLayerNormOp : Graph_FusedOp<"skip_layer_norm"> {
  let summary = "Residual add and layer norm: layer_norm(X + Skip)";
  let description = [{
    Y = layer_norm(X + Skip, Scale, B) over the last axis: `X` and `Skip`
    have the same shape, `Scale` and `B` are [D] (`B` may be `none`). The
    transformer block's "add & norm" (the skip connection around attention
    and the feed-forward block); formed by mlcc-fuse-skip-layer-norm from
    Add + LayerNormalization, so the sum is never a separate pass over
    memory.

    Example:
    ```mlir
    %y = graph.skip_layer_norm %x, %skip, %gamma, %beta {epsilon = 1.0e-12 : f32}
        : (tensor<1x128x768xf32>, tensor<1x128x768xf32>, tensor<768xf32>,
           tensor<768xf32>) -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins
    AnyTensor:$X,
    AnyTensor:$Skip,
    AnyTensor:$Scale,
    AnyTensorOrNone:$B,
    DefaultValuedAttr<F32Attr, "1.0e-5f">:$epsilon
  );
  let results = (outs AnyTensor:$Y);
}

#endif // MLCC_GRAPH_FUSED_OPS
