// Recurrent cells for test/tools/recurrent.test, through the portable
// lowering (lowering/Common/Portable/Recurrent.cpp): a bidirectional LSTM
// with sequence_lens (one row of length 0), initial states, peepholes and
// clip; a bidirectional GRU with linear_before_reset and a different
// activation per direction; a reverse, batch-first GRU without it (its own
// product for the h gate); a reverse, batch-first RNN whose Y is absent.
func.func @main(%x: tensor<5x3x4xf32> {graph.name = "x"}, %w: tensor<2x24x4xf32> {graph.name = "w"}, %r: tensor<2x24x6xf32> {graph.name = "r"}, %b: tensor<2x48xf32> {graph.name = "b"}, %lens: tensor<3xi32> {graph.name = "lens"}, %h0: tensor<2x3x6xf32> {graph.name = "h0"}, %c0: tensor<2x3x6xf32> {graph.name = "c0"}, %p: tensor<2x18xf32> {graph.name = "p"}, %gw: tensor<2x18x4xf32> {graph.name = "gw"}, %gr: tensor<2x18x6xf32> {graph.name = "gr"}, %gb: tensor<2x36xf32> {graph.name = "gb"}, %xb: tensor<3x5x4xf32> {graph.name = "xb"}, %hb: tensor<3x1x6xf32> {graph.name = "hb"}, %rw: tensor<1x6x4xf32> {graph.name = "rw"}, %rr: tensor<1x6x6xf32> {graph.name = "rr"}) -> (tensor<5x2x3x6xf32> {graph.name = "lstm_y"}, tensor<2x3x6xf32> {graph.name = "lstm_h"}, tensor<2x3x6xf32> {graph.name = "lstm_c"}, tensor<5x2x3x6xf32> {graph.name = "gru_y"}, tensor<2x3x6xf32> {graph.name = "gru_h"}, tensor<3x5x1x6xf32> {graph.name = "gru_rev_y"}, tensor<3x1x6xf32> {graph.name = "rnn_h"}) {
  %none = graph.none
  %ly, %lh, %lc = graph.lstm %x, %w, %r, %b, %lens, %h0, %c0, %p {direction = "bidirectional", hidden_size = 6 : i64, clip = 1.5 : f32} : (tensor<5x3x4xf32>, tensor<2x24x4xf32>, tensor<2x24x6xf32>, tensor<2x48xf32>, tensor<3xi32>, tensor<2x3x6xf32>, tensor<2x3x6xf32>, tensor<2x18xf32>) -> (tensor<5x2x3x6xf32>, tensor<2x3x6xf32>, tensor<2x3x6xf32>)
  %gy, %gh = graph.gru %x, %gw, %gr, %gb, %lens, %h0 {direction = "bidirectional", linear_before_reset = 1 : i64, activations = ["Sigmoid", "Tanh", "HardSigmoid", "Softsign"], activation_alpha = [0.3 : f32], activation_beta = [0.4 : f32]} : (tensor<5x3x4xf32>, tensor<2x18x4xf32>, tensor<2x18x6xf32>, tensor<2x36xf32>, tensor<3xi32>, tensor<2x3x6xf32>) -> (tensor<5x2x3x6xf32>, tensor<2x3x6xf32>)
  %gw0 = graph.constant dense<0.25> : tensor<1x18x4xf32>
  %gr0 = graph.constant dense<-0.125> : tensor<1x18x6xf32>
  %ry, %rh = graph.gru %xb, %gw0, %gr0, %none, %lens, %hb {direction = "reverse", layout = 1 : i64} : (tensor<3x5x4xf32>, tensor<1x18x4xf32>, tensor<1x18x6xf32>, none, tensor<3xi32>, tensor<3x1x6xf32>) -> (tensor<3x5x1x6xf32>, tensor<3x1x6xf32>)
  %ny, %nh = graph.rnn %xb, %rw, %rr, %none, %none, %hb {direction = "reverse", layout = 1 : i64, activations = ["Relu"]} : (tensor<3x5x4xf32>, tensor<1x6x4xf32>, tensor<1x6x6xf32>, none, none, tensor<3x1x6xf32>) -> (none, tensor<3x1x6xf32>)
  return %ly, %lh, %lc, %gy, %gh, %ry, %nh : tensor<5x2x3x6xf32>, tensor<2x3x6xf32>, tensor<2x3x6xf32>, tensor<5x2x3x6xf32>, tensor<2x3x6xf32>, tensor<3x5x1x6xf32>, tensor<3x1x6xf32>
}
