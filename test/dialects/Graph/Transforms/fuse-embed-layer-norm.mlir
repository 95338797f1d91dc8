// RUN: mlcc-opt %s --split-input-file --mlcc-fuse-embed-layer-norm | FileCheck %s

// BERT: word embeddings gathered, position and token-type embeddings added
// (constants after folding), then the layer norm: one op whose addend is
// the two constants summed.
// CHECK-LABEL: func @bert
// CHECK-SAME: (%[[IDS:.+]]: tensor<1x3xi64>)
func.func @bert(%ids: tensor<1x3xi64>) -> tensor<1x3x2xf32> {
  // CHECK-DAG: %[[T:.+]] = graph.constant dense<{{.*}}> : tensor<4x2xf32>
  // CHECK-DAG: %[[SUM:.+]] = graph.constant dense<{{\[\[\[}}1.500000e+00, 2.000000e+00], [3.500000e+00, 4.000000e+00], [5.500000e+00, 6.000000e+00]]]> : tensor<1x3x2xf32>
  // CHECK-NOT: graph.gather
  // CHECK-NOT: graph.add
  // CHECK: %[[Y:.+]] = graph.embed_layer_norm %[[IDS]], %[[T]], %[[SUM]], %{{.+}}, %{{.+}} {epsilon = 9.99999996E-13 : f32}
  // CHECK-NEXT: return %[[Y]]
  %table = graph.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>
  %pos = graph.constant dense<[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]> : tensor<1x3x2xf32>
  %type = graph.constant dense<[[[0.5, 0.0], [0.5, 0.0], [0.5, 0.0]]]> : tensor<1x3x2xf32>
  %gamma = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %beta = graph.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %e = graph.gather %table, %ids : (tensor<4x2xf32>, tensor<1x3xi64>) -> tensor<1x3x2xf32>
  %p = graph.add %e, %pos : (tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  %t = graph.add %type, %p : (tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  %y, %m, %s = graph.layer_norm %t, %gamma, %beta {axis = -1 : i64, epsilon = 9.99999996E-13 : f32} : (tensor<1x3x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x3x2xf32>, none, none)
  return %y : tensor<1x3x2xf32>
}

// -----

// One addend, no beta (the default epsilon is not printed).
// CHECK-LABEL: func @one_addend
// CHECK: graph.embed_layer_norm %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}}, %{{[^ ]+}} : (tensor<2x3xi32>, tensor<4x2xf32>, tensor<3x2xf32>, tensor<2xf32>, none) -> tensor<2x3x2xf32>
func.func @one_addend(%ids: tensor<2x3xi32>) -> tensor<2x3x2xf32> {
  %none = graph.none
  %table = graph.constant dense<1.0> : tensor<4x2xf32>
  %pos = graph.constant dense<0.5> : tensor<3x2xf32>
  %gamma = graph.constant dense<1.0> : tensor<2xf32>
  %e = graph.gather %table, %ids : (tensor<4x2xf32>, tensor<2x3xi32>) -> tensor<2x3x2xf32>
  %p = graph.add %e, %pos : (tensor<2x3x2xf32>, tensor<3x2xf32>) -> tensor<2x3x2xf32>
  %y, %m, %s = graph.layer_norm %p, %gamma, %none {epsilon = 9.99999974E-6 : f32} : (tensor<2x3x2xf32>, tensor<2xf32>, none) -> (tensor<2x3x2xf32>, none, none)
  return %y : tensor<2x3x2xf32>
}

// -----

// At batch 2 the token types (zeros, folded) are one block per item: the
// fused op's addend is one item, as at batch 1. Items that differ stay.
// CHECK-LABEL: func @repeated_items
// CHECK: graph.constant dense<{{\[\[\[}}1.500000e+00, 2.000000e+00], [3.500000e+00, 4.000000e+00], [5.500000e+00, 6.000000e+00]]]> : tensor<1x3x2xf32>
// CHECK: graph.embed_layer_norm {{.*}} : (tensor<2x3xi64>, tensor<4x2xf32>, tensor<1x3x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x3x2xf32>
// CHECK-LABEL: func @different_items
// CHECK: graph.embed_layer_norm {{.*}} : (tensor<2x3xi64>, tensor<4x2xf32>, tensor<2x3x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x3x2xf32>
func.func @repeated_items(%ids: tensor<2x3xi64>) -> tensor<2x3x2xf32> {
  %table = graph.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>
  %pos = graph.constant dense<[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]> : tensor<1x3x2xf32>
  %type = graph.constant dense<[[[0.5, 0.0], [0.5, 0.0], [0.5, 0.0]], [[0.5, 0.0], [0.5, 0.0], [0.5, 0.0]]]> : tensor<2x3x2xf32>
  %gamma = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %beta = graph.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %e = graph.gather %table, %ids : (tensor<4x2xf32>, tensor<2x3xi64>) -> tensor<2x3x2xf32>
  %p = graph.add %e, %pos : (tensor<2x3x2xf32>, tensor<1x3x2xf32>) -> tensor<2x3x2xf32>
  %t = graph.add %p, %type : (tensor<2x3x2xf32>, tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
  %y, %m, %s = graph.layer_norm %t, %gamma, %beta {axis = -1 : i64, epsilon = 9.99999996E-13 : f32} : (tensor<2x3x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2x3x2xf32>, none, none)
  return %y : tensor<2x3x2xf32>
}
func.func @different_items(%ids: tensor<2x3xi64>) -> tensor<2x3x2xf32> {
  %table = graph.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf32>
  %type = graph.constant dense<[[[0.5, 0.0], [0.5, 0.0], [0.5, 0.0]], [[0.5, 0.0], [0.5, 0.0], [0.5, 1.0]]]> : tensor<2x3x2xf32>
  %gamma = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %beta = graph.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %e = graph.gather %table, %ids : (tensor<4x2xf32>, tensor<2x3xi64>) -> tensor<2x3x2xf32>
  %t = graph.add %e, %type : (tensor<2x3x2xf32>, tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
  %y, %m, %s = graph.layer_norm %t, %gamma, %beta {axis = -1 : i64, epsilon = 9.99999996E-13 : f32} : (tensor<2x3x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2x3x2xf32>, none, none)
  return %y : tensor<2x3x2xf32>
}

// -----

// Must not fire: the summed embeddings have another user.
// CHECK-LABEL: func @shared_sum
// CHECK-NOT: graph.embed_layer_norm
// CHECK: graph.layer_norm
func.func @shared_sum(%ids: tensor<1x3xi64>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>) {
  %table = graph.constant dense<1.0> : tensor<4x2xf32>
  %pos = graph.constant dense<0.5> : tensor<1x3x2xf32>
  %gamma = graph.constant dense<1.0> : tensor<2xf32>
  %beta = graph.constant dense<0.0> : tensor<2xf32>
  %e = graph.gather %table, %ids : (tensor<4x2xf32>, tensor<1x3xi64>) -> tensor<1x3x2xf32>
  %p = graph.add %e, %pos : (tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  %y, %m, %s = graph.layer_norm %p, %gamma, %beta : (tensor<1x3x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x3x2xf32>, none, none)
  return %y, %p : tensor<1x3x2xf32>, tensor<1x3x2xf32>
}

// -----

// Must not fire: the addend is computed at run time, and a table that is
// not a constant.
// CHECK-LABEL: func @runtime_addend
// CHECK-NOT: graph.embed_layer_norm
func.func @runtime_addend(%ids: tensor<1x3xi64>, %pos: tensor<1x3x2xf32>, %table2: tensor<4x2xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>) {
  %table = graph.constant dense<1.0> : tensor<4x2xf32>
  %c = graph.constant dense<0.5> : tensor<1x3x2xf32>
  %gamma = graph.constant dense<1.0> : tensor<2xf32>
  %beta = graph.constant dense<0.0> : tensor<2xf32>
  %e = graph.gather %table, %ids : (tensor<4x2xf32>, tensor<1x3xi64>) -> tensor<1x3x2xf32>
  %p = graph.add %e, %pos : (tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  %y, %m, %s = graph.layer_norm %p, %gamma, %beta : (tensor<1x3x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x3x2xf32>, none, none)
  %e2 = graph.gather %table2, %ids : (tensor<4x2xf32>, tensor<1x3xi64>) -> tensor<1x3x2xf32>
  %p2 = graph.add %e2, %c : (tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  %y2, %m2, %s2 = graph.layer_norm %p2, %gamma, %beta : (tensor<1x3x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x3x2xf32>, none, none)
  return %y, %y2 : tensor<1x3x2xf32>, tensor<1x3x2xf32>
}

// -----

// Must not fire: a bias of one element (graph.layer_norm broadcasts it,
// embed_layer_norm takes vectors of the hidden size only) and a NaN
// epsilon.
// CHECK-LABEL: func @bias_broadcasts_or_nan_epsilon
// CHECK-COUNT-2: graph.layer_norm
// CHECK-NOT: graph.embed_layer_norm
func.func @bias_broadcasts_or_nan_epsilon(%ids: tensor<2x3xi32>) -> (tensor<2x3x2xf32>, tensor<2x3x2xf32>) {
  %none = graph.none
  %table = graph.constant dense<1.0> : tensor<4x2xf32>
  %pos = graph.constant dense<0.5> : tensor<3x2xf32>
  %gamma = graph.constant dense<1.0> : tensor<2xf32>
  %b1 = graph.constant dense<1.0> : tensor<1xf32>
  %e = graph.gather %table, %ids : (tensor<4x2xf32>, tensor<2x3xi32>) -> tensor<2x3x2xf32>
  %p = graph.add %e, %pos : (tensor<2x3x2xf32>, tensor<3x2xf32>) -> tensor<2x3x2xf32>
  %y, %m, %s = graph.layer_norm %p, %gamma, %b1 : (tensor<2x3x2xf32>, tensor<2xf32>, tensor<1xf32>) -> (tensor<2x3x2xf32>, none, none)
  %e2 = graph.gather %table, %ids : (tensor<4x2xf32>, tensor<2x3xi32>) -> tensor<2x3x2xf32>
  %p2 = graph.add %e2, %pos : (tensor<2x3x2xf32>, tensor<3x2xf32>) -> tensor<2x3x2xf32>
  %y2, %m2, %s2 = graph.layer_norm %p2, %gamma, %none {epsilon = 0x7FC00000 : f32} : (tensor<2x3x2xf32>, tensor<2xf32>, none) -> (tensor<2x3x2xf32>, none, none)
  return %y, %y2 : tensor<2x3x2xf32>, tensor<2x3x2xf32>
}
