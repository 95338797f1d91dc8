//===- Calibration.h - int8 quantisation with calibration ----*- C++ -*-===//
//-*-===//
//
// `mlcc compile model.onnx --quantize int8 --calibrate DIR`: the fp32 model
// is compiled for avx512 with every activation a quantised layer would read
// as an extra output, run in this process on each calibration set, and the
// activations' ranges (min/max, or from histograms: entropy as TensorRT
// chooses the threshold, percentile) decide their u8 scales;
// graph::insertQuantDequant then puts the layers in QDQ form. A second
// probe measures each layer's own int8 error (its output with only its
// activation and weight quantised, against f32): a layer above
// --max-layer-error stays f32 (an activation with far outliers, a layer
// of few inputs), and --stats shows every layer's figure.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_DRIVER_CALIBRATION_H
#define MLCC_DRIVER_CALIBRATION_H

#include "QuantizeGraph.h"

#include "mlcc/Reference/Status.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlcc {

enum class CalibrationMethod { MinMax, Entropy, Percentile, Mse };

/// "minmax", "entropy", "percentile", "mse"; false for another name.
bool parseCalibrationMethod(const std::string &name, CalibrationMethod &out);

struct CalibrationOptions {
  /// A folder of input_N.pb, or of sets (test_data_set_0/input_N.pb, ...:
  /// the model zoo's layout), each one run of the model.
  std::string dir;
  CalibrationMethod method = CalibrationMethod::MinMax;
  /// Sets used, in name order; 0 for all.
  int maxSamples = 0;
  /// Percentile: the fraction of values kept inside the range, per side.
  double percentile = 99.999;
  /// A progress line on stderr while the sets run.
  bool progress = true;
  /// An op whose own int8 error (the relative RMS difference of its
  /// output with only it quantised, on the first calibration sets) is
  /// above this stays f32; INFINITY skips the measure.
  double maxLayerError = 0.05;
  /// Each graph.attention stays one f32 op (its two matmuls are not
  /// quantised): a variant of a range of lengths runs it over the run's
  /// keys only, which its decomposed matmuls would not.
  bool keepAttention = false;
  /// The model at other input shapes (one per input), simplified as the
  /// module calibrateInt8 is given: each calibration set then runs at its
  /// own shapes (sets of several lengths for a model with symbolic dims).
  /// Without it every set must be of the module's shapes.
  std::function<ref::Status(const std::vector<std::vector<int64_t>> &shapes,
                            mlir::OwningOpRef<mlir::ModuleOp> &out)>
      atShapes;
};

/// Calibrates `module`'s main function on options.dir and quantises it in
/// place.
ref::Status quantizeInt8(mlir::ModuleOp module,
                         const CalibrationOptions &options,
                         graph::QuantizationReport &report);

/// What calibration decided, by position, so that the same decision can
/// quantise the model at other shapes (the variants of a batch range):
/// the range of the i-th quantizable activation (none where no set gave
/// it a finite value), and the own error of the op at each position of
/// the main function's body that the sensitivity measure saw.
struct Int8Calibration {
  std::vector<std::optional<graph::ActivationRange>> ranges;
  std::vector<std::pair<unsigned, double>> errors;
  /// CalibrationOptions::keepAttention, which the positions assume.
  bool keepAttention = false;
};

/// quantizeInt8's two halves: calibrateInt8 runs `module` (at the
/// calibration data's shapes) on the sets; applyInt8 puts a module of the
/// same layers in QDQ form with that decision, or says that its layers
/// differ.
ref::Status calibrateInt8(mlir::ModuleOp module,
                          const CalibrationOptions &options,
                          Int8Calibration &out);
ref::Status applyInt8(mlir::ModuleOp module, const Int8Calibration &calibration,
                      double maxLayerError, graph::QuantizationReport &report);

} // namespace mlcc

#endif // MLCC_DRIVER_CALIBRATION_H
