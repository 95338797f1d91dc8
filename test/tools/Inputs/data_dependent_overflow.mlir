// graph.nonzero with a declared result shape too small for the data of
// test/tools/data-dependent.test (x has 9 non-zero elements): the code
// writes only the 3 that fit and the entry fails with a shape mismatch.
func.func @main(%x: tensor<3x4xf32> {graph.name = "x"}) -> (tensor<2x3xi64> {graph.name = "nz"}) {
  %nz = graph.nonzero %x : (tensor<3x4xf32>) -> tensor<2x3xi64> loc("nz")
  return %nz : tensor<2x3xi64>
}
