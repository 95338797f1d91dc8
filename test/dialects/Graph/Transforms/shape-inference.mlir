// RUN: mlcc-opt %s --split-input-file --mlcc-shape-inference --verify-diagnostics --mlir-print-op-on-diagnostic=false | FileCheck %s

// Dynamic result dims become static where the operands decide them, and the
// function type follows.
// CHECK-LABEL: func @conv_chain
// CHECK-SAME: -> tensor<1x8x4x4xf32>
func.func @conv_chain(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<?x?x?x?xf32> {
  %none = graph.none
  // CHECK: graph.conv {{.*}} -> tensor<1x8x4x4xf32>
  %y = graph.conv %x, %w, %none {strides = [2, 2], pads = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, none) -> tensor<?x?x?x?xf32>
  // CHECK: graph.relu {{.*}} -> tensor<1x8x4x4xf32>
  %r = graph.relu %y : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %r : tensor<?x?x?x?xf32>
}

// -----

// Broadcasting keeps a dim dynamic when neither side fixes it.
// CHECK-LABEL: func @broadcast
func.func @broadcast(%a: tensor<?x1xf32>, %b: tensor<1x5xf32>) -> tensor<?x?xf32> {
  // CHECK: graph.add {{.*}} -> tensor<?x5xf32>
  %s = graph.add %a, %b : (tensor<?x1xf32>, tensor<1x5xf32>) -> tensor<?x?xf32>
  return %s : tensor<?x?xf32>
}

// -----

// Reshape reads its constant shape operand.
// CHECK-LABEL: func @reshape_constant
func.func @reshape_constant(%x: tensor<2x3x4xf32>) -> tensor<?x?xf32> {
  %s = graph.constant dense<[-1, 4]> : tensor<2xi64>
  // CHECK: graph.reshape {{.*}} -> tensor<6x4xf32>
  %y = graph.reshape %x, %s : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

// A declared static type that contradicts the operands is an error.
func.func @contradiction(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{result #0 is declared 'tensor<2x5xf32>' but its operands give 'tensor<2x4xf32>'}}
  %y = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

// Backward through broadcasting: a result dim declared 1 makes the operand
// dims there 1 (ONNX's test_loop11: a slice with run-time bounds added to
// a [1] value whose type the model declares); a result dim of 5 decides
// nothing (the operand could be 1 or 5).
// CHECK-LABEL: func @declared_one
func.func @declared_one(%x: tensor<5xf32>, %s: tensor<1xi64>, %e: tensor<1xi64>, %y: tensor<1xf32>) -> (tensor<1xf32>, tensor<5xf32>) {
  %none = graph.none
  // CHECK: graph.slice {{.*}} -> tensor<1xf32>
  %sl = graph.slice %x, %s, %e, %none, %none : (tensor<5xf32>, tensor<1xi64>, tensor<1xi64>, none, none) -> tensor<?xf32>
  %sum = graph.add %y, %sl : (tensor<1xf32>, tensor<?xf32>) -> tensor<1xf32>
  // CHECK: graph.slice {{.*}} -> tensor<?xf32>
  %sl2 = graph.slice %x, %s, %e, %none, %none : (tensor<5xf32>, tensor<1xi64>, tensor<1xi64>, none, none) -> tensor<?xf32>
  %sum2 = graph.add %x, %sl2 : (tensor<5xf32>, tensor<?xf32>) -> tensor<5xf32>
  return %sum, %sum2 : tensor<1xf32>, tensor<5xf32>
}
