// A gather along a dim whose extent comes from the data: the index must be
// inside the actual extent (5 rows here), not only the bound (12).
func.func @main(%x: tensor<3x4xf32> {graph.name = "x"}, %i: tensor<1xi64> {graph.name = "i"}) -> (tensor<1x2xi64> {graph.name = "row"}) {
  %half = graph.constant dense<0.5> : tensor<f32>
  %m = graph.greater %x, %half : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xi1>
  %nz = graph.nonzero %m : (tensor<3x4xi1>) -> tensor<2x?xi64>
  %t = graph.transpose %nz {perm = [1, 0]} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %row = graph.gather %t, %i {axis = 0 : i64} : (tensor<?x2xi64>, tensor<1xi64>) -> tensor<1x2xi64>
  return %row : tensor<1x2xi64>
}
