// Two "add & norm" pairs for mlcc-fuse-skip-layer-norm
// (test/tools/skip-layer-norm.test): rows of 40 (kept in registers, a
// vector tail) with scale and bias given at run time, and rows of 1000
// (streamed: the sum is stored and read back) whose residual is a relu.
func.func @main(%x: tensor<2x3x40xf32> {graph.name = "x"},
                %r: tensor<2x3x40xf32> {graph.name = "r"},
                %g: tensor<40xf32> {graph.name = "g"},
                %b: tensor<40xf32> {graph.name = "b"},
                %x2: tensor<3x1000xf32> {graph.name = "x2"},
                %r2: tensor<3x1000xf32> {graph.name = "r2"})
    -> (tensor<2x3x40xf32> {graph.name = "y"},
        tensor<3x1000xf32> {graph.name = "y2"}) {
  %none = graph.none
  %h = graph.add %x, %r : (tensor<2x3x40xf32>, tensor<2x3x40xf32>) -> tensor<2x3x40xf32>
  %y, %m, %s = graph.layer_norm %h, %g, %b {axis = -1 : i64, epsilon = 9.99999996E-13 : f32} : (tensor<2x3x40xf32>, tensor<40xf32>, tensor<40xf32>) -> (tensor<2x3x40xf32>, none, none)
  %g2 = graph.constant dense<1.5> : tensor<1000xf32>
  %a = graph.relu %r2 : (tensor<3x1000xf32>) -> tensor<3x1000xf32>
  %h2 = graph.add %a, %x2 : (tensor<3x1000xf32>, tensor<3x1000xf32>) -> tensor<3x1000xf32>
  %y2, %m2, %s2 = graph.layer_norm %h2, %g2, %none : (tensor<3x1000xf32>, tensor<1000xf32>, none) -> (tensor<3x1000xf32>, none, none)
  return %y, %y2 : tensor<2x3x40xf32>, tensor<3x1000xf32>
}
