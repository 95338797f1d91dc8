// RUN: mlcc-opt %s --split-input-file --mlcc-decompose-fused-ops | FileCheck %s

// conv with the fused op's conv attributes, then the residual, then relu.
// CHECK-LABEL: func @residual_relu
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x4x4xf32>, %[[Z:.+]]: tensor<1x2x4x4xf32>)
func.func @residual_relu(%x: tensor<1x2x4x4xf32>, %z: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK: %[[C:.+]] = graph.conv %[[X]], %[[W:.+]], %[[B:.+]] {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}
  // CHECK: %[[S:.+]] = graph.add %[[C]], %[[Z]]
  // CHECK: %[[R:.+]] = graph.relu %[[S]]
  // CHECK-NOT: graph.fused_conv
  // CHECK: return %[[R]]
  %w = graph.constant dense<1.0> : tensor<2x2x3x3xf32>
  %b = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = graph.fused_conv %x, %w, %b, %z {activation = "relu", kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>, tensor<2xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// clip's bounds become constants again; float's max is an absent bound.
// silu is sigmoid then mul; gelu_tanh is graph.gelu's tanh form.
// CHECK-LABEL: func @activations
func.func @activations(%x: tensor<1x1x2x2xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) {
  // CHECK: %[[C0:.+]] = graph.conv
  // CHECK: %[[LO:.+]] = graph.constant dense<0.000000e+00> : tensor<f32>
  // CHECK: %[[HI:.+]] = graph.none
  // CHECK: graph.clip %[[C0]], %[[LO]], %[[HI]]
  // CHECK: %[[C1:.+]] = graph.conv
  // CHECK: %[[S:.+]] = graph.sigmoid %[[C1]]
  // CHECK: graph.mul %[[C1]], %[[S]]
  // CHECK: %[[C2:.+]] = graph.conv
  // CHECK: graph.gelu %[[C2]] {approximate = "tanh"}
  %w = graph.constant dense<1.0> : tensor<1x1x1x1xf32>
  %none = graph.none
  %y0 = graph.fused_conv %x, %w, %none, %none {activation = "clip", activation_alpha = 0.0 : f32, activation_beta = 3.40282347E+38 : f32} : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none, none) -> tensor<1x1x2x2xf32>
  %y1 = graph.fused_conv %x, %w, %none, %none {activation = "silu"} : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none, none) -> tensor<1x1x2x2xf32>
  %y2 = graph.fused_conv %x, %w, %none, %none {activation = "gelu_tanh"} : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none, none) -> tensor<1x1x2x2xf32>
  return %y0, %y1, %y2 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
}
