// RUN: mlcc-opt %s --split-input-file --mlcc-simplify-layout-ops | FileCheck %s

// Two transposes whose composition is the identity: both go.
// CHECK-LABEL: func @transposes_cancel
func.func @transposes_cancel(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // CHECK-NEXT: %[[R:.*]] = graph.relu %arg0
  // CHECK-NEXT: return %[[R]]
  %t1 = graph.transpose %x {perm = [2, 0, 1]} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %t2 = graph.transpose %t1 {perm = [1, 2, 0]} : (tensor<4x2x3xf32>) -> tensor<2x3x4xf32>
  %r = graph.relu %t2 : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %r : tensor<2x3x4xf32>
}

// -----

// Without perm a transpose reverses the axes: twice is the identity, also
// on a function result.
// CHECK-LABEL: func @default_perms_cancel
func.func @default_perms_cancel(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // CHECK-NEXT: %[[R:.*]] = graph.relu %arg0
  // CHECK-NEXT: return %[[R]]
  %r = graph.relu %x : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %t1 = graph.transpose %r : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %t2 = graph.transpose %t1 : (tensor<4x3x2xf32>) -> tensor<2x3x4xf32>
  return %t2 : tensor<2x3x4xf32>
}

// -----

// p1 = [1, 0, 2] then p2 = [0, 2, 1]: one transpose by p1[p2[i]] = [1, 2, 0].
// CHECK-LABEL: func @transposes_compose
func.func @transposes_compose(%x: tensor<2x3x4xf32>) -> tensor<3x4x2xf32> {
  // CHECK-NEXT: %[[T:.*]] = graph.transpose %arg0 {perm = [1, 2, 0]} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  // CHECK-NEXT: return %[[T]]
  %t1 = graph.transpose %x {perm = [1, 0, 2]} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %t2 = graph.transpose %t1 {perm = [0, 2, 1]} : (tensor<3x2x4xf32>) -> tensor<3x4x2xf32>
  return %t2 : tensor<3x4x2xf32>
}

// -----

