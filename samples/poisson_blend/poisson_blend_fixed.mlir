// The fixed-length variant of poisson_blend.mlir: the same Jacobi update
// in a graph.for of 400 iterations (no convergence test, no reduction),
// for a run whose time must not depend on the images. See that file for
// the method; `iterations` is 400.
func.func @main(%source: tensor<3x1x64x64xf32> {graph.name = "source"},
                %background: tensor<3x1x64x64xf32> {graph.name = "background"},
                %mask: tensor<1x1x64x64xf32> {graph.name = "mask"},
                %from_source: tensor<i1> {graph.name = "from_source"})
    -> (tensor<3x1x64x64xf32> {graph.name = "blended"},
        tensor<i64> {graph.name = "iterations"}) {
  %edge_filter = graph.constant dense<[[[[0.0, -1.0, 0.0], [-1.0, 4.0, -1.0], [0.0, -1.0, 0.0]]]]> : tensor<1x1x3x3xf32>
  %neighbours = graph.constant dense<[[[[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]]]> : tensor<1x1x3x3xf32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %quarter = graph.constant dense<0.25> : tensor<f32>

  %guide = graph.stencil %source, %edge_filter {padding = "clamp"} : (tensor<3x1x64x64xf32>, tensor<1x1x3x3xf32>) -> tensor<3x1x64x64xf32> loc("edge_filter")
  %outside = graph.sub %one, %mask : (tensor<f32>, tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32>
  %kept = graph.mul %background, %outside : (tensor<3x1x64x64xf32>, tensor<1x1x64x64xf32>) -> tensor<3x1x64x64xf32>
  %init = graph.if %from_source : tensor<i1> -> (tensor<3x1x64x64xf32>) {
    %pasted = graph.mul %source, %mask : (tensor<3x1x64x64xf32>, tensor<1x1x64x64xf32>) -> tensor<3x1x64x64xf32>
    %copied = graph.add %pasted, %kept : (tensor<3x1x64x64xf32>, tensor<3x1x64x64xf32>) -> tensor<3x1x64x64xf32>
    graph.yield %copied : tensor<3x1x64x64xf32>
  } else {
    graph.yield %background : tensor<3x1x64x64xf32>
  } loc("init")

  %count = graph.constant dense<400> : tensor<i64>
  %blended = graph.for %count : tensor<i64> iter_args(%init : tensor<3x1x64x64xf32>) -> (tensor<3x1x64x64xf32>) {
  ^bb0(%i: tensor<i64>, %f: tensor<3x1x64x64xf32>):
    %n = graph.stencil %f, %neighbours {padding = "clamp"} : (tensor<3x1x64x64xf32>, tensor<1x1x3x3xf32>) -> tensor<3x1x64x64xf32> loc("neighbour_sum")
    %g = graph.add %n, %guide : (tensor<3x1x64x64xf32>, tensor<3x1x64x64xf32>) -> tensor<3x1x64x64xf32>
    %q = graph.mul %g, %quarter : (tensor<3x1x64x64xf32>, tensor<f32>) -> tensor<3x1x64x64xf32>
    %inside = graph.mul %q, %mask : (tensor<3x1x64x64xf32>, tensor<1x1x64x64xf32>) -> tensor<3x1x64x64xf32>
    %next = graph.add %inside, %kept : (tensor<3x1x64x64xf32>, tensor<3x1x64x64xf32>) -> tensor<3x1x64x64xf32>
    graph.yield %next : tensor<3x1x64x64xf32>
  } loc("solver")
  return %blended, %count : tensor<3x1x64x64xf32>, tensor<i64>
}
