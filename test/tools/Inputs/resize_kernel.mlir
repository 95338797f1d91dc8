// Resize and upsample forms for test/tools/resize-kernel.test, the avx512
// kernels (lowering/AVX512/SelectResize.cpp): a 2x nearest upsample big
// enough to be split over threads, a 2x bilinear one (half_pixel), an
// align_corners downsample to sizes (windows of 48 source columns), a
// nearest downsample by 0.3 (50 columns: gathers), a 2x bilinear resize
// of a conv's output (read in NCHW16c, 20 channels: a block and a partial
// one), one with run-time scales, which the kernels leave to the portable
// lowering, and a 3x bicubic upsample (ESPCN's).
func.func @main(%x: tensor<2x8x32x32xf32> {graph.name = "x"}, %y: tensor<1x3x40x100xf32> {graph.name = "y"}, %s: tensor<4xf32> {graph.name = "s"}) -> (tensor<2x8x64x64xf32> {graph.name = "nearest2x"}, tensor<2x8x64x64xf32> {graph.name = "linear2x"}, tensor<1x3x19x47xf32> {graph.name = "corners"}, tensor<1x3x12x30xf32> {graph.name = "nearest03"}, tensor<2x20x64x64xf32> {graph.name = "conv_linear2x"}, tensor<2x8x64x64xf32> {graph.name = "runtime"}, tensor<1x3x120x300xf32> {graph.name = "cubic3x"}) {
  %none = graph.none
  %two = graph.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %nearest2x = graph.upsample %x, %two {mode = "nearest"} : (tensor<2x8x32x32xf32>, tensor<4xf32>) -> tensor<2x8x64x64xf32>
  %linear2x = graph.resize %x, %none, %two, %none {mode = "linear", coordinate_transformation_mode = "half_pixel"} : (tensor<2x8x32x32xf32>, none, tensor<4xf32>, none) -> tensor<2x8x64x64xf32>
  %sizes = graph.constant dense<[1, 3, 19, 47]> : tensor<4xi64>
  %corners = graph.resize %y, %none, %none, %sizes {mode = "linear", coordinate_transformation_mode = "align_corners"} : (tensor<1x3x40x100xf32>, none, none, tensor<4xi64>) -> tensor<1x3x19x47xf32>
  %third = graph.constant dense<[1.0, 1.0, 0.3, 0.3]> : tensor<4xf32>
  %nearest03 = graph.resize %y, %none, %third, %none {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : (tensor<1x3x40x100xf32>, none, tensor<4xf32>, none) -> tensor<1x3x12x30xf32>
  %w = graph.constant dense<0.25> : tensor<20x8x1x1xf32>
  %b = graph.constant dense<0.5> : tensor<20xf32>
  %conv = graph.conv %x, %w, %b {dilations = [1, 1], group = 1 : i64, kernel_shape = [1, 1], pads = [0, 0, 0, 0], strides = [1, 1]} : (tensor<2x8x32x32xf32>, tensor<20x8x1x1xf32>, tensor<20xf32>) -> tensor<2x20x32x32xf32>
  %conv_linear2x = graph.resize %conv, %none, %two, %none {mode = "linear"} : (tensor<2x20x32x32xf32>, none, tensor<4xf32>, none) -> tensor<2x20x64x64xf32>
  %runtime = graph.resize %x, %none, %s, %none {mode = "nearest"} : (tensor<2x8x32x32xf32>, none, tensor<4xf32>, none) -> tensor<2x8x64x64xf32>
  %three = graph.constant dense<[1.0, 1.0, 3.0, 3.0]> : tensor<4xf32>
  %cubic3x = graph.resize %y, %none, %three, %none {mode = "cubic", cubic_coeff_a = -0.75 : f32} : (tensor<1x3x40x100xf32>, none, tensor<4xf32>, none) -> tensor<1x3x120x300xf32>
  return %nearest2x, %linear2x, %corners, %nearest03, %conv_linear2x, %runtime, %cubic3x : tensor<2x8x64x64xf32>, tensor<2x8x64x64xf32>, tensor<1x3x19x47xf32>, tensor<1x3x12x30xf32>, tensor<2x20x64x64xf32>, tensor<2x8x64x64xf32>, tensor<1x3x120x300xf32>
}
