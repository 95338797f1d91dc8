// Reductions for test/tools/reduce.test: the avx512 target generates
// kernels for the first four (rows, columns, all axes, an axes operand);
// reduce_min over axes 0 and 2 is not one block and stays portable.
func.func @main(%x: tensor<4x33x20xf32> {graph.name = "x"}) -> (tensor<4x33x1xf32> {graph.name = "mean_last"}, tensor<4x20xf32> {graph.name = "sum_mid"}, tensor<4xf32> {graph.name = "max_rows"}, tensor<1x1x1xf32> {graph.name = "sum_square_all"}, tensor<33xf32> {graph.name = "min_outer"}) {
  %mean = graph.reduce_mean %x {axes = [-1], keepdims = 1 : i64} : (tensor<4x33x20xf32>) -> tensor<4x33x1xf32>
  %axes = graph.constant dense<[1]> : tensor<1xi64>
  %sum = graph.reduce_sum %x, %axes {keepdims = 0 : i64} : (tensor<4x33x20xf32>, tensor<1xi64>) -> tensor<4x20xf32>
  %max = graph.reduce_max %x {axes = [1, 2], keepdims = 0 : i64} : (tensor<4x33x20xf32>) -> tensor<4xf32>
  %sq = graph.reduce_sum_square %x : (tensor<4x33x20xf32>) -> tensor<1x1x1xf32>
  %min = graph.reduce_min %x {axes = [0, 2], keepdims = 0 : i64} : (tensor<4x33x20xf32>) -> tensor<33xf32>
  return %mean, %sum, %max, %sq, %min : tensor<4x33x1xf32>, tensor<4x20xf32>, tensor<4xf32>, tensor<1x1x1xf32>, tensor<33xf32>
}
