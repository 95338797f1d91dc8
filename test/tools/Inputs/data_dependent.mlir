// graph.nonzero, graph.compress, graph.unique and graph.non_max_suppression
// for test/tools/data-dependent.test, through the portable lowerings
// (lowering/Common/Portable/DataDependent.cpp, NonMaxSuppression.cpp):
// their results' lengths come from the data, so the outputs' dims are
// bounds with the actual extents reported at run time. x holds zeros,
// -0.0, nan and repeats; m repeated rows; nms ties in score and the three
// scalars as inputs. A gather_nd reads x at nonzero's indices, padding
// included.
func.func @main(%x: tensor<3x4xf32> {graph.name = "x"},
                %m: tensor<4x3xi32> {graph.name = "m"},
                %c: tensor<3xi1> {graph.name = "c"},
                %boxes: tensor<1x6x4xf32> {graph.name = "boxes"},
                %scores: tensor<1x2x6xf32> {graph.name = "scores"},
                %max: tensor<1xi64> {graph.name = "max"},
                %iou: tensor<1xf32> {graph.name = "iou"},
                %thr: tensor<1xf32> {graph.name = "thr"})
    -> (tensor<2x?xi64> {graph.name = "nz"},
        tensor<?xf32> {graph.name = "picked"},
        tensor<?xf32> {graph.name = "u"},
        tensor<?xi64> {graph.name = "u_first"},
        tensor<12xi64> {graph.name = "u_inverse"},
        tensor<?xi64> {graph.name = "u_counts"},
        tensor<?x3xi32> {graph.name = "rows"},
        tensor<?xi64> {graph.name = "rows_first"},
        tensor<4xi64> {graph.name = "rows_inverse"},
        tensor<?xi64> {graph.name = "rows_counts"},
        tensor<4x?xi32> {graph.name = "columns"},
        tensor<?x3xi64> {graph.name = "selected"}) {
  %nz = graph.nonzero %x : (tensor<3x4xf32>) -> tensor<2x?xi64> loc("nz")
  %at = graph.transpose %nz {perm = [1, 0]} : (tensor<2x?xi64>) -> tensor<?x2xi64>
  %picked = graph.gather_nd %x, %at : (tensor<3x4xf32>, tensor<?x2xi64>) -> tensor<?xf32>
  %u:4 = graph.unique %x {sorted = 0 : i64} : (tensor<3x4xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<12xi64>, tensor<?xi64>) loc("u")
  %r:4 = graph.unique %m {axis = 0 : i64} : (tensor<4x3xi32>) -> (tensor<?x3xi32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>) loc("rows")
  %cols = graph.compress %m, %c {axis = -1 : i64} : (tensor<4x3xi32>, tensor<3xi1>) -> tensor<4x?xi32> loc("columns")
  %sel = graph.non_max_suppression %boxes, %scores, %max, %iou, %thr : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x3xi64> loc("nms")
  return %nz, %picked, %u#0, %u#1, %u#2, %u#3, %r#0, %r#1, %r#2, %r#3, %cols, %sel : tensor<2x?xi64>, tensor<?xf32>, tensor<?xf32>, tensor<?xi64>, tensor<12xi64>, tensor<?xi64>, tensor<?x3xi32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>, tensor<4x?xi32>, tensor<?x3xi64>
}
