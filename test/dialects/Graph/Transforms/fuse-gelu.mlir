// RUN: mlcc-opt %s --split-input-file --mlcc-fuse-gelu | FileCheck %s

// The erf form as torch exports it (BERT): x * (1 + erf(x / sqrt 2)) * 0.5.
// CHECK-LABEL: func @erf_torch
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
func.func @erf_torch(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NOT: graph.{{div|erf|tanh|pow|add|mul}}
  // CHECK: %[[Y:.+]] = graph.gelu %[[X]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: return %[[Y]]
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %t = graph.div %x, %sqrt2 : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %e = graph.erf %t : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %a = graph.add %e, %one : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %m = graph.mul %x, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %y = graph.mul %m, %half : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// x * (1 / sqrt 2), the 0.5 on x first, every operand order reversed.
// CHECK-LABEL: func @erf_half_first_reversed
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
func.func @erf_half_first_reversed(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NOT: graph.{{div|erf|tanh|pow|add|mul}}
  // CHECK: %[[Y:.+]] = graph.gelu %[[X]] :
  // CHECK-NEXT: return %[[Y]]
  %rsqrt2 = graph.constant dense<0.707106769> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %h = graph.mul %half, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %t = graph.mul %rsqrt2, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %e = graph.erf %t : (tensor<4xf32>) -> tensor<4xf32>
  %a = graph.add %one, %e : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %y = graph.mul %a, %h : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// The 0.5 on the sum, as a division by 2; constants off by less than 1e-4
// relative (1.41421 for sqrt 2).
// CHECK-LABEL: func @erf_half_on_sum
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
func.func @erf_half_on_sum(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NOT: graph.{{div|erf|tanh|pow|add|mul}}
  // CHECK: %[[Y:.+]] = graph.gelu %[[X]] :
  // CHECK-NEXT: return %[[Y]]
  %sqrt2 = graph.constant dense<1.41421> : tensor<1xf32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %two = graph.constant dense<2.0> : tensor<f32>
  %t = graph.div %x, %sqrt2 : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %e = graph.erf %t : (tensor<4xf32>) -> tensor<4xf32>
  %a = graph.add %e, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %h = graph.div %a, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %y = graph.mul %x, %h : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// The tanh form of GPT-2's NewGELU: 0.5 * x * (1 + tanh(sqrt(2 / pi) *
// (x + 0.044715 * pow(x, 3)))), constants on the left.
// CHECK-LABEL: func @tanh_pow
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32>)
func.func @tanh_pow(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // CHECK-NOT: graph.{{div|erf|tanh|pow|add|mul}}
  // CHECK: %[[Y:.+]] = graph.gelu %[[X]] {approximate = "tanh"} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: return %[[Y]]
  %half = graph.constant dense<0.5> : tensor<f32>
  %three = graph.constant dense<3.0> : tensor<f32>
  %kappa = graph.constant dense<0.044715> : tensor<f32>
  %beta = graph.constant dense<0.797884583> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %h = graph.mul %half, %x : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %c = graph.pow %x, %three : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %p = graph.mul %kappa, %c : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = graph.add %x, %p : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %u = graph.mul %beta, %s : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %th = graph.tanh %u : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %a = graph.add %one, %th : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = graph.mul %h, %a : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// torch's own export of F.gelu(approximate="tanh") before opset 20:
// x^3 as x * (x * x), constants on the right this time, 0.5 last.
// CHECK-LABEL: func @tanh_muls
// CHECK-SAME: (%[[X:.+]]: tensor<3xf32>)
func.func @tanh_muls(%x: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK-NOT: graph.{{div|erf|tanh|pow|add|mul}}
  // CHECK: %[[Y:.+]] = graph.gelu %[[X]] {approximate = "tanh"}
  // CHECK-NEXT: return %[[Y]]
  %half = graph.constant dense<0.5> : tensor<f32>
  %kappa = graph.constant dense<0.044715> : tensor<f32>
  %beta = graph.constant dense<0.797884583> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %sq = graph.mul %x, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %c = graph.mul %x, %sq : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %p = graph.mul %c, %kappa : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %s = graph.add %p, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %u = graph.mul %s, %beta : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %th = graph.tanh %u : (tensor<3xf32>) -> tensor<3xf32>
  %a = graph.add %th, %one : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %m = graph.mul %a, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %y = graph.mul %m, %half : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// x^3 as (x * x) * x.
// CHECK-LABEL: func @tanh_square_first
// CHECK: graph.gelu %{{.+}} {approximate = "tanh"}
// CHECK-NOT: graph.tanh
func.func @tanh_square_first(%x: tensor<3xf32>) -> tensor<3xf32> {
  %half = graph.constant dense<0.5> : tensor<f32>
  %kappa = graph.constant dense<0.044715> : tensor<f32>
  %beta = graph.constant dense<0.797884583> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %sq = graph.mul %x, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %c = graph.mul %sq, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %p = graph.mul %kappa, %c : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %s = graph.add %x, %p : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %u = graph.mul %beta, %s : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %th = graph.tanh %u : (tensor<3xf32>) -> tensor<3xf32>
  %a = graph.add %one, %th : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %m = graph.mul %x, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %y = graph.mul %half, %m : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// A wrong constant (0.6, not 0.5): not a GELU, nothing changes.
// CHECK-LABEL: func @wrong_half
// CHECK-NOT: graph.gelu
// CHECK: graph.erf
func.func @wrong_half(%x: tensor<4xf32>) -> tensor<4xf32> {
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.6> : tensor<f32>
  %t = graph.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = graph.erf %t : (tensor<4xf32>) -> tensor<4xf32>
  %a = graph.add %e, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %m = graph.mul %x, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = graph.mul %m, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// sqrt 2 off by 1e-3 relative (1.4128): outside the tolerance.
// CHECK-LABEL: func @sqrt2_outside_tolerance
// CHECK-NOT: graph.gelu
// CHECK: graph.erf
func.func @sqrt2_outside_tolerance(%x: tensor<4xf32>) -> tensor<4xf32> {
  %sqrt2 = graph.constant dense<1.4128> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %t = graph.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = graph.erf %t : (tensor<4xf32>) -> tensor<4xf32>
  %a = graph.add %e, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %m = graph.mul %x, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = graph.mul %m, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// 1 + erf(...) is also a result of the function: the group stays.
// CHECK-LABEL: func @second_user
// CHECK-NOT: graph.gelu
// CHECK: graph.erf
func.func @second_user(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %t = graph.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = graph.erf %t : (tensor<4xf32>) -> tensor<4xf32>
  %a = graph.add %e, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %m = graph.mul %x, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = graph.mul %m, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %y, %a : tensor<4xf32>, tensor<4xf32>
}

// -----

// The product is not with x but with another value.
// CHECK-LABEL: func @other_value
// CHECK-NOT: graph.gelu
func.func @other_value(%x: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %t = graph.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = graph.erf %t : (tensor<4xf32>) -> tensor<4xf32>
  %a = graph.add %e, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %m = graph.mul %z, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = graph.mul %m, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// pow(x, 3.0001) is not x^3 (nan for x < 0): the exponent must be exact.
// CHECK-LABEL: func @tanh_inexact_exponent
// CHECK-NOT: graph.gelu
// CHECK: graph.tanh
func.func @tanh_inexact_exponent(%x: tensor<3xf32>) -> tensor<3xf32> {
  %half = graph.constant dense<0.5> : tensor<f32>
  %three = graph.constant dense<3.0001> : tensor<f32>
  %kappa = graph.constant dense<0.044715> : tensor<f32>
  %beta = graph.constant dense<0.797884583> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %c = graph.pow %x, %three : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %p = graph.mul %kappa, %c : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %s = graph.add %x, %p : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %u = graph.mul %beta, %s : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %th = graph.tanh %u : (tensor<3xf32>) -> tensor<3xf32>
  %a = graph.add %one, %th : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %m = graph.mul %x, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %y = graph.mul %half, %m : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// x * x is used elsewhere too: the tanh group stays.
// CHECK-LABEL: func @tanh_shared_square
// CHECK-NOT: graph.gelu
// CHECK: graph.tanh
func.func @tanh_shared_square(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %half = graph.constant dense<0.5> : tensor<f32>
  %kappa = graph.constant dense<0.044715> : tensor<f32>
  %beta = graph.constant dense<0.797884583> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %sq = graph.mul %x, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %c = graph.mul %sq, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %p = graph.mul %kappa, %c : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %s = graph.add %x, %p : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %u = graph.mul %beta, %s : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %th = graph.tanh %u : (tensor<3xf32>) -> tensor<3xf32>
  %a = graph.add %one, %th : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %m = graph.mul %x, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %y = graph.mul %half, %m : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  return %y, %sq : tensor<3xf32>, tensor<3xf32>
}

// -----

// A constant of higher rank broadcasts the result to another shape: not
// an elementwise GELU of x.
// CHECK-LABEL: func @broadcasting_constant
// CHECK-NOT: graph.gelu
func.func @broadcasting_constant(%x: tensor<4xf32>) -> tensor<1x4xf32> {
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<1x1xf32>
  %t = graph.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = graph.erf %t : (tensor<4xf32>) -> tensor<4xf32>
  %a = graph.add %e, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %m = graph.mul %x, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = graph.mul %m, %half : (tensor<4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}
