//===- RunCommand.cpp - mlcc run ------------------------------------------===//

#include "Commands.h"
#include "ShapeVariants.h"

#include "mlcc/Driver/CompiledModelRunner.h"
#include "mlcc/Import/TensorProto.h"
#include "mlcc/Reference/Executor.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

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

/// The model on the reference executor or compiled for a target (once, for
/// every set).
class ModelRunner {
public:
  /// `modules` are the model at each shape of one object (ShapeVariants).
  ref::Status init(llvm::ArrayRef<ModuleOp> modules,
                   const std::optional<InterfaceRange> &range,
                   const std::optional<InterfacePaddedDim> &padded,
                   const RunOptions &options) {
    if (options.target == "ref") {
      executor = std::make_unique<ref::Executor>(mainFunction(modules[0]));
      return ref::Status::success();
    }
    lowering::CompileModelOptions compile;
    compile.range = range;
    compile.padded = padded;
    compile.name = defaultModelName(options.model.model);
    compile.targetKernels = !options.portableOnly;
    compile.target = options.targetOptions;
    if (options.threads != 1 &&
        mlcc_threadpool_create(options.threads, &pool) != MLCC_OK)
      return ref::Status::error(mlcc_last_error_message());
    lowering::CompiledModel compiled;
    MLCC_RETURN_IF_ERROR(
        compileForTarget(modules, options.target, compile, compiled));
    return CompiledModelRunner::load(compiled, pool, runner);
  }
  ref::Status run(const std::vector<ref::Tensor> &inputs,
                  std::vector<ref::Tensor> &outputs) {
    return executor ? executor->run(inputs, outputs)
                    : runner->run(inputs, outputs);
  }
  ~ModelRunner() {
    runner.reset();
    mlcc_threadpool_destroy(pool);
  }

private:
  std::unique_ptr<ref::Executor> executor;
  std::unique_ptr<CompiledModelRunner> runner;
  mlcc_threadpool *pool = nullptr;
};

/// Prints, checks and saves one set's outputs; false on a mismatch or a
/// failed write.
static bool report(func::FuncOp func, const RunOptions &options,
                   const std::vector<ref::Tensor> &outputs,
                   const std::vector<ref::Tensor> &expected,
                   const std::string &saveDir) {
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
  if (saveDir.empty())
    return allOk;
  if (std::error_code ec = llvm::sys::fs::create_directories(saveDir)) {
    printErrors({"--save '" + saveDir + "': " + ec.message()});
    return false;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string path = saveDir + "/output_" + std::to_string(i) + ".pb";
    ref::Status w =
        onnxio::writeTensorFile(path, outputs[i], outputName(func, i));
    if (w.failed()) {
      printErrors({w.message()});
      return false;
    }
  }
  return allOk;
}

int runRun(const RunOptions &options) {
  noteInt8Kernels(options.model, options.target, options.targetOptions.cpu);
  // --data is one set (input_N.pb) or a folder of them, each run and
  // reported (and saved into a folder of its name) in turn.
  std::vector<std::string> sets;
  ref::Status s = dataSets(options.data, 0, sets);
  if (s.failed()) {
    printErrors({"--data " + s.message()});
    return 1;
  }
  bool several = sets.size() > 1 || sets.front() != options.data;
  // Symbolic dims that --dim leaves open take the data's values: the model
  // is loaded (and compiled) for the first set's shapes, and again for a
  // set whose shapes differ. A --dim of several values or a range is one
  // object, compiled once, as `mlcc compile` writes it; the reference
  // executor runs each set at its own shapes instead.
  MLIRContext ctx;
  ModelOptions model = options.model;
  ShapeVariants oneObject;
  std::unique_ptr<ModelRunner> runner;
  if (hasSeveralShapes(model.dims) && options.target == "ref") {
    // Quantised as the compiled target's variants would be.
    std::vector<DimRange> ranges;
    if (!model.quantize.empty() && !findDimRanges(ctx, model, ranges))
      return 1;
    model.keepAttention = hasRangeOfLengths(ranges);
    llvm::erase_if(model.dims,
                   [](const std::string &d) { return hasSeveralShapes({d}); });
    std::fprintf(stderr, "mlcc: note: --target ref runs each set at its "
                         "shapes; --dim values and ranges choose the shapes "
                         "of a compiled target\n");
  } else if (hasSeveralShapes(model.dims)) {
    if (!loadShapeVariants(ctx, model, /*stats=*/false, oneObject))
      return 1;
    runner = std::make_unique<ModelRunner>();
    if (s = runner->init(oneObject.views(), oneObject.interfaceRange,
                         oneObject.interfacePadded, options);
        s.failed()) {
      printErrors({"running the model failed: " + s.message()});
      return 1;
    }
  }
  OwningOpRef<ModuleOp> module;
  bool allOk = true;
  for (const std::string &set : sets) {
    std::vector<std::vector<int64_t>> shapes;
    if (s = readInputShapes(set, shapes); s.failed()) {
      printErrors({s.message()});
      return 1;
    }
    if (oneObject.modules.empty() && (!module || shapes != model.dataShapes)) {
      runner.reset();
      model.dataShapes = shapes;
      if (!(module = loadAndSimplify(ctx, model)))
        return 1;
      runner = std::make_unique<ModelRunner>();
      if (s = runner->init(*module, std::nullopt, std::nullopt, options);
          s.failed()) {
        printErrors({"running the model failed: " + s.message()});
        return 1;
      }
    }
    func::FuncOp func =
        mainFunction(module ? *module : *oneObject.modules.front());
    std::vector<ref::Tensor> inputs, outputs, expected;
    s = readInputs(func, set, inputs);
    if (s.ok() && options.check)
      s = readExpectedOutputs(func, set, expected);
    if (s.failed()) {
      printErrors({s.message()});
      return 1;
    }
    if (s = runner->run(inputs, outputs); s.failed()) {
      printErrors({"running the model failed: " + s.message()});
      return 1;
    }
    std::string setName = llvm::sys::path::filename(set).str();
    if (several)
      std::printf("set '%s':\n", setName.c_str());
    std::string saveDir = options.save;
    if (several && !saveDir.empty())
      saveDir += "/" + setName;
    allOk &= report(func, options, outputs, expected, saveDir);
  }
  if (options.check)
    std::printf("%s\n", allOk ? "check passed" : "check FAILED");
  return allOk ? 0 : 1;
}

} // namespace mlcc::cli
