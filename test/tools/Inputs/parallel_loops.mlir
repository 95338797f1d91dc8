// Portable ops whose loops are parallel: a transpose, a pad and a product
// over the last axis of 64x64x64 (262144 elements, enough work to be split
// over the pool) and a small transpose (16 elements: stays on the calling
// thread).
func.func @main(%x: tensor<1x64x64x64xf32> {graph.name = "x"}, %s: tensor<4x4xf32> {graph.name = "s"}) -> (tensor<1x64x64x64xf32> {graph.name = "t"}, tensor<1x64x66x66xf32> {graph.name = "p"}, tensor<1x64x64x1xf32> {graph.name = "r"}, tensor<4x4xf32> {graph.name = "ts"}) {
  %t = graph.transpose %x {perm = [0, 3, 1, 2]} : (tensor<1x64x64x64xf32>) -> tensor<1x64x64x64xf32>
  %pads = graph.constant dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>
  %none = graph.none
  %p = graph.pad %x, %pads, %none {mode = "reflect"} : (tensor<1x64x64x64xf32>, tensor<8xi64>, none) -> tensor<1x64x66x66xf32>
  %r = graph.reduce_prod %x {axes = [3], keepdims = 1 : i64} : (tensor<1x64x64x64xf32>) -> tensor<1x64x64x1xf32>
  %ts = graph.transpose %s {perm = [1, 0]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %t, %p, %r, %ts : tensor<1x64x64x64xf32>, tensor<1x64x66x66xf32>, tensor<1x64x64x1xf32>, tensor<4x4xf32>
}
