// RUN: mlcc-opt %s --split-input-file --verify-diagnostics
// What the verifiers reject, with the message a user sees.

// A stencil window must have the input's rank.
func.func @stencil_rank(%x: tensor<8x8xf32>, %k: tensor<3xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{weights have rank 1, expected the input's rank 2}}
  %s = graph.stencil %x, %k : (tensor<8x8xf32>, tensor<3xf32>) -> tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}

// -----

// Unknown reduction modes are named.
func.func @stencil_mode(%x: tensor<8xf32>, %k: tensor<3xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{unknown reduction 'median'}}
  %s = graph.stencil %x, %k {reduction = "median"} : (tensor<8xf32>, tensor<3xf32>) -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

// Both branches of an if must yield what the op returns.
func.func @if_types(%c: tensor<i1>, %a: tensor<4xf32>, %b: tensor<4xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{else region value #0 has type 'tensor<4xi64>', expected 'tensor<4xf32>'}}
  %r = graph.if %c : tensor<i1> -> (tensor<4xf32>) {
    graph.yield %a : tensor<4xf32>
  } else {
    graph.yield %b : tensor<4xi64>
  }
  return %r : tensor<4xf32>
}

// -----

// The first argument of a for body is the iteration number.
func.func @for_iter(%n: tensor<i64>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{first body argument must be tensor<i64>}}
  %r = graph.for %n : tensor<i64> iter_args(%a : tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%i: tensor<f32>, %acc: tensor<4xf32>):
    graph.yield %acc : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Scan outputs must be declared.
func.func @for_scan_count(%n: tensor<i64>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{body yields 2 values, expected 1 carried + 0 scan outputs}}
  %r = graph.for %n : tensor<i64> iter_args(%a : tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %acc: tensor<4xf32>):
    graph.yield %acc, %acc : tensor<4xf32>, tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// A control dependency needs something to wait for.
func.func @control_dependency_empty(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{needs at least one value in 'after'}}
  %r = "graph.control_dependency"(%a) {operandSegmentSizes = array<i32: 1, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Constants carry their own type.
func.func @constant_type() -> tensor<2xf32> {
  // expected-error @+1 {{'graph.constant' op failed to verify that all of {value, output} have same type}}
  %c = "graph.constant"() {value = dense<[1, 2]> : tensor<2xi32>} : () -> tensor<2xf32>
  return %c : tensor<2xf32>
}

// -----

// Convolution channels must agree with the weight and group.
func.func @conv_channels(%x: tensor<1x6x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %none = graph.none
  // expected-error @+1 {{input has 6 channels, but weight expects 4 x group 2 = 8}}
  %y = graph.conv %x, %w, %none {group = 2 : i64} : (tensor<1x6x8x8xf32>, tensor<4x4x3x3xf32>, none) -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %none = graph.none
  // expected-error @+1 {{weight has rank 3, expected the input's rank 4}}
  %y = graph.conv %x, %w, %none : (tensor<1x3x8x8xf32>, tensor<4x3x3xf32>, none) -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}

// -----

func.func @matmul_inner(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{inner dimensions differ: 3 vs 4}}
  %y = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

// Dynamic dims are not an error.
func.func @matmul_dynamic(%a: tensor<2x?xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  %y = graph.matmul %a, %b : (tensor<2x?xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

func.func @gemm_trans(%a: tensor<3x2xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %none = graph.none
  // expected-error @+1 {{inner dimensions differ: 2 vs 3}}
  %y = graph.gemm %a, %b, %none : (tensor<3x2xf32>, tensor<3x4xf32>, none) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @transpose_perm(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  // expected-error @+1 {{perm is not a permutation of 0..2}}
  %y = graph.transpose %x {perm = [2, 2, 0]} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  return %y : tensor<4x3x2xf32>
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %y = graph.concat %a, %b {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<6xf32>) -> tensor<12xf32> {
  // expected-error @+1 {{inputs have ranks 2 and 1}}
  %y = graph.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<6xf32>) -> tensor<12xf32>
  return %y : tensor<12xf32>
}

// -----

func.func @reshape_shape(%x: tensor<6xf32>, %s: tensor<2xi32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{shape operand must be a 1-D i64 tensor}}
  %y = graph.reshape %x, %s : (tensor<6xf32>, tensor<2xi32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @gather_indices(%x: tensor<6xf32>, %i: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{indices must be integers, got 'f32'}}
  %y = graph.gather %x, %i : (tensor<6xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

func.func @batch_norm_channels(%x: tensor<1x3x4x4xf32>, %s: tensor<4xf32>, %v: tensor<3xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error @+1 {{scale has 4 elements, expected 3}}
  %y, %m, %var = graph.batch_norm %x, %s, %v, %v, %v : (tensor<1x3x4x4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<1x3x4x4xf32>, none, none)
  return %y : tensor<1x3x4x4xf32>
}

// -----

func.func @softmax_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %y = graph.softmax %x {axis = -3 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// Fused ops: the activation is one the kernels know.
func.func @fc_activation(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %none = graph.none
  // expected-error @+1 {{unknown activation 'swish2'}}
  %y = graph.fc %x, %w, %none, %none {activation = "swish2"} : (tensor<2x4xf32>, tensor<4x3xf32>, none, none) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// fc: the bias has N elements.
func.func @fc_bias(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  %none = graph.none
  // expected-error @+1 {{bias B has 4 elements, expected 3}}
  %y = graph.fc %x, %w, %b, %none : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<4xf32>, none) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// fused_conv: the residual has the result's shape.
func.func @fused_conv_residual(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>, %z: tensor<1x3x4x5xf32>) -> tensor<1x3x4x4xf32> {
  %none = graph.none
  // expected-error @+1 {{residual Z has shape 'tensor<1x3x4x5xf32>', expected that of 'tensor<1x3x4x4xf32>'}}
  %y = graph.fused_conv %x, %w, %none, %z {activation = "relu"} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>, none, tensor<1x3x4x5xf32>) -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// attention: the heads divide the hidden size.
func.func @attention_heads(%q: tensor<1x8x30xf32>) -> tensor<1x8x30xf32> {
  %none = graph.none
  // expected-error @+1 {{Q's last dim 30 is not divisible by num_heads 4}}
  %y = graph.attention %q, %q, %q, %none {num_heads = 4 : i64} : (tensor<1x8x30xf32>, tensor<1x8x30xf32>, tensor<1x8x30xf32>, none) -> tensor<1x8x30xf32>
  return %y : tensor<1x8x30xf32>
}

// -----

// skip_layer_norm: the skip has X's shape; epsilon is not negative.
func.func @skip_shape(%x: tensor<2x8xf32>, %s: tensor<1x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  %none = graph.none
  // expected-error @+1 {{Skip has shape 'tensor<1x8xf32>', expected that of 'tensor<2x8xf32>'}}
  %y = graph.skip_layer_norm %x, %s, %g, %none : (tensor<2x8xf32>, tensor<1x8xf32>, tensor<8xf32>, none) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

func.func @skip_epsilon(%x: tensor<2x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  %none = graph.none
  // expected-error @+1 {{epsilon must be finite and >= 0, got -1.000000e+00}}
  %y = graph.skip_layer_norm %x, %x, %g, %none {epsilon = -1.0 : f32} : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>, none) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

func.func @gelu_mode(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{approximate must be 'none' or 'tanh', got 'fast'}}
  %y = graph.gelu %x {approximate = "fast"} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
