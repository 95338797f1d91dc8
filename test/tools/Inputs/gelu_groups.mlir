// GELU as exporters write it (test/tools/gelu.test): the erf form of BERT,
// the tanh form of GPT-2 with pow, and torch's tanh export in f64 (which
// the avx512 target leaves to the portable lowering). mlcc-fuse-gelu turns
// each group into one graph.gelu.
func.func @main(%x: tensor<2x37xf32> {graph.name = "x"}) -> (tensor<2x37xf32> {graph.name = "erf"}, tensor<2x37xf32> {graph.name = "tanh"}, tensor<2x37xf64> {graph.name = "tanh_f64"}) {
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %t = graph.div %x, %sqrt2 : (tensor<2x37xf32>, tensor<f32>) -> tensor<2x37xf32>
  %e = graph.erf %t : (tensor<2x37xf32>) -> tensor<2x37xf32>
  %a = graph.add %e, %one : (tensor<2x37xf32>, tensor<f32>) -> tensor<2x37xf32>
  %m = graph.mul %x, %a : (tensor<2x37xf32>, tensor<2x37xf32>) -> tensor<2x37xf32>
  %y1 = graph.mul %m, %half : (tensor<2x37xf32>, tensor<f32>) -> tensor<2x37xf32>

  %three = graph.constant dense<3.0> : tensor<f32>
  %kappa = graph.constant dense<0.044715> : tensor<f32>
  %beta = graph.constant dense<0.797884583> : tensor<f32>
  %h = graph.mul %half, %x : (tensor<f32>, tensor<2x37xf32>) -> tensor<2x37xf32>
  %c = graph.pow %x, %three : (tensor<2x37xf32>, tensor<f32>) -> tensor<2x37xf32>
  %p = graph.mul %kappa, %c : (tensor<f32>, tensor<2x37xf32>) -> tensor<2x37xf32>
  %s = graph.add %x, %p : (tensor<2x37xf32>, tensor<2x37xf32>) -> tensor<2x37xf32>
  %u = graph.mul %beta, %s : (tensor<f32>, tensor<2x37xf32>) -> tensor<2x37xf32>
  %th = graph.tanh %u : (tensor<2x37xf32>) -> tensor<2x37xf32>
  %q = graph.add %one, %th : (tensor<f32>, tensor<2x37xf32>) -> tensor<2x37xf32>
  %y2 = graph.mul %h, %q : (tensor<2x37xf32>, tensor<2x37xf32>) -> tensor<2x37xf32>

  %xd = graph.cast %x {to = 11 : i64} : (tensor<2x37xf32>) -> tensor<2x37xf64>
  %oned = graph.constant dense<1.0> : tensor<f64>
  %halfd = graph.constant dense<0.5> : tensor<f64>
  %kappad = graph.constant dense<0.044714999999999998> : tensor<f64>
  %betad = graph.constant dense<0.79788456080286541> : tensor<f64>
  %sqd = graph.mul %xd, %xd : (tensor<2x37xf64>, tensor<2x37xf64>) -> tensor<2x37xf64>
  %cd = graph.mul %xd, %sqd : (tensor<2x37xf64>, tensor<2x37xf64>) -> tensor<2x37xf64>
  %pd = graph.mul %kappad, %cd : (tensor<f64>, tensor<2x37xf64>) -> tensor<2x37xf64>
  %sd = graph.add %xd, %pd : (tensor<2x37xf64>, tensor<2x37xf64>) -> tensor<2x37xf64>
  %ud = graph.mul %betad, %sd : (tensor<f64>, tensor<2x37xf64>) -> tensor<2x37xf64>
  %thd = graph.tanh %ud : (tensor<2x37xf64>) -> tensor<2x37xf64>
  %qd = graph.add %oned, %thd : (tensor<f64>, tensor<2x37xf64>) -> tensor<2x37xf64>
  %md = graph.mul %xd, %qd : (tensor<2x37xf64>, tensor<2x37xf64>) -> tensor<2x37xf64>
  %y3 = graph.mul %halfd, %md : (tensor<f64>, tensor<2x37xf64>) -> tensor<2x37xf64>
  return %y1, %y2, %y3 : tensor<2x37xf32>, tensor<2x37xf32>, tensor<2x37xf64>
}
