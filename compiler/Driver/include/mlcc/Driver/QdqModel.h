//===- QdqModel.h - A quantisation decision as a QDQ ONNX model -*- C++ -*-===//
//
// `mlcc quantize model.onnx --calibrate DIR -o model.qdq.onnx`: the layers
// that calibration quantised (graph::QuantizationReport::layers, found by
// their ONNX node names) written into the original model in the standard
// QDQ form: the activation through QuantizeLinear/DequantizeLinear (u8,
// the calibrated scale and zero point, one pair per tensor), the weight an
// s8 initializer, symmetric per output channel, behind a per-axis
// DequantizeLinear. Every other node and initializer is kept as it was, so
// ONNX Runtime (or any QDQ runtime, or mlcc itself) runs the arithmetic
// mlcc's int8 object runs.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_DRIVER_QDQMODEL_H
#define MLCC_DRIVER_QDQMODEL_H

#include "QuantizeGraph.h"

#include "mlcc/Reference/Status.h"

#include <string>
#include <vector>

namespace mlcc {

/// Writes `modelPath` with `report`'s layers in QDQ form to `outPath`
/// (atomically: a temporary file renamed into place). A layer that cannot
/// be written (its node is gone, or its weight is not an initializer of
/// the file) is left f32, with the reason in `skipped`. Fails on an
/// unreadable model, an opset below 13 (per-axis DequantizeLinear), or a
/// write error.
ref::Status writeQdqModel(const std::string &modelPath,
                          const graph::QuantizationReport &report,
                          const std::string &outPath,
                          std::vector<std::string> &skipped);

} // namespace mlcc

#endif // MLCC_DRIVER_QDQMODEL_H
