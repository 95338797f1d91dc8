//===- GraphCoreOps.td - constants and absent values ----------*- tablegen -*-===//

#ifndef MLCC_GRAPH_CORE_OPS
#define MLCC_GRAPH_CORE_OPS

include "GraphBase.td"

// graph.constant
def Graph_ConstantOp : Graph_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "output"]>]> {
  let summary = "A tensor constant (initializer, Constant node or folded value)";
  let description = [{
    Holds weights and folded values. Large tensors use a dense resource
    attribute so their bytes are stored once, without uniquing.

    Example:
    ```mlir
    %w = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = "attr-dict $value";
  let builders = [
    OpBuilder<(ins "::mlir::ElementsAttr":$value), [{
      build($_builder, $_state, value.getType(), value);
    }]>
  ];
  let hasFolder = 1;
  let hasVerifier = 1;
}

// graph.none
def Graph_NoneOp : Graph_Op<"none", [ConstantLike, Pure]> {
  let summary = "The absent value of an omitted optional operand";
  let description = [{
    ONNX marks a skipped optional input with an empty name; the graph dialect
    passes a value of the builtin `none` type instead, so every op keeps a
    fixed operand list.

    Example:
    ```mlir
    %none = graph.none
    %y = graph.conv %x, %w, %none : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x6x6xf32>
    ```
  }];
  let results = (outs NoneType:$output);
  let assemblyFormat = "attr-dict";
  let builders = [
    OpBuilder<(ins), [{
      build($_builder, $_state, ::mlir::NoneType::get($_builder.getContext()));
    }]>
  ];
  let hasFolder = 1;
}

// graph.control_dependency
def Graph_ControlDependencyOp : Graph_Op<"control_dependency",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "Orders ops without a data edge";
  let description = [{
    Returns `values` unchanged, but only once every value in `after` has been
    computed. The producers of `after` therefore run before any user of the
    results, and they are kept alive (not removed as dead code) as long as the
    results are used, even though nothing reads their data. This is MPSGraph's
    control dependency: an assignment-like op that must happen before another.

    Example:
    ```mlir
    %x2 = graph.control_dependency %x after %assigned
        : (tensor<4xf32>) after (tensor<4xf32>) -> (tensor<4xf32>)
    %e = graph.exp %x2 : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyTensor>:$values, Variadic<AnyTensor>:$after);
  let results = (outs Variadic<AnyTensor>:$results);
  let assemblyFormat = [{
    $values `after` $after attr-dict `:` `(` type($values) `)` `after` ` ` `(` type($after) `)`
    `->` `(` type($results) `)`
  }];
  let hasVerifier = 1;
}

// graph.stencil
def Graph_StencilOp : Graph_Op<"stencil", [Pure]> {
  let summary = "Weighted windowed reduction over N-D windows";
  let description = [{
    For every output position, takes the window of `input` anchored there
    (window shape = shape of `weights`, which has the input's rank), multiplies
    each element by its weight and reduces the window with `reduction`:
    `sum`, `min`, `max`, `argmin` or `argmax` (the arg modes give the flat
    index inside the window as i64). Positions outside the input are read
    according to `padding`: `zero` (value `padding_value`), `clamp` (nearest
    edge element), `reflect` (mirror without repeating the edge) or `mirror`
    (mirror repeating the edge). `offsets` gives, per dim, the window's origin
    relative to the output position (default: centred, i.e. -(k-1)/2);
    `strides` and `dilations` work as in convolution. The output has the
    input's shape divided by the strides.

    Example (5-point Laplacian):
    ```mlir
    %lap = graph.stencil %img, %w {reduction = "sum", padding = "clamp"}
        : (tensor<1x1x64x64xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x64x64xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$weights,
                   DefaultValuedAttr<StrAttr, "\"sum\"">:$reduction,
                   DefaultValuedAttr<StrAttr, "\"zero\"">:$padding,
                   DefaultValuedAttr<F32Attr, "0.0f">:$padding_value,
                   OptionalAttr<I64ArrayAttr>:$offsets,
                   OptionalAttr<I64ArrayAttr>:$strides,
                   OptionalAttr<I64ArrayAttr>:$dilations);
  let results = (outs AnyTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // MLCC_GRAPH_CORE_OPS
