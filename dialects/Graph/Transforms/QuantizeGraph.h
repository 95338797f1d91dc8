//===- QuantizeGraph.h - Post-training int8 quantisation -----*- C++ -*-===//
//-*-===//
//
// What `mlcc compile --quantize int8` does to the simplified graph once the
// calibration (compiler/Driver/Calibration.h) has measured the activations:
// every top-level matmul, gemm, fc, conv and fused_conv with a constant f32
// weight gets its activation between a QuantizeLinear and a
// DequantizeLinear (u8, asymmetric over the calibrated range: vpdpbusd
// multiplies u8 by s8, and after a ReLU an unsigned range wastes no code)
// and its weight replaced by an s8 constant behind a DequantizeLinear
// (symmetric, one scale per output channel, so the kernels need no row
// sums). A matmul of two activations (attention's Q K^T and probs V) gets
// both sides quantised as activations. That is the standard QDQ form: the
// target's int8 kernels fold each pair into one integer GEMM or conv
// (lowering/AVX512/SelectQdqGemm.cpp); a target without them runs the same
// arithmetic in f32.
//
// Softmax, layer norm, elementwise ops and everything else stay f32.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_GRAPH_TRANSFORMS_QUANTIZEGRAPH_H
#define MLCC_GRAPH_TRANSFORMS_QUANTIZEGRAPH_H

#include "mlcc/Reference/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace mlcc::graph {

/// The range calibration chose for one activation.
struct ActivationRange {
  float min = 0, max = 0;
};

/// The activation operand of an op quantisation would take, or null: a
/// top-level matmul/gemm/fc/conv/fused_conv with an f32 activation and a
/// constant f32 weight (gemm: not transA; conv: 2-D, one group).
mlir::Value quantizableActivation(mlir::Operation *op);

/// Each top-level graph.attention of `func` as the group of ops it stands
/// for (FusedOpDecomposition.h), so that quantisation reaches its two
/// matmuls: the scores' is named NAME/scores, the context's NAME/context
/// (NAME the attention's). mlcc-fuse-attention fuses again the groups
/// that stay f32.
void decomposeAttention(mlir::func::FuncOp func);

/// A top-level f32 matmul of two activations (no constant operand, both of
/// rank 2 or more): attention's Q K^T and probs V. Both sides are
/// quantised as activations (u8, asymmetric); the int8 kernels pack B when
/// the op runs.
bool isActivationMatmul(mlir::Operation *op);

/// The inputs of `op` quantisation measures and quantises as activations:
/// both of an activation matmul, the quantizableActivation of a layer with
/// a weight, or none.
llvm::SmallVector<mlir::Value, 2> quantizedInputs(mlir::Operation *op);

/// Every such activation in `func`, in op order, each once.
std::vector<mlir::Value> quantizableActivations(mlir::func::FuncOp func);

/// u8 scale and zero point for an activation's range, widened to hold 0
/// (so that zero padding and ReLU's zeros are exact).
struct ActivationQuantization {
  float scale = 1;
  uint8_t zero = 0;
};
ActivationQuantization activationQuantization(ActivationRange range);

/// `w` (f32) as s8, symmetric per slice of `axis`: scale[c] = max |w| / 127
/// over slice c (1 for an all-zero slice), q = round(w / scale) in
/// [-127, 127].
void quantizeWeightPerChannel(const ref::Tensor &w, int64_t axis,
                              std::vector<int8_t> &q,
                              std::vector<float> &scale);

/// One layer insertQuantDequant put in QDQ form.
struct QuantizedLayer {
  /// The op's name (its NameLoc: the ONNX node, or the last node of a
  /// fused chain).
  std::string node;
  ActivationQuantization activation;
  /// The weight's axis of output channels (its per-channel scales).
  int64_t weightAxis = 0;
  /// An activation matmul's B, quantised as an activation (it has no
  /// weight; weightAxis is not read).
  std::optional<ActivationQuantization> activationB;
};

/// What insertQuantDequant did, for `--stats` and for writing the same
/// decision as a QDQ ONNX model.
struct QuantizationReport {
  std::vector<std::string> quantized; // "node 'fc1' (graph.fc)"
  std::vector<QuantizedLayer> layers; // the same, in the same order
  /// Ops left f32, each with the reason.
  std::vector<std::string> kept;
};

/// For the sensitivity measure: after every op insertQuantDequant would
/// quantise, a copy of it whose activation and weight are quantised (read
/// from the f32 network, so the copy shows that op's own error only).
/// Returns (op result, copy result) pairs, in op order.
std::vector<std::pair<mlir::Value, mlir::Value>> insertQuantizedCopies(
    mlir::func::FuncOp func,
    const llvm::DenseMap<mlir::Value, ActivationRange> &ranges);

/// Quantises every op whose activation has a range in `ranges`, except
/// those whose own error (`errors`: the relative RMS difference of the
/// op's output when only it is quantised, measured with the copies above)
/// is above `maxError`: they stay f32, and the report says why. The f32
/// weights it replaces are left for dead-code elimination.
QuantizationReport
insertQuantDequant(mlir::func::FuncOp func,
                   const llvm::DenseMap<mlir::Value, ActivationRange> &ranges,
                   const llvm::DenseMap<mlir::Operation *, double> &errors =
                       llvm::DenseMap<mlir::Operation *, double>(),
                   double maxError = INFINITY);

} // namespace mlcc::graph

#endif // MLCC_GRAPH_TRANSFORMS_QUANTIZEGRAPH_H
