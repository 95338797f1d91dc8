// graph.instance_norm on avx512 (test/tools/instance-norm.test): two images
// of constant scale and bias (repeated per image for the kernel's rows), and
// one image whose scale and bias are model inputs.
func.func @main(%x: tensor<2x6x5x7xf32> {graph.name = "x"}, %y: tensor<1x4x300xf32> {graph.name = "y"}, %s: tensor<4xf32> {graph.name = "s"}, %b: tensor<4xf32> {graph.name = "b"}) -> (tensor<2x6x5x7xf32> {graph.name = "images"}, tensor<1x4x300xf32> {graph.name = "sequence"}) {
  %scale = graph.constant dense<[0.5, -1.0, 2.0, 1.5, -0.25, 1.0]> : tensor<6xf32>
  %bias = graph.constant dense<[0.1, 0.2, -0.3, 0.0, 1.0, -1.0]> : tensor<6xf32>
  %images = graph.instance_norm %x, %scale, %bias {epsilon = 1.0E-3 : f32} : (tensor<2x6x5x7xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x5x7xf32>
  %sequence = graph.instance_norm %y, %s, %b : (tensor<1x4x300xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x300xf32>
  return %images, %sequence : tensor<2x6x5x7xf32>, tensor<1x4x300xf32>
}
