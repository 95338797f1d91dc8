// RUN: mlcc-opt %s --split-input-file --mlcc-fuse-layer-norm | FileCheck %s

// BERT at opset 13: mean, sub, pow 2, mean, add eps, sqrt, div, gamma, beta.
// CHECK-LABEL: func @torch_opset13
// CHECK-SAME: (%[[X:.+]]: tensor<2x4xf32>)
func.func @torch_opset13(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // CHECK-DAG: %[[G:.+]] = graph.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
  // CHECK-DAG: %[[B:.+]] = graph.constant dense<[5.000000e-01, 0.000000e+00, -5.000000e-01, 1.000000e+00]> : tensor<4xf32>
  // CHECK-NOT: graph.{{reduce_mean|sub|pow|sqrt|div|mul|add}}
  // CHECK: %[[Y:[^ ,]+]], %{{[^ ,]+}}, %{{[^ ,]+}} = graph.layer_norm %[[X]], %[[G]], %[[B]] {axis = -1 : i64, epsilon = 9.99999996E-13 : f32} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, none, none)
  // CHECK-NEXT: return %[[Y]]
  %two = graph.constant dense<2.0> : tensor<f32>
  %eps = graph.constant dense<9.99999996E-13> : tensor<f32>
  %gamma = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %beta = graph.constant dense<[0.5, 0.0, -0.5, 1.0]> : tensor<4xf32>
  %mean = graph.reduce_mean %x {axes = [-1]} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %d = graph.sub %x, %mean : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %sq = graph.pow %d, %two : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %var = graph.reduce_mean %sq {axes = [-1]} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %ve = graph.add %var, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %std = graph.sqrt %ve : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %n = graph.div %d, %std : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %g = graph.mul %n, %gamma : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %y = graph.add %g, %beta : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// d * d, the last axis by number, eps first, reciprocal then mul, no
// gamma or beta: Scale is ones, B is none.
// CHECK-LABEL: func @no_affine
// CHECK-SAME: (%[[X:.+]]: tensor<3x2x8xf32>)
func.func @no_affine(%x: tensor<3x2x8xf32>) -> tensor<3x2x8xf32> {
  // CHECK-DAG: %[[ONES:.+]] = graph.constant dense<1.000000e+00> : tensor<8xf32>
  // CHECK-DAG: %[[NONE:.+]] = graph.none
  // CHECK: %[[Y:[^ ,]+]], {{.*}} = graph.layer_norm %[[X]], %[[ONES]], %[[NONE]] {axis = -1 : i64, epsilon = 9.99999974E-6 : f32}
  // CHECK-NEXT: return %[[Y]]
  %eps = graph.constant dense<1.0e-5> : tensor<1xf32>
  %mean = graph.reduce_mean %x {axes = [2], keepdims = 1 : i64} : (tensor<3x2x8xf32>) -> tensor<3x2x1xf32>
  %d = graph.sub %x, %mean : (tensor<3x2x8xf32>, tensor<3x2x1xf32>) -> tensor<3x2x8xf32>
  %sq = graph.mul %d, %d : (tensor<3x2x8xf32>, tensor<3x2x8xf32>) -> tensor<3x2x8xf32>
  %var = graph.reduce_mean %sq {axes = [2]} : (tensor<3x2x8xf32>) -> tensor<3x2x1xf32>
  %ve = graph.add %eps, %var : (tensor<1xf32>, tensor<3x2x1xf32>) -> tensor<3x2x1xf32>
  %std = graph.sqrt %ve : (tensor<3x2x1xf32>) -> tensor<3x2x1xf32>
  %inv = graph.reciprocal %std : (tensor<3x2x1xf32>) -> tensor<3x2x1xf32>
  %y = graph.mul %inv, %d : (tensor<3x2x1xf32>, tensor<3x2x8xf32>) -> tensor<3x2x8xf32>
  return %y : tensor<3x2x8xf32>
}

// -----

// gamma on the left and of shape [1, 1, C]; no beta.
// CHECK-LABEL: func @gamma_only
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x4xf32>)
func.func @gamma_only(%x: tensor<1x2x4xf32>) -> tensor<1x2x4xf32> {
  // CHECK-DAG: %[[G:.+]] = graph.constant dense<{{.+}}> : tensor<1x1x4xf32>
  // CHECK-DAG: %[[NONE:.+]] = graph.none
  // CHECK: %[[Y:[^ ,]+]], {{.*}} = graph.layer_norm %[[X]], %[[G]], %[[NONE]]
  // CHECK-NEXT: return %[[Y]]
  %two = graph.constant dense<2.0> : tensor<f32>
  %eps = graph.constant dense<1.0e-5> : tensor<f32>
  %gamma = graph.constant dense<[[[1.0, 2.0, 3.0, 4.0]]]> : tensor<1x1x4xf32>
  %mean = graph.reduce_mean %x {axes = [-1]} : (tensor<1x2x4xf32>) -> tensor<1x2x1xf32>
  %d = graph.sub %x, %mean : (tensor<1x2x4xf32>, tensor<1x2x1xf32>) -> tensor<1x2x4xf32>
  %sq = graph.pow %d, %two : (tensor<1x2x4xf32>, tensor<f32>) -> tensor<1x2x4xf32>
  %var = graph.reduce_mean %sq {axes = [-1]} : (tensor<1x2x4xf32>) -> tensor<1x2x1xf32>
  %ve = graph.add %var, %eps : (tensor<1x2x1xf32>, tensor<f32>) -> tensor<1x2x1xf32>
  %std = graph.sqrt %ve : (tensor<1x2x1xf32>) -> tensor<1x2x1xf32>
  %n = graph.div %d, %std : (tensor<1x2x4xf32>, tensor<1x2x1xf32>) -> tensor<1x2x4xf32>
  %y = graph.mul %gamma, %n : (tensor<1x1x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}

// -----

// beta only, on the left: Scale is ones.
// CHECK-LABEL: func @beta_only
// CHECK-SAME: (%[[X:.+]]: tensor<2x4xf32>)
func.func @beta_only(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // CHECK-DAG: %[[B:.+]] = graph.constant dense<[5.000000e-01, 0.000000e+00, -5.000000e-01, 1.000000e+00]> : tensor<4xf32>
  // CHECK-DAG: %[[ONES:.+]] = graph.constant dense<1.000000e+00> : tensor<4xf32>
  // CHECK: %[[Y:[^ ,]+]], {{.*}} = graph.layer_norm %[[X]], %[[ONES]], %[[B]]
  // CHECK-NEXT: return %[[Y]]
  %two = graph.constant dense<2.0> : tensor<f32>
  %eps = graph.constant dense<1.0e-5> : tensor<f32>
  %beta = graph.constant dense<[0.5, 0.0, -0.5, 1.0]> : tensor<4xf32>
  %mean = graph.reduce_mean %x {axes = [-1]} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %d = graph.sub %x, %mean : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %sq = graph.pow %d, %two : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %var = graph.reduce_mean %sq {axes = [-1]} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %ve = graph.add %var, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %std = graph.sqrt %ve : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %n = graph.div %d, %std : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %y = graph.add %beta, %n : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// A one-element gamma is splat to one value per column.
// CHECK-LABEL: func @scalar_gamma
// CHECK: %[[G:.+]] = graph.constant dense<3.000000e+00> : tensor<4xf32>
// CHECK: graph.layer_norm %{{.+}}, %[[G]], %{{.+}}
func.func @scalar_gamma(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %two = graph.constant dense<2.0> : tensor<f32>
  %eps = graph.constant dense<1.0e-5> : tensor<f32>
  %gamma = graph.constant dense<3.0> : tensor<1xf32>
  %mean = graph.reduce_mean %x {axes = [-1]} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %d = graph.sub %x, %mean : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %sq = graph.pow %d, %two : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %var = graph.reduce_mean %sq {axes = [-1]} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %ve = graph.add %var, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %std = graph.sqrt %ve : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %n = graph.div %d, %std : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %y = graph.mul %n, %gamma : (tensor<2x4xf32>, tensor<1xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// A per-row "gamma" ([2, 1]) is not LayerNormalization's Scale: the norm
// fuses, the mul stays after it.
// CHECK-LABEL: func @per_row_scale
// CHECK: %[[Y:[^ ,]+]], {{.*}} = graph.layer_norm
// CHECK-NEXT: %[[Z:.+]] = graph.mul %[[Y]], %{{.+}} : (tensor<2x4xf32>, tensor<2x1xf32>)
// CHECK-NEXT: return %[[Z]]
func.func @per_row_scale(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %two = graph.constant dense<2.0> : tensor<f32>
  %eps = graph.constant dense<1.0e-5> : tensor<f32>
  %rows = graph.constant dense<[[2.0], [3.0]]> : tensor<2x1xf32>
  %mean = graph.reduce_mean %x {axes = [-1]} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %d = graph.sub %x, %mean : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %sq = graph.pow %d, %two : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %var = graph.reduce_mean %sq {axes = [-1]} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %ve = graph.add %var, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %std = graph.sqrt %ve : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %n = graph.div %d, %std : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %y = graph.mul %n, %rows : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Normalising over axis 0, not the last one: nothing changes.
// CHECK-LABEL: func @first_axis
// CHECK-NOT: graph.layer_norm
// CHECK: graph.reduce_mean
func.func @first_axis(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %two = graph.constant dense<2.0> : tensor<f32>
  %eps = graph.constant dense<1.0e-5> : tensor<f32>
  %mean = graph.reduce_mean %x {axes = [0]} : (tensor<2x4xf32>) -> tensor<1x4xf32>
  %d = graph.sub %x, %mean : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %sq = graph.pow %d, %two : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %var = graph.reduce_mean %sq {axes = [0]} : (tensor<2x4xf32>) -> tensor<1x4xf32>
  %ve = graph.add %var, %eps : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  %std = graph.sqrt %ve : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %n = graph.div %d, %std : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  return %n : tensor<2x4xf32>
}

// -----

// The variance over another axis than the mean: not a layer norm.
// CHECK-LABEL: func @mixed_axes
// CHECK-NOT: graph.layer_norm
func.func @mixed_axes(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %two = graph.constant dense<2.0> : tensor<f32>
  %eps = graph.constant dense<1.0e-5> : tensor<f32>
  %mean = graph.reduce_mean %x {axes = [-1]} : (tensor<4x4xf32>) -> tensor<4x1xf32>
  %d = graph.sub %x, %mean : (tensor<4x4xf32>, tensor<4x1xf32>) -> tensor<4x4xf32>
  %sq = graph.pow %d, %two : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %var = graph.reduce_mean %sq {axes = [0]} : (tensor<4x4xf32>) -> tensor<1x4xf32>
  %ve = graph.add %var, %eps : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  %std = graph.sqrt %ve : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %n = graph.div %d, %std : (tensor<4x4xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>
  return %n : tensor<4x4xf32>
}

// -----

// x - mean is also a result: the group stays.
// CHECK-LABEL: func @centred_value_escapes
// CHECK-NOT: graph.layer_norm
// CHECK: graph.reduce_mean
func.func @centred_value_escapes(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %two = graph.constant dense<2.0> : tensor<f32>
  %eps = graph.constant dense<1.0e-5> : tensor<f32>
  %mean = graph.reduce_mean %x {axes = [-1]} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %d = graph.sub %x, %mean : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %sq = graph.pow %d, %two : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %var = graph.reduce_mean %sq {axes = [-1]} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %ve = graph.add %var, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %std = graph.sqrt %ve : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %n = graph.div %d, %std : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  return %n, %d : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// pow(d, 3) is not a variance.
// CHECK-LABEL: func @cube_not_square
// CHECK-NOT: graph.layer_norm
func.func @cube_not_square(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %three = graph.constant dense<3.0> : tensor<f32>
  %eps = graph.constant dense<1.0e-5> : tensor<f32>
  %mean = graph.reduce_mean %x {axes = [-1]} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %d = graph.sub %x, %mean : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %sq = graph.pow %d, %three : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %var = graph.reduce_mean %sq {axes = [-1]} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  %ve = graph.add %var, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %std = graph.sqrt %ve : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %n = graph.div %d, %std : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  return %n : tensor<2x4xf32>
}
