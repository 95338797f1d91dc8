// Elementwise results written over a dying operand (test/tools/memory.test):
// c takes b's buffer; a lives until d, so b needs its own; d and tanh are one
// avx512 kernel that writes the output.
func.func @main(%x: tensor<1x1024xf32> {graph.name = "x"}) -> (tensor<1x1024xf32> {graph.name = "y"}) {
  %a = graph.exp %x : (tensor<1x1024xf32>) -> tensor<1x1024xf32>
  %b = graph.mul %a, %a : (tensor<1x1024xf32>, tensor<1x1024xf32>) -> tensor<1x1024xf32>
  %c = graph.add %b, %x : (tensor<1x1024xf32>, tensor<1x1024xf32>) -> tensor<1x1024xf32>
  %d = graph.sub %c, %a : (tensor<1x1024xf32>, tensor<1x1024xf32>) -> tensor<1x1024xf32>
  %y = graph.tanh %d : (tensor<1x1024xf32>) -> tensor<1x1024xf32>
  return %y : tensor<1x1024xf32>
}
