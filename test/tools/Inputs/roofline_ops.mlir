// Ops of known work for `mlcc bench --per-op` (test/tools/bench-roofline.test):
// a 3x3 conv 16 -> 32 channels on 8x8 (2 * 2048 outputs * 144 = 589824
// ops), an exp of its 2048 results, a 4x64 by 64x128 product (65536 ops)
// and 2-head attention over 8 positions of 64 (2 * 2 * 8 * 8 * 64 = 16384).
func.func @main(%x: tensor<1x16x8x8xf32> {graph.name = "x"}, %a: tensor<4x64xf32> {graph.name = "a"}, %q: tensor<1x8x64xf32> {graph.name = "q"}) -> (tensor<1x32x8x8xf32> {graph.name = "y"}, tensor<4x128xf32> {graph.name = "m"}, tensor<1x8x64xf32> {graph.name = "att"}) {
  %none = graph.none
  %w = graph.constant dense<0.01> : tensor<32x16x3x3xf32>
  %c = graph.conv %x, %w, %none {pads = [1, 1, 1, 1]} : (tensor<1x16x8x8xf32>, tensor<32x16x3x3xf32>, none) -> tensor<1x32x8x8xf32> loc("conv")
  %y = graph.exp %c : (tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32> loc("exponent")
  %b = graph.constant dense<0.02> : tensor<64x128xf32>
  %m = graph.matmul %a, %b : (tensor<4x64xf32>, tensor<64x128xf32>) -> tensor<4x128xf32> loc("product")
  %att = graph.attention %q, %q, %q, %none {num_heads = 2 : i64, scale = 0.125 : f32} : (tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32>, none) -> tensor<1x8x64xf32> loc("attn")
  return %y, %m, %att : tensor<1x32x8x8xf32>, tensor<4x128xf32>, tensor<1x8x64xf32>
}
