// LRN for test/tools/lrn.test: AlexNet's (size 5, beta 0.75: the exact
// sqrt path) with a large alpha, an even window with a general beta (the
// exp(-beta log t) path) over N x C x H x W, and a rank-2 N x C input (the
// window along the vectors). The avx512 target makes each one stencil
// kernel (lowering/AVX512/SelectLrn.cpp), plus a per-image one for the
// threads. A bias of 0 is declined there and takes the portable lowering
// (lowering/Common/Portable/NormalizationMisc.cpp).
func.func @main(%x: tensor<2x19x5x13xf32> {graph.name = "x"}, %v: tensor<3x37xf32> {graph.name = "v"}) -> (tensor<2x19x5x13xf32> {graph.name = "alexnet"}, tensor<2x19x5x13xf32> {graph.name = "general"}, tensor<3x37xf32> {graph.name = "rank2"}, tensor<2x19x5x13xf32> {graph.name = "portable"}) {
  %a = graph.lrn %x {size = 5 : i64, alpha = 0.5 : f32} : (tensor<2x19x5x13xf32>) -> tensor<2x19x5x13xf32>
  %b = graph.lrn %x {size = 4 : i64, alpha = 2.0 : f32, beta = 0.6 : f32, bias = 1.5 : f32} : (tensor<2x19x5x13xf32>) -> tensor<2x19x5x13xf32>
  %c = graph.lrn %v {size = 3 : i64, alpha = 1.0 : f32, beta = 1.0 : f32, bias = 2.0 : f32} : (tensor<3x37xf32>) -> tensor<3x37xf32>
  %d = graph.lrn %x {size = 3 : i64, alpha = 1.0 : f32, bias = 0.0 : f32} : (tensor<2x19x5x13xf32>) -> tensor<2x19x5x13xf32>
  return %a, %b, %c, %d : tensor<2x19x5x13xf32>, tensor<2x19x5x13xf32>, tensor<3x37xf32>, tensor<2x19x5x13xf32>
}