// The inner transpose has another user: it stays for that user, the outer
// one reads x directly (no op is added).
// CHECK-LABEL: func @shared_inner_transpose
func.func @shared_inner_transpose(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<2x3xf32>) {
  // CHECK-NEXT: %[[T:.*]] = graph.transpose %arg0 {perm = [1, 0]}
  // CHECK-NEXT: %[[N:.*]] = graph.neg %arg0
  // CHECK-NEXT: return %[[T]], %[[N]]
  %t1 = graph.transpose %x {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %t2 = graph.transpose %t1 {perm = [1, 0]} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %n = graph.neg %t2 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %t1, %n : tensor<3x2xf32>, tensor<2x3xf32>
}

// -----

// An identity transpose goes, but a function result does not become an
// argument.
// CHECK-LABEL: func @identity_transpose
func.func @identity_transpose(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK-NEXT: %[[T:.*]] = graph.transpose %arg0 {perm = [0, 1]}
  // CHECK-NEXT: %[[E:.*]] = graph.exp %arg0
  // CHECK-NEXT: return %[[T]], %[[E]]
  %t1 = graph.transpose %x {perm = [0, 1]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %t2 = graph.transpose %x {perm = [0, 1]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %e = graph.exp %t2 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %t1, %e : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// squeeze, unsqueeze, flatten and reshape chains: one reshape to the last
// static shape, with a shape constant of its own.
// CHECK-LABEL: func @reshape_chains
func.func @reshape_chains(%x: tensor<1x6x4xf32>) -> (tensor<3x8xf32>, tensor<24x1xf32>) {
  // CHECK-DAG: %[[S1:.*]] = graph.constant dense<[3, 8]> : tensor<2xi64>
  // CHECK-DAG: %[[S2:.*]] = graph.constant dense<[24, 1]> : tensor<2xi64>
  // CHECK-DAG: graph.reshape %arg0, %[[S1]] : (tensor<1x6x4xf32>, tensor<2xi64>) -> tensor<3x8xf32>
  // CHECK-DAG: graph.reshape %arg0, %[[S2]] : (tensor<1x6x4xf32>, tensor<2xi64>) -> tensor<24x1xf32>
  // CHECK-NOT: graph.squeeze
  // CHECK-NOT: graph.unsqueeze
  // CHECK-NOT: graph.flatten
  %a0 = graph.constant dense<[0]> : tensor<1xi64>
  %a2 = graph.constant dense<[2]> : tensor<1xi64>
  %s = graph.constant dense<[3, 8]> : tensor<2xi64>
  %sq = graph.squeeze %x, %a0 : (tensor<1x6x4xf32>, tensor<1xi64>) -> tensor<6x4xf32>
  %un = graph.unsqueeze %sq, %a2 : (tensor<6x4xf32>, tensor<1xi64>) -> tensor<6x4x1xf32>
  %r = graph.reshape %un, %s : (tensor<6x4x1xf32>, tensor<2xi64>) -> tensor<3x8xf32>
  %f = graph.flatten %x {axis = 3} : (tensor<1x6x4xf32>) -> tensor<24x1xf32>
  %u2 = graph.unsqueeze %f, %a2 : (tensor<24x1xf32>, tensor<1xi64>) -> tensor<24x1x1xf32>
  %f2 = graph.flatten %u2 {axis = 1} : (tensor<24x1x1xf32>) -> tensor<24x1xf32>
  return %r, %f2 : tensor<3x8xf32>, tensor<24x1xf32>
}

// -----

// A chain back to x's shape, and a reshape to x's own shape: x.
// CHECK-LABEL: func @reshapes_to_own_shape
func.func @reshapes_to_own_shape(%x: tensor<2x6xf32>) -> (tensor<2x6xf32>, tensor<2x6xf32>) {
  // CHECK-NEXT: %[[A:.*]] = graph.relu %arg0
  // CHECK-NEXT: %[[B:.*]] = graph.sigmoid %arg0
  // CHECK-NEXT: return %[[A]], %[[B]]
  %s1 = graph.constant dense<[3, 4]> : tensor<2xi64>
  %s2 = graph.constant dense<[2, -1]> : tensor<2xi64>
  %r1 = graph.reshape %x, %s1 : (tensor<2x6xf32>, tensor<2xi64>) -> tensor<3x4xf32>
  %r2 = graph.reshape %r1, %s2 : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<2x6xf32>
  %a = graph.relu %r2 : (tensor<2x6xf32>) -> tensor<2x6xf32>
  %r3 = graph.reshape %x, %s2 : (tensor<2x6xf32>, tensor<2xi64>) -> tensor<2x6xf32>
  %b = graph.sigmoid %r3 : (tensor<2x6xf32>) -> tensor<2x6xf32>
  return %a, %b : tensor<2x6xf32>, tensor<2x6xf32>
}

// -----

// Dynamic shapes: the chain stays (a 0 or -1 in the second shape may
// depend on the first reshape's result).
// CHECK-LABEL: func @dynamic_reshapes
func.func @dynamic_reshapes(%x: tensor<?x6xf32>) -> tensor<?x2xf32> {
  // CHECK: graph.reshape %arg0
  // CHECK: graph.reshape
  %s1 = graph.constant dense<[-1, 3]> : tensor<2xi64>
  %s2 = graph.constant dense<[-1, 2]> : tensor<2xi64>
  %r1 = graph.reshape %x, %s1 : (tensor<?x6xf32>, tensor<2xi64>) -> tensor<?x3xf32>
  %r2 = graph.reshape %r1, %s2 : (tensor<?x3xf32>, tensor<2xi64>) -> tensor<?x2xf32>
  return %r2 : tensor<?x2xf32>
}

// -----

// A transpose sinks through a chain of elementwise ops (unary, binary with
// both operands transposed the same way, binary with a one-element
// constant) down to the transpose that undoes it.
// CHECK-LABEL: func @sink_to_cancel
func.func @sink_to_cancel(%a: tensor<2x3x4xf32>, %b: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // CHECK-NEXT: %[[C:.*]] = graph.constant dense<2.000000e+00> : tensor<1xf32>
  // CHECK-NEXT: %[[S:.*]] = graph.add %arg0, %arg1 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %[[R:.*]] = graph.relu %[[S]] : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %[[M:.*]] = graph.mul %[[C]], %[[R]] : (tensor<1xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: return %[[M]]
  %c = graph.constant dense<2.0> : tensor<1xf32>
  %ta = graph.transpose %a {perm = [0, 2, 1]} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %tb = graph.transpose %b {perm = [0, 2, 1]} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %s = graph.add %ta, %tb : (tensor<2x4x3xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %r = graph.relu %s : (tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %m = graph.mul %c, %r : (tensor<1xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %t = graph.transpose %m {perm = [0, 2, 1]} : (tensor<2x4x3xf32>) -> tensor<2x3x4xf32>
  return %t : tensor<2x3x4xf32>
}

// -----

// A cast changes the element type, not the layout.
// CHECK-LABEL: func @sink_through_cast
func.func @sink_through_cast(%a: tensor<2x3xf32>) -> tensor<2x3xi32> {
  // CHECK-NEXT: %[[C:.*]] = graph.cast %arg0 {to = 6 : i64} : (tensor<2x3xf32>) -> tensor<2x3xi32>
  // CHECK-NEXT: return %[[C]]
  %t1 = graph.transpose %a {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %c = graph.cast %t1 {to = 6 : i64} : (tensor<3x2xf32>) -> tensor<3x2xi32>
  %t2 = graph.transpose %c {perm = [1, 0]} : (tensor<3x2xi32>) -> tensor<2x3xi32>
  return %t2 : tensor<2x3xi32>
}

// -----

// Clip with scalar bounds and where with every operand transposed alike.
// CHECK-LABEL: func @sink_clip_where
func.func @sink_clip_where(%c: tensor<2x3xi1>, %a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: %[[W:.*]] = graph.where %arg0, %arg1, %arg2 : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %[[C:.*]] = graph.clip %[[W]], %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> tensor<2x3xf32>
  // CHECK-NEXT: return %[[C]]
  %lo = graph.constant dense<-1.0> : tensor<f32>
  %hi = graph.constant dense<1.0> : tensor<f32>
  %tc = graph.transpose %c {perm = [1, 0]} : (tensor<2x3xi1>) -> tensor<3x2xi1>
  %ta = graph.transpose %a {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %tb = graph.transpose %b {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %w = graph.where %tc, %ta, %tb : (tensor<3x2xi1>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %k = graph.clip %w, %lo, %hi : (tensor<3x2xf32>, tensor<f32>, tensor<f32>) -> tensor<3x2xf32>
  %t = graph.transpose %k {perm = [1, 0]} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %t : tensor<2x3xf32>
}

// -----

// Dynamic shapes: the transposes do not sink.
// CHECK-LABEL: func @dynamic_sink
func.func @dynamic_sink(%a: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // CHECK: graph.transpose %arg0
  // CHECK: graph.relu
  // CHECK: graph.transpose
  %t1 = graph.transpose %a {perm = [1, 0]} : (tensor<?x3xf32>) -> tensor<3x?xf32>
  %r = graph.relu %t1 : (tensor<3x?xf32>) -> tensor<3x?xf32>
  %t2 = graph.transpose %r {perm = [1, 0]} : (tensor<3x?xf32>) -> tensor<?x3xf32>
  return %t2 : tensor<?x3xf32>
}

// -----

// Operands transposed by different perms: nothing moves.
// CHECK-LABEL: func @different_perms
func.func @different_perms(%a: tensor<2x3x4xf32>, %b: tensor<3x2x4xf32>) -> tensor<2x3x4xf32> {
  // CHECK: graph.transpose %arg0 {perm = [0, 2, 1]}
  // CHECK: graph.transpose %arg1 {perm = [1, 2, 0]}
  // CHECK: graph.add
  // CHECK: graph.transpose
  %ta = graph.transpose %a {perm = [0, 2, 1]} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %tb = graph.transpose %b {perm = [1, 2, 0]} : (tensor<3x2x4xf32>) -> tensor<2x4x3xf32>
  %s = graph.add %ta, %tb : (tensor<2x4x3xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %t = graph.transpose %s {perm = [0, 2, 1]} : (tensor<2x4x3xf32>) -> tensor<2x3x4xf32>
  return %t : tensor<2x3x4xf32>
}

// -----

// The transposed operand has another user (sinking would add a transpose),
// the other operand broadcasts along more than one element, or no
// transpose waits below: the transposes stay where they are.
// CHECK-LABEL: func @no_sinking
func.func @no_sinking(%a: tensor<2x3xf32>, %row: tensor<2xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<3x2xf32>) {
  // CHECK: %[[T1:.*]] = graph.transpose %arg0
  // CHECK: graph.relu %[[T1]]
  // CHECK: %[[T3:.*]] = graph.transpose %arg0
  // CHECK: graph.add %[[T3]], %arg1
  // CHECK: %[[T5:.*]] = graph.transpose %arg0
  // CHECK: graph.tanh %[[T5]]
  %t1 = graph.transpose %a {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %r = graph.relu %t1 : (tensor<3x2xf32>) -> tensor<3x2xf32>
  %t2 = graph.transpose %r {perm = [1, 0]} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %t3 = graph.transpose %a {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %s = graph.add %t3, %row : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %t4 = graph.transpose %s {perm = [1, 0]} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %t5 = graph.transpose %a {perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %h = graph.tanh %t5 : (tensor<3x2xf32>) -> tensor<3x2xf32>
  return %t2, %t1, %t4, %h : tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<3x2xf32>
}

// -----

// concat of inputs transposed alike: one transpose of the concat on
// axis perm[axis] = perm[2] = 1.
// CHECK-LABEL: func @concat_of_transposes
func.func @concat_of_transposes(%a: tensor<2x3x4xf32>, %b: tensor<2x5x4xf32>) -> tensor<2x4x8xf32> {
  // CHECK-NEXT: %[[C:.*]] = graph.concat %arg0, %arg1 {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x4xf32>
  // CHECK-NEXT: %[[T:.*]] = graph.transpose %[[C]] {perm = [0, 2, 1]} : (tensor<2x8x4xf32>) -> tensor<2x4x8xf32>
  // CHECK-NEXT: return %[[T]]
  %ta = graph.transpose %a {perm = [0, 2, 1]} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %tb = graph.transpose %b {perm = [0, 2, 1]} : (tensor<2x5x4xf32>) -> tensor<2x4x5xf32>
  %c = graph.concat %ta, %tb {axis = -1 : i64} : (tensor<2x4x3xf32>, tensor<2x4x5xf32>) -> tensor<2x4x8xf32>
  return %c : tensor<2x4x8xf32>
}

// -----

// Different perms, a transposed input with another user, or an input that
// is no transpose: the concats stay.
// CHECK-LABEL: func @concat_no_rewrite
func.func @concat_no_rewrite(%a: tensor<2x3x4xf32>, %b: tensor<4x2x3xf32>) -> (tensor<4x4x3xf32>, tensor<4x4x3xf32>, tensor<2x4x3xf32>, tensor<4x4x3xf32>) {
  // CHECK-COUNT-3: graph.concat
  %ta1 = graph.transpose %a {perm = [0, 2, 1]} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %tb = graph.transpose %b {perm = [1, 0, 2]} : (tensor<4x2x3xf32>) -> tensor<2x4x3xf32>
  %c1 = graph.concat %ta1, %tb {axis = 0 : i64} : (tensor<2x4x3xf32>, tensor<2x4x3xf32>) -> tensor<4x4x3xf32>
  %ta = graph.transpose %a {perm = [0, 2, 1]} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %c2 = graph.concat %ta, %ta {axis = 0 : i64} : (tensor<2x4x3xf32>, tensor<2x4x3xf32>) -> tensor<4x4x3xf32>
  %ta2 = graph.transpose %a {perm = [0, 2, 1]} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %ib = graph.identity %ta2 : (tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %ta3 = graph.transpose %a {perm = [0, 2, 1]} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %c3 = graph.concat %ta3, %ib {axis = 0 : i64} : (tensor<2x4x3xf32>, tensor<2x4x3xf32>) -> tensor<4x4x3xf32>
  return %c1, %c2, %ta, %c3 : tensor<4x4x3xf32>, tensor<4x4x3xf32>, tensor<2x4x3xf32>, tensor<4x4x3xf32>
}

// -----

// concat on axis 1 of flatten(axis 1)s of inputs that differ in dim 1:
// flatten of the concat on dim 1; on axis 0 of flatten(axis 2)s of inputs
// that differ in dim 0: flatten of the concat on dim 0.
// CHECK-LABEL: func @concat_of_flattens
func.func @concat_of_flattens(%a: tensor<2x3x4xf32>, %b: tensor<2x5x4xf32>, %c: tensor<1x3x4xf32>) -> (tensor<2x32xf32>, tensor<9x4xf32>) {
  // CHECK-DAG: %[[C1:.*]] = graph.concat %arg0, %arg1 {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x4xf32>
  // CHECK-DAG: graph.flatten %[[C1]] {axis = 1 : i64} : (tensor<2x8x4xf32>) -> tensor<2x32xf32>
  // CHECK-DAG: %[[C2:.*]] = graph.concat %arg0, %arg2 {axis = 0 : i64} : (tensor<2x3x4xf32>, tensor<1x3x4xf32>) -> tensor<3x3x4xf32>
  // CHECK-DAG: graph.flatten %[[C2]] {axis = 2 : i64} : (tensor<3x3x4xf32>) -> tensor<9x4xf32>
  %fa = graph.flatten %a {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %fb = graph.flatten %b : (tensor<2x5x4xf32>) -> tensor<2x20xf32>
  %r1 = graph.concat %fa, %fb {axis = 1 : i64} : (tensor<2x12xf32>, tensor<2x20xf32>) -> tensor<2x32xf32>
  %ga = graph.flatten %a {axis = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %gc = graph.flatten %c {axis = 2 : i64} : (tensor<1x3x4xf32>) -> tensor<3x4xf32>
  %r2 = graph.concat %ga, %gc {axis = 0 : i64} : (tensor<6x4xf32>, tensor<3x4xf32>) -> tensor<9x4xf32>
  return %r1, %r2 : tensor<2x32xf32>, tensor<9x4xf32>
}

// -----

// Concat on axis 0 of flatten(axis 2)s of inputs that differ in dim 1 (an
// axis the flatten merges into the rows), and on axis 1 of inputs that
// differ in a later flattened dim: the rows interleave, the concat stays.
// CHECK-LABEL: func @concat_of_flattens_no_rewrite
func.func @concat_of_flattens_no_rewrite(%a: tensor<2x3x4xf32>, %b: tensor<2x5x4xf32>, %c: tensor<2x3x2xf32>) -> (tensor<16x4xf32>, tensor<2x18xf32>) {
  // CHECK: graph.flatten %arg0 {axis = 2 : i64}
  // CHECK: graph.flatten %arg1 {axis = 2 : i64}
  // CHECK: graph.concat
  // CHECK: graph.flatten %arg0 {axis = 1 : i64}
  // CHECK: graph.flatten %arg2 {axis = 1 : i64}
  // CHECK: graph.concat
  %fa = graph.flatten %a {axis = 2 : i64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %fb = graph.flatten %b {axis = 2 : i64} : (tensor<2x5x4xf32>) -> tensor<10x4xf32>
  %r1 = graph.concat %fa, %fb {axis = 0 : i64} : (tensor<6x4xf32>, tensor<10x4xf32>) -> tensor<16x4xf32>
  %ga = graph.flatten %a {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %gc = graph.flatten %c {axis = 1 : i64} : (tensor<2x3x2xf32>) -> tensor<2x6xf32>
  %r2 = graph.concat %ga, %gc {axis = 1 : i64} : (tensor<2x12xf32>, tensor<2x6xf32>) -> tensor<2x18xf32>
  return %r1, %r2 : tensor<16x4xf32>, tensor<2x18xf32>
}
