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
};

/// Imports the model at `path` into a module with one function, @main, whose
/// arguments and results carry the ONNX names in `graph.name`. On failure
/// returns null and fills `errors` with one line per problem (node name, op
/// type, opset and what is wrong).
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxModel(mlir::MLIRContext *ctx, const std::string &path,
                const ImportOptions &options, std::vector<std::string> &errors);

} // namespace mlcc

#endif // MLCC_IMPORT_ONNXIMPORTER_H
