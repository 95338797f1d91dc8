//===- Commands.h - the subcommands of the mlcc tool ------------*- C++ -*-===//

#ifndef MLCC_TOOLS_MLCC_COMMANDS_H
#define MLCC_TOOLS_MLCC_COMMANDS_H

#include "Target.h"
#include "mlcc/Driver/Driver.h"

#include <string>
#include <vector>

namespace mlcc {
struct CalibrationOptions;
namespace graph {
struct QuantizationReport;
} // namespace graph
} // namespace mlcc

namespace mlcc::cli {

/// Options every subcommand that reads a model shares.
struct ModelOptions {
  std::string model;
  std::vector<std::string> dims; // "name=value"
  /// --trim-padding: the input whose zeros mark an item's padding along a
  /// range of lengths (mlcc/Driver/PaddingMask.h); "" for none.
  std::string trimPadding;
  /// What else fixes symbolic dims (ImportOptions::inputShapes,
  /// batchDefaultsToOne): the shapes of the data run or timed, or 1 for
  /// a batch; loadAndSimplify says on stderr what they fixed.
  std::vector<std::vector<int64_t>> dataShapes;
  /// Whether loadAndSimplify says so (not for a calibration set's shapes).
  bool noteChosenDims = true;
  bool batchDefaultsToOne = false;
  std::vector<std::string> disabledPasses;
  std::string pipeline = "simplify";
  bool printIRAfterAll = false;
  bool timing = false;
  /// Print what each pass changed (op counts), as `compile --stats` does.
  bool passChanges = false;
  /// --quantize int8 with calibration sets (mlcc/Driver/Calibration.h).
  std::string quantize;
  std::string calibrate;
  std::string calibration = "minmax";
  int calibrationSamples = 0;
  double maxLayerError = 0.05; // CalibrationOptions::maxLayerError
  /// CalibrationOptions::keepAttention: set for a range of lengths, and
  /// for the reference executor's runs of such a model, so that both
  /// quantise the same layers.
  bool keepAttention = false;
  int64_t maxWeightsBytes = ImportOptions::kDefaultMaxWeightsBytes;
};

struct CompileOptions {
  ModelOptions model;
  std::string target = "avx512";
  std::string emit = "obj";
  std::string output;
  std::string header;
  std::string name;
  std::string weights = "embedded";
  std::string weightsFile;
  lowering::TargetOptions targetOptions;
  bool stats = false;
  /// Every op through the portable lowerings, no target kernel (to test
  /// them on ops a kernel would take).
  bool portableOnly = false;
};

struct RunOptions {
  ModelOptions model;
  std::string target = "ref";
  std::string data;
  bool check = false;
  double rtol = 1e-3;
  double atol = 1e-5;
  std::string save;
  int threads = 1;
  bool portableOnly = false; // as CompileOptions::portableOnly
  lowering::TargetOptions targetOptions;
};

struct BenchOptions {
  ModelOptions model;
  std::string target = "avx512";
  std::string data;
  int threads = 1;
  int runs = 20;
  int warmup = 3;
  bool json = false;
  bool perOp = false;
  bool peak = false;
  bool portableOnly = false; // as CompileOptions::portableOnly
  std::string cpu;           // as TargetOptions::cpu
  std::string precision;     // as TargetOptions::precision
  std::string winograd;      // as TargetOptions::winograd
  std::string strassen;      // as TargetOptions::strassen
  double minParallelMicros = lowering::kDefaultMinParallelMicros;
};

struct QuantizeOptions {
  ModelOptions model;
  std::string output;
};

struct InspectOptions {
  ModelOptions model;
  /// Also compile for `target` and report its arena plan.
  bool memory = false;
  std::string target = "avx512";
};

int runCompile(const CompileOptions &options);
int runRun(const RunOptions &options);
int runInspect(const InspectOptions &options);
int runBench(const BenchOptions &options);
int runQuantize(const QuantizeOptions &options);

/// Loads the model and runs the chosen pipeline (then --quantize, whose
/// report goes to `report` when given); prints errors to stderr. Null on
/// failure.
mlir::OwningOpRef<mlir::ModuleOp>
loadAndSimplify(mlir::MLIRContext &ctx, const ModelOptions &options,
                graph::QuantizationReport *report = nullptr);

/// --quantize int8's calibration options, with the model loaded at each
/// calibration set's shapes where they are not the quantised module's;
/// false after printing what is missing.
bool calibrationOptions(mlir::MLIRContext &ctx, const ModelOptions &options,
                        CalibrationOptions &calibration);

/// What --quantize put in int8 and kept in f32 (`--stats`).
void printQuantization(const graph::QuantizationReport &report);

/// With --quantize on a --target avx512 --cpu without AVX512-VNNI, says on
/// stderr that the int8 kernels are not used (and which CPUs have them).
void noteInt8Kernels(const ModelOptions &model, const std::string &target,
                     const std::string &cpu);

/// The C identifier a model gets by default: its file's stem.
std::string defaultModelName(const std::string &modelPath);

/// Prints "mlcc: error: <line>" for each line.
void printErrors(const std::vector<std::string> &errors);

} // namespace mlcc::cli

#endif // MLCC_TOOLS_MLCC_COMMANDS_H
