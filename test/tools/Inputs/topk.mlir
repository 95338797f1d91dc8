// graph.topk (test/tools/topk.test). Well below its axis: once k are held,
// an element that does not beat the k-th is passed over after one compare.
// The best 20 of 500 along the last axis, the smallest 7 of 300 along the
// first (inner 5). Near the axis's length the rows are merge-sorted: all
// 500 (a sort, as torch.sort exports), the smallest 150 of 300 along the
// first axis. On values with ties and nans.
func.func @main(%x: tensor<3x500xf32> {graph.name = "x"}, %y: tensor<300x5xf32> {graph.name = "y"}) -> (tensor<3x20xf32> {graph.name = "largest"}, tensor<3x20xi64> {graph.name = "largest_index"}, tensor<7x5xf32> {graph.name = "smallest"}, tensor<7x5xi64> {graph.name = "smallest_index"}, tensor<3x500xf32> {graph.name = "sorted"}, tensor<3x500xi64> {graph.name = "sorted_index"}, tensor<150x5xf32> {graph.name = "half"}, tensor<150x5xi64> {graph.name = "half_index"}) {
  %k20 = graph.constant dense<20> : tensor<1xi64>
  %k7 = graph.constant dense<7> : tensor<1xi64>
  %k500 = graph.constant dense<500> : tensor<1xi64>
  %k150 = graph.constant dense<150> : tensor<1xi64>
  %largest, %largest_index = graph.topk %x, %k20 {axis = -1 : i64} : (tensor<3x500xf32>, tensor<1xi64>) -> (tensor<3x20xf32>, tensor<3x20xi64>)
  %smallest, %smallest_index = graph.topk %y, %k7 {axis = 0 : i64, largest = 0 : i64} : (tensor<300x5xf32>, tensor<1xi64>) -> (tensor<7x5xf32>, tensor<7x5xi64>)
  %sorted, %sorted_index = graph.topk %x, %k500 {axis = -1 : i64} : (tensor<3x500xf32>, tensor<1xi64>) -> (tensor<3x500xf32>, tensor<3x500xi64>)
  %half, %half_index = graph.topk %y, %k150 {axis = 0 : i64, largest = 0 : i64} : (tensor<300x5xf32>, tensor<1xi64>) -> (tensor<150x5xf32>, tensor<150x5xi64>)
  return %largest, %largest_index, %smallest, %smallest_index, %sorted, %sorted_index, %half, %half_index : tensor<3x20xf32>, tensor<3x20xi64>, tensor<7x5xf32>, tensor<7x5xi64>, tensor<3x500xf32>, tensor<3x500xi64>, tensor<150x5xf32>, tensor<150x5xi64>
}
