// MPSGraph's control dependency example (test/tools/control-dependency.test):
// the "assign" (here a scaled copy of v, named so the per-op profile shows
// it) has no data consumer; the exp must still run after it.
func.func @main(%x: tensor<4x16xf32> {graph.name = "x"},
                %v: tensor<4x16xf32> {graph.name = "v"})
    -> (tensor<4x16xf32> {graph.name = "e"}) {
  %two = graph.constant dense<2.0> : tensor<f32>
  %assigned = graph.mul %v, %two : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32> loc("assign")
  %x2 = graph.control_dependency %x after %assigned : (tensor<4x16xf32>) after (tensor<4x16xf32>) -> (tensor<4x16xf32>) loc("ordered")
  %e = graph.exp %x2 : (tensor<4x16xf32>) -> tensor<4x16xf32> loc("exponent")
  return %e : tensor<4x16xf32>
}
