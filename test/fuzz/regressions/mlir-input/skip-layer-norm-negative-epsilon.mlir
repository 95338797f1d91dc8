func.func @main(%x: tensor<2x3x40xf32>, %r: tensor<2x3x40xf32>, %g: tensor<40xf32>, %b: tensor<40xf32>) -> tensor<2x3x40xf32> {
  %h = graph.add %x, %r : (tensor<2x3x40xf32>, tensor<2x3x40xf32>) -> tensor<2x3x40xf32>
  %y, %m, %s = graph.layer_norm %h, %g, %b {axis = -1 : i64, epsilon = -1.99999996E-13 : f32} : (tensor<2x3x40xf32>, tensor<40xf32>, tensor<40xf32>) -> (tensor<2x3x40xf32>, none, none)
  return %y : tensor<2x3x40xf32>
}
