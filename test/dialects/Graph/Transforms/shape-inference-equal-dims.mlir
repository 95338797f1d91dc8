// RUN: mlcc-opt %s --split-input-file --mlcc-shape-inference | FileCheck %s

// Dims that the elementwise ops force equal take a static size that one of
// them has: the window functions' Range, whose limit is a graph input, gets
// its length from the cast to the declared output (ONNX's
// test_hannwindow_expanded). The two cos chains meet in an add whose
// operand dims are already known equal, so its result joins them.
// CHECK-LABEL: func @range_chain
func.func @range_chain(%x: tensor<f32>) -> tensor<10xf32> {
  %zero = graph.constant dense<0.0> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  // CHECK: graph.range {{.*}} -> tensor<10xf32>
  %r = graph.range %zero, %x, %one : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  // CHECK: graph.mul {{.*}} -> tensor<10xf32>
  %m = graph.mul %r, %half : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  // CHECK: graph.cos {{.*}} -> tensor<10xf32>
  %c = graph.cos %m : (tensor<?xf32>) -> tensor<?xf32>
  // CHECK: graph.sub {{.*}} -> tensor<10xf32>
  %s = graph.sub %half, %c : (tensor<f32>, tensor<?xf32>) -> tensor<?xf32>
  // CHECK: graph.sin {{.*}} -> tensor<10xf32>
  %n = graph.sin %r : (tensor<?xf32>) -> tensor<?xf32>
  // CHECK: graph.add {{.*}} -> tensor<10xf32>
  %a = graph.add %s, %n : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %y = graph.cast %a {to = 1 : i64} : (tensor<?xf32>) -> tensor<10xf32>
  return %y : tensor<10xf32>
}

// -----

// Broadcasting aligns dims from the right: the range's dim faces a 1 of
// the other operand, so it is the result's dim 1.
// CHECK-LABEL: func @aligned
func.func @aligned(%x: tensor<f32>, %w: tensor<3x1xf32>) -> tensor<3x10xf32> {
  %zero = graph.constant dense<0.0> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  // CHECK: graph.range {{.*}} -> tensor<10xf32>
  %r = graph.range %zero, %x, %one : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  // CHECK: graph.mul {{.*}} -> tensor<3x10xf32>
  %m = graph.mul %r, %w : (tensor<?xf32>, tensor<3x1xf32>) -> tensor<3x?xf32>
  %y = graph.cast %m {to = 1 : i64} : (tensor<3x?xf32>) -> tensor<3x10xf32>
  return %y : tensor<3x10xf32>
}

// -----

// Nothing is forced where a dynamic dim could be 1: against a static 10 (it
// broadcasts), against another dynamic dim not known equal (the exp's may
// broadcast against the relu's 10). Graph inputs keep their types.
// CHECK-LABEL: func @may_broadcast
// CHECK-SAME: (%{{.*}}: tensor<f32>, %{{.*}}: tensor<f32>, %{{.*}}: tensor<10xf32>, %[[V:.*]]: tensor<?xf32>)
func.func @may_broadcast(%x: tensor<f32>, %l: tensor<f32>, %t: tensor<10xf32>, %v: tensor<?xf32>) -> (tensor<10xf32>, tensor<10xf32>, tensor<10xf32>) {
  %zero = graph.constant dense<0.0> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  // CHECK: graph.range {{.*}} -> tensor<?xf32>
  %r = graph.range %zero, %x, %one : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  %a = graph.add %r, %t : (tensor<?xf32>, tensor<10xf32>) -> tensor<10xf32>
  // CHECK: graph.range {{.*}} -> tensor<?xf32>
  %r2 = graph.range %zero, %l, %one : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  // CHECK: graph.exp {{.*}} -> tensor<?xf32>
  %e = graph.exp %r2 : (tensor<?xf32>) -> tensor<?xf32>
  // CHECK: graph.relu %[[V]] {{.*}} -> tensor<10xf32>
  %n = graph.relu %v : (tensor<?xf32>) -> tensor<?xf32>
  // CHECK: graph.mul {{.*}} -> tensor<10xf32>
  %m = graph.mul %e, %n : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %y = graph.cast %m {to = 1 : i64} : (tensor<?xf32>) -> tensor<10xf32>
  %z = graph.cast %n {to = 1 : i64} : (tensor<?xf32>) -> tensor<10xf32>
  return %a, %y, %z : tensor<10xf32>, tensor<10xf32>, tensor<10xf32>
}
