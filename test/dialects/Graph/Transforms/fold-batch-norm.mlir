// RUN: mlcc-opt %s --split-input-file --mlcc-fold-batch-norm | FileCheck %s

// W' = W * s, b' = (b - mean) * s + B, s = scale / sqrt(var + eps):
// channel 0: s = 2 / sqrt(3 + 1) = 1, channel 1: s = 1 / sqrt(-0.75 + 1) = 2 (eps = 1).
// CHECK-LABEL: func @folds
func.func @folds(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  // CHECK-DAG: graph.constant dense<{{\[}}[{{\[}}[1.000000e+00]]], {{\[}}[{{\[}}6.000000e+00]]]]> : tensor<2x1x1x1xf32>
  // CHECK-DAG: graph.constant dense<[4.000000e+00, -5.000000e+00]> : tensor<2xf32>
  // CHECK: graph.conv
  // CHECK-NOT: graph.batch_norm
  %w = graph.constant dense<[[[[1.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %b = graph.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %scale = graph.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %shift = graph.constant dense<[5.0, 1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %var = graph.constant dense<[3.0, -0.75]> : tensor<2xf32>
  %y = graph.conv %x, %w, %b {kernel_shape = [1, 1]} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %n, %m, %v = graph.batch_norm %y, %scale, %shift, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x2x2xf32>, none, none)
  return %n : tensor<1x2x2x2xf32>
}

// -----

// The conv's result has another user: the batch norm stays.
// CHECK-LABEL: func @shared_conv_output
func.func @shared_conv_output(%x: tensor<1x1x2x2xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) {
  // CHECK: graph.conv
  // CHECK: graph.batch_norm
  %w = graph.constant dense<1.0> : tensor<1x1x1x1xf32>
  %none = graph.none
  %p = graph.constant dense<1.0> : tensor<1xf32>
  %y = graph.conv %x, %w, %none {kernel_shape = [1, 1]} : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x2x2xf32>
  %n, %m, %v = graph.batch_norm %y, %p, %p, %p, %p : (tensor<1x1x2x2xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<1x1x2x2xf32>, none, none)
  return %n, %y : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
}

// -----

// Non-constant statistics: nothing to fold now.
// CHECK-LABEL: func @runtime_mean
func.func @runtime_mean(%x: tensor<1x1x2x2xf32>, %mean: tensor<1xf32>) -> tensor<1x1x2x2xf32> {
  // CHECK: graph.batch_norm
  %w = graph.constant dense<1.0> : tensor<1x1x1x1xf32>
  %none = graph.none
  %p = graph.constant dense<1.0> : tensor<1xf32>
  %y = graph.conv %x, %w, %none {kernel_shape = [1, 1]} : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x2x2xf32>
  %n, %m, %v = graph.batch_norm %y, %p, %p, %mean, %p : (tensor<1x1x2x2xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<1x1x2x2xf32>, none, none)
  return %n : tensor<1x1x2x2xf32>
}
