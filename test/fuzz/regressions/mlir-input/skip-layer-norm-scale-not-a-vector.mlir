func.func @f(%x: tensor<2x8xf32>, %r: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %none = graph.none
  %gamma = graph.constant dense<1.0> : tensor<2x8xf32>
  %h = graph.add %x, %r : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y, %m, %s = graph.layer_norm %h, %gamma, %none {axis = 1 : i64} : (tensor<2x8xf32>, tensor<2x8xf32>, none) -> (tensor<2x8xf32>, none, none)
  return %y : tensor<2x8xf32>
}
