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

// -----

// ConvTranspose: W is [C_in, C_out, k...], output channel j's weights are
// W[:, j]: W' = [[1 * 1, 2 * 2], [3 * 1, 4 * 2]]; no bias: b' = -mean * s + B.
// CHECK-LABEL: func @conv_transpose
func.func @conv_transpose(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  // CHECK-DAG: graph.constant dense<{{\[}}[{{\[}}[1.000000e+00]], {{\[}}[4.000000e+00]]], {{\[}}[{{\[}}3.000000e+00]], {{\[}}[8.000000e+00]]]]> : tensor<2x2x1x1xf32>
  // CHECK-DAG: graph.constant dense<[3.000000e+00, -1.000000e+00]> : tensor<2xf32>
  // CHECK: graph.conv_transpose
  // CHECK-NOT: graph.batch_norm
  %w = graph.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %none = graph.none
  %scale = graph.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %shift = graph.constant dense<[5.0, 1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %var = graph.constant dense<[3.0, -0.75]> : tensor<2xf32>
  %y = graph.conv_transpose %x, %w, %none {kernel_shape = [1, 1]} : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x2x2xf32>
  %n, %m, %v = graph.batch_norm %y, %scale, %shift, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x2x2xf32>, none, none)
  return %n : tensor<1x2x2x2xf32>
}

// -----

