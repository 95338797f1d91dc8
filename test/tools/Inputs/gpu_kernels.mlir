// The GPU targets' hand-structured kernels (lowering/GPU) on shapes that
// cross every tile edge (test/tools/vulkan-gpu-kernels.test):
//   p1  fc with bias, residual and gelu: 140 rows (three 64-row tiles, the
//       last partial), 130 columns (three 64-column tiles), K 40 (three
//       16-deep steps, the last partial)
//   p2  fc of 3 rows (the few-rows tile), no bias, relu
//   c1  fused_conv, stride 2 and padding, two images: the im2col rows
//       cross images, K = 5 channels x 3 x 3 taps
//   c2  conv with group 2 (8 outputs each), dilation 2 and asymmetric
//       padding, 1-D
//   t1  conv_transpose, group 2 (3 outputs each: a thread per output),
//       stride 2, pads and output_padding
//   t2  conv_transpose, 8 outputs (tiles), dilation 2
func.func @main(%x: tensor<2x70x40xf32> {graph.name = "x"},
                %w: tensor<40x130xf32> {graph.name = "w"},
                %b: tensor<130xf32> {graph.name = "b"},
                %z: tensor<2x70x130xf32> {graph.name = "z"},
                %x1: tensor<3x40xf32> {graph.name = "x1"},
                %img: tensor<2x5x11x9xf32> {graph.name = "img"},
                %wc: tensor<7x5x3x3xf32> {graph.name = "wc"},
                %bc: tensor<7xf32> {graph.name = "bc"},
                %seq: tensor<1x6x20xf32> {graph.name = "seq"},
                %ws: tensor<16x3x3xf32> {graph.name = "ws"},
                %u: tensor<1x4x5x5xf32> {graph.name = "u"},
                %wt1: tensor<4x3x3x3xf32> {graph.name = "wt1"},
                %wt2: tensor<4x8x2x2xf32> {graph.name = "wt2"},
                %bt2: tensor<8xf32> {graph.name = "bt2"})
    -> (tensor<2x70x130xf32> {graph.name = "p1"}, tensor<3x130xf32> {graph.name = "p2"},
        tensor<2x7x6x5xf32> {graph.name = "c1"}, tensor<1x16x19xf32> {graph.name = "c2"},
        tensor<1x6x10x10xf32> {graph.name = "t1"}, tensor<1x8x7x7xf32> {graph.name = "t2"}) {
  %none = graph.none
  %p1 = graph.fc %x, %w, %b, %z {activation = "gelu"} : (tensor<2x70x40xf32>, tensor<40x130xf32>, tensor<130xf32>, tensor<2x70x130xf32>) -> tensor<2x70x130xf32>
  %p2 = graph.fc %x1, %w, %none, %none {activation = "relu"} : (tensor<3x40xf32>, tensor<40x130xf32>, none, none) -> tensor<3x130xf32>
  %c1 = graph.fused_conv %img, %wc, %bc, %none {activation = "relu", pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<2x5x11x9xf32>, tensor<7x5x3x3xf32>, tensor<7xf32>, none) -> tensor<2x7x6x5xf32>
  %c2 = graph.conv %seq, %ws, %none {group = 2 : i64, dilations = [2], pads = [2, 1]} : (tensor<1x6x20xf32>, tensor<16x3x3xf32>, none) -> tensor<1x16x19xf32>
  %t1 = graph.conv_transpose %u, %wt1, %none {group = 2 : i64, strides = [2, 2], pads = [1, 1, 1, 1], output_padding = [1, 1]} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x6x10x10xf32>
  %t2 = graph.conv_transpose %u, %wt2, %bt2 {dilations = [2, 2]} : (tensor<1x4x5x5xf32>, tensor<4x8x2x2xf32>, tensor<8xf32>) -> tensor<1x8x7x7xf32>
  return %p1, %p2, %c1, %c2, %t1, %t2 : tensor<2x70x130xf32>, tensor<3x130xf32>, tensor<2x7x6x5xf32>, tensor<1x16x19xf32>, tensor<1x6x10x10xf32>, tensor<1x8x7x7xf32>
}
