// RUN: mlcc-opt %s --split-input-file --mlcc-fuse-conv-epilogue | FileCheck %s

// ResNet's block end: a per-channel bias add folds into the conv's bias
// (b + c = [1 + 10, 2 + 20]), then the residual and the relu join.
// CHECK-LABEL: func @bias_residual_relu
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x4x4xf32>, %[[Z:.+]]: tensor<1x2x4x4xf32>)
func.func @bias_residual_relu(%x: tensor<1x2x4x4xf32>, %z: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK-DAG: %[[W:.+]] = graph.constant dense<1.000000e+00> : tensor<2x2x3x3xf32>
  // CHECK-DAG: %[[B:.+]] = graph.constant dense<[1.100000e+01, 2.200000e+01]> : tensor<2xf32>
  // CHECK: %[[Y:.+]] = graph.fused_conv %[[X]], %[[W]], %[[B]], %[[Z]] {activation = "relu", kernel_shape = [3, 3], pads = [1, 1, 1, 1]}
  // CHECK-NOT: graph.add
  // CHECK-NOT: graph.relu
  // CHECK: return %[[Y]]
  %w = graph.constant dense<1.0> : tensor<2x2x3x3xf32>
  %b = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %c = graph.constant dense<[[[10.0]], [[20.0]]]> : tensor<2x1x1xf32>
  %y = graph.conv %x, %w, %b {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %yb = graph.add %y, %c : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = graph.add %yb, %z : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %r = graph.relu %s : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %r : tensor<1x2x4x4xf32>
}

// -----

// MobileNet's Relu6: clip with constant bounds 0 and 6; no bias, no residual.
// CHECK-LABEL: func @clip_0_6
func.func @clip_0_6(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK: %[[NONE:.+]] = graph.none
  // CHECK: graph.fused_conv %{{.+}}, %{{.+}}, %[[NONE]], %[[NONE]] {activation = "clip", activation_beta = 6.000000e+00 : f32, group = 2 : i64, kernel_shape = [1, 1]}
  // CHECK-NOT: graph.clip
  %w = graph.constant dense<1.0> : tensor<2x1x1x1xf32>
  %none = graph.none
  %lo = graph.constant dense<0.0> : tensor<f32>
  %hi = graph.constant dense<6.0> : tensor<f32>
  %y = graph.conv %x, %w, %none {group = 2 : i64, kernel_shape = [1, 1]} : (tensor<1x2x4x4xf32>, tensor<2x1x1x1xf32>, none) -> tensor<1x2x4x4xf32>
  %r = graph.clip %y, %lo, %hi : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  return %r : tensor<1x2x4x4xf32>
}

// -----

// A clip without an upper bound: beta is float's max, ONNX's default.
// CHECK-LABEL: func @clip_lower_only
func.func @clip_lower_only(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  // CHECK: graph.fused_conv {{.+}} {activation = "clip", activation_alpha = -1.000000e+00 : f32, activation_beta = 3.40282347E+38 : f32
  %w = graph.constant dense<1.0> : tensor<1x1x1x1xf32>
  %none = graph.none
  %lo = graph.constant dense<-1.0> : tensor<1xf32>
  %y = graph.conv %x, %w, %none : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x2x2xf32>
  %r = graph.clip %y, %lo, %none : (tensor<1x1x2x2xf32>, tensor<1xf32>, none) -> tensor<1x1x2x2xf32>
  return %r : tensor<1x1x2x2xf32>
}

// -----

// MobileNet's projection + skip: the residual alone, on the add's left.
// CHECK-LABEL: func @residual_only
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x4x4xf32>, %[[Z:.+]]: tensor<1x2x4x4xf32>)
func.func @residual_only(%x: tensor<1x2x4x4xf32>, %z: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK: %[[Y:.+]] = graph.fused_conv %[[X]], %{{.+}}, %{{.+}}, %[[Z]] :
  // CHECK-NOT: graph.add
  // CHECK: return %[[Y]]
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %b = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = graph.conv %x, %w, %b : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %s = graph.add %z, %y : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %s : tensor<1x2x4x4xf32>
}

// -----

// Activations alone: sigmoid, leaky_relu (its alpha), tanh, hard_swish, gelu.
// CHECK-LABEL: func @activation_only
func.func @activation_only(%x: tensor<1x1x2x2xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) {
  // CHECK: graph.fused_conv {{.+}} {activation = "sigmoid"
  // CHECK: graph.fused_conv {{.+}} {activation = "leaky_relu", activation_alpha = 2.000000e-01 : f32}
  // CHECK: graph.fused_conv {{.+}} {activation = "tanh"
  // CHECK: graph.fused_conv {{.+}} {activation = "hard_swish"
  // CHECK: graph.fused_conv {{.+}} {activation = "gelu_tanh"
  // CHECK-NOT: graph.conv
  %w = graph.constant dense<1.0> : tensor<1x1x1x1xf32>
  %none = graph.none
  %y0 = graph.conv %x, %w, %none : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x2x2xf32>
  %r0 = graph.sigmoid %y0 : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %y1 = graph.conv %x, %w, %none : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x2x2xf32>
  %r1 = graph.leaky_relu %y1 {alpha = 0.2 : f32} : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %y2 = graph.conv %x, %w, %none : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x2x2xf32>
  %r2 = graph.tanh %y2 : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %y3 = graph.conv %x, %w, %none : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x2x2xf32>
  %r3 = graph.hard_swish %y3 : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %y4 = graph.conv %x, %w, %none : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x2x2xf32>
  %r4 = graph.gelu %y4 {approximate = "tanh"} : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %r0, %r1, %r2, %r3, %r4 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
}

