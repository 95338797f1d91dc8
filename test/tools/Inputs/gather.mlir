// Gathers for test/tools/gather.test, all three lowered to the avx512
// target's row gather kernel (lowering/AVX512/SelectGather.cpp): an
// embedding lookup of i64 ids into a 1000 x 64 table, a gather on axis 1
// with i32 indices, and a gather_nd of (row, col) pairs.
func.func @main(%table: tensor<1000x64xf32> {graph.name = "table"},
                %ids: tensor<4x16xi64> {graph.name = "ids"},
                %x: tensor<3x10x5xf32> {graph.name = "x"},
                %cols: tensor<2x3xi32> {graph.name = "cols"},
                %pairs: tensor<6x2xi64> {graph.name = "pairs"})
    -> (tensor<4x16x64xf32> {graph.name = "embedded"},
        tensor<3x2x3x5xf32> {graph.name = "columns"},
        tensor<6x5xf32> {graph.name = "elements"}) {
  %e = graph.gather %table, %ids {axis = 0 : i64} : (tensor<1000x64xf32>, tensor<4x16xi64>) -> tensor<4x16x64xf32> loc("embedding")
  %c = graph.gather %x, %cols {axis = 1 : i64} : (tensor<3x10x5xf32>, tensor<2x3xi32>) -> tensor<3x2x3x5xf32> loc("pick_columns")
  %p = graph.gather_nd %x, %pairs : (tensor<3x10x5xf32>, tensor<6x2xi64>) -> tensor<6x5xf32> loc("pick_pairs")
  return %e, %c, %p : tensor<4x16x64xf32>, tensor<3x2x3x5xf32>, tensor<6x5xf32>
}
