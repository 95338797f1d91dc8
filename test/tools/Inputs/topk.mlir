// graph.topk well below its axis (test/tools/topk.test): once k are held,
// an element that does not beat the k-th is passed over after one compare.
// The best 20 of 500 along the last axis, the smallest 7 of 300 along the
// first (inner 5), on values with ties and nans.
func.func @main(%x: tensor<3x500xf32> {graph.name = "x"}, %y: tensor<300x5xf32> {graph.name = "y"}) -> (tensor<3x20xf32> {graph.name = "largest"}, tensor<3x20xi64> {graph.name = "largest_index"}, tensor<7x5xf32> {graph.name = "smallest"}, tensor<7x5xi64> {graph.name = "smallest_index"}) {
  %k20 = graph.constant dense<20> : tensor<1xi64>
  %k7 = graph.constant dense<7> : tensor<1xi64>
  %largest, %largest_index = graph.topk %x, %k20 {axis = -1 : i64} : (tensor<3x500xf32>, tensor<1xi64>) -> (tensor<3x20xf32>, tensor<3x20xi64>)
  %smallest, %smallest_index = graph.topk %y, %k7 {axis = 0 : i64, largest = 0 : i64} : (tensor<300x5xf32>, tensor<1xi64>) -> (tensor<7x5xf32>, tensor<7x5xi64>)
  return %largest, %largest_index, %smallest, %smallest_index : tensor<3x20xf32>, tensor<3x20xi64>, tensor<7x5xf32>, tensor<7x5xi64>
}
