// Region ops in the host schedule (test/tools/control-flow.test):
//   y1  a for loop with a trip count read at run time (input n), the
//       carried value updated from an outer capture c
//   y2, y3  a for loop of 4 iterations with a scan output, reading the
//       iteration number, with an if inside its body
//   y4, y5  a while loop whose predicate the graph computes (max |x| >
//       tol), with a counter carried beside the tensor
//   y6  an if whose branches yield a computed value and an outer value
func.func @main(%x: tensor<4x8xf32> {graph.name = "x"},
                %c: tensor<4x8xf32> {graph.name = "c"},
                %n: tensor<i64> {graph.name = "n"})
    -> (tensor<4x8xf32> {graph.name = "y1"}, tensor<4x8xf32> {graph.name = "y2"},
        tensor<4x4x8xf32> {graph.name = "y3"}, tensor<4x8xf32> {graph.name = "y4"},
        tensor<i64> {graph.name = "y5"}, tensor<4x8xf32> {graph.name = "y6"}) {
  %half = graph.constant dense<0.5> : tensor<f32>
  %y1 = graph.for %n : tensor<i64> iter_args(%x : tensor<4x8xf32>) -> (tensor<4x8xf32>) {
  ^bb0(%i: tensor<i64>, %v: tensor<4x8xf32>):
    %h = graph.mul %v, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %s = graph.add %h, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %t = graph.tanh %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
    graph.yield %t : tensor<4x8xf32>
  }

  %four = graph.constant dense<4> : tensor<i64>
  %two = graph.constant dense<2> : tensor<i64>
  %y2, %y3 = graph.for %four : tensor<i64> iter_args(%c : tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x4x8xf32>) {
  ^bb0(%i: tensor<i64>, %v: tensor<4x8xf32>):
    %early = graph.less %i, %two : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %u = graph.if %early : tensor<i1> -> (tensor<4x8xf32>) {
      %a = graph.add %v, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
      graph.yield %a : tensor<4x8xf32>
    } else {
      %m = graph.mul %v, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
      graph.yield %m : tensor<4x8xf32>
    }
    %sig = graph.sigmoid %u : (tensor<4x8xf32>) -> tensor<4x8xf32>
    graph.yield %u, %sig : tensor<4x8xf32>, tensor<4x8xf32>
  } {num_scan_outputs = 1 : i64}

  %tol = graph.constant dense<0.01> : tensor<f32>
  %zero = graph.constant dense<0> : tensor<i64>
  %one = graph.constant dense<1> : tensor<i64>
  %y4, %y5 = graph.while iter_args(%x, %zero : tensor<4x8xf32>, tensor<i64>) -> (tensor<4x8xf32>, tensor<i64>) cond {
  ^bb0(%v: tensor<4x8xf32>, %k: tensor<i64>):
    %a = graph.abs %v : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %m = graph.reduce_max %a {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32>
    %more = graph.greater %m, %tol : (tensor<f32>, tensor<f32>) -> tensor<i1>
    graph.condition %more, %v, %k : tensor<i1>, tensor<4x8xf32>, tensor<i64>
  } do {
  ^bb0(%v: tensor<4x8xf32>, %k: tensor<i64>):
    %h = graph.mul %v, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %k1 = graph.add %k, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
    graph.yield %h, %k1 : tensor<4x8xf32>, tensor<i64>
  }

  %none = graph.none
  %sum = graph.reduce_sum %x, %none {keepdims = 0 : i64} : (tensor<4x8xf32>, none) -> tensor<f32>
  %zf = graph.constant dense<0.0> : tensor<f32>
  %pos = graph.greater %sum, %zf : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %y6 = graph.if %pos : tensor<i1> -> (tensor<4x8xf32>) {
    %e = graph.exp %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
    graph.yield %e : tensor<4x8xf32>
  } else {
    graph.yield %c : tensor<4x8xf32>
  }
  return %y1, %y2, %y3, %y4, %y5, %y6 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4x8xf32>, tensor<4x8xf32>, tensor<i64>, tensor<4x8xf32>
}
