// graph.attention on both backends (test/tools/attention.test): 2 heads
// with a BERT-style [B, 1, 1, S] mask, 3 heads with a full [B, H, S, S]
// mask and another scale, none, and a [B, 1, S, 1] mask (no avx512
// kernel: the portable lowering computes it as its group).
func.func @main(%q: tensor<2x5x6xf32> {graph.name = "q"}, %k: tensor<2x5x6xf32> {graph.name = "k"}, %v: tensor<2x5x6xf32> {graph.name = "v"}, %m: tensor<2x1x1x5xf32> {graph.name = "m"}, %mf: tensor<2x3x5x5xf32> {graph.name = "mf"}, %mc: tensor<2x1x5x1xf32> {graph.name = "mc"}) -> (tensor<2x5x6xf32> {graph.name = "y1"}, tensor<2x5x6xf32> {graph.name = "y2"}, tensor<2x5x6xf32> {graph.name = "y3"}, tensor<2x5x6xf32> {graph.name = "y4"}) {
  %none = graph.none
  %y1 = graph.attention %q, %k, %v, %m {num_heads = 2 : i64, scale = 0.57735026 : f32} : (tensor<2x5x6xf32>, tensor<2x5x6xf32>, tensor<2x5x6xf32>, tensor<2x1x1x5xf32>) -> tensor<2x5x6xf32>
  %y2 = graph.attention %q, %k, %v, %mf {num_heads = 3 : i64, scale = 0.7 : f32} : (tensor<2x5x6xf32>, tensor<2x5x6xf32>, tensor<2x5x6xf32>, tensor<2x3x5x5xf32>) -> tensor<2x5x6xf32>
  %y3 = graph.attention %k, %v, %q, %none {num_heads = 2 : i64, scale = 1.0 : f32} : (tensor<2x5x6xf32>, tensor<2x5x6xf32>, tensor<2x5x6xf32>, none) -> tensor<2x5x6xf32>
  %y4 = graph.attention %q, %k, %v, %mc {num_heads = 2 : i64, scale = 0.5 : f32} : (tensor<2x5x6xf32>, tensor<2x5x6xf32>, tensor<2x5x6xf32>, tensor<2x1x5x1xf32>) -> tensor<2x5x6xf32>
  return %y1, %y2, %y3, %y4 : tensor<2x5x6xf32>, tensor<2x5x6xf32>, tensor<2x5x6xf32>, tensor<2x5x6xf32>
}
