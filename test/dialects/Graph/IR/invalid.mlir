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
