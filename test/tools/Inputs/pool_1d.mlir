// 1-D pools (NCL) on avx512 (test/tools/pool-1d.test): max with stride 2
// and pads (1, 1), average with pads (0, 2) not counted, the global max and
// average, and a max pool of a 1-D conv's output (read in NCHW16c).
func.func @main(%x: tensor<2x20x50xf32> {graph.name = "x"}) -> (tensor<2x20x25xf32> {graph.name = "maxp"}, tensor<2x20x49xf32> {graph.name = "avgp"}, tensor<2x20x1xf32> {graph.name = "gmax"}, tensor<2x20x1xf32> {graph.name = "gavg"}, tensor<2x32x25xf32> {graph.name = "conv_maxp"}) {
  %w = graph.constant dense<0.05> : tensor<32x20x3xf32>
  %b = graph.constant dense<[-0.14, -0.12, 0.19, -0.24, 0.06, 0.14, -0.19, -0.27, -0.14, 0.09, 0.04, -0.21, -0.04, 0.10, -0.05, 0.08, 0.28, 0.11, -0.07, -0.19, -0.09, 0.01, 0.23, 0.17, -0.11, 0.25, -0.02, 0.12, -0.24, -0.24, -0.18, 0.23]> : tensor<32xf32>
  %maxp, %i0 = graph.max_pool %x {kernel_shape = [3], pads = [1, 1], strides = [2]} : (tensor<2x20x50xf32>) -> (tensor<2x20x25xf32>, none)
  %avgp = graph.average_pool %x {kernel_shape = [4], pads = [0, 2], strides = [1]} : (tensor<2x20x50xf32>) -> tensor<2x20x49xf32>
  %gmax = graph.global_max_pool %x : (tensor<2x20x50xf32>) -> tensor<2x20x1xf32>
  %gavg = graph.global_average_pool %x : (tensor<2x20x50xf32>) -> tensor<2x20x1xf32>
  %conv = graph.conv %x, %w, %b {kernel_shape = [3], pads = [1, 1]} : (tensor<2x20x50xf32>, tensor<32x20x3xf32>, tensor<32xf32>) -> tensor<2x32x50xf32>
  %conv_maxp, %i1 = graph.max_pool %conv {kernel_shape = [2], strides = [2]} : (tensor<2x32x50xf32>) -> (tensor<2x32x25xf32>, none)
  return %maxp, %avgp, %gmax, %gavg, %conv_maxp : tensor<2x20x25xf32>, tensor<2x20x49xf32>, tensor<2x20x1xf32>, tensor<2x20x1xf32>, tensor<2x32x25xf32>
}
