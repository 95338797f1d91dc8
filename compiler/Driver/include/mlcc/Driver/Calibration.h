//===- Calibration.h - int8 quantisation with calibration ----*- C++ -*-===//
//-*-===//
//
// `mlcc compile model.onnx --quantize int8 --calibrate DIR`: the fp32 model
// is compiled for avx512 with every activation a quantised layer would read
// as an extra output, run in this process on each calibration set, and the
// activations' ranges (min/max, or from histograms: entropy as TensorRT
// chooses the threshold, percentile) decide their u8 scales;
// graph::insertQuantDequant then puts the layers in QDQ form.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_DRIVER_CALIBRATION_H
#define MLCC_DRIVER_CALIBRATION_H

#include "QuantizeGraph.h"

#include "mlcc/Reference/Status.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlcc {

enum class CalibrationMethod { MinMax, Entropy, Percentile };

/// "minmax", "entropy", "percentile"; false for another name.
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
};

/// Calibrates `module`'s main function on options.dir and quantises it in
/// place.
ref::Status quantizeInt8(mlir::ModuleOp module,
                         const CalibrationOptions &options,
                         graph::QuantizationReport &report);

} // namespace mlcc

#endif // MLCC_DRIVER_CALIBRATION_H
