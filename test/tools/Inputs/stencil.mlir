// Stencils for test/tools/stencil.test: the 5-point Laplacian of a 2-D image
// (clamp padding) and the 7-point one of a volume (zero padding), a
// reflect-padded 3x3 max and a mirror-padded argmin over the image; the
// avx512 target generates a kernel for each (lowering/AVX512/SelectStencil).
// So do a 2x downsampling (stride 2 along both dims) and a 2-D Laplacian
// of each depth slice of the volume, whose slices the kernel calls split
// over the threads (one kernel per slice). A stride of 3 along the last
// dim is declined there and takes the portable lowering
// (lowering/Common/Portable/Stencil.cpp).
func.func @main(%img: tensor<1x1x64x64xf32> {graph.name = "img"}, %vol: tensor<1x1x9x12x33xf32> {graph.name = "vol"}) -> (tensor<1x1x64x64xf32> {graph.name = "lap2d"}, tensor<1x1x9x12x33xf32> {graph.name = "lap3d"}, tensor<1x1x64x64xf32> {graph.name = "max3x3"}, tensor<1x1x64x64xi64> {graph.name = "argmin3x3"}, tensor<1x1x32x22xf32> {graph.name = "strided"}, tensor<1x1x32x32xf32> {graph.name = "down2"}, tensor<1x1x9x12x33xf32> {graph.name = "slices"}) {
  %w2 = graph.constant dense<[[[[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]]]]> : tensor<1x1x3x3xf32>
  %lap2 = graph.stencil %img, %w2 {reduction = "sum", padding = "clamp"} : (tensor<1x1x64x64xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x64x64xf32>
  %w3 = graph.constant dense<[[[[[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 1.0, 0.0], [1.0, -6.0, 1.0], [0.0, 1.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]]]]> : tensor<1x1x3x3x3xf32>
  %lap3 = graph.stencil %vol, %w3 {reduction = "sum", padding = "zero"} : (tensor<1x1x9x12x33xf32>, tensor<1x1x3x3x3xf32>) -> tensor<1x1x9x12x33xf32>
  %wm = graph.constant dense<[[[[1.0, 0.5, 1.0], [0.5, 2.0, 0.5], [1.0, 0.5, 1.0]]]]> : tensor<1x1x3x3xf32>
  %max = graph.stencil %img, %wm {reduction = "max", padding = "reflect"} : (tensor<1x1x64x64xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x64x64xf32>
  %argmin = graph.stencil %img, %wm {reduction = "argmin", padding = "mirror"} : (tensor<1x1x64x64xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x64x64xi64>
  %strided = graph.stencil %img, %wm {reduction = "sum", padding = "mirror", strides = [1, 1, 2, 3]} : (tensor<1x1x64x64xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x32x22xf32>
  %down2 = graph.stencil %img, %wm {reduction = "sum", padding = "reflect", strides = [1, 1, 2, 2]} : (tensor<1x1x64x64xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x32x32xf32>
  %ws = graph.constant dense<[[[[[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]]]]]> : tensor<1x1x1x3x3xf32>
  %slices = graph.stencil %vol, %ws {reduction = "sum", padding = "mirror"} : (tensor<1x1x9x12x33xf32>, tensor<1x1x1x3x3xf32>) -> tensor<1x1x9x12x33xf32>
  return %lap2, %lap3, %max, %argmin, %strided, %down2, %slices : tensor<1x1x64x64xf32>, tensor<1x1x9x12x33xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xi64>, tensor<1x1x32x22xf32>, tensor<1x1x32x32xf32>, tensor<1x1x9x12x33xf32>
}