// Grouped ConvTranspose (group 2, one output channel per group): input
// channel 1 feeds output channel 1, so W[1] scales by s[1] = 2.
// CHECK-LABEL: func @conv_transpose_grouped
func.func @conv_transpose_grouped(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  // CHECK-DAG: graph.constant dense<{{\[}}[{{\[}}[1.000000e+00]]], {{\[}}[{{\[}}6.000000e+00]]]]> : tensor<2x1x1x1xf32>
  // CHECK-DAG: graph.constant dense<[4.000000e+00, -5.000000e+00]> : tensor<2xf32>
  // CHECK: graph.conv_transpose
  // CHECK-NOT: graph.batch_norm
  %w = graph.constant dense<[[[[1.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %b = graph.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %scale = graph.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %shift = graph.constant dense<[5.0, 1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %var = graph.constant dense<[3.0, -0.75]> : tensor<2xf32>
  %y = graph.conv_transpose %x, %w, %b {group = 2 : i64, kernel_shape = [1, 1]} : (tensor<1x2x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %n, %m, %v = graph.batch_norm %y, %scale, %shift, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x2x2xf32>, none, none)
  return %n : tensor<1x2x2x2xf32>
}

// -----

// A Linear layer (gemm, transB = 1) then BatchNorm1d on [N, C]: row c of B
// scales by s[c]; C times beta is the bias, and beta becomes 1:
// b' = (2 * [1, -2] - mean) * s + B = [5, -9].
// CHECK-LABEL: func @gemm
func.func @gemm(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  // CHECK-DAG: %[[W:.+]] = graph.constant dense<{{\[}}[1.000000e+00, 1.000000e+00, 1.000000e+00], [4.000000e+00, 4.000000e+00, 4.000000e+00]]> : tensor<2x3xf32>
  // CHECK-DAG: %[[B:.+]] = graph.constant dense<[5.000000e+00, -9.000000e+00]> : tensor<2xf32>
  // CHECK: graph.gemm %{{.+}}, %[[W]], %[[B]] {beta = 1.000000e+00 : f32, transB = 1 : i64}
  // CHECK-NOT: graph.batch_norm
  %w = graph.constant dense<[[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]> : tensor<2x3xf32>
  %c = graph.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %scale = graph.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %shift = graph.constant dense<[5.0, 1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %var = graph.constant dense<[3.0, -0.75]> : tensor<2xf32>
  %y = graph.gemm %x, %w, %c {beta = 2.0 : f32, transB = 1 : i64} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %n, %m, %v = graph.batch_norm %y, %scale, %shift, %mean, %var {epsilon = 1.0 : f32} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2xf32>, none, none)
  return %n : tensor<4x2xf32>
}

// -----

// MatMul then BatchNorm1d: column c of W scales by s[c], and the matmul
// gains an add of b' = -mean * s + B (mlcc-fuse-fc makes them one fc).
// CHECK-LABEL: func @matmul
// CHECK-SAME: (%[[X:.+]]: tensor<4x3xf32>)
func.func @matmul(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  // CHECK-DAG: %[[W:.+]] = graph.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [1.000000e+00, 4.000000e+00], [1.000000e+00, 4.000000e+00]]> : tensor<3x2xf32>
  // CHECK-DAG: %[[B:.+]] = graph.constant dense<[3.000000e+00, -1.000000e+00]> : tensor<2xf32>
  // CHECK-DAG: %[[P:.+]] = graph.matmul %[[X]], %[[W]]
  // CHECK: %[[Y:.+]] = graph.add %[[P]], %[[B]]
  // CHECK-NOT: graph.batch_norm
  // CHECK: return %[[Y]]
  %w = graph.constant dense<[[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]> : tensor<3x2xf32>
  %scale = graph.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %shift = graph.constant dense<[5.0, 1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %var = graph.constant dense<[3.0, -0.75]> : tensor<2xf32>
  %y = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %n, %m, %v = graph.batch_norm %y, %scale, %shift, %mean, %var {epsilon = 1.0 : f32} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2xf32>, none, none)
  return %n : tensor<4x2xf32>
}

// -----

// A 3-D matmul output: the BN's channel axis is 1, not the features of
// the product, so nothing folds.
// CHECK-LABEL: func @matmul_rank3
func.func @matmul_rank3(%x: tensor<1x2x3xf32>) -> tensor<1x2x2xf32> {
  // CHECK: graph.matmul
  // CHECK: graph.batch_norm
  %w = graph.constant dense<1.0> : tensor<3x2xf32>
  %p = graph.constant dense<1.0> : tensor<2xf32>
  %y = graph.matmul %x, %w : (tensor<1x2x3xf32>, tensor<3x2xf32>) -> tensor<1x2x2xf32>
  %n, %m, %v = graph.batch_norm %y, %p, %p, %p, %p : (tensor<1x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x2xf32>, none, none)
  return %n : tensor<1x2x2xf32>
}

// -----

// Gemm's C is a full [M, N] matrix, not a bias row: nothing folds.
// CHECK-LABEL: func @gemm_matrix_c
func.func @gemm_matrix_c(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  // CHECK: graph.gemm
  // CHECK: graph.batch_norm
  %w = graph.constant dense<1.0> : tensor<3x2xf32>
  %c = graph.constant dense<1.0> : tensor<4x2xf32>
  %p = graph.constant dense<1.0> : tensor<2xf32>
  %y = graph.gemm %x, %w, %c : (tensor<4x3xf32>, tensor<3x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %n, %m, %v = graph.batch_norm %y, %p, %p, %p, %p : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2xf32>, none, none)
  return %n : tensor<4x2xf32>
}

// -----

// A run-time weight (the second operand of the product is an argument).
// CHECK-LABEL: func @matmul_runtime_weight
func.func @matmul_runtime_weight(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>) -> tensor<4x2xf32> {
  // CHECK: graph.matmul
  // CHECK: graph.batch_norm
  %p = graph.constant dense<1.0> : tensor<2xf32>
  %y = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %n, %m, %v = graph.batch_norm %y, %p, %p, %p, %p : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2xf32>, none, none)
  return %n : tensor<4x2xf32>
}

// -----

// The transposed conv's result has another user: the batch norm stays.
// CHECK-LABEL: func @shared_conv_transpose_output
func.func @shared_conv_transpose_output(%x: tensor<1x1x2x2xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) {
  // CHECK: graph.conv_transpose
  // CHECK: graph.batch_norm
  %w = graph.constant dense<1.0> : tensor<1x1x1x1xf32>
  %none = graph.none
  %p = graph.constant dense<1.0> : tensor<1xf32>
  %y = graph.conv_transpose %x, %w, %none {kernel_shape = [1, 1]} : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, none) -> tensor<1x1x2x2xf32>
  %n, %m, %v = graph.batch_norm %y, %p, %p, %p, %p : (tensor<1x1x2x2xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<1x1x2x2xf32>, none, none)
  return %n, %y : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
}

// -----

// A QDQ conv (a per-tensor s8 weight, as a QDQ model keeps it before its
// batch norm): the integers stay and the factor goes into per-channel
// scales, s = [2 / 2, -1 / 2] (eps = 1): scale' = 0.5 * |s| = [0.5, 0.25],
// and channel 1's integers are negated; b' = (b - mean) * s + B = [4, 2.5].
// CHECK-LABEL: func @qdq_conv
func.func @qdq_conv(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  // CHECK-DAG: %[[Q:.*]] = graph.constant dense<{{\[}}[{{\[}}[3]]], {{\[}}[{{\[}}5]]]]> : tensor<2x1x1x1xi8>
  // CHECK-DAG: %[[S:.*]] = graph.constant dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
  // CHECK-DAG: %[[Z:.*]] = graph.constant dense<0> : tensor<2xi8>
  // CHECK-DAG: %[[B:.*]] = graph.constant dense<[4.000000e+00, 2.500000e+00]> : tensor<2xf32>
  // CHECK-DAG: %[[W:.*]] = graph.dequantize %[[Q]], %[[S]], %[[Z]] {axis = 0 : i64}
  // CHECK: graph.conv %{{.*}}, %[[W]], %[[B]]
  // CHECK-NOT: graph.batch_norm
  %q = graph.constant dense<[[[[3]]], [[[-5]]]]> : tensor<2x1x1x1xi8>
  %s = graph.constant dense<0.5> : tensor<f32>
  %none = graph.none
  %w = graph.dequantize %q, %s, %none : (tensor<2x1x1x1xi8>, tensor<f32>, none) -> tensor<2x1x1x1xf32>
  %b = graph.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %scale = graph.constant dense<[2.0, -1.0]> : tensor<2xf32>
  %shift = graph.constant dense<[5.0, 1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %var = graph.constant dense<[3.0, 3.0]> : tensor<2xf32>
  %y = graph.conv %x, %w, %b {kernel_shape = [1, 1]} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %n, %m, %v = graph.batch_norm %y, %scale, %shift, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x2x2xf32>, none, none)
  return %n : tensor<1x2x2x2xf32>
}

// -----

// u8 per-channel weights with zero points [10, 250] and a dequantized int32
// bias ([4, -8] * 0.25 = [1, -2]): channel 1's negation 2 * 250 - q leaves
// u8 for q = 200 (300), so nothing folds.
// CHECK-LABEL: func @qdq_conv_negation_out_of_range
func.func @qdq_conv_negation_out_of_range(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  // CHECK: graph.conv
  // CHECK: graph.batch_norm
  %q = graph.constant dense<[[[[20]]], [[[200]]]]> : tensor<2x1x1x1xui8>
  %s = graph.constant dense<[0.5, 0.5]> : tensor<2xf32>
  %z = graph.constant dense<[10, 250]> : tensor<2xui8>
  %w = graph.dequantize %q, %s, %z {axis = 0 : i64} : (tensor<2x1x1x1xui8>, tensor<2xf32>, tensor<2xui8>) -> tensor<2x1x1x1xf32>
  %bq = graph.constant dense<[4, -8]> : tensor<2xi32>
  %bs = graph.constant dense<0.25> : tensor<f32>
  %none = graph.none
  %b = graph.dequantize %bq, %bs, %none : (tensor<2xi32>, tensor<f32>, none) -> tensor<2xf32>
  %p = graph.constant dense<[2.0, -1.0]> : tensor<2xf32>
  %var = graph.constant dense<[3.0, 3.0]> : tensor<2xf32>
  %y = graph.conv %x, %w, %b {kernel_shape = [1, 1]} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %n, %m, %v = graph.batch_norm %y, %p, %p, %p, %var {epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x2x2xf32>, none, none)
  return %n : tensor<1x2x2x2xf32>
}

// -----

// The same u8 weights with a positive factor fold: q and the zero points
// stay, scale' = 0.5 * [1, 0.5]; the int32 bias is read as [1, -2]:
// b' = (b - mean) * s + B with mean = B = [2, -1]: [1, -1.5].
// CHECK-LABEL: func @qdq_conv_u8_int32_bias
func.func @qdq_conv_u8_int32_bias(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  // CHECK-DAG: graph.constant dense<{{\[}}[{{\[}}[20]]], {{\[}}[{{\[}}200]]]]> : tensor<2x1x1x1xui8>
  // CHECK-DAG: graph.constant dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
  // CHECK-DAG: graph.constant dense<[10, 250]> : tensor<2xui8>
  // CHECK-DAG: graph.constant dense<[1.000000e+00, -1.500000e+00]> : tensor<2xf32>
  // CHECK: graph.conv
  // CHECK-NOT: graph.batch_norm
  // CHECK-NOT: graph.dequantize
  %q = graph.constant dense<[[[[20]]], [[[200]]]]> : tensor<2x1x1x1xui8>
  %s = graph.constant dense<[0.5, 0.5]> : tensor<2xf32>
  %z = graph.constant dense<[10, 250]> : tensor<2xui8>
  %w = graph.dequantize %q, %s, %z {axis = 0 : i64} : (tensor<2x1x1x1xui8>, tensor<2xf32>, tensor<2xui8>) -> tensor<2x1x1x1xf32>
  %bq = graph.constant dense<[4, -8]> : tensor<2xi32>
  %bs = graph.constant dense<0.25> : tensor<f32>
  %none = graph.none
  %b = graph.dequantize %bq, %bs, %none : (tensor<2xi32>, tensor<f32>, none) -> tensor<2xf32>
  %g = graph.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %mb = graph.constant dense<[2.0, -1.0]> : tensor<2xf32>
  %var = graph.constant dense<[3.0, 3.0]> : tensor<2xf32>
  %y = graph.conv %x, %w, %b {kernel_shape = [1, 1]} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %n, %m, %v = graph.batch_norm %y, %g, %mb, %mb, %var {epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x2x2xf32>, none, none)
  return %n : tensor<1x2x2x2xf32>
}
