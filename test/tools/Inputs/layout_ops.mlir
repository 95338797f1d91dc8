// Layout ops that mlcc-simplify-layout-ops cancels, merges and sinks (see
// test/tools/layout-ops.test): a round trip through NHWC around
// elementwise ops, transposes and flattens feeding concats, reshape chains,
// two transposes that compose into one.
func.func @main(%x: tensor<2x3x4x5xf32> {graph.name = "x"}, %y: tensor<2x3x4x5xf32> {graph.name = "y"}, %a: tensor<2x3x4xf32> {graph.name = "a"}, %b: tensor<2x5x4xf32> {graph.name = "b"}) -> (tensor<2x3x4x5xf32> {graph.name = "nchw"}, tensor<2x4x8xf32> {graph.name = "cat_t"}, tensor<2x32xf32> {graph.name = "cat_f"}, tensor<4x30xf32> {graph.name = "chain"}, tensor<5x2x4x3xf32> {graph.name = "composed"}) {
  %half = graph.constant dense<0.5> : tensor<f32>
  %tx = graph.transpose %x {perm = [0, 2, 3, 1]} : (tensor<2x3x4x5xf32>) -> tensor<2x4x5x3xf32>
  %ty = graph.transpose %y {perm = [0, 2, 3, 1]} : (tensor<2x3x4x5xf32>) -> tensor<2x4x5x3xf32>
  %s = graph.sub %tx, %ty : (tensor<2x4x5x3xf32>, tensor<2x4x5x3xf32>) -> tensor<2x4x5x3xf32>
  %e = graph.sigmoid %s : (tensor<2x4x5x3xf32>) -> tensor<2x4x5x3xf32>
  %m = graph.mul %e, %half : (tensor<2x4x5x3xf32>, tensor<f32>) -> tensor<2x4x5x3xf32>
  %nchw = graph.transpose %m {perm = [0, 3, 1, 2]} : (tensor<2x4x5x3xf32>) -> tensor<2x3x4x5xf32>
  %ta = graph.transpose %a {perm = [0, 2, 1]} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %tb = graph.transpose %b {perm = [0, 2, 1]} : (tensor<2x5x4xf32>) -> tensor<2x4x5xf32>
  %cat_t = graph.concat %ta, %tb {axis = 2 : i64} : (tensor<2x4x3xf32>, tensor<2x4x5xf32>) -> tensor<2x4x8xf32>
  %fa = graph.flatten %a {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %fb = graph.flatten %b {axis = 1 : i64} : (tensor<2x5x4xf32>) -> tensor<2x20xf32>
  %cat_f = graph.concat %fa, %fb {axis = 1 : i64} : (tensor<2x12xf32>, tensor<2x20xf32>) -> tensor<2x32xf32>
  %ax = graph.constant dense<[1]> : tensor<1xi64>
  %shape = graph.constant dense<[4, 30]> : tensor<2xi64>
  %fy = graph.flatten %y {axis = 2 : i64} : (tensor<2x3x4x5xf32>) -> tensor<6x20xf32>
  %uy = graph.unsqueeze %fy, %ax : (tensor<6x20xf32>, tensor<1xi64>) -> tensor<6x1x20xf32>
  %chain = graph.reshape %uy, %shape : (tensor<6x1x20xf32>, tensor<2xi64>) -> tensor<4x30xf32>
  %t1 = graph.transpose %x {perm = [3, 2, 1, 0]} : (tensor<2x3x4x5xf32>) -> tensor<5x4x3x2xf32>
  %composed = graph.transpose %t1 {perm = [0, 3, 1, 2]} : (tensor<5x4x3x2xf32>) -> tensor<5x2x4x3xf32>
  return %nchw, %cat_t, %cat_f, %chain, %composed : tensor<2x3x4x5xf32>, tensor<2x4x8xf32>, tensor<2x32xf32>, tensor<4x30xf32>, tensor<5x2x4x3xf32>
}
