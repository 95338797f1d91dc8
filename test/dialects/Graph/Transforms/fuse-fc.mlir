// RUN: mlcc-opt %s --split-input-file --mlcc-fuse-fc | FileCheck %s

// A bias row added on the left (BERT's export order).
// CHECK-LABEL: func @bias_left
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x3xf32>)
func.func @bias_left(%x: tensor<2x4x3xf32>) -> tensor<2x4x5xf32> {
  // CHECK-DAG: %[[W:.+]] = graph.constant dense<1.000000e+00> : tensor<3x5xf32>
  // CHECK-DAG: %[[B:.+]] = graph.constant dense<2.000000e+00> : tensor<5xf32>
  // CHECK-DAG: %[[NONE:.+]] = graph.none
  // CHECK: %[[Y:.+]] = graph.fc %[[X]], %[[W]], %[[B]], %[[NONE]] : (tensor<2x4x3xf32>, tensor<3x5xf32>, tensor<5xf32>, none) -> tensor<2x4x5xf32>
  // CHECK-NOT: graph.matmul
  // CHECK-NOT: graph.add
  // CHECK: return %[[Y]]
  %w = graph.constant dense<1.0> : tensor<3x5xf32>
  %b = graph.constant dense<2.0> : tensor<5xf32>
  %m = graph.matmul %x, %w : (tensor<2x4x3xf32>, tensor<3x5xf32>) -> tensor<2x4x5xf32>
  %y = graph.add %b, %m : (tensor<5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %y : tensor<2x4x5xf32>
}

// -----

// Bias on the right, as [1, N], then relu.
// CHECK-LABEL: func @bias_relu
func.func @bias_relu(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  // CHECK: %[[B:.+]] = graph.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  // CHECK: %[[Y:.+]] = graph.fc %{{.+}}, %{{.+}}, %[[B]], %{{.+}} {activation = "relu"
  // CHECK-NOT: graph.relu
  // CHECK: return %[[Y]]
  %w = graph.constant dense<1.0> : tensor<3x2xf32>
  %b = graph.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %m = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %a = graph.add %m, %b : (tensor<4x2xf32>, tensor<1x2xf32>) -> tensor<4x2xf32>
  %y = graph.relu %a : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// Bias, then a residual added on the left, then gelu.
// CHECK-LABEL: func @bias_residual_gelu
// CHECK-SAME: (%[[X:.+]]: tensor<4x3xf32>, %[[Z:.+]]: tensor<4x2xf32>)
func.func @bias_residual_gelu(%x: tensor<4x3xf32>, %z: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // CHECK: %[[Y:.+]] = graph.fc %[[X]], %{{.+}}, %{{.+}}, %[[Z]] {activation = "gelu"
  // CHECK-SAME: (tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  // CHECK-NOT: graph.add
  // CHECK-NOT: graph.gelu
  // CHECK: return %[[Y]]
  %w = graph.constant dense<1.0> : tensor<3x2xf32>
  %b = graph.constant dense<0.5> : tensor<2xf32>
  %m = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %a = graph.add %m, %b : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %r = graph.add %z, %a : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %y = graph.gelu %r : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// A residual and no bias; the activation is clip with one bound.
// CHECK-LABEL: func @residual_clip
// CHECK-SAME: (%[[X:.+]]: tensor<4x3xf32>, %[[Z:.+]]: tensor<4x2xf32>)
func.func @residual_clip(%x: tensor<4x3xf32>, %z: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // CHECK: graph.fc %[[X]], %{{.+}}, %{{.+}}, %[[Z]] {activation = "clip", activation_beta = 3.40282347E+38 : f32} : (tensor<4x3xf32>, tensor<3x2xf32>, none, tensor<4x2xf32>)
  // CHECK-NOT: graph.clip
  %w = graph.constant dense<1.0> : tensor<3x2xf32>
  %lo = graph.constant dense<0.0> : tensor<f32>
  %none = graph.none
  %m = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %r = graph.add %m, %z : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %y = graph.clip %r, %lo, %none : (tensor<4x2xf32>, tensor<f32>, none) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// leaky_relu keeps its alpha; silu as x * sigmoid(x).
// CHECK-LABEL: func @leaky_and_silu
func.func @leaky_and_silu(%x: tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  // CHECK: graph.fc {{.+}} {activation = "leaky_relu", activation_alpha = 2.000000e-01 : f32
  // CHECK: graph.fc {{.+}} {activation = "silu"
  // CHECK-NOT: graph.sigmoid
  // CHECK-NOT: graph.mul
  %w = graph.constant dense<1.0> : tensor<3x2xf32>
  %m = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %l = graph.leaky_relu %m {alpha = 0.2 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %m2 = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %s = graph.sigmoid %m2 : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %y = graph.mul %s, %m2 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %l, %y : tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// A Linear layer (gemm, transB = 1) and relu: B is stored as K x N and C,
// times beta, is the bias.
// CHECK-LABEL: func @gemm_relu
func.func @gemm_relu(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  // CHECK-DAG: %[[W:.+]] = graph.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
  // CHECK-DAG: %[[B:.+]] = graph.constant dense<[2.000000e+00, 4.000000e+00]> : tensor<2xf32>
  // CHECK: graph.fc %{{.+}}, %[[W]], %[[B]], %{{.+}} {activation = "relu"
  // CHECK-NOT: graph.gemm
  // CHECK-NOT: graph.relu
  %w = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %c = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %g = graph.gemm %x, %w, %c {transB = 1 : i64, beta = 2.0 : f32} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %y = graph.relu %g : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// A gemm with nothing to fuse after it stays: its kernel has the bias.
// CHECK-LABEL: func @gemm_alone
func.func @gemm_alone(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  // CHECK: graph.gemm
  // CHECK-NOT: graph.fc
  %w = graph.constant dense<1.0> : tensor<3x2xf32>
  %c = graph.constant dense<1.0> : tensor<2xf32>
  %g = graph.gemm %x, %w, %c : (tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %g : tensor<4x2xf32>
}

// -----

// W computed at run time (attention's scores x V): no fc.
// CHECK-LABEL: func @runtime_weight
func.func @runtime_weight(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>) -> tensor<4x2xf32> {
  // CHECK: graph.matmul
  // CHECK: graph.add
  // CHECK-NOT: graph.fc
  %b = graph.constant dense<1.0> : tensor<2xf32>
  %m = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %y = graph.add %m, %b : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// A constant [M, 1] added is a per-row term, not a bias row, and not a
// residual of the result's type: nothing fuses.
// CHECK-LABEL: func @bias_per_row
func.func @bias_per_row(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  // CHECK: graph.matmul
  // CHECK: graph.add
  // CHECK-NOT: graph.fc
  %w = graph.constant dense<1.0> : tensor<3x2xf32>
  %b = graph.constant dense<[[1.0], [2.0], [3.0], [4.0]]> : tensor<4x1xf32>
  %m = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %y = graph.add %m, %b : (tensor<4x2xf32>, tensor<4x1xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// The product has a second user: the matmul must stay, so nothing fuses.
// CHECK-LABEL: func @shared_product
func.func @shared_product(%x: tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  // CHECK: graph.matmul
  // CHECK: graph.add
  // CHECK-NOT: graph.fc
  %w = graph.constant dense<1.0> : tensor<3x2xf32>
  %b = graph.constant dense<1.0> : tensor<2xf32>
  %m = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %y = graph.add %m, %b : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %y, %m : tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// The biased value has a second user: the fc stops there (no activation
// attribute: none), relu stays.
// CHECK-LABEL: func @shared_biased
func.func @shared_biased(%x: tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
  // CHECK: %[[F:.+]] = graph.fc %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (
  // CHECK: %[[R:.+]] = graph.relu %[[F]]
  // CHECK: return %[[R]], %[[F]]
  %w = graph.constant dense<1.0> : tensor<3x2xf32>
  %b = graph.constant dense<1.0> : tensor<2xf32>
  %m = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %a = graph.add %m, %b : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %y = graph.relu %a : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %y, %a : tensor<4x2xf32>, tensor<4x2xf32>
}
