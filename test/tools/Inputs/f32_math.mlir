// f32 exp and tanh: libdevice's __nv_expf / __nv_tanhf on cuda with a
// toolkit, MLIR's polynomials without one (test/tools/cuda-target.test).
func.func @main(%x: tensor<1000xf32> {graph.name = "x"}) -> (tensor<1000xf32> {graph.name = "e"}, tensor<1000xf32> {graph.name = "t"}) {
  %e = graph.exp %x : (tensor<1000xf32>) -> tensor<1000xf32>
  %t = graph.tanh %x : (tensor<1000xf32>) -> tensor<1000xf32>
  return %e, %t : tensor<1000xf32>, tensor<1000xf32>
}
