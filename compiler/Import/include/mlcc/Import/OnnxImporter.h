//===- OnnxImporter.h - ONNX model -> graph dialect -------------*- C++ -*-===//

#ifndef MLCC_IMPORT_ONNXIMPORTER_H
#define MLCC_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mlcc {

struct ImportOptions {
  /// Values for symbolic dimensions (`--dim batch=1`); others stay dynamic.
  std::map<std::string, int64_t> dims;
  /// The shapes of the graph inputs in some data (input_N.pb, in order; an
  /// empty entry for an input without one): a dynamic dim that `dims` does
  /// not fix takes its value from there, named or not (a name takes the
  /// value of the first input that has it).
  std::vector<std::vector<int64_t>> inputShapes;
  /// A dynamic dim that neither fixes and that looks like a batch (its name
  /// has "batch" in it or is "N"; unnamed, the first dim) becomes 1.
  bool batchDefaultsToOne = false;
  /// When not null: "name=value" (or "input 'x' dim 0=value" for an
  /// unnamed dim) for each dim that inputShapes or batchDefaultsToOne
  /// fixed, for the user to see.
  std::vector<std::string> *chosenDims = nullptr;
  /// The most bytes the initializers and tensor attributes (Constant
  /// values) may declare together (`mlcc compile --max-weights-bytes`);
  /// a model past it is refused before its tensors are read. 0: no limit.
  int64_t maxWeightsBytes = kDefaultMaxWeightsBytes;
  static constexpr int64_t kDefaultMaxWeightsBytes = int64_t(32) << 30;
};

/// Imports the model at `path` into a module with one function, @main, whose
/// arguments and results carry the ONNX names in `graph.name`. On failure
/// returns null and fills `errors` with one line per problem (node name, op
/// type, opset and what is wrong).
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxModel(mlir::MLIRContext *ctx, const std::string &path,
                const ImportOptions &options, std::vector<std::string> &errors);

/// As importOnnxModel for a model file's bytes already in memory: external
/// data is read relative to `baseDir`, and `what` names the model in
/// messages ("'model.onnx'").
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxModelBytes(mlir::MLIRContext *ctx, const std::string &bytes,
                     const std::string &baseDir, const std::string &what,
                     const ImportOptions &options,
                     std::vector<std::string> &errors);

} // namespace mlcc

#endif // MLCC_IMPORT_ONNXIMPORTER_H
