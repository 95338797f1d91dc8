// RUN: mlcc-opt %s --split-input-file --mlcc-fold-constants | FileCheck %s

// Ops on constants are evaluated by the reference kernels.
// CHECK-LABEL: func @arith
func.func @arith() -> tensor<3xf32> {
  %a = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %b = graph.constant dense<2.0> : tensor<f32>
  // CHECK-NOT: graph.mul
  // CHECK: %[[C:.+]] = graph.constant dense<[2.000000e+00, 4.000000e+00, 6.000000e+00]> : tensor<3xf32>
  // CHECK: return %[[C]]
  %c = graph.mul %a, %b : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %c : tensor<3xf32>
}

// -----

// A shape chain folds in one sweep once the input's shape is static, and
// the reshape's result type is refined on the way.
// CHECK-LABEL: func @shape_chain
// CHECK-SAME: -> tensor<3x2x12xf32>
func.func @shape_chain(%x: tensor<3x4x6xf32>) -> tensor<?x?x?xf32> {
  %zero = graph.constant dense<0> : tensor<i64>
  %axes = graph.constant dense<[0]> : tensor<1xi64>
  %rest = graph.constant dense<[2, 12]> : tensor<2xi64>
  // CHECK-NOT: graph.shape
  // CHECK-NOT: graph.gather
  // CHECK-NOT: graph.unsqueeze
  // CHECK-NOT: graph.concat
  // CHECK: %[[S:.+]] = graph.constant dense<[3, 2, 12]> : tensor<3xi64>
  // CHECK: graph.reshape %{{.+}}, %[[S]] : (tensor<3x4x6xf32>, tensor<3xi64>) -> tensor<3x2x12xf32>
  %s = graph.shape %x : (tensor<3x4x6xf32>) -> tensor<3xi64>
  %b = graph.gather %s, %zero {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %b1 = graph.unsqueeze %b, %axes : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %shape = graph.concat %b1, %rest {axis = 0 : i64} : (tensor<1xi64>, tensor<2xi64>) -> tensor<3xi64>
  %y = graph.reshape %x, %shape : (tensor<3x4x6xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  return %y : tensor<?x?x?xf32>
}

// -----

// Ops with a non-constant operand are left alone.
// CHECK-LABEL: func @not_constant
func.func @not_constant(%x: tensor<3xf32>) -> tensor<3xf32> {
  %a = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  // CHECK: graph.add
  %c = graph.add %a, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %c : tensor<3xf32>
}

// -----

// Results above max-bytes stay unfolded.
// RUN: mlcc-opt %s --split-input-file --mlcc-fold-constants="max-bytes=8" | FileCheck %s --check-prefix=SMALL
// SMALL-LABEL: func @too_big
func.func @too_big() -> tensor<4xf32> {
  %a = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  // SMALL: graph.neg
  %c = graph.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}
