//===- RunCommand.cpp - mlcc run ------------------------------------------===//

#include "Commands.h"

#include "mlcc/Driver/CompiledModelRunner.h"
#include "mlcc/Import/TensorProto.h"
#include "mlcc/Reference/Executor.h"

#include "mlir/IR/MLIRContext.h"

#include <cstdio>
#include <iostream>

using namespace mlir;

namespace mlcc::cli {

/// "[1x1000] f32: 0.0123 -1.5 ..." : the first values, enough to eyeball.
static void printSummary(const std::string &name, const ref::Tensor &t) {
  std::printf("output '%s': %s %s:", name.c_str(), ref::dtypeName(t.dtype()),
              ref::shapeToString(t.shape()).c_str());
  int64_t n = std::min<int64_t>(t.numel(), 8);
  for (int64_t i = 0; i < n; ++i)
    std::printf(" %.6g", t.getDouble(i));
  if (t.numel() > n)
    std::printf(" ...");
  std::printf("\n");
}

static ref::Status compileAndRun(ModuleOp module, const std::string &target,
                                 const std::string &name, int threads,
                                 bool portableOnly,
                                 const lowering::TargetOptions &targetOptions,
                                 const std::vector<ref::Tensor> &inputs,
                                 std::vector<ref::Tensor> &outputs) {
  lowering::CompileModelOptions options;
  options.name = name;
  options.targetKernels = !portableOnly;
  options.target = targetOptions;
  mlcc_threadpool *pool = nullptr;
  if (threads != 1 && mlcc_threadpool_create(threads, &pool) != MLCC_OK)
    return ref::Status::error(mlcc_last_error_message());
  std::unique_ptr<CompiledModelRunner> runner;
  ref::Status s =
      CompiledModelRunner::compileAndLoad(module, target, options, pool, runner);
  if (s.ok())
    s = runner->run(inputs, outputs);
  runner.reset();
  mlcc_threadpool_destroy(pool);
  return s;
}

int runRun(const RunOptions &options) {
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module = loadAndSimplify(ctx, options.model);
  if (!module)
    return 1;
  func::FuncOp func = mainFunction(*module);
  std::vector<ref::Tensor> inputs, outputs, expected;
  ref::Status s = readInputs(func, options.data, inputs);
  if (s.ok() && options.check)
    s = readExpectedOutputs(func, options.data, expected);
  if (s.failed()) {
    printErrors({s.message()});
    return 1;
  }
  if (options.target == "ref") {
    ref::Executor executor(func);
    s = executor.run(inputs, outputs);
  } else {
    s = compileAndRun(*module, options.target,
                      defaultModelName(options.model.model), options.threads,
                      options.portableOnly, options.targetOptions, inputs,
                      outputs);
  }
  if (s.failed()) {
    printErrors({"running the model failed: " + s.message()});
    return 1;
  }
  bool allOk = true;
  Tolerance tol{options.rtol, options.atol};
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string name = outputName(func, i);
    printSummary(name, outputs[i]);
    if (!options.check)
      continue;
    Comparison c = compareTensors(outputs[i], expected[i], tol);
    if (!c.problem.empty())
      std::printf("  MISMATCH: %s\n", c.problem.c_str());
    else
      std::printf("  %s: max abs error %.3g, max rel error %.3g, %lld of "
                  "%lld elements outside atol %g + rtol %g\n",
                  c.ok ? "OK" : "MISMATCH", c.maxAbsError, c.maxRelError,
                  static_cast<long long>(c.mismatches),
                  static_cast<long long>(expected[i].numel()), tol.atol,
                  tol.rtol);
    allOk &= c.ok;
  }
  if (!options.save.empty()) {
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::string path =
          options.save + "/output_" + std::to_string(i) + ".pb";
      ref::Status w =
          onnxio::writeTensorFile(path, outputs[i], outputName(func, i));
      if (w.failed()) {
        printErrors({w.message()});
        return 1;
      }
    }
  }
  if (options.check)
    std::printf("%s\n", allOk ? "check passed" : "check FAILED");
  return allOk ? 0 : 1;
}

} // namespace mlcc::cli
