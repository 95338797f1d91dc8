// Softmax, log_softmax, layer_norm and skip_layer_norm over rows of 100
// (test/tools/normalization-rows.test): 37 rows, which 8 chunks of rows
// cut into 7 of 5 and a last of 2.
func.func @main(%x: tensor<37x100xf32> {graph.name = "x"},
                %r: tensor<37x100xf32> {graph.name = "r"},
                %g: tensor<100xf32> {graph.name = "g"},
                %b: tensor<100xf32> {graph.name = "b"})
    -> (tensor<37x100xf32> {graph.name = "s"},
        tensor<37x100xf32> {graph.name = "ls"},
        tensor<37x100xf32> {graph.name = "ln"},
        tensor<37x100xf32> {graph.name = "sln"}) {
  %none = graph.none
  %s = graph.softmax %x {axis = -1 : i64} : (tensor<37x100xf32>) -> tensor<37x100xf32>
  %ls = graph.log_softmax %x {axis = 1 : i64} : (tensor<37x100xf32>) -> tensor<37x100xf32>
  %ln, %m, %v = graph.layer_norm %x, %g, %b {axis = -1 : i64} : (tensor<37x100xf32>, tensor<100xf32>, tensor<100xf32>) -> (tensor<37x100xf32>, none, none)
  %sln = graph.skip_layer_norm %x, %r, %g, %none : (tensor<37x100xf32>, tensor<37x100xf32>, tensor<100xf32>, none) -> tensor<37x100xf32>
  return %s, %ls, %ln, %sln : tensor<37x100xf32>, tensor<37x100xf32>, tensor<37x100xf32>, tensor<37x100xf32>
}
