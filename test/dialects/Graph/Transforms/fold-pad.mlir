// RUN: mlcc-opt %s --split-input-file --mlcc-fold-pad | FileCheck %s

// torch's AvgPool2d(3, 1, 1) with count_include_pad as exported (Inception
// v3's pool branch): the pool takes the pads and counts them.
// CHECK-LABEL: func @pad_average_pool
// CHECK-SAME: (%[[X:.+]]: tensor<1x32x8x8xf32>)
// CHECK-NOT: graph.pad
// CHECK: graph.average_pool %[[X]] {ceil_mode = 0 : i64, count_include_pad = 1 : i64, kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [1, 1]}
func.func @pad_average_pool(%x: tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32> {
  %p = graph.constant dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>
  %v = graph.constant dense<0.0> : tensor<f32>
  %xp = graph.pad %x, %p, %v {mode = "constant"} : (tensor<1x32x8x8xf32>, tensor<8xi64>, tensor<f32>) -> tensor<1x32x10x10xf32>
  %y = graph.average_pool %xp {ceil_mode = 0 : i64, kernel_shape = [3, 3], pads = [0, 0, 0, 0], strides = [1, 1]} : (tensor<1x32x10x10xf32>) -> tensor<1x32x8x8xf32>
  return %y : tensor<1x32x8x8xf32>
}

// -----

// Uneven pads before two convs: each adds them to its own (VALID: none).
// CHECK-LABEL: func @pad_two_convs
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x8x8xf32>
// CHECK-NOT: graph.pad
// CHECK: graph.conv %[[X]], {{.*}}pads = [1, 2, 3, 2]
// CHECK: graph.conv %[[X]], {{.*}}pads = [0, 1, 2, 1]
func.func @pad_two_convs(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> (tensor<1x8x10x9xf32>, tensor<1x8x8x7xf32>) {
  %none = graph.none
  %p = graph.constant dense<[0, 0, 0, 1, 0, 0, 2, 1]> : tensor<8xi64>
  %xp = graph.pad %x, %p, %none : (tensor<1x4x8x8xf32>, tensor<8xi64>, none) -> tensor<1x4x10x10xf32>
  %a = graph.conv %xp, %w, %none {pads = [1, 1, 1, 1]} : (tensor<1x4x10x10xf32>, tensor<8x4x3x3xf32>, none) -> tensor<1x8x10x9xf32>
  %b = graph.conv %xp, %w, %none {auto_pad = "VALID", pads = [5, 5, 5, 5]} : (tensor<1x4x10x10xf32>, tensor<8x4x3x3xf32>, none) -> tensor<1x8x8x7xf32>
  return %a, %b : tensor<1x8x10x9xf32>, tensor<1x8x8x7xf32>
}

// -----

// Zero pads (torch's AvgPool2d(2, 2) as exported): the Pad is its input,
// whatever reads it.
// CHECK-LABEL: func @pads_nothing
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x8x8xf32>)
// CHECK-NOT: graph.pad
// CHECK: graph.average_pool %[[X]] {ceil_mode = 0 : i64, kernel_shape = [2, 2], pads = [0, 0, 0, 0], strides = [2, 2]}
// CHECK: return %{{.+}}, %[[X]]
func.func @pads_nothing(%x: tensor<1x4x8x8xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x8x8xf32>) {
  %p = graph.constant dense<0> : tensor<8xi64>
  %none = graph.none
  %xp = graph.pad %x, %p, %none {mode = "reflect"} : (tensor<1x4x8x8xf32>, tensor<8xi64>, none) -> tensor<1x4x8x8xf32>
  %y = graph.average_pool %xp {ceil_mode = 0 : i64, kernel_shape = [2, 2], pads = [0, 0, 0, 0], strides = [2, 2]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  return %y, %xp : tensor<1x4x4x4xf32>, tensor<1x4x8x8xf32>
}

// -----

// Must not fold: a non-zero value, a pad of the channels, reflect mode, a
// max pool, a pool with ceil_mode, a pool with its own pads that do not
// count, negative pads (a crop), a Pad also read by another op.
// CHECK-LABEL: func @not_folded
// CHECK-COUNT-8: graph.pad
func.func @not_folded(%x: tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x6x8x8xf32>, tensor<1x4x5x5xf32>, tensor<1x4x10x10xf32>, tensor<1x4x4x4xf32>, tensor<1x4x10x10xf32>) {
  %p = graph.constant dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>
  %pc = graph.constant dense<[0, 1, 1, 1, 0, 1, 1, 1]> : tensor<8xi64>
  %pn = graph.constant dense<[0, 0, -1, -1, 0, 0, -1, -1]> : tensor<8xi64>
  %one = graph.constant dense<1.0> : tensor<f32>
  %none = graph.none
  %x1 = graph.pad %x, %p, %one : (tensor<1x4x8x8xf32>, tensor<8xi64>, tensor<f32>) -> tensor<1x4x10x10xf32>
  %y1 = graph.average_pool %x1 {kernel_shape = [3, 3]} : (tensor<1x4x10x10xf32>) -> tensor<1x4x8x8xf32>
  %x2 = graph.pad %x, %p, %none {mode = "reflect"} : (tensor<1x4x8x8xf32>, tensor<8xi64>, none) -> tensor<1x4x10x10xf32>
  %y2 = graph.average_pool %x2 {kernel_shape = [3, 3]} : (tensor<1x4x10x10xf32>) -> tensor<1x4x8x8xf32>
  %x3 = graph.pad %x, %p, %none : (tensor<1x4x8x8xf32>, tensor<8xi64>, none) -> tensor<1x4x10x10xf32>
  %y3:2 = graph.max_pool %x3 {kernel_shape = [3, 3]} : (tensor<1x4x10x10xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xi64>)
  %x4 = graph.pad %x, %pc, %none : (tensor<1x4x8x8xf32>, tensor<8xi64>, none) -> tensor<1x6x10x10xf32>
  %y4 = graph.average_pool %x4 {kernel_shape = [3, 3]} : (tensor<1x6x10x10xf32>) -> tensor<1x6x8x8xf32>
  %x5 = graph.pad %x, %p, %none : (tensor<1x4x8x8xf32>, tensor<8xi64>, none) -> tensor<1x4x10x10xf32>
  %y5 = graph.average_pool %x5 {ceil_mode = 1 : i64, kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x4x10x10xf32>) -> tensor<1x4x5x5xf32>
  %x6 = graph.pad %x, %p, %none : (tensor<1x4x8x8xf32>, tensor<8xi64>, none) -> tensor<1x4x10x10xf32>
  %y6 = graph.average_pool %x6 {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x4x10x10xf32>) -> tensor<1x4x10x10xf32>
  %x7 = graph.pad %x, %pn, %none : (tensor<1x4x8x8xf32>, tensor<8xi64>, none) -> tensor<1x4x6x6xf32>
  %y7 = graph.average_pool %x7 {kernel_shape = [3, 3]} : (tensor<1x4x6x6xf32>) -> tensor<1x4x4x4xf32>
  %x8 = graph.pad %x, %p, %none : (tensor<1x4x8x8xf32>, tensor<8xi64>, none) -> tensor<1x4x10x10xf32>
  %y8 = graph.average_pool %x8 {kernel_shape = [3, 3]} : (tensor<1x4x10x10xf32>) -> tensor<1x4x8x8xf32>
  return %y1, %y2, %y3#0, %y4, %y5, %y6, %y7, %x8 : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x6x8x8xf32>, tensor<1x4x5x5xf32>, tensor<1x4x10x10xf32>, tensor<1x4x4x4xf32>, tensor<1x4x10x10xf32>
}
