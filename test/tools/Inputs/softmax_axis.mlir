// softmax and log_softmax over a non-last axis on avx512
// (test/tools/softmax-axis.test): over the 21 channels of a segmentation
// map (big enough to be split by columns over threads), and over the
// third axis of a small tensor (100 columns: vectors and a tail).
func.func @main(%x: tensor<2x21x40x40xf32> {graph.name = "x"}, %y: tensor<2x4x10x10xf32> {graph.name = "y"}) -> (tensor<2x21x40x40xf32> {graph.name = "channels"}, tensor<2x4x10x10xf32> {graph.name = "log_rows"}) {
  %channels = graph.softmax %x {axis = 1 : i64} : (tensor<2x21x40x40xf32>) -> tensor<2x21x40x40xf32>
  %log_rows = graph.log_softmax %y {axis = 2 : i64} : (tensor<2x4x10x10xf32>) -> tensor<2x4x10x10xf32>
  return %channels, %log_rows : tensor<2x21x40x40xf32>, tensor<2x4x10x10xf32>
}
