//===- Normalization.h - AVX-512 softmax and layer_norm kernels -*- C++ -*-===//
//
// Generates f32 kernels that normalise each row of a [rows, cols] array
// along its last axis: softmax, log_softmax and layer_norm (with per-column
// scale and bias, or, for instance_norm, one scale and bias per row). Both
// dims are known when the kernel is generated, so the
// loops, the tail mask and 1 / cols are constants in the code; or the rows
// (and a softmax's cols) are each call's, at most the spec's, for a dim
// known only when the model runs.
//
// The kernels' signatures are those of lowering/Common/KernelABI.h:
//   void kernel(const mlcc_softmax_args *args);     softmax, log_softmax
//   void kernel(const mlcc_layer_norm_args *args);  layer_norm
// with src and dst [rows, cols] (dst may be src: in place), and gamma and
// beta [cols] (LayerNormSpec::rowAffine: [rows]).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_NORMALIZATION_H
#define MLCC_LOWERING_AVX512_KERNELS_NORMALIZATION_H

#include "mlcc/Reference/Status.h"
#include "mlcc/Reference/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlcc::avx512 {

using ref::DType;
using ref::Status;

/// Longest row a kernel takes: row offsets are 32-bit displacements.
constexpr int64_t kMaxNormalizationCols = int64_t(1) << 24;

struct SoftmaxSpec {
  /// Names the kernel in error messages (the graph op it lowers).
  std::string name = "softmax";
  /// log_softmax: (x - max) - log(sum(exp(x - max))).
  bool log = false;
  DType dtype = DType::F32;
  int64_t rows = 1, cols = 1;
  /// Read each call's rows (cols) from the args: `rows` (`cols`) is the
  /// most it may be, and `cols` stays the distance between rows.
  bool runTimeRows = false;
  bool runTimeCols = false;
  /// Over a non-last axis: [rows, cols, inner] along cols, the elements of
  /// one softmax `inner` apart (SoftmaxAxis.cpp). The kernel computes the
  /// first `columns` of the inner softmaxes (0: all of them); a thread's
  /// chunk is called with src and dst at its first column.
  int64_t inner = 1;
  int64_t columns = 0;
};

struct LayerNormSpec {
  std::string name = "layer_norm";
  DType dtype = DType::F32;
  int64_t rows = 1, cols = 1;
  /// Added to the variance before the square root; finite, >= 0.
  float epsilon = 1e-5f;
  /// skip_layer_norm: normalise src + skip (args.skip, [rows, cols]).
  bool skip = false;
  /// instance_norm: gamma and beta hold one value per row (the rows being
  /// the planes of an image's channels), not one per column.
  bool rowAffine = false;
  /// As SoftmaxSpec's.
  bool runTimeRows = false;
};

/// Generate the kernel's machine code into `code` (plain bytes, position
/// independent: copy them anywhere executable). Fail, naming spec.name, for
/// a dtype other than f32, negative dims, rows longer than
/// kMaxNormalizationCols or (layer_norm) a bad epsilon.
Status generateSoftmax(const SoftmaxSpec &spec, std::vector<uint8_t> &code);
Status generateLayerNorm(const LayerNormSpec &spec, std::vector<uint8_t> &code);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_NORMALIZATION_H
