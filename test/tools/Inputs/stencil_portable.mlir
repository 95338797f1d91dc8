// Stencils the avx512 target declines (a stride of 3 along the last dim, a
// window over four dims) for test/tools/stencil.test: every reduction and
// padding mode through the portable lowering
// (lowering/Common/Portable/Stencil.cpp).
func.func @main(%x: tensor<2x3x9x13xf32> {graph.name = "x"}) -> (tensor<2x3x9x5xf32> {graph.name = "sum_zero"}, tensor<2x3x9x5xf32> {graph.name = "sum_clamp"}, tensor<2x3x9x5xf32> {graph.name = "sum_reflect"}, tensor<2x3x9x5xf32> {graph.name = "sum_mirror"}, tensor<2x3x9x5xf32> {graph.name = "min_zero"}, tensor<2x3x9x5xf32> {graph.name = "min_clamp"}, tensor<2x3x9x5xf32> {graph.name = "min_reflect"}, tensor<2x3x9x5xf32> {graph.name = "min_mirror"}, tensor<2x3x9x5xf32> {graph.name = "max_zero"}, tensor<2x3x9x5xf32> {graph.name = "max_clamp"}, tensor<2x3x9x5xf32> {graph.name = "max_reflect"}, tensor<2x3x9x5xf32> {graph.name = "max_mirror"}, tensor<2x3x9x5xi64> {graph.name = "argmin_zero"}, tensor<2x3x9x5xi64> {graph.name = "argmin_clamp"}, tensor<2x3x9x5xi64> {graph.name = "argmin_reflect"}, tensor<2x3x9x5xi64> {graph.name = "argmin_mirror"}, tensor<2x3x9x5xi64> {graph.name = "argmax_zero"}, tensor<2x3x9x5xi64> {graph.name = "argmax_clamp"}, tensor<2x3x9x5xi64> {graph.name = "argmax_reflect"}, tensor<2x3x9x5xi64> {graph.name = "argmax_mirror"}, tensor<2x3x9x13xf32> {graph.name = "window4d"}) {
  %w = graph.constant dense<[[[[0.5, -1.0, 0.25], [1.0, -2.0, 1.5], [0.75, 1.0, -0.5]]]]> : tensor<1x1x3x3xf32>
  %sum_zero = graph.stencil %x, %w {reduction = "sum", padding = "zero", padding_value = 0.5 : f32, strides = [1, 1, 1, 3]} : (tensor<2x3x9x13xf32>, tensor<1x1x3x3xf32>) -> tensor<2x3x9x5xf32>
  %sum_clamp = graph.stencil %x, %w {reduction = "sum", padding = "clamp", strides = [1, 1, 1, 3]} : (tensor<2x3x9x13xf32>, tensor<1x1x3x3xf32>) -> tensor<2x3x9x5xf32>
  %sum_reflect = graph.stencil %x, %w {reduction = "sum", padding = "reflect", strides = [1, 1, 1, 3]} : (tensor<2x3x9x13xf32>, tensor<1x1x3x3xf32>) -> tensor<2x3x9x5xf32>
  %sum_mirror = graph.stencil %x, %w {reduction = "sum", padding = "mirror", strides = [1, 1, 1, 3]} : (tensor<2x3x9x13xf32>, tensor<1x1x3x3xf32>) -> tensor<2x3x9x5xf32>
  %min_zero = graph.stencil %x, %w {reduction = "min", padding = "zero", padding_value = 0.5 : f32, strides = [1, 1, 1, 3]} : (tensor<2x3x9x13xf32>, tensor<1x1x3x3xf32>) -> tensor<2x3x9x5xf32>
  %min_clamp = graph.stencil %x, %w {reduction = "min", padding = "clamp", strides = [1, 1, 1, 3]} : (tensor<2x3x9x13xf32>, tensor<1x1x3x3xf32>) -> tensor<2x3x9x5xf32>
  %min_reflect = graph.stencil %x, %w {reduction = "min", padding = "reflect", strides = [1, 1, 1, 3]} : (tensor<2x3x9x13xf32>, tensor<1x1x3x3xf32>) -> tensor<2x3x9x5xf32>
  %min_mirror = graph.stencil %x, %w {reduction = "min", padding = "mirror", strides = [1, 1, 1, 3]} : (tensor<2x3x9x13xf32>, tensor<1x1x3x3xf32>) -> tensor<2x3x9x5xf32>
  %max_zero = graph.stencil %x, %w {reduction = "max", padding = "zero", padding_value = 0.5 : f32, strides = [1, 1, 1, 3]} : (tensor<2x3x9x13xf32>, tensor<1x1x3x3xf32>) -> tensor<2x3x9x5xf32>
  %max_clamp = graph.stencil %x, %w {reduction = "max", padding = "clamp", strides = [1, 1, 1, 3]} : (tensor<2x3x9x13xf32>, tensor<1x1x3x3xf32>) -> tensor<2x3x9x5xf32>
  %max_reflect = graph.stencil %x, %w {reduction = "max", padding = "reflect", strides = [1, 1, 1, 3]} : (tensor<2x3x9x13xf32>, tensor<1x1x3x3xf32>) -> tensor<2x3x9x5xf32>
  %max_mirror = graph.stencil %x, %w {reduction = "max", padding = "mirror", strides = [1, 1, 1, 3]} : (tensor<2x3x9x13xf32>, tensor<1x1x3x3xf32>) -> tensor<2x3x9x5xf32>
  %argmin_zero = graph.stencil %x, %w {reduction = "argmin", padding = "zero", padding_value = 0.5 : f32, strides = [1, 1, 1, 3]} : (tensor<2x3x9x13xf32>, tensor<1x1x3x3xf32>) -> tensor<2x3x9x5xi64>
  %argmin_clamp = graph.stencil %x, %w {reduction = "argmin", padding = "clamp", strides = [1, 1, 1, 3]} : (tensor<2x3x9x13xf32>, tensor<1x1x3x3xf32>) -> tensor<2x3x9x5xi64>
  %argmin_reflect = graph.stencil %x, %w {reduction = "argmin", padding = "reflect", strides = [1, 1, 1, 3]} : (tensor<2x3x9x13xf32>, tensor<1x1x3x3xf32>) -> tensor<2x3x9x5xi64>
  %argmin_mirror = graph.stencil %x, %w {reduction = "argmin", padding = "mirror", strides = [1, 1, 1, 3]} : (tensor<2x3x9x13xf32>, tensor<1x1x3x3xf32>) -> tensor<2x3x9x5xi64>
  %argmax_zero = graph.stencil %x, %w {reduction = "argmax", padding = "zero", padding_value = 0.5 : f32, strides = [1, 1, 1, 3]} : (tensor<2x3x9x13xf32>, tensor<1x1x3x3xf32>) -> tensor<2x3x9x5xi64>
  %argmax_clamp = graph.stencil %x, %w {reduction = "argmax", padding = "clamp", strides = [1, 1, 1, 3]} : (tensor<2x3x9x13xf32>, tensor<1x1x3x3xf32>) -> tensor<2x3x9x5xi64>
  %argmax_reflect = graph.stencil %x, %w {reduction = "argmax", padding = "reflect", strides = [1, 1, 1, 3]} : (tensor<2x3x9x13xf32>, tensor<1x1x3x3xf32>) -> tensor<2x3x9x5xi64>
  %argmax_mirror = graph.stencil %x, %w {reduction = "argmax", padding = "mirror", strides = [1, 1, 1, 3]} : (tensor<2x3x9x13xf32>, tensor<1x1x3x3xf32>) -> tensor<2x3x9x5xi64>
  %w4 = graph.constant dense<[[[[1.0, 2.0]]], [[[-1.0, 0.5]]]]> : tensor<2x1x1x2xf32>
  %window4d = graph.stencil %x, %w4 {reduction = "max", padding = "reflect"} : (tensor<2x3x9x13xf32>, tensor<2x1x1x2xf32>) -> tensor<2x3x9x13xf32>
  return %sum_zero, %sum_clamp, %sum_reflect, %sum_mirror, %min_zero, %min_clamp, %min_reflect, %min_mirror, %max_zero, %max_clamp, %max_reflect, %max_mirror, %argmin_zero, %argmin_clamp, %argmin_reflect, %argmin_mirror, %argmax_zero, %argmax_clamp, %argmax_reflect, %argmax_mirror, %window4d : tensor<2x3x9x5xf32>, tensor<2x3x9x5xf32>, tensor<2x3x9x5xf32>, tensor<2x3x9x5xf32>, tensor<2x3x9x5xf32>, tensor<2x3x9x5xf32>, tensor<2x3x9x5xf32>, tensor<2x3x9x5xf32>, tensor<2x3x9x5xf32>, tensor<2x3x9x5xf32>, tensor<2x3x9x5xf32>, tensor<2x3x9x5xf32>, tensor<2x3x9x5xi64>, tensor<2x3x9x5xi64>, tensor<2x3x9x5xi64>, tensor<2x3x9x5xi64>, tensor<2x3x9x5xi64>, tensor<2x3x9x5xi64>, tensor<2x3x9x5xi64>, tensor<2x3x9x5xi64>, tensor<2x3x9x13xf32>
}
