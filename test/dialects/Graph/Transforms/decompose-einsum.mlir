// RUN: mlcc-opt %s --split-input-file --mlcc-decompose-einsum | FileCheck %s

// Attention scores: b, h the batch, q free in the first operand, k in the
// second, d summed; the second operand is transposed to [b, h, d, k].
// CHECK-LABEL: func @attention_scores
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x8x16xf32>, %[[K:.+]]: tensor<2x4x10x16xf32>)
// CHECK-NOT: graph.einsum
// CHECK: %[[A:.+]] = graph.reshape %[[Q]], {{.*}} -> tensor<8x8x16xf32>
// CHECK: %[[KT:.+]] = graph.transpose %[[K]] {perm = [0, 1, 3, 2]}
// CHECK: %[[B:.+]] = graph.reshape %[[KT]], {{.*}} -> tensor<8x16x10xf32>
// CHECK: %[[S:.+]] = graph.matmul %[[A]], %[[B]] : (tensor<8x8x16xf32>, tensor<8x16x10xf32>) -> tensor<8x8x10xf32>
// CHECK: graph.reshape %[[S]], {{.*}} -> tensor<2x4x8x10xf32>
func.func @attention_scores(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>) -> tensor<2x4x8x10xf32> {
  %s = graph.einsum %q, %k {equation = "bhqd,bhkd->bhqk"} : (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>) -> tensor<2x4x8x10xf32>
  return %s : tensor<2x4x8x10xf32>
}

// -----

// A projection with no batch label: a 2-D matmul of the rows and the
// weights, no transpose.
// CHECK-LABEL: func @projection
// CHECK-NOT: graph.transpose
// CHECK: graph.matmul {{.*}} : (tensor<10x8xf32>, tensor<8x3xf32>) -> tensor<10x3xf32>
// CHECK: graph.reshape {{.*}} -> tensor<2x5x3xf32>
func.func @projection(%x: tensor<2x5x8xf32>) -> tensor<2x5x3xf32> {
  %w = graph.constant dense<0.5> : tensor<8x3xf32>
  %y = graph.einsum %x, %w {equation = "bsd,df->bsf"} : (tensor<2x5x8xf32>, tensor<8x3xf32>) -> tensor<2x5x3xf32>
  return %y : tensor<2x5x3xf32>
}

// -----

// The output in another order than batch, M, N: a transpose after the
// product. Spaces in the equation; an implicit output (i,i: a scalar).
// CHECK-LABEL: func @permuted_output
// CHECK: graph.matmul {{.*}} -> tensor<3x2x4xf32>
// CHECK: graph.transpose {{.*}} {perm = [2, 0, 1]} : (tensor<3x2x4xf32>) -> tensor<4x3x2xf32>
// CHECK-LABEL: func @inner_product
// CHECK: graph.matmul {{.*}} : (tensor<1x5xf32>, tensor<5x1xf32>) -> tensor<1x1xf32>
// CHECK: graph.reshape {{.*}} -> tensor<f32>
func.func @permuted_output(%x: tensor<3x2x7xf32>, %y: tensor<3x7x4xf32>) -> tensor<4x3x2xf32> {
  %z = graph.einsum %x, %y {equation = "bij, bjk -> kbi"} : (tensor<3x2x7xf32>, tensor<3x7x4xf32>) -> tensor<4x3x2xf32>
  return %z : tensor<4x3x2xf32>
}
func.func @inner_product(%x: tensor<5xf32>, %y: tensor<5xf32>) -> tensor<f32> {
  %z = graph.einsum %x, %y {equation = "i,i"} : (tensor<5xf32>, tensor<5xf32>) -> tensor<f32>
  return %z : tensor<f32>
}

// -----

// What stays an einsum: a diagonal, a label summed within one operand, a
// dim of 1 broadcast against 3, f64, three operands.
// CHECK-LABEL: func @kept
// CHECK-COUNT-5: graph.einsum
// CHECK-NOT: graph.matmul
func.func @kept(%x: tensor<3x3xf32>, %y: tensor<3xf32>, %u: tensor<1x2x4xf32>, %v: tensor<3x4x5xf32>, %d: tensor<3x3xf64>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3x2x5xf32>, tensor<3x3xf64>, tensor<3xf32>) {
  %a = graph.einsum %x, %y {equation = "ii,i->i"} : (tensor<3x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %b = graph.einsum %x, %y {equation = "ij,k->k"} : (tensor<3x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %c = graph.einsum %u, %v {equation = "bij,bjk->bik"} : (tensor<1x2x4xf32>, tensor<3x4x5xf32>) -> tensor<3x2x5xf32>
  %e = graph.einsum %d, %d {equation = "ij,jk->ik"} : (tensor<3x3xf64>, tensor<3x3xf64>) -> tensor<3x3xf64>
  %f = graph.einsum %x, %x, %y {equation = "ij,jk,k->i"} : (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %a, %b, %c, %e, %f : tensor<3xf32>, tensor<3xf32>, tensor<3x2x5xf32>, tensor<3x3xf64>, tensor<3xf32>
}
