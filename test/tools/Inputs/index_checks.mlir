// Gathers whose indices come from the caller (test/tools/index-checks.test):
// an embedding lookup (i64 ids, negative ones allowed) and a gather_nd of
// (row, col) pairs (i64).
func.func @main(%t: tensor<5x3xf32> {graph.name = "table"},
                %ids: tensor<2x2xi64> {graph.name = "ids"},
                %pairs: tensor<3x2xi64> {graph.name = "pairs"})
    -> (tensor<2x2x3xf32> {graph.name = "rows"}, tensor<3xf32> {graph.name = "elems"}) {
  %rows = graph.gather %t, %ids {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2x2xi64>) -> tensor<2x2x3xf32> loc("lookup")
  %elems = graph.gather_nd %t, %pairs : (tensor<5x3xf32>, tensor<3x2xi64>) -> tensor<3xf32> loc("pick")
  return %rows, %elems : tensor<2x2x3xf32>, tensor<3xf32>
}
