// nonzero of x > 0.5 as a model output (dims [2, <=12]) and its transpose
// ([<=12, 2]): extents known only when the model runs.
func.func @main(%x: tensor<3x4xf32> {graph.name = "x"}) -> (tensor<2x?xi64> {graph.name = "nz"}, tensor<?x2xi64> {graph.name = "nzt"}) {
  %zero = graph.constant dense<0.5> : tensor<f32>
  %m = graph.greater %x, %zero : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xi1>
  %nz = graph.nonzero %m : (tensor<3x4xi1>) -> tensor<2x?xi64>
  %t = graph.transpose %nz {perm = [1, 0]} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  return %nz, %t : tensor<2x?xi64>, tensor<?x2xi64>
}
