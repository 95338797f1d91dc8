// RUN: mlcc-opt %s --split-input-file --mlcc-fuse-attention | FileCheck %s

// BERT's form: scores / 2 (a power of two), + a [B, 1, 1, S] mask.
// CHECK-LABEL: func @bert
func.func @bert(%q: tensor<1x4x4xf32>, %k: tensor<1x4x4xf32>, %v: tensor<1x4x4xf32>, %mask: tensor<1x1x1x4xf32>) -> (tensor<1x4x4xf32>) {
  // CHECK-NOT: graph.{{transpose|matmul|softmax|reshape|div|mul|add}}
  // CHECK: %[[Y:.*]] = graph.attention %arg0, %arg1, %arg2, %arg3 {num_heads = 2 : i64, scale = 5.000000e-01 : f32} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x4x4xf32>
  // CHECK-NOT: graph.{{transpose|matmul|softmax|reshape|div|mul|add}}
  // CHECK: return %[[Y]]
  %s4 = graph.constant dense<[-1, 4, 2, 2]> : tensor<4xi64>
  %s3 = graph.constant dense<[-1, 4, 4]> : tensor<3xi64>
  %c = graph.constant dense<2.0> : tensor<f32>
  %q4 = graph.reshape %q, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %k4 = graph.reshape %k, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %v4 = graph.reshape %v, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %qh = graph.transpose %q4 {perm = [0, 2, 1, 3]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %kh = graph.transpose %k4 {perm = [0, 2, 3, 1]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x2x4xf32>
  %vh = graph.transpose %v4 {perm = [0, 2, 1, 3]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %mm = graph.matmul %qh, %kh : (tensor<1x2x4x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
  %sd = graph.div %mm, %c : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %sm = graph.add %sd, %mask : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32>
  %p = graph.softmax %sm {axis = -1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %o = graph.matmul %p, %vh : (tensor<1x2x4x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
  %ot = graph.transpose %o {perm = [0, 2, 1, 3]} : (tensor<1x2x4x2xf32>) -> tensor<1x4x2x2xf32>
  %y = graph.reshape %ot, %s3 : (tensor<1x4x2x2xf32>, tensor<3xi64>) -> tensor<1x4x4xf32>
  return %y : tensor<1x4x4xf32>
}

// -----

// 0.5 * Q (a power of two), no mask, K transposed in two steps.
// CHECK-LABEL: func @scale_on_q_no_mask
func.func @scale_on_q_no_mask(%q: tensor<1x4x4xf32>, %k: tensor<1x4x4xf32>, %v: tensor<1x4x4xf32>) -> (tensor<1x4x4xf32>) {
  // CHECK: %[[NONE:.*]] = graph.none
  // CHECK-NOT: graph.{{transpose|matmul|softmax|reshape|div|mul|add}}
  // CHECK: %[[Y:.*]] = graph.attention %arg0, %arg1, %arg2, %[[NONE]] {num_heads = 2 : i64, scale = 5.000000e-01 : f32}
  // CHECK-NOT: graph.{{transpose|matmul|softmax|reshape|div|mul|add}}
  // CHECK: return %[[Y]]
  %s4 = graph.constant dense<[-1, 4, 2, 2]> : tensor<4xi64>
  %s3 = graph.constant dense<[-1, 4, 4]> : tensor<3xi64>
  %c = graph.constant dense<0.5> : tensor<f32>
  %q4 = graph.reshape %q, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %k4 = graph.reshape %k, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %v4 = graph.reshape %v, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %qh = graph.transpose %q4 {perm = [0, 2, 1, 3]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %qs = graph.mul %qh, %c : (tensor<1x2x4x2xf32>, tensor<f32>) -> tensor<1x2x4x2xf32>
  %kt = graph.transpose %k4 {perm = [0, 2, 1, 3]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %kh = graph.transpose %kt {perm = [0, 1, 3, 2]} : (tensor<1x2x4x2xf32>) -> tensor<1x2x2x4xf32>
  %vh = graph.transpose %v4 {perm = [0, 2, 1, 3]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %mm = graph.matmul %qs, %kh : (tensor<1x2x4x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
  %p = graph.softmax %mm {axis = -1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %o = graph.matmul %p, %vh : (tensor<1x2x4x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
  %ot = graph.transpose %o {perm = [0, 2, 1, 3]} : (tensor<1x2x4x2xf32>) -> tensor<1x4x2x2xf32>
  %y = graph.reshape %ot, %s3 : (tensor<1x4x2x2xf32>, tensor<3xi64>) -> tensor<1x4x4xf32>
  return %y : tensor<1x4x4xf32>
}

// -----

// A product on the scores rounds as the fused op's: any constant.
// CHECK-LABEL: func @mul_scores_any
func.func @mul_scores_any(%q: tensor<1x4x4xf32>, %k: tensor<1x4x4xf32>, %v: tensor<1x4x4xf32>, %mask: tensor<1x2x4x4xf32>) -> (tensor<1x4x4xf32>) {
  // CHECK-NOT: graph.{{transpose|matmul|softmax|reshape|div|mul|add}}
  // CHECK: %[[Y:.*]] = graph.attention %arg0, %arg1, %arg2, %arg3 {num_heads = 2 : i64, scale = 3.000000e-01 : f32}
  // CHECK-NOT: graph.{{transpose|matmul|softmax|reshape|div|mul|add}}
  // CHECK: return %[[Y]]
  %s4 = graph.constant dense<[-1, 4, 2, 2]> : tensor<4xi64>
  %s3 = graph.constant dense<[-1, 4, 4]> : tensor<3xi64>
  %c = graph.constant dense<0.3> : tensor<f32>
  %q4 = graph.reshape %q, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %k4 = graph.reshape %k, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %v4 = graph.reshape %v, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %qh = graph.transpose %q4 {perm = [0, 2, 1, 3]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %kh = graph.transpose %k4 {perm = [0, 2, 3, 1]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x2x4xf32>
  %vh = graph.transpose %v4 {perm = [0, 2, 1, 3]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %mm = graph.matmul %qh, %kh : (tensor<1x2x4x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
  %sd = graph.mul %c, %mm : (tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %sm = graph.add %sd, %mask : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = graph.softmax %sm {axis = -1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %o = graph.matmul %p, %vh : (tensor<1x2x4x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
  %ot = graph.transpose %o {perm = [0, 2, 1, 3]} : (tensor<1x2x4x2xf32>) -> tensor<1x4x2x2xf32>
  %y = graph.reshape %ot, %s3 : (tensor<1x4x2x2xf32>, tensor<3xi64>) -> tensor<1x4x4xf32>
  return %y : tensor<1x4x4xf32>
}

// -----

// x / 3 is not x * (1/3): no fusion.
// CHECK-LABEL: func @div_not_power_of_two
func.func @div_not_power_of_two(%q: tensor<1x4x4xf32>, %k: tensor<1x4x4xf32>, %v: tensor<1x4x4xf32>, %mask: tensor<1x1x1x4xf32>) -> (tensor<1x4x4xf32>) {
  // CHECK-NOT: graph.attention
  // CHECK: graph.softmax
  // CHECK: return
  %s4 = graph.constant dense<[-1, 4, 2, 2]> : tensor<4xi64>
  %s3 = graph.constant dense<[-1, 4, 4]> : tensor<3xi64>
  %c = graph.constant dense<3.0> : tensor<f32>
  %q4 = graph.reshape %q, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %k4 = graph.reshape %k, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %v4 = graph.reshape %v, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %qh = graph.transpose %q4 {perm = [0, 2, 1, 3]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %kh = graph.transpose %k4 {perm = [0, 2, 3, 1]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x2x4xf32>
  %vh = graph.transpose %v4 {perm = [0, 2, 1, 3]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %mm = graph.matmul %qh, %kh : (tensor<1x2x4x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
  %sd = graph.div %mm, %c : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %sm = graph.add %sd, %mask : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32>
  %p = graph.softmax %sm {axis = -1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %o = graph.matmul %p, %vh : (tensor<1x2x4x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
  %ot = graph.transpose %o {perm = [0, 2, 1, 3]} : (tensor<1x2x4x2xf32>) -> tensor<1x4x2x2xf32>
  %y = graph.reshape %ot, %s3 : (tensor<1x4x2x2xf32>, tensor<3xi64>) -> tensor<1x4x4xf32>
  return %y : tensor<1x4x4xf32>
}

// -----

// A NaN scale (graph.attention takes finite ones only): no fusion (found
// by the mlir-input fuzzer).
// CHECK-LABEL: func @mul_scores_nan
func.func @mul_scores_nan(%q: tensor<1x4x4xf32>, %k: tensor<1x4x4xf32>, %v: tensor<1x4x4xf32>, %mask: tensor<1x1x1x4xf32>) -> (tensor<1x4x4xf32>) {
  // CHECK-NOT: graph.attention
  // CHECK: graph.softmax
  // CHECK: return
  %s4 = graph.constant dense<[-1, 4, 2, 2]> : tensor<4xi64>
  %s3 = graph.constant dense<[-1, 4, 4]> : tensor<3xi64>
  %c = graph.constant dense<0x7FC00000> : tensor<f32>
  %q4 = graph.reshape %q, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %k4 = graph.reshape %k, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %v4 = graph.reshape %v, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %qh = graph.transpose %q4 {perm = [0, 2, 1, 3]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %kh = graph.transpose %k4 {perm = [0, 2, 3, 1]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x2x4xf32>
  %vh = graph.transpose %v4 {perm = [0, 2, 1, 3]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %mm = graph.matmul %qh, %kh : (tensor<1x2x4x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
  %sd = graph.mul %mm, %c : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %sm = graph.add %sd, %mask : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32>
  %p = graph.softmax %sm {axis = -1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %o = graph.matmul %p, %vh : (tensor<1x2x4x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
  %ot = graph.transpose %o {perm = [0, 2, 1, 3]} : (tensor<1x2x4x2xf32>) -> tensor<1x4x2x2xf32>
  %y = graph.reshape %ot, %s3 : (tensor<1x4x2x2xf32>, tensor<3xi64>) -> tensor<1x4x4xf32>
  return %y : tensor<1x4x4xf32>
}

// -----

// Softmax over the queries: no fusion.
// CHECK-LABEL: func @softmax_other_axis
func.func @softmax_other_axis(%q: tensor<1x4x4xf32>, %k: tensor<1x4x4xf32>, %v: tensor<1x4x4xf32>, %mask: tensor<1x1x1x4xf32>) -> (tensor<1x4x4xf32>) {
  // CHECK-NOT: graph.attention
  // CHECK: graph.softmax
  // CHECK: return
  %s4 = graph.constant dense<[-1, 4, 2, 2]> : tensor<4xi64>
  %s3 = graph.constant dense<[-1, 4, 4]> : tensor<3xi64>
  %c = graph.constant dense<2.0> : tensor<f32>
  %q4 = graph.reshape %q, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %k4 = graph.reshape %k, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %v4 = graph.reshape %v, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %qh = graph.transpose %q4 {perm = [0, 2, 1, 3]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %kh = graph.transpose %k4 {perm = [0, 2, 3, 1]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x2x4xf32>
  %vh = graph.transpose %v4 {perm = [0, 2, 1, 3]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %mm = graph.matmul %qh, %kh : (tensor<1x2x4x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
  %sd = graph.div %mm, %c : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %sm = graph.add %sd, %mask : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32>
  %p = graph.softmax %sm {axis = 2 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %o = graph.matmul %p, %vh : (tensor<1x2x4x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
  %ot = graph.transpose %o {perm = [0, 2, 1, 3]} : (tensor<1x2x4x2xf32>) -> tensor<1x4x2x2xf32>
  %y = graph.reshape %ot, %s3 : (tensor<1x4x2x2xf32>, tensor<3xi64>) -> tensor<1x4x4xf32>
  return %y : tensor<1x4x4xf32>
}

// -----

// A mask of unknown shape: no fusion.
// CHECK-LABEL: func @dynamic_mask
func.func @dynamic_mask(%q: tensor<1x4x4xf32>, %k: tensor<1x4x4xf32>, %v: tensor<1x4x4xf32>, %mask: tensor<?x1x1x4xf32>) -> (tensor<1x4x4xf32>) {
  // CHECK-NOT: graph.attention
  // CHECK: graph.softmax
  // CHECK: return
  %s4 = graph.constant dense<[-1, 4, 2, 2]> : tensor<4xi64>
  %s3 = graph.constant dense<[-1, 4, 4]> : tensor<3xi64>
  %c = graph.constant dense<2.0> : tensor<f32>
  %q4 = graph.reshape %q, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %k4 = graph.reshape %k, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %v4 = graph.reshape %v, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %qh = graph.transpose %q4 {perm = [0, 2, 1, 3]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %kh = graph.transpose %k4 {perm = [0, 2, 3, 1]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x2x4xf32>
  %vh = graph.transpose %v4 {perm = [0, 2, 1, 3]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %mm = graph.matmul %qh, %kh : (tensor<1x2x4x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
  %sd = graph.div %mm, %c : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %sm = graph.add %sd, %mask : (tensor<1x2x4x4xf32>, tensor<?x1x1x4xf32>) -> tensor<1x2x4x4xf32>
  %p = graph.softmax %sm {axis = -1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %o = graph.matmul %p, %vh : (tensor<1x2x4x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
  %ot = graph.transpose %o {perm = [0, 2, 1, 3]} : (tensor<1x2x4x2xf32>) -> tensor<1x4x2x2xf32>
  %y = graph.reshape %ot, %s3 : (tensor<1x4x2x2xf32>, tensor<3xi64>) -> tensor<1x4x4xf32>
  return %y : tensor<1x4x4xf32>
}

// -----

// The probabilities are also returned: no fusion.
// CHECK-LABEL: func @probs_used_twice
func.func @probs_used_twice(%q: tensor<1x4x4xf32>, %k: tensor<1x4x4xf32>, %v: tensor<1x4x4xf32>, %mask: tensor<1x1x1x4xf32>) -> (tensor<1x4x4xf32>, tensor<1x2x4x4xf32>) {
  // CHECK-NOT: graph.attention
  // CHECK: graph.softmax
  // CHECK: return
  %s4 = graph.constant dense<[-1, 4, 2, 2]> : tensor<4xi64>
  %s3 = graph.constant dense<[-1, 4, 4]> : tensor<3xi64>
  %c = graph.constant dense<2.0> : tensor<f32>
  %q4 = graph.reshape %q, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %k4 = graph.reshape %k, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %v4 = graph.reshape %v, %s4 : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<1x4x2x2xf32>
  %qh = graph.transpose %q4 {perm = [0, 2, 1, 3]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %kh = graph.transpose %k4 {perm = [0, 2, 3, 1]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x2x4xf32>
  %vh = graph.transpose %v4 {perm = [0, 2, 1, 3]} : (tensor<1x4x2x2xf32>) -> tensor<1x2x4x2xf32>
  %mm = graph.matmul %qh, %kh : (tensor<1x2x4x2xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x4x4xf32>
  %sd = graph.div %mm, %c : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %sm = graph.add %sd, %mask : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32>
  %p = graph.softmax %sm {axis = -1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %o = graph.matmul %p, %vh : (tensor<1x2x4x4xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x2xf32>
  %ot = graph.transpose %o {perm = [0, 2, 1, 3]} : (tensor<1x2x4x2xf32>) -> tensor<1x4x2x2xf32>
  %y = graph.reshape %ot, %s3 : (tensor<1x4x2x2xf32>, tensor<3xi64>) -> tensor<1x4x4xf32>
  return %y, %p : tensor<1x4x4xf32>, tensor<1x2x4x4xf32>
}
