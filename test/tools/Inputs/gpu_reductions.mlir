// The GPU targets' row kernels (lowering/GPU/GpuNormalization.cpp,
// GpuAttention.cpp), rows longer than a workgroup (its threads take two
// elements or more) and shorter (idle threads give the identity)
// (test/tools/vulkan-gpu-kernels.test):
//   a   attention, 2 x 10 tokens, 3 heads of 4, an additive [B, 1, 1, S] mask
//   s   softmax of rows of 300;  ls  log_softmax of them
//   n   layer_norm over [2, 150] (axis 1) with its Mean and InvStdDev
//   sk  skip_layer_norm over the last axis (40)
//   e   embed_layer_norm: ids (negative ones too) into a table of 7 rows,
//       a position addend [5, 40] broadcast over the batch
func.func @main(%q: tensor<2x10x12xf32> {graph.name = "q"},
                %k: tensor<2x10x12xf32> {graph.name = "k"},
                %v: tensor<2x10x12xf32> {graph.name = "v"},
                %mask: tensor<2x1x1x10xf32> {graph.name = "mask"},
                %r: tensor<3x300xf32> {graph.name = "r"},
                %x: tensor<4x2x150xf32> {graph.name = "x"},
                %gamma: tensor<2x150xf32> {graph.name = "gamma"},
                %beta: tensor<150xf32> {graph.name = "beta"},
                %t: tensor<2x5x40xf32> {graph.name = "t"},
                %skip: tensor<2x5x40xf32> {graph.name = "skip"},
                %g40: tensor<40xf32> {graph.name = "g40"},
                %table: tensor<7x40xf32> {graph.name = "table"},
                %pos: tensor<5x40xf32> {graph.name = "pos"})
    -> (tensor<2x10x12xf32> {graph.name = "a"}, tensor<3x300xf32> {graph.name = "s"},
        tensor<3x300xf32> {graph.name = "ls"}, tensor<4x2x150xf32> {graph.name = "n"},
        tensor<4x1x1xf32> {graph.name = "mean"}, tensor<4x1x1xf32> {graph.name = "inv"},
        tensor<2x5x40xf32> {graph.name = "sk"}, tensor<2x5x40xf32> {graph.name = "e"}) {
  %none = graph.none
  %a = graph.attention %q, %k, %v, %mask {num_heads = 3 : i64, scale = 5.000000e-01 : f32} : (tensor<2x10x12xf32>, tensor<2x10x12xf32>, tensor<2x10x12xf32>, tensor<2x1x1x10xf32>) -> tensor<2x10x12xf32>
  %s = graph.softmax %r {axis = -1 : i64} : (tensor<3x300xf32>) -> tensor<3x300xf32>
  %ls = graph.log_softmax %r {axis = 1 : i64} : (tensor<3x300xf32>) -> tensor<3x300xf32>
  %n, %mean, %inv = graph.layer_norm %x, %gamma, %beta {axis = 1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<4x2x150xf32>, tensor<2x150xf32>, tensor<150xf32>) -> (tensor<4x2x150xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>)
  %sk = graph.skip_layer_norm %t, %skip, %g40, %none {epsilon = 9.99999996E-13 : f32} : (tensor<2x5x40xf32>, tensor<2x5x40xf32>, tensor<40xf32>, none) -> tensor<2x5x40xf32>
  %ids = graph.constant dense<[[0, 3, -1, 6, 2], [5, 5, -7, 1, 0]]> : tensor<2x5xi64>
  %e = graph.embed_layer_norm %ids, %table, %pos, %g40, %g40 {epsilon = 1.0e-12 : f32} : (tensor<2x5xi64>, tensor<7x40xf32>, tensor<5x40xf32>, tensor<40xf32>, tensor<40xf32>) -> tensor<2x5x40xf32>
  return %a, %s, %ls, %n, %mean, %inv, %sk, %e : tensor<2x10x12xf32>, tensor<3x300xf32>, tensor<3x300xf32>, tensor<4x2x150xf32>, tensor<4x1x1xf32>, tensor<4x1x1xf32>, tensor<2x5x40xf32>, tensor<2x5x40xf32>
}
