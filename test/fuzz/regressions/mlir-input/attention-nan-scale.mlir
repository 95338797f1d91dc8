func.func @mul_scores_nan(%q: tensor<1x4x4xf32>, %k: tensor<1x4x4xf32>, %v: tensor<1x4x4xf32>, %mask: tensor<1x1x1x4xf32>) -> (tensor<1x4x4xf32>) {
  %s4 = graph.constant dense<[-1, 4, 2, 2]> : tensor<4xi64>
  %s3 = graph.constant dense<[-1, 4, 4]> : tensor<3xi64>
  %c = graph.constant dense<0x7FC00000> : tensor<f32>
  %q4 = graph.reshape %q, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %k4 = graph.reshape %k, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %v4 = graph.reshape %v, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %qh = graph.transpose %q4 {perm = [0, 2, 1, 3]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %kh = graph.transpose %k4 {perm = [0, 2, 3, 1]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x2x4xf32>
  %vh = graph.transpose %v4 {perm = [0, 2, 1, 3]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %mm = graph.matmul %qh, %kh : (tensor<1x2x4x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
  %sd = graph.mul %mm, %c : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %sm = graph.add %sd, %mask : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32>
  %p = graph.softmax %sm {axis = -1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %o = graph.matmul %p, %vh : (tensor<1x2x4x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
  %ot = graph.transpose %o {perm = [0, 2, 1, 3]} : (tensor<1x2x4x2xf32>) -> tensor<1x4x2x2xf32>
  %y = graph.reshape %ot, %s3 : (tensor<1x4x2x2xf32>, tensor<3xi64>) -> tensor<1x4x4xf32>
  return %y : tensor<1x4x4xf32>
}
