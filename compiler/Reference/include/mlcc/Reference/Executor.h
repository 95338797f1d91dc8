//===- Executor.h - Reference executor over the graph dialect ---*- C++ -*-===//
//
// Interprets a function of graph-dialect ops with the reference kernels. The
// oracle that every backend is checked against.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_REFERENCE_EXECUTOR_H
#define MLCC_REFERENCE_EXECUTOR_H

#include "mlcc/Reference/Kernel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <memory>
#include <vector>

namespace mlcc::ref {

class Executor {
public:
  /// `func` must outlive the executor. Attributes and constants are converted
  /// once, on first use.
  explicit Executor(mlir::func::FuncOp func);
  ~Executor();

  /// Runs the function. The inputs are checked against the argument types
  /// (dtype, rank, static dims); errors name the op that failed.
  Status run(const std::vector<Tensor> &inputs, std::vector<Tensor> &outputs);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace mlcc::ref

#endif // MLCC_REFERENCE_EXECUTOR_H
