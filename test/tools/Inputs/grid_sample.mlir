// graph.grid_sample on the avx512 kernel (test/tools/grid-sample.test):
// bilinear with zeros padding (torch's default: an STN's), nearest with
// border padding and align_corners, 20 channels at 13 x 9 points (a tail
// block); reflection padding stays portable.
func.func @main(%x: tensor<2x20x11x17xf32> {graph.name = "x"}, %grid: tensor<2x13x9x2xf32> {graph.name = "grid"}) -> (tensor<2x20x13x9xf32> {graph.name = "bilinear_zeros"}, tensor<2x20x13x9xf32> {graph.name = "nearest_border"}, tensor<2x20x13x9xf32> {graph.name = "bilinear_reflection"}) {
  %bz = graph.grid_sample %x, %grid : (tensor<2x20x11x17xf32>, tensor<2x13x9x2xf32>) -> tensor<2x20x13x9xf32>
  %nb = graph.grid_sample %x, %grid {mode = "nearest", padding_mode = "border", align_corners = 1 : i64} : (tensor<2x20x11x17xf32>, tensor<2x13x9x2xf32>) -> tensor<2x20x13x9xf32>
  %br = graph.grid_sample %x, %grid {padding_mode = "reflection"} : (tensor<2x20x11x17xf32>, tensor<2x13x9x2xf32>) -> tensor<2x20x13x9xf32>
  return %bz, %nb, %br : tensor<2x20x13x9xf32>, tensor<2x20x13x9xf32>, tensor<2x20x13x9xf32>
}
