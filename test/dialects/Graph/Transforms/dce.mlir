// RUN: mlcc-opt %s --split-input-file --mlcc-dce | FileCheck %s

// Unused chains go, including inside regions.
// CHECK-LABEL: func @dead_chain
func.func @dead_chain(%x: tensor<4xf32>, %c: tensor<i1>) -> tensor<4xf32> {
  // CHECK-NOT: graph.exp
  // CHECK-NOT: graph.log
  %e = graph.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %l = graph.log %e : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: graph.if
  %r = graph.if %c : tensor<i1> -> (tensor<4xf32>) {
    // CHECK-NOT: graph.sqrt
    %dead = graph.sqrt %x : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %x : tensor<4xf32>
  } else {
    // CHECK: graph.neg
    %n = graph.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    graph.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// An op whose only "use" is a control dependency survives: the assign-like
// abs must run before the exp, though nothing reads its data.
// CHECK-LABEL: func @control_dependency_keeps_producer
func.func @control_dependency_keeps_producer(%x: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[A:.+]] = graph.abs
  %assigned = graph.abs %v : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: %[[X:.+]] = graph.control_dependency %{{.+}} after %[[A]]
  %x2 = graph.control_dependency %x after %assigned : (tensor<4xf32>) after (tensor<4xf32>) -> (tensor<4xf32>)
  // CHECK: graph.exp %[[X]]
  %e = graph.exp %x2 : (tensor<4xf32>) -> tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

// Without a used result, the control dependency itself is dead.
// CHECK-LABEL: func @unused_dependency
func.func @unused_dependency(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NOT: graph.abs
  // CHECK-NOT: graph.control_dependency
  %a = graph.abs %x : (tensor<4xf32>) -> tensor<4xf32>
  %x2 = graph.control_dependency %x after %a : (tensor<4xf32>) after (tensor<4xf32>) -> (tensor<4xf32>)
  return %x : tensor<4xf32>
}
