// graph.transpose on avx512 (test/tools/transpose.test): NHWC -> NCHW of
// f32 (the last dim moves: the kernel's tiles), an i32 matrix (the same
// kernel: 4-byte elements), a [B, S, H, D] -> [B, H, S, D] swap that keeps
// the last dim (rows copied by the portable lowering) and an i64 matrix
// (8-byte elements: portable).
func.func @main(%x: tensor<2x9x11x48xf32> {graph.name = "x"}, %i: tensor<37x21xi32> {graph.name = "i"}, %q: tensor<2x7x3x16xf32> {graph.name = "q"}, %l: tensor<5x6xi64> {graph.name = "l"}) -> (tensor<2x48x9x11xf32> {graph.name = "nchw"}, tensor<21x37xi32> {graph.name = "it"}, tensor<2x3x7x16xf32> {graph.name = "heads"}, tensor<6x5xi64> {graph.name = "lt"}) {
  %nchw = graph.transpose %x {perm = [0, 3, 1, 2]} : (tensor<2x9x11x48xf32>) -> tensor<2x48x9x11xf32>
  %it = graph.transpose %i : (tensor<37x21xi32>) -> tensor<21x37xi32>
  %heads = graph.transpose %q {perm = [0, 2, 1, 3]} : (tensor<2x7x3x16xf32>) -> tensor<2x3x7x16xf32>
  %lt = graph.transpose %l {perm = [1, 0]} : (tensor<5x6xi64>) -> tensor<6x5xi64>
  return %nchw, %it, %heads, %lt : tensor<2x48x9x11xf32>, tensor<21x37xi32>, tensor<2x3x7x16xf32>, tensor<6x5xi64>
}
