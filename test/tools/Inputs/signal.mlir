// Signal ops for test/tools/signal.test, all through the portable lowering
// (lowering/Common/Portable/Signal.cpp), their scalar operands graph inputs
// where ONNX allows: a onesided real DFT zero-padded to a run-time odd
// dft_length (13 points, 7 bins), an inverse complex DFT truncated to a
// constant length, STFTs with a run-time frame_length and with a window,
// the three windows (periodic, symmetric; f32, f64 and f16 outputs) and a
// mel weight matrix.
func.func @main(%x: tensor<2x12x3x1xf32> {graph.name = "x"},
                %z: tensor<2x7x2xf32> {graph.name = "z"},
                %len: tensor<i64> {graph.name = "len"},
                %sig: tensor<1x100x1xf32> {graph.name = "sig"},
                %step: tensor<i64> {graph.name = "step"},
                %flen: tensor<i64> {graph.name = "flen"},
                %win: tensor<16xf32> {graph.name = "win"},
                %size: tensor<i32> {graph.name = "size"},
                %bins: tensor<i64> {graph.name = "bins"},
                %dftlen: tensor<i64> {graph.name = "dftlen"},
                %rate: tensor<f32> {graph.name = "rate"},
                %lo: tensor<f32> {graph.name = "lo"},
                %hi: tensor<f32> {graph.name = "hi"})
    -> (tensor<2x7x3x2xf32> {graph.name = "dft_padded"},
        tensor<2x5x2xf32> {graph.name = "idft_truncated"},
        tensor<1x8x11x2xf32> {graph.name = "stft_length"},
        tensor<1x9x16x2xf32> {graph.name = "stft_window"},
        tensor<9xf32> {graph.name = "hann"},
        tensor<9xf64> {graph.name = "hamming"},
        tensor<9xf16> {graph.name = "blackman"},
        tensor<16x10xf32> {graph.name = "mel"}) {
  %none = graph.none
  %five = graph.constant dense<5> : tensor<1xi64>
  %0 = graph.dft %x, %len {axis = 1 : i64, onesided = 1 : i64} : (tensor<2x12x3x1xf32>, tensor<i64>) -> tensor<2x7x3x2xf32>
  %1 = graph.dft %z, %five {axis = -2 : i64, inverse = 1 : i64} : (tensor<2x7x2xf32>, tensor<1xi64>) -> tensor<2x5x2xf32>
  %2 = graph.stft %sig, %step, %none, %flen : (tensor<1x100x1xf32>, tensor<i64>, none, tensor<i64>) -> tensor<1x8x11x2xf32>
  %3 = graph.stft %sig, %step, %win, %none {onesided = 0 : i64} : (tensor<1x100x1xf32>, tensor<i64>, tensor<16xf32>, none) -> tensor<1x9x16x2xf32>
  %4 = graph.hann_window %size : (tensor<i32>) -> tensor<9xf32>
  %5 = graph.hamming_window %size {periodic = 0 : i64, output_datatype = 11 : i64} : (tensor<i32>) -> tensor<9xf64>
  %6 = graph.blackman_window %size {periodic = 0 : i64, output_datatype = 10 : i64} : (tensor<i32>) -> tensor<9xf16>
  %7 = graph.mel_weight_matrix %bins, %dftlen, %rate, %lo, %hi : (tensor<i64>, tensor<i64>, tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<16x10xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2x7x3x2xf32>, tensor<2x5x2xf32>, tensor<1x8x11x2xf32>, tensor<1x9x16x2xf32>, tensor<9xf32>, tensor<9xf64>, tensor<9xf16>, tensor<16x10xf32>
}
