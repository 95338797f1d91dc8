// Poisson image blending (MPSGraph's compositing demo) as a graph: paste the
// masked part of `source` into `background` so that inside the mask the
// result has the source's edges (its Laplacian) and on the mask's border
// it meets the background without a seam.
//
// Inputs are planes [3 colours, 1, H, W] in [0, 1]; `mask` is 1 inside the
// region. The Laplacian of the source is an edge filter, a graph.stencil;
// the solver is Jacobi iteration in a graph.while: inside the mask
//   f <- (sum of f's 4 neighbours + laplacian(source)) / 4
// and outside it f stays the background, until the largest change of an
// iteration is at most `tol` (or after `max_iterations`). `from_source`
// picks the start: the source pasted in (true) or the background (false).
// Outputs: the blended planes and the number of iterations.
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
  %tol = graph.constant dense<1.0e-4> : tensor<f32>
  %max_iterations = graph.constant dense<5000> : tensor<i64>
  %zero_i = graph.constant dense<0> : tensor<i64>
  %one_i = graph.constant dense<1> : tensor<i64>
  %big = graph.constant dense<1.0e+30> : tensor<f32>

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

  %blended, %change, %iterations = graph.while iter_args(%init, %big, %zero_i : tensor<3x1x64x64xf32>, tensor<f32>, tensor<i64>) -> (tensor<3x1x64x64xf32>, tensor<f32>, tensor<i64>) cond {
  ^bb0(%f: tensor<3x1x64x64xf32>, %d: tensor<f32>, %k: tensor<i64>):
    %moving = graph.greater %d, %tol : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %budget = graph.less %k, %max_iterations : (tensor<i64>, tensor<i64>) -> tensor<i1>
    %more = graph.and %moving, %budget : (tensor<i1>, tensor<i1>) -> tensor<i1>
    graph.condition %more, %f, %d, %k : tensor<i1>, tensor<3x1x64x64xf32>, tensor<f32>, tensor<i64>
  } do {
  ^bb0(%f: tensor<3x1x64x64xf32>, %d: tensor<f32>, %k: tensor<i64>):
    %n = graph.stencil %f, %neighbours {padding = "clamp"} : (tensor<3x1x64x64xf32>, tensor<1x1x3x3xf32>) -> tensor<3x1x64x64xf32> loc("neighbour_sum")
    %g = graph.add %n, %guide : (tensor<3x1x64x64xf32>, tensor<3x1x64x64xf32>) -> tensor<3x1x64x64xf32>
    %q = graph.mul %g, %quarter : (tensor<3x1x64x64xf32>, tensor<f32>) -> tensor<3x1x64x64xf32>
    %inside = graph.mul %q, %mask : (tensor<3x1x64x64xf32>, tensor<1x1x64x64xf32>) -> tensor<3x1x64x64xf32>
    %next = graph.add %inside, %kept : (tensor<3x1x64x64xf32>, tensor<3x1x64x64xf32>) -> tensor<3x1x64x64xf32>
    %delta = graph.sub %next, %f : (tensor<3x1x64x64xf32>, tensor<3x1x64x64xf32>) -> tensor<3x1x64x64xf32>
    %size = graph.abs %delta : (tensor<3x1x64x64xf32>) -> tensor<3x1x64x64xf32>
    %largest = graph.reduce_max %size {keepdims = 0 : i64} : (tensor<3x1x64x64xf32>) -> tensor<f32>
    %k1 = graph.add %k, %one_i : (tensor<i64>, tensor<i64>) -> tensor<i64>
    graph.yield %next, %largest, %k1 : tensor<3x1x64x64xf32>, tensor<f32>, tensor<i64>
  } loc("solver")
  return %blended, %iterations : tensor<3x1x64x64xf32>, tensor<i64>
}
