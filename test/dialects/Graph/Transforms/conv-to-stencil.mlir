// RUN: mlcc-opt %s --split-input-file --mlcc-conv-to-stencil | FileCheck %s

// A 4-neighbour sum on one channel (a Jacobi step): a stencil with the
// pads as offsets.
// CHECK-LABEL: func @laplacian
// CHECK-SAME: (%[[X:.+]]: tensor<2x1x64x64xf32>)
func.func @laplacian(%x: tensor<2x1x64x64xf32>) -> tensor<2x1x64x64xf32> {
  %none = graph.none
  // CHECK: %[[W:.+]] = graph.constant
  %w = graph.constant dense<[[[[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]]]> : tensor<1x1x3x3xf32>
  // CHECK-NOT: graph.conv
  // (sum and zero padding are the defaults, not printed)
  // CHECK: %[[S:.+]] = graph.stencil %[[X]], %[[W]] {dilations = [1, 1, 1, 1], offsets = [0, 0, -1, -1], strides = [1, 1, 1, 1]}
  // CHECK: return %[[S]]
  %y = graph.conv %x, %w, %none {pads = [1, 1, 1, 1]} : (tensor<2x1x64x64xf32>, tensor<1x1x3x3xf32>, none) -> tensor<2x1x64x64xf32>
  return %y : tensor<2x1x64x64xf32>
}

// -----

// 3-D, stride 2 and dilation 2 on the last dim.
// CHECK-LABEL: func @strided_3d
// CHECK: graph.stencil {{.*}}dilations = [1, 1, 1, 1, 2], offsets = [0, 0, -1, -1, -2]{{.*}}strides = [1, 1, 1, 1, 2]
func.func @strided_3d(%x: tensor<1x1x8x8x16xf32>) -> tensor<1x1x8x8x8xf32> {
  %none = graph.none
  %w = graph.constant dense<1.0> : tensor<1x1x3x3x3xf32>
  %y = graph.conv %x, %w, %none {pads = [1, 1, 2, 1, 1, 2], strides = [1, 1, 2], dilations = [1, 1, 2]} : (tensor<1x1x8x8x16xf32>, tensor<1x1x3x3x3xf32>, none) -> tensor<1x1x8x8x8xf32>
  return %y : tensor<1x1x8x8x8xf32>
}

// -----

// Must not fire: two output channels, a bias, run-time weights, or an
// output smaller than the input (valid padding).
// CHECK-LABEL: func @not_a_stencil
// CHECK-COUNT-4: graph.conv
// CHECK-NOT: graph.stencil
func.func @not_a_stencil(%x: tensor<1x1x8x8xf32>, %wr: tensor<1x1x3x3xf32>) -> (tensor<1x2x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x6x6xf32>) {
  %none = graph.none
  %w2 = graph.constant dense<1.0> : tensor<2x1x3x3xf32>
  %w = graph.constant dense<1.0> : tensor<1x1x3x3xf32>
  %b = graph.constant dense<0.5> : tensor<1xf32>
  %y0 = graph.conv %x, %w2, %none {pads = [1, 1, 1, 1]} : (tensor<1x1x8x8xf32>, tensor<2x1x3x3xf32>, none) -> tensor<1x2x8x8xf32>
  %y1 = graph.conv %x, %w, %b {pads = [1, 1, 1, 1]} : (tensor<1x1x8x8xf32>, tensor<1x1x3x3xf32>, tensor<1xf32>) -> tensor<1x1x8x8xf32>
  %y2 = graph.conv %x, %wr, %none {pads = [1, 1, 1, 1]} : (tensor<1x1x8x8xf32>, tensor<1x1x3x3xf32>, none) -> tensor<1x1x8x8xf32>
  %y3 = graph.conv %x, %w, %none : (tensor<1x1x8x8xf32>, tensor<1x1x3x3xf32>, none) -> tensor<1x1x6x6xf32>
  return %y0, %y1, %y2, %y3 : tensor<1x2x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x6x6xf32>
}
