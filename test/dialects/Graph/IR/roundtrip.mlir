// RUN: mlcc-opt %s | mlcc-opt | FileCheck %s
// Every hand-written op prints in a form that parses back to the same IR.

// CHECK-LABEL: func @constants
func.func @constants() -> (tensor<2xf32>, none) {
  // CHECK: graph.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %c = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: graph.none
  %n = graph.none
  return %c, %n : tensor<2xf32>, none
}

// CHECK-LABEL: func @onnx_ops
func.func @onnx_ops(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %none = graph.none
  // CHECK: graph.conv %{{.*}}, %{{.*}}, %{{.*}} {group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x6x6xf32>
  %y = graph.conv %x, %w, %none {group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x6x6xf32>
  // CHECK: graph.relu
  %r = graph.relu %y : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %r : tensor<1x4x6x6xf32>
}

// CHECK-LABEL: func @control_flow
func.func @control_flow(%c: tensor<i1>, %a: tensor<4xf32>, %n: tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<?x4xf32>) {
  // CHECK: graph.if %{{.*}} : tensor<i1> -> (tensor<4xf32>)
  // CHECK: } else {
  %r = graph.if %c : tensor<i1> -> (tensor<4xf32>) {
    graph.yield %a : tensor<4xf32>
  } else {
    %neg = graph.neg %a : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %neg : tensor<4xf32>
  }
  // CHECK: graph.for %{{.*}} : tensor<i64> iter_args(%{{.*}} : tensor<4xf32>) -> (tensor<4xf32>, tensor<?x4xf32>)
  // CHECK: ^bb0(%{{.*}}: tensor<i64>, %{{.*}}: tensor<4xf32>):
  // CHECK: {num_scan_outputs = 1 : i64}
  %s, %stack = graph.for %n : tensor<i64> iter_args(%a : tensor<4xf32>) -> (tensor<4xf32>, tensor<?x4xf32>) {
  ^bb0(%i: tensor<i64>, %acc: tensor<4xf32>):
    %next = graph.add %acc, %acc : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    graph.yield %next, %acc : tensor<4xf32>, tensor<4xf32>
  } {num_scan_outputs = 1 : i64}
  // CHECK: graph.while iter_args(%{{.*}} : tensor<4xf32>) -> (tensor<4xf32>) cond {
  // CHECK: graph.condition %{{.*}}, %{{.*}} : tensor<i1>, tensor<4xf32>
  // CHECK: } do {
  %w = graph.while iter_args(%a : tensor<4xf32>) -> (tensor<4xf32>) cond {
  ^bb0(%v: tensor<4xf32>):
    %m = graph.reduce_max %v {keepdims = 0 : i64} : (tensor<4xf32>) -> tensor<f32>
    %z = graph.constant dense<1.0> : tensor<f32>
    %more = graph.less %m, %z : (tensor<f32>, tensor<f32>) -> tensor<i1>
    graph.condition %more, %v : tensor<i1>, tensor<4xf32>
  } do {
  ^bb0(%v: tensor<4xf32>):
    %d = graph.add %v, %v : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    graph.yield %d : tensor<4xf32>
  }
  return %r, %w, %stack : tensor<4xf32>, tensor<4xf32>, tensor<?x4xf32>
}

// CHECK-LABEL: func @ordering_and_stencil
func.func @ordering_and_stencil(%x: tensor<1x1x8x8xf32>, %k: tensor<1x1x3x3xf32>, %a: tensor<4xf32>) -> (tensor<1x1x8x8xf32>, tensor<4xf32>) {
  // The default reduction ("sum") is not printed.
  // CHECK: graph.stencil %{{.*}}, %{{.*}} {padding = "clamp"}
  %s = graph.stencil %x, %k {reduction = "sum", padding = "clamp"} : (tensor<1x1x8x8xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x8x8xf32>
  %assigned = graph.abs %a : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: graph.control_dependency %{{.*}} after %{{.*}} : (tensor<4xf32>) after (tensor<4xf32>) -> (tensor<4xf32>)
  %ordered = graph.control_dependency %a after %assigned : (tensor<4xf32>) after (tensor<4xf32>) -> (tensor<4xf32>)
  return %s, %ordered : tensor<1x1x8x8xf32>, tensor<4xf32>
}
