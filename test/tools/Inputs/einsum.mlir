// f32 einsums that mlcc-decompose-einsum turns into matmuls
// (test/tools/einsum.test): attention scores and context, a projection by
// constant weights, an output in its own order, an outer product; and two
// that stay einsums: a column sum (s summed within one operand) and a
// diagonal.
func.func @main(%q: tensor<2x4x8x16xf32> {graph.name = "q"}, %k: tensor<2x4x10x16xf32> {graph.name = "k"}, %p: tensor<2x4x8x10xf32> {graph.name = "p"}, %x: tensor<2x5x8xf32> {graph.name = "x"}, %m: tensor<6x6xf32> {graph.name = "m"}) -> (tensor<2x4x8x10xf32> {graph.name = "scores"}, tensor<2x4x8x16xf32> {graph.name = "context"}, tensor<2x5x3xf32> {graph.name = "projection"}, tensor<10x2x4x8xf32> {graph.name = "permuted"}, tensor<8x6xf32> {graph.name = "outer"}, tensor<6xf32> {graph.name = "diagonal"}) {
  %w = graph.constant dense<[[0.5, -1.0, 0.25], [1.5, 0.75, -0.5], [-0.25, 2.0, 1.0], [0.125, -0.75, 0.5], [1.0, 0.0, -1.5], [-2.0, 0.5, 0.25], [0.75, 1.25, -0.125], [-1.0, 0.375, 2.0]]> : tensor<8x3xf32>
  %v = graph.constant dense<[1.0, -2.0, 0.5, 3.0, -0.25, 1.5]> : tensor<6xf32>
  %scores = graph.einsum %q, %k {equation = "bhqd,bhkd->bhqk"} : (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>) -> tensor<2x4x8x10xf32>
  %context = graph.einsum %p, %k {equation = "bhqk,bhkd->bhqd"} : (tensor<2x4x8x10xf32>, tensor<2x4x10x16xf32>) -> tensor<2x4x8x16xf32>
  %projection = graph.einsum %x, %w {equation = "bsd,df->bsf"} : (tensor<2x5x8xf32>, tensor<8x3xf32>) -> tensor<2x5x3xf32>
  %permuted = graph.einsum %q, %k {equation = "bhqd,bhkd->kbhq"} : (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>) -> tensor<10x2x4x8xf32>
  %col = graph.einsum %x, %w {equation = "bsd,df->d"} : (tensor<2x5x8xf32>, tensor<8x3xf32>) -> tensor<8xf32>
  %outer = graph.einsum %col, %v {equation = "i,j->ij"} : (tensor<8xf32>, tensor<6xf32>) -> tensor<8x6xf32>
  %diagonal = graph.einsum %m, %v {equation = "ii,i->i"} : (tensor<6x6xf32>, tensor<6xf32>) -> tensor<6xf32>
  return %scores, %context, %projection, %permuted, %outer, %diagonal : tensor<2x4x8x10xf32>, tensor<2x4x8x16xf32>, tensor<2x5x3xf32>, tensor<10x2x4x8xf32>, tensor<8x6xf32>, tensor<6xf32>
}
