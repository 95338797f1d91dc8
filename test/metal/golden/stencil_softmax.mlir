// The model of test/metal/golden.test: a 5-point Laplacian (a stencil,
// clamp padding) and a softmax over its rows (a reduction through
// threadgroup memory), small enough that its MSL stays readable.
func.func @main(%img: tensor<1x1x16x16xf32> {graph.name = "img"})
    -> (tensor<1x1x16x16xf32> {graph.name = "p"}) {
  %w = graph.constant dense<[[[[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]]]]> : tensor<1x1x3x3xf32>
  %lap = graph.stencil %img, %w {reduction = "sum", padding = "clamp"} : (tensor<1x1x16x16xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x16x16xf32>
  %p = graph.softmax %lap {axis = -1 : i64} : (tensor<1x1x16x16xf32>) -> tensor<1x1x16x16xf32>
  return %p : tensor<1x1x16x16xf32>
}
