// RUN: mlcc-opt %s --split-input-file --mlcc-fuse-skip-layer-norm | FileCheck %s

// A transformer's "add & norm": the residual add goes into the layer norm.
// CHECK-LABEL: func @add_and_norm
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32>, %[[R:.+]]: tensor<2x8xf32>)
func.func @add_and_norm(%x: tensor<2x8xf32>, %r: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // CHECK-NOT: graph.add
  // CHECK-NOT: graph.layer_norm
  // CHECK: %[[Y:.+]] = graph.skip_layer_norm %[[X]], %[[R]], %{{.+}}, %{{.+}} {epsilon = 9.99999996E-13 : f32} : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: return %[[Y]]
  %gamma = graph.constant dense<2.0> : tensor<8xf32>
  %beta = graph.constant dense<0.5> : tensor<8xf32>
  %h = graph.add %x, %r : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y, %m, %s = graph.layer_norm %h, %gamma, %beta {axis = -1 : i64, epsilon = 9.99999996E-13 : f32} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, none, none)
  return %y : tensor<2x8xf32>
}

// -----

// The last axis named by its index, no beta, the default epsilon.
// CHECK-LABEL: func @positive_axis
// CHECK: graph.skip_layer_norm %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<8xf32>, none) -> tensor<1x4x8xf32>
func.func @positive_axis(%x: tensor<1x4x8xf32>, %r: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %none = graph.none
  %gamma = graph.constant dense<1.0> : tensor<8xf32>
  %h = graph.add %r, %x : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %y, %m, %s = graph.layer_norm %h, %gamma, %none {axis = 2 : i64} : (tensor<1x4x8xf32>, tensor<8xf32>, none) -> (tensor<1x4x8xf32>, none, none)
  return %y : tensor<1x4x8xf32>
}

// -----

// Must not fire: the sum is also the next block's residual (a pre-norm
// transformer), so it must be stored anyway.
// CHECK-LABEL: func @sum_used_again
// CHECK: graph.add
// CHECK: graph.layer_norm
// CHECK-NOT: graph.skip_layer_norm
func.func @sum_used_again(%x: tensor<2x8xf32>, %r: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %none = graph.none
  %gamma = graph.constant dense<1.0> : tensor<8xf32>
  %h = graph.add %x, %r : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y, %m, %s = graph.layer_norm %h, %gamma, %none : (tensor<2x8xf32>, tensor<8xf32>, none) -> (tensor<2x8xf32>, none, none)
  return %y, %h : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Must not fire: a broadcast add (a bias row) is not a skip connection.
// CHECK-LABEL: func @broadcast_add
// CHECK: graph.add
// CHECK-NOT: graph.skip_layer_norm
func.func @broadcast_add(%x: tensor<2x8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %none = graph.none
  %gamma = graph.constant dense<1.0> : tensor<8xf32>
  %h = graph.add %x, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %y, %m, %s = graph.layer_norm %h, %gamma, %none : (tensor<2x8xf32>, tensor<8xf32>, none) -> (tensor<2x8xf32>, none, none)
  return %y : tensor<2x8xf32>
}

// -----

// Must not fire: the normalised axis is not the last one, or the mean is
// used.
// CHECK-LABEL: func @not_last_axis_or_mean_used
// CHECK-COUNT-2: graph.layer_norm
// CHECK-NOT: graph.skip_layer_norm
func.func @not_last_axis_or_mean_used(%x: tensor<2x8xf32>, %r: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x1xf32>) {
  %none = graph.none
  %gamma = graph.constant dense<1.0> : tensor<2x8xf32>
  %g8 = graph.constant dense<1.0> : tensor<8xf32>
  %h = graph.add %x, %r : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y, %m, %s = graph.layer_norm %h, %gamma, %none {axis = 0 : i64} : (tensor<2x8xf32>, tensor<2x8xf32>, none) -> (tensor<2x8xf32>, none, none)
  %h2 = graph.add %r, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y2, %m2, %s2 = graph.layer_norm %h2, %g8, %none : (tensor<2x8xf32>, tensor<8xf32>, none) -> (tensor<2x8xf32>, tensor<2x1xf32>, none)
  return %y, %y2, %m2 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x1xf32>
}

// -----

// Must not fire: a scale that broadcasts over the last two axes, and a
// negative epsilon; graph.layer_norm takes both, skip_layer_norm neither
// (found by the mlir-input fuzzer).
// CHECK-LABEL: func @scale_not_a_vector_or_negative_epsilon
// CHECK-COUNT-2: graph.layer_norm
// CHECK-NOT: graph.skip_layer_norm
func.func @scale_not_a_vector_or_negative_epsilon(%x: tensor<2x8xf32>, %r: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %none = graph.none
  %gamma = graph.constant dense<1.0> : tensor<2x8xf32>
  %g8 = graph.constant dense<1.0> : tensor<8xf32>
  %h = graph.add %x, %r : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y, %m, %s = graph.layer_norm %h, %gamma, %none {axis = 1 : i64} : (tensor<2x8xf32>, tensor<2x8xf32>, none) -> (tensor<2x8xf32>, none, none)
  %h2 = graph.add %r, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y2, %m2, %s2 = graph.layer_norm %h2, %g8, %none {epsilon = -2.0e-13 : f32} : (tensor<2x8xf32>, tensor<8xf32>, none) -> (tensor<2x8xf32>, none, none)
  return %y, %y2 : tensor<2x8xf32>, tensor<2x8xf32>
}
