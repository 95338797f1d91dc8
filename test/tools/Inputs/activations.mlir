// The activations the avx512 eltwise kernels compute in registers beside
// relu, sigmoid, tanh, gelu and the like (test/tools/activations.test):
// each on its own, with non-default attributes; log, sqrt and x^-0.5 of
// |x| + 0.1 (a value of three users, so its chain ends there); x^2.
func.func @main(%x: tensor<3x100xf32> {graph.name = "x"})
    -> (tensor<3x100xf32> {graph.name = "elu"}, tensor<3x100xf32> {graph.name = "selu"}, tensor<3x100xf32> {graph.name = "celu"}, tensor<3x100xf32> {graph.name = "hard_sigmoid"}, tensor<3x100xf32> {graph.name = "softplus"}, tensor<3x100xf32> {graph.name = "softsign"}, tensor<3x100xf32> {graph.name = "log"}, tensor<3x100xf32> {graph.name = "sqrt"}, tensor<3x100xf32> {graph.name = "reciprocal"}, tensor<3x100xf32> {graph.name = "square"}, tensor<3x100xf32> {graph.name = "rsqrt"}) {
  %tenth = graph.constant dense<0.1> : tensor<f32>
  %two = graph.constant dense<2.0> : tensor<f32>
  %mhalf = graph.constant dense<-0.5> : tensor<1xf32>
  %elu = graph.elu %x {alpha = 0.5 : f32} : (tensor<3x100xf32>) -> tensor<3x100xf32>
  %selu = graph.selu %x {alpha = 1.5 : f32, gamma = 1.25 : f32} : (tensor<3x100xf32>) -> tensor<3x100xf32>
  %celu = graph.celu %x {alpha = 0.7 : f32} : (tensor<3x100xf32>) -> tensor<3x100xf32>
  %hs = graph.hard_sigmoid %x {alpha = 0.3 : f32, beta = 0.4 : f32} : (tensor<3x100xf32>) -> tensor<3x100xf32>
  %sp = graph.softplus %x : (tensor<3x100xf32>) -> tensor<3x100xf32>
  %ss = graph.softsign %x : (tensor<3x100xf32>) -> tensor<3x100xf32>
  %a1 = graph.abs %x : (tensor<3x100xf32>) -> tensor<3x100xf32>
  %p1 = graph.add %a1, %tenth : (tensor<3x100xf32>, tensor<f32>) -> tensor<3x100xf32>
  %log = graph.log %p1 : (tensor<3x100xf32>) -> tensor<3x100xf32>
  %sqrt = graph.sqrt %p1 : (tensor<3x100xf32>) -> tensor<3x100xf32>
  %rcp = graph.reciprocal %x : (tensor<3x100xf32>) -> tensor<3x100xf32>
  %square = graph.pow %x, %two : (tensor<3x100xf32>, tensor<f32>) -> tensor<3x100xf32>
  %rsqrt = graph.pow %p1, %mhalf : (tensor<3x100xf32>, tensor<1xf32>) -> tensor<3x100xf32>
  return %elu, %selu, %celu, %hs, %sp, %ss, %log, %sqrt, %rcp, %square, %rsqrt : tensor<3x100xf32>, tensor<3x100xf32>, tensor<3x100xf32>, tensor<3x100xf32>, tensor<3x100xf32>, tensor<3x100xf32>, tensor<3x100xf32>, tensor<3x100xf32>, tensor<3x100xf32>, tensor<3x100xf32>, tensor<3x100xf32>
}
