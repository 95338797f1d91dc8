// Resize and upsample forms for test/tools/resize.test, all through the
// portable lowering (lowering/Common/Portable/Resize.cpp): the common 2x
// nearest and linear upsampling of the last two axes of NCHW (constant
// scales), cubic with exclude_outside and scales read at run time, a
// tf_crop_and_resize with a run-time roi and an extrapolation value, a
// linear resize to constant sizes along three axes, an i8 nearest and a
// legacy bilinear upsample.
func.func @main(%x: tensor<2x3x5x7xf32> {graph.name = "x"}, %s: tensor<4xf32> {graph.name = "s"}, %roi: tensor<8xf32> {graph.name = "roi"}, %q: tensor<2x3x5x7xi8> {graph.name = "q"}) -> (tensor<2x3x10x14xf32> {graph.name = "nearest2x"}, tensor<2x3x10x14xf32> {graph.name = "linear2x"}, tensor<2x3x8x4xf32> {graph.name = "cubic"}, tensor<2x3x4x6xf32> {graph.name = "crop"}, tensor<3x3x4x9xf32> {graph.name = "linear3d"}, tensor<2x3x3x11xi8> {graph.name = "qnearest"}, tensor<2x3x10x21xf32> {graph.name = "upsample"}) {
  %none = graph.none
  %two = graph.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %nearest2x = graph.resize %x, %none, %two, %none {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : (tensor<2x3x5x7xf32>, none, tensor<4xf32>, none) -> tensor<2x3x10x14xf32>
  %linear2x = graph.resize %x, %none, %two, %none {mode = "linear"} : (tensor<2x3x5x7xf32>, none, tensor<4xf32>, none) -> tensor<2x3x10x14xf32>
  %cubic = graph.resize %x, %none, %s, %none {mode = "cubic", cubic_coeff_a = -0.5 : f32, exclude_outside = 1 : i64} : (tensor<2x3x5x7xf32>, none, tensor<4xf32>, none) -> tensor<2x3x8x4xf32>
  %sizes = graph.constant dense<[2, 3, 4, 6]> : tensor<4xi64>
  %crop = graph.resize %x, %roi, %none, %sizes {mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 10.0 : f32} : (tensor<2x3x5x7xf32>, tensor<8xf32>, none, tensor<4xi64>) -> tensor<2x3x4x6xf32>
  %sizes3 = graph.constant dense<[3, 3, 4, 9]> : tensor<4xi64>
  %linear3d = graph.resize %x, %none, %none, %sizes3 {mode = "linear", coordinate_transformation_mode = "align_corners"} : (tensor<2x3x5x7xf32>, none, none, tensor<4xi64>) -> tensor<3x3x4x9xf32>
  %qs = graph.constant dense<[1.0, 1.0, 0.6, 1.6]> : tensor<4xf32>
  %qnearest = graph.resize %q, %none, %qs, %none {mode = "nearest", nearest_mode = "round_prefer_ceil"} : (tensor<2x3x5x7xi8>, none, tensor<4xf32>, none) -> tensor<2x3x3x11xi8>
  %us = graph.constant dense<[1.0, 1.0, 2.0, 3.0]> : tensor<4xf32>
  %upsample = graph.upsample %x, %us {mode = "bilinear"} : (tensor<2x3x5x7xf32>, tensor<4xf32>) -> tensor<2x3x10x21xf32>
  return %nearest2x, %linear2x, %cubic, %crop, %linear3d, %qnearest, %upsample : tensor<2x3x10x14xf32>, tensor<2x3x10x14xf32>, tensor<2x3x8x4xf32>, tensor<2x3x4x6xf32>, tensor<3x3x4x9xf32>, tensor<2x3x3x11xi8>, tensor<2x3x10x21xf32>
}
