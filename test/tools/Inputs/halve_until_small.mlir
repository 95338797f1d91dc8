// Halves x until max(x) <= 1 and counts the iterations: a graph.while whose
// predicate the graph computes, with a constant captured from outside.
func.func @main(%x: tensor<4xf32> {graph.name = "x"}) -> (tensor<4xf32> {graph.name = "y"}, tensor<i64> {graph.name = "steps"}) {
  %one = graph.constant dense<1.0> : tensor<f32>
  %two = graph.constant dense<2.0> : tensor<f32>
  %zero = graph.constant dense<0> : tensor<i64>
  %inc = graph.constant dense<1> : tensor<i64>
  %r:2 = graph.while iter_args(%x, %zero : tensor<4xf32>, tensor<i64>) -> (tensor<4xf32>, tensor<i64>) cond {
  ^bb0(%v: tensor<4xf32>, %n: tensor<i64>):
    %m = graph.reduce_max %v {keepdims = 0 : i64} : (tensor<4xf32>) -> tensor<f32>
    %more = graph.greater %m, %one : (tensor<f32>, tensor<f32>) -> tensor<i1>
    graph.condition %more, %v, %n : tensor<i1>, tensor<4xf32>, tensor<i64>
  } do {
  ^bb0(%v: tensor<4xf32>, %n: tensor<i64>):
    %h = graph.div %v, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %n1 = graph.add %n, %inc : (tensor<i64>, tensor<i64>) -> tensor<i64>
    graph.yield %h, %n1 : tensor<4xf32>, tensor<i64>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<i64>
}
