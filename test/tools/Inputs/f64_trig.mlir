// f64 sin and cos on vulkan (lowering/Vulkan/SPIRVMath.cpp: series in f64
// arithmetic, not the f32 GL instructions), test/tools/vulkan-target.test.
func.func @main(%x: tensor<2000xf64> {graph.name = "x"}) -> (tensor<2000xf64> {graph.name = "s"}, tensor<2000xf64> {graph.name = "c"}) {
  %s = graph.sin %x : (tensor<2000xf64>) -> tensor<2000xf64>
  %c = graph.cos %x : (tensor<2000xf64>) -> tensor<2000xf64>
  return %s, %c : tensor<2000xf64>, tensor<2000xf64>
}
