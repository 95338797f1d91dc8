// graph.where with a constant branch on avx512 (test/tools/where.test):
// a causal mask over the scores of 2 images x 4 heads (the condition
// [20, 20], its chain run once per image and head), -inf where it is true,
// then a softmax; and a condition of the result's shape choosing x where
// it is true, 0 elsewhere, the chain going on with a relu.
func.func @main(%s: tensor<2x4x20x20xf32> {graph.name = "scores"}, %m: tensor<20x20xi1> {graph.name = "mask"}, %x: tensor<3x50xf32> {graph.name = "x"}, %c: tensor<3x50xi1> {graph.name = "c"}) -> (tensor<2x4x20x20xf32> {graph.name = "attention"}, tensor<3x50xf32> {graph.name = "kept"}) {
  %ninf = graph.constant dense<0xFF800000> : tensor<f32>
  %zero = graph.constant dense<0.0> : tensor<1xf32>
  %masked = graph.where %m, %ninf, %s : (tensor<20x20xi1>, tensor<f32>, tensor<2x4x20x20xf32>) -> tensor<2x4x20x20xf32>
  %attention = graph.softmax %masked {axis = -1 : i64} : (tensor<2x4x20x20xf32>) -> tensor<2x4x20x20xf32>
  %k = graph.where %c, %x, %zero : (tensor<3x50xi1>, tensor<3x50xf32>, tensor<1xf32>) -> tensor<3x50xf32>
  %kept = graph.relu %k : (tensor<3x50xf32>) -> tensor<3x50xf32>
  return %attention, %kept : tensor<2x4x20x20xf32>, tensor<3x50xf32>
}
