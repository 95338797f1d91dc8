func.func @no_affine(%x: tensor<3x2x8xf32>) -> tensor<3x2x8xf32> {
  // CHECK-DAG: %[[ONES:.+]] = graph.constant dense<1.000000e+00> : tensor<8xf32>
  // CHECK-DAG: %[[NONE:.+]] = graph.none
  // CHECK: %[[Y:[^ ,]+]], {{.*}} = graph.layer_norm %[[X]], %[[ONES]], %[[NONE]] {axis = -1 : i64, epsilon = 9.99999974E-6 : f32}
