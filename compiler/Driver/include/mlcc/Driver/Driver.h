//===- Driver.h - load, simplify and run models -----------------*- C++ -*-===//
//
// What tools/ and tests share: loading a model (.onnx or graph-dialect .mlir)
// into a module, running the pipelines, and running it on the reference
// executor against model-zoo test data.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_DRIVER_DRIVER_H
#define MLCC_DRIVER_DRIVER_H

#include "mlcc/Import/OnnxImporter.h"
#include "mlcc/Pipelines/Pipelines.h"
#include "mlcc/Reference/Status.h"
#include "mlcc/Reference/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace mlcc {

void registerDialects(mlir::DialectRegistry &registry);

/// Loads an ONNX model or graph-dialect MLIR (by extension). Errors: one line
/// per problem.
mlir::OwningOpRef<mlir::ModuleOp> loadModel(mlir::MLIRContext &ctx,
                                            const std::string &path,
                                            const ImportOptions &options,
                                            std::vector<std::string> &errors);

/// Runs `pm`, collecting diagnostics as error lines.
mlir::LogicalResult runPasses(mlir::ModuleOp module, mlir::PassManager &pm,
                              std::vector<std::string> &errors);

/// The model's entry function (@main, or the only function).
mlir::func::FuncOp mainFunction(mlir::ModuleOp module);

/// Name of input/output `i` (`graph.name`, else "input_i"/"output_i").
std::string inputName(mlir::func::FuncOp func, unsigned i);
std::string outputName(mlir::func::FuncOp func, unsigned i);

/// The test-data sets under `dir`, in name order (at most maxSets, 0 for
/// all): `dir` itself when it holds input_0.pb, else its subfolders that do
/// (the model zoo's test_data_set_N). An error when there is none.
ref::Status dataSets(const std::string &dir, int maxSets,
                     std::vector<std::string> &sets);

/// Reads DIR/input_N.pb, N = 0.. up to the function's input count.
ref::Status readInputs(mlir::func::FuncOp func, const std::string &dir,
                       std::vector<ref::Tensor> &inputs);
/// The shapes of DIR/input_0.pb, input_1.pb, ... (up to the first one
/// missing), for ImportOptions::inputShapes.
ref::Status readInputShapes(const std::string &dir,
                            std::vector<std::vector<int64_t>> &shapes);
/// Reads DIR/output_N.pb for every output the function has.
ref::Status readExpectedOutputs(mlir::func::FuncOp func,
                                const std::string &dir,
                                std::vector<ref::Tensor> &outputs);

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
};

/// The comparison of one output with its expected value.
struct Comparison {
  bool ok = false;
  std::string problem; // dtype or shape mismatch, empty otherwise
  double maxAbsError = 0;
  double maxRelError = 0;
  int64_t mismatches = 0; // elements outside atol + rtol * |expected|
};

/// Elementwise |got - want| <= atol + rtol * |want|; NaN matches NaN and
/// infinities must match exactly; integer and bool outputs compare exactly.
Comparison compareTensors(const ref::Tensor &got, const ref::Tensor &want,
                          const Tolerance &tol);

} // namespace mlcc

#endif // MLCC_DRIVER_DRIVER_H