// -----

// SiLU as x * sigmoid(x), the sigmoid on either side of the mul.
// CHECK-LABEL: func @silu
func.func @silu(%x: tensor<1x1x2x2xf32>, %z: tensor<1x1x2x2xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) {
  // CHECK: graph.fused_conv {{.+}} {activation = "silu"
  // CHECK: graph.fused_conv %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {activation = "silu"
  // CHECK-NOT: graph.sigmoid
  // CHECK-NOT: graph.mul
  %w = graph.constant dense<1.0> : tensor<1x1x1x1xf32>
  %none = graph.none
  %y0 = graph.conv %x, %w, %none : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x2x2xf32>
  %s0 = graph.sigmoid %y0 : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %r0 = graph.mul %y0, %s0 : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %y1 = graph.conv %x, %w, %none : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x2x2xf32>
  %a1 = graph.add %y1, %z : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %s1 = graph.sigmoid %a1 : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %r1 = graph.mul %s1, %a1 : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %r0, %r1 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
}

// -----

// The conv's output has another user: nothing fuses, the add and relu stay.
// CHECK-LABEL: func @shared_conv_output
func.func @shared_conv_output(%x: tensor<1x1x2x2xf32>, %z: tensor<1x1x2x2xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) {
  // CHECK: graph.conv
  // CHECK: graph.add
  // CHECK: graph.relu
  // CHECK-NOT: graph.fused_conv
  %w = graph.constant dense<1.0> : tensor<1x1x1x1xf32>
  %none = graph.none
  %y = graph.conv %x, %w, %none : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x2x2xf32>
  %s = graph.add %y, %z : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %r = graph.relu %s : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %r, %y : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
}

// -----

// The sum has another user: conv and residual fuse, the relu stays apart.
// CHECK-LABEL: func @shared_sum
func.func @shared_sum(%x: tensor<1x1x2x2xf32>, %z: tensor<1x1x2x2xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) {
  // CHECK: %[[S:.+]] = graph.fused_conv %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} :
  // CHECK: %[[R:.+]] = graph.relu %[[S]]
  // CHECK: return %[[R]], %[[S]]
  %w = graph.constant dense<1.0> : tensor<1x1x1x1xf32>
  %none = graph.none
  %y = graph.conv %x, %w, %none : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x2x2xf32>
  %s = graph.add %y, %z : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %r = graph.relu %s : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %r, %s : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
}

// -----

// Broadcast adds are not residuals: a run-time per-channel tensor (not a
// constant bias) and a constant that varies along W.
// CHECK-LABEL: func @broadcast_adds
func.func @broadcast_adds(%x: tensor<1x2x2x2xf32>, %c: tensor<2x1x1xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  // CHECK-NOT: graph.fused_conv
  // CHECK: graph.conv
  // CHECK: graph.add
  // CHECK: graph.conv
  // CHECK: graph.add
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %none = graph.none
  %row = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y0 = graph.conv %x, %w, %none : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x2x2xf32>
  %a0 = graph.add %y0, %c : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %y1 = graph.conv %x, %w, %none : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x2x2xf32>
  %a1 = graph.add %y1, %row : (tensor<1x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %a0, %a1 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

// Clip with a bound known only at run time: no fusion.
// CHECK-LABEL: func @clip_runtime_bound
func.func @clip_runtime_bound(%x: tensor<1x1x2x2xf32>, %hi: tensor<f32>) -> tensor<1x1x2x2xf32> {
  // CHECK-NOT: graph.fused_conv
  // CHECK: graph.conv
  // CHECK: graph.clip
  %w = graph.constant dense<1.0> : tensor<1x1x1x1xf32>
  %none = graph.none
  %lo = graph.constant dense<0.0> : tensor<f32>
  %y = graph.conv %x, %w, %none : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x2x2xf32>
  %r = graph.clip %y, %lo, %hi : (tensor<1x1x2x2xf32>, tensor<f32>, tensor<f32>) -> tensor<1x1x2x2xf32>
  return %r : tensor<1x1x2x2xf32>
}

// -----

// SiLU's x has a third user: the sigmoid and mul stay.
// CHECK-LABEL: func @silu_shared
func.func @silu_shared(%x: tensor<1x1x2x2xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) {
  // CHECK-NOT: graph.fused_conv
  // CHECK: graph.sigmoid
  // CHECK: graph.mul
  %w = graph.constant dense<1.0> : tensor<1x1x1x1xf32>
  %none = graph.none
  %y = graph.conv %x, %w, %none : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x2x2xf32>
  %s = graph.sigmoid %y : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %r = graph.mul %y, %s : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %r, %y : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
}
