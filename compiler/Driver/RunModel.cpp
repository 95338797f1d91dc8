//===- RunModel.cpp - model-zoo test data and output comparison -----------===//

#include "mlcc/Driver/Driver.h"

#include "mlcc/Import/TensorProto.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"

#include <cmath>
#include <sys/stat.h>

namespace mlcc {

using ref::Status;
using ref::Tensor;

static bool fileExists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

Status dataSets(const std::string &dir, int maxSets,
                std::vector<std::string> &sets) {
  sets.clear();
  if (fileExists(dir + "/input_0.pb")) {
    sets.push_back(dir);
    return Status::success();
  }
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (fileExists(it->path() + "/input_0.pb"))
      sets.push_back(it->path());
  if (ec)
    return Status::error("'", dir, "': ", ec.message());
  if (sets.empty())
    return Status::error("'", dir,
                         "' has no input_0.pb, and no folder holding one");
  llvm::sort(sets);
  if (maxSets > 0 && static_cast<int>(sets.size()) > maxSets)
    sets.resize(maxSets);
  return Status::success();
}

Status readInputs(mlir::func::FuncOp func, const std::string &dir,
                  std::vector<Tensor> &inputs) {
  unsigned n = func.getNumArguments();
  inputs.assign(n, Tensor());
  for (unsigned i = 0; i < n; ++i) {
    std::string path = dir + "/input_" + std::to_string(i) + ".pb";
    if (!fileExists(path))
      return Status::error("missing '", path, "' for input '",
                           inputName(func, i), "' (the model has ", n,
                           " inputs)");
    MLCC_RETURN_IF_ERROR(onnxio::readTensorFile(path, inputs[i]));
  }
  return Status::success();
}

Status readInputShapes(const std::string &dir,
                       std::vector<std::vector<int64_t>> &shapes) {
  shapes.clear();
  for (unsigned i = 0;; ++i) {
    std::string path = dir + "/input_" + std::to_string(i) + ".pb";
    if (!fileExists(path))
      return Status::success();
    Tensor t;
    MLCC_RETURN_IF_ERROR(onnxio::readTensorFile(path, t));
    shapes.emplace_back(t.shape().begin(), t.shape().end());
  }
}

Status readExpectedOutputs(mlir::func::FuncOp func, const std::string &dir,
                           std::vector<Tensor> &outputs) {
  unsigned n = func.getNumResults();
  outputs.assign(n, Tensor());
  for (unsigned i = 0; i < n; ++i) {
    std::string path = dir + "/output_" + std::to_string(i) + ".pb";
    if (!fileExists(path))
      return Status::error("missing '", path, "' for output '",
                           outputName(func, i), "'");
    MLCC_RETURN_IF_ERROR(onnxio::readTensorFile(path, outputs[i]));
  }
  return Status::success();
}

Comparison compareTensors(const Tensor &got, const Tensor &want,
                          const Tolerance &tol) {
  Comparison c;
  if (got.dtype() != want.dtype()) {
    c.problem = std::string("type ") + ref::dtypeName(got.dtype()) +
                ", expected " + ref::dtypeName(want.dtype());
    return c;
  }
  if (got.shape() != want.shape()) {
    c.problem = "shape " + ref::shapeToString(got.shape()) + ", expected " +
                ref::shapeToString(want.shape());
    return c;
  }
  bool exact = !ref::isFloatType(want.dtype());
  for (int64_t i = 0; i < want.numel(); ++i) {
    if (exact) {
      if (got.getInt(i) != want.getInt(i)) {
        ++c.mismatches;
        c.maxAbsError = std::max(
            c.maxAbsError, std::fabs(static_cast<double>(got.getInt(i)) -
                                     static_cast<double>(want.getInt(i))));
      }
      continue;
    }
    double g = got.getDouble(i), w = want.getDouble(i);
    if (std::isnan(w) || std::isnan(g)) {
      c.mismatches += std::isnan(w) != std::isnan(g);
      continue;
    }
    if (std::isinf(w) || std::isinf(g)) {
      c.mismatches += g != w;
      continue;
    }
    double abs = std::fabs(g - w);
    double rel = abs / std::max(std::fabs(w), 1e-30);
    c.maxAbsError = std::max(c.maxAbsError, abs);
    if (abs > 0)
      c.maxRelError = std::max(c.maxRelError, rel);
    if (abs > tol.atol + tol.rtol * std::fabs(w))
      ++c.mismatches;
  }
  c.ok = c.mismatches == 0;
  return c;
}

} // namespace mlcc
