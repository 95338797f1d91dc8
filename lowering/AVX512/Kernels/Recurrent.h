//===- Recurrent.h - AVX-512 f32 LSTM, GRU and RNN time steps ---*- C++ -*-===//
//
// Generates the kernel of one time step of a recurrent cell, in the manner
// of oneDNN's RNN primitive: the input projection of every step (X W^T + Wb,
// a GEMM of its own) is done before the time loop; per step the kernel
// computes the recurrent product H_{t-1} R^T and, while each block of it is
// still in registers, the gates' activations and the state update, writing
// the new h (and, for the LSTM, c):
//
//   LSTM (gates i, o, f, c):  c = f(i') c + f(f') g(c'),  h = f(o') h(c)
//   GRU, linear_before_reset (gates z, r, h):
//                             h = g(xw_h + f(r') (H Rh^T + Rbh))
//                             h = (1 - f(z')) h~ + f(z') H
//   RNN:                      h = f(xw + H R^T)
//
// where g' = xw_g + (H R^T)_g is a gate's pre-activation, with R's bias
// folded into xw (the projection's bias) except for the GRU's h gate.
//
// Interleaved gate layout
// -----------------------
// The hidden units are split in blocks of 16 (one zmm; the last may be
// shorter). Every gate-sized array the kernel reads, R^T packed and xw,
// holds the gates of one unit block side by side: column (u * G + g) * 16 +
// j is gate g of unit 16u + j (0 past the last unit), so one register block
// of the product holds all the gates of 16 units. recurrentColumn() gives
// the column of (gate, unit); R^T is packed in that column order in the
// panels of Kernels/Gemm.h (packRecurrentWeights()), and the projection
// GEMM writes xw in it when its W is packed the same way.
//
// The kernel's signature is that of lowering/Common/KernelABI.h:
//   void kernel(const mlcc_rnn_step_args *args);
// h_prev and h are [batch, hidden] (h_prev may not be h), xw [batch,
// xwStride] in the interleaved layout, c [batch, hidden] read and written in
// place, bias the GRU's Rbh in unit blocks ([ceil(hidden / 16) * 16]).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_RECURRENT_H
#define MLCC_LOWERING_AVX512_KERNELS_RECURRENT_H

#include "Eltwise.h"

#include "mlcc/Reference/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlcc::avx512 {

using ref::Status;

enum class RecurrentCell : uint8_t {
  Lstm, // gates i, o, f, c
  Gru,  // gates z, r, h, linear_before_reset = 1
  Rnn,  // one gate
};

/// Gates of a cell: 4, 3 and 1.
int64_t recurrentGates(RecurrentCell cell);

/// Columns of the interleaved layout of `hidden` units.
int64_t recurrentColumns(RecurrentCell cell, int64_t hidden);

/// The column of gate `gate`, unit `unit` in the interleaved layout.
inline int64_t recurrentColumn(int64_t gates, int64_t gate, int64_t unit) {
  return ((unit / 16) * gates + gate) * 16 + unit % 16;
}

/// Packs the [gates * hidden, k] matrix `w` (ONNX's W or R of one
/// direction: gate-major rows) as the GEMM's B = w^T, its columns in the
/// interleaved order. `packed` is resized to packedBSize(k, columns).
void packRecurrentWeights(RecurrentCell cell, const float *w, int64_t hidden,
                          int64_t k, std::vector<float> &packed);

struct RecurrentStepSpec {
  /// Names the kernel in error messages (the graph op it lowers).
  std::string name = "recurrent";
  RecurrentCell cell = RecurrentCell::Lstm;
  int64_t batch = 1, hidden = 1;
  /// Floats between rows of xw, at least recurrentColumns().
  int64_t xwStride = 0;
  /// The activations (each a chain of unary ops: a clip, then the function):
  /// f for the gates, g for the candidate, h for the LSTM's output. RNN
  /// uses f only.
  std::vector<EltwiseOp> f, g, h;
  /// Add args->bias to the GRU's recurrent product of the h gate.
  bool bias = false;
  /// Batch rows per register block, 1 to 6; 0 picks. Tests set it to reach
  /// the row tail.
  int blockRows = 0;
};

/// Generates the kernel's machine code into `code`. Fails, naming
/// spec.name, for sizes that are not positive, offsets that do not fit in
/// 31 bits, and activations that are not unary ops of the injector.
Status generateRecurrentStep(const RecurrentStepSpec &spec,
                             std::vector<uint8_t> &code);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_RECURRENT_H
