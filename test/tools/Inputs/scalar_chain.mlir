// Elementwise chains on avx512 (test/tools/eltwise-chain.test): y1 is one
// kernel (x * 0.5, + 1.25, 3 - ., tanh, / 4: activations and binary ops
// with a constant scalar keep joining); y2's chain stops at %m, which has a
// second user, so it takes two kernels.
func.func @main(%x: tensor<3x100xf32> {graph.name = "x"})
    -> (tensor<3x100xf32> {graph.name = "y1"}, tensor<3x100xf32> {graph.name = "y2"}, tensor<3x100xf32> {graph.name = "y3"}) {
  %half = graph.constant dense<0.5> : tensor<f32>
  %c = graph.constant dense<1.25> : tensor<f32>
  %three = graph.constant dense<3.0> : tensor<1xf32>
  %four = graph.constant dense<4.0> : tensor<f32>
  %a = graph.mul %x, %half : (tensor<3x100xf32>, tensor<f32>) -> tensor<3x100xf32>
  %b = graph.add %a, %c : (tensor<3x100xf32>, tensor<f32>) -> tensor<3x100xf32>
  %s = graph.sub %three, %b : (tensor<1xf32>, tensor<3x100xf32>) -> tensor<3x100xf32>
  %t = graph.tanh %s : (tensor<3x100xf32>) -> tensor<3x100xf32>
  %y1 = graph.div %t, %four : (tensor<3x100xf32>, tensor<f32>) -> tensor<3x100xf32>
  %m = graph.mul %x, %c : (tensor<3x100xf32>, tensor<f32>) -> tensor<3x100xf32>
  %y2 = graph.sigmoid %m : (tensor<3x100xf32>) -> tensor<3x100xf32>
  %y3 = graph.add %m, %half : (tensor<3x100xf32>, tensor<f32>) -> tensor<3x100xf32>
  return %y1, %y2, %y3 : tensor<3x100xf32>, tensor<3x100xf32>, tensor<3x100xf32>
}
