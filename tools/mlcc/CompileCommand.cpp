//===- CompileCommand.cpp - mlcc compile ----------------------------------===//

#include "Commands.h"

#include "CpuTarget.h"
#include "ShapeVariants.h"
#include "Targets.h"
#include "mlcc/cpu.h"

#include "mlcc/Driver/Calibration.h"
#include "mlcc/Driver/CompiledModelRunner.h"
#include "mlcc/Pipelines/PassChangeReport.h"
#include "mlcc/Pipelines/Pipelines.h"

#include "mlir/IR/AsmState.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <iostream>

using namespace mlir;

namespace mlcc::cli {

void printErrors(const std::vector<std::string> &errors) {
  // One prefix per line: a status may hold several errors, a line each.
  for (const std::string &e : errors) {
    llvm::SmallVector<llvm::StringRef> lines;
    llvm::StringRef(e).split(lines, '\n', -1, /*KeepEmpty=*/false);
    if (lines.empty())
      lines.push_back("");
    for (llvm::StringRef line : lines)
      std::cerr << "mlcc: error: " << line.str() << "\n";
  }
}

bool calibrationOptions(MLIRContext &ctx, const ModelOptions &options,
                        CalibrationOptions &calibration) {
  calibration.atShapes = [&ctx, options](
                             const std::vector<std::vector<int64_t>> &shapes,
                             OwningOpRef<ModuleOp> &out) {
    ModelOptions atSet = options;
    atSet.quantize.clear();
    atSet.dims.clear(); // the set's shapes fix every symbolic dim
    atSet.dataShapes = shapes;
    atSet.noteChosenDims = atSet.passChanges = false;
    atSet.printIRAfterAll = atSet.timing = false;
    out = loadAndSimplify(ctx, atSet);
    return out ? ref::Status::success()
               : ref::Status::error("--calibrate: the model does not load at "
                                    "a calibration set's shapes");
  };
  calibration.dir = options.calibrate;
  calibration.keepAttention = options.keepAttention;
  calibration.maxSamples = options.calibrationSamples;
  calibration.maxLayerError = options.maxLayerError;
  if (options.quantize != "int8" || options.calibrate.empty() ||
      !parseCalibrationMethod(options.calibration, calibration.method)) {
    printErrors({"--quantize int8 needs --calibrate DIR (and --calibration "
                 "minmax, entropy, percentile or mse)"});
    return false;
  }
  return true;
}

void printQuantization(const graph::QuantizationReport &report) {
  std::printf("quantized to int8: %zu ops\n", report.quantized.size());
  for (const std::string &op : report.quantized)
    std::printf("  %s\n", op.c_str());
  std::printf("kept in f32: %zu ops\n", report.kept.size());
  for (const std::string &op : report.kept)
    std::printf("  %s\n", op.c_str());
}

// --quantize int8: calibrate, then the QDQ form (mlcc/Driver/Calibration.h).
static bool quantize(ModuleOp module, const ModelOptions &options,
                     graph::QuantizationReport &report) {
  CalibrationOptions calibration;
  if (!calibrationOptions(*module.getContext(), options, calibration))
    return false;
  if (ref::Status s = quantizeInt8(module, calibration, report); s.failed()) {
    printErrors({s.message()});
    return false;
  }
  if (options.passChanges)
    printQuantization(report);
  return true;
}

void noteInt8Kernels(const ModelOptions &model, const std::string &target,
                     const std::string &cpu) {
  if (model.quantize.empty() || target != "avx512")
    return;
  llvm::Expected<lowering::CpuTarget> resolved = lowering::resolveCpu(cpu);
  if (!resolved) {
    llvm::consumeError(resolved.takeError());
    return;
  }
  if (!resolved->has(MLCC_CPU_AVX512_VNNI))
    std::fprintf(stderr,
                 "mlcc: note: --cpu %s has no avx512_vnni, so the int8 "
                 "layers compute their QDQ values in f32 (the same results, "
                 "not faster); --cpu native, icelake-server, "
                 "sapphirerapids, znver4 or znver5 use the int8 kernels\n",
                 resolved->name.c_str());
}

OwningOpRef<ModuleOp> loadAndSimplify(MLIRContext &ctx,
                                      const ModelOptions &options,
                                      graph::QuantizationReport *report) {
  ImportOptions import;
  for (const std::string &d : options.dims) {
    size_t eq = d.find('=');
    char *end = nullptr;
    long long value = eq == std::string::npos
                          ? -1
                          : std::strtoll(d.c_str() + eq + 1, &end, 10);
    if (eq == std::string::npos || eq == 0 || !end || *end || value < 0) {
      printErrors({"--dim '" + d + "' must be NAME=VALUE with VALUE >= 0"});
      return nullptr;
    }
    import.dims[d.substr(0, eq)] = value;
  }
  import.inputShapes = options.dataShapes;
  import.batchDefaultsToOne = options.batchDefaultsToOne;
  import.maxWeightsBytes = options.maxWeightsBytes;
  std::vector<std::string> chosen;
  import.chosenDims = &chosen;
  std::vector<std::string> errors;
  OwningOpRef<ModuleOp> module = loadModel(ctx, options.model, import, errors);
  if (!module) {
    printErrors(errors);
    return nullptr;
  }
  if (!chosen.empty() && options.noteChosenDims)
    std::fprintf(stderr, "mlcc: note: symbolic dims %s: %s\n",
                 options.dataShapes.empty() ? "set to 1 (a batch)"
                                            : "taken from the data",
                 llvm::join(chosen, ", ").c_str());
  if (options.pipeline == "none")
    return module;
  PassManager pm(&ctx);
  if (options.printIRAfterAll) {
    ctx.disableMultithreading();
    // As mlir-opt's flag: after every pass, changed or not; never before.
    pm.enableIRPrinting(
        /*shouldPrintBeforePass=*/[](Pass *, Operation *) { return false; },
        /*shouldPrintAfterPass=*/[](Pass *, Operation *) { return true; },
        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false);
  }
  if (options.timing)
    pm.enableTiming();
  if (options.passChanges) {
    ctx.disableMultithreading();
    pm.addInstrumentation(createPassChangeReport(llvm::outs()));
  }
  PipelineOptions pipeline;
  pipeline.disabledPasses = options.disabledPasses;
  buildSimplifyPipeline(pm, pipeline);
  if (failed(runPasses(*module, pm, errors))) {
    printErrors(errors);
    return nullptr;
  }
  graph::QuantizationReport local;
  if (!options.quantize.empty() &&
      !quantize(*module, options, report ? *report : local))
    return nullptr;
  return module;
}

static bool writeFile(const std::string &path, llvm::StringRef bytes,
                      std::vector<std::unique_ptr<llvm::ToolOutputFile>> &files) {
  std::string errorMessage;
  auto file = openOutputFile(path, &errorMessage);
  if (!file) {
    printErrors({errorMessage});
    return false;
  }
  file->os() << bytes;
  files.push_back(std::move(file));
  return true;
}

// The file's stem; for the common "model.onnx" (a reserved name) the
// folder's name, as model zoos keep one model per folder.
std::string defaultModelName(const std::string &modelPath) {
  std::string name = lowering::modelIdentifier(llvm::sys::path::stem(modelPath));
  if (!lowering::isReservedModelName(name))
    return name;
  llvm::SmallString<256> absolute(modelPath);
  llvm::sys::fs::make_absolute(absolute);
  llvm::StringRef folder =
      llvm::sys::path::filename(llvm::sys::path::parent_path(absolute));
  std::string fromFolder = lowering::modelIdentifier(folder);
  if (folder.empty() || lowering::isReservedModelName(fromFolder))
    return name + "_net";
  return fromFolder;
}

// Whether --target names a GPU target (no range of a dim there yet).
static bool isDeviceTarget(const CompileOptions &options) {
  auto target = lowering::createTarget(options.target, options.targetOptions);
  if (!target) {
    llvm::consumeError(target.takeError());
    return false;
  }
  return (*target)->device() != nullptr;
}

int runCompile(const CompileOptions &options) {
  noteInt8Kernels(options.model, options.target, options.targetOptions.cpu);
  MLIRContext ctx;
  ModelOptions model = options.model;
  // A batch left symbolic becomes a range on the CPU targets (RangeDim.h).
  if (model.dims.empty() && model.dataShapes.empty() && options.emit == "obj" &&
      !isDeviceTarget(options)) {
    std::optional<std::string> range;
    if (!defaultDimRange(ctx, model, range))
      return 1;
    if (range)
      model.dims.push_back(*range);
  }
  ShapeVariants shapes;
  if (!loadShapeVariants(ctx, model, options.stats, shapes))
    return 1;
  if (!shapes.ranges.empty() && options.emit != "obj") {
    printErrors(
        {"--emit " + options.emit + " shows one shape; a range (--dim " +
         shapes.ranges.front().flag + ") compiles only into an object"});
    return 1;
  }
  std::vector<OwningOpRef<ModuleOp>> &variants = shapes.modules;
  if (variants.size() > 1 && options.emit != "obj") {
    printErrors({"--emit " + options.emit + " shows one shape; give each "
                 "--dim one value"});
    return 1;
  }
  OwningOpRef<ModuleOp> &module = variants.front();
  if (options.emit == "mlir") {
    std::vector<std::unique_ptr<llvm::ToolOutputFile>> files;
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    if (!writeFile(options.output.empty() ? "-" : options.output, text, files))
      return 1;
    files.front()->keep();
    return 0;
  }
  lowering::CompileModelOptions compileOptions;
  compileOptions.targetKernels = !options.portableOnly;
  compileOptions.name = options.name.empty()
                            ? defaultModelName(options.model.model)
                            : options.name;
  // Without -o, the object is NAME.o in the current folder (said below).
  const std::string objectPath =
      options.output.empty() ? compileOptions.name + ".o" : options.output;
  std::string hostText;
  llvm::raw_string_ostream hostStream(hostText);
  if (options.emit == "host-mlir")
    compileOptions.hostMlir = &hostStream;
  if (options.emit == "kernels")
    compileOptions.deviceKernels = &hostStream;
  if (options.emit == "device-asm")
    compileOptions.deviceAssembly = &hostStream;
  compileOptions.target = options.targetOptions;
  compileOptions.externalWeights = options.weights == "external";
  compileOptions.range = shapes.interfaceRange;
  compileOptions.padded = shapes.interfacePadded;
  lowering::CompiledModel compiled;
  ref::Status s = compileForTarget(shapes.views(), options.target,
                                   compileOptions, compiled);
  if (s.failed()) {
    printErrors({s.message()});
    return 1;
  }

  // Nothing is written before everything is compiled, and ToolOutputFile
  // removes its file unless kept: an error leaves no partial output.
  std::vector<std::unique_ptr<llvm::ToolOutputFile>> files;
  std::vector<std::string> written; // the object's files
  if (options.emit == "host-mlir" || options.emit == "kernels" ||
      options.emit == "device-asm") {
    if (!writeFile(options.output.empty() ? "-" : options.output, hostText,
                   files))
      return 1;
  } else {
    auto beside = [&](const std::string &given, llvm::StringRef extension) {
      if (!given.empty())
        return given;
      llvm::SmallString<256> path(objectPath);
      llvm::sys::path::replace_extension(path, extension);
      return path.str().str();
    };
    written = {objectPath, beside(options.header, ".h")};
    if (compileOptions.externalWeights)
      written.push_back(beside(options.weightsFile, ".weights"));
    if (!writeFile(written[0], compiled.object, files) ||
        !writeFile(written[1], compiled.header, files) ||
        (compileOptions.externalWeights &&
         !writeFile(written[2], compiled.weightsFile, files)))
      return 1;
  }
  for (auto &file : files)
    file->keep();
  if (options.output.empty() && !written.empty())
    std::fprintf(stderr, "mlcc: wrote %s (no -o given)\n",
                 llvm::join(written, ", ").c_str());
  if (options.stats)
    std::printf("model '%s' for %s: %zu kernels, %llu weight bytes, arena "
                "%llu bytes (intermediates %llu, live peak %llu)\n",
                compiled.interface.name.c_str(), options.target.c_str(),
                compiled.numKernels,
                static_cast<unsigned long long>(compiled.weightBytes),
                static_cast<unsigned long long>(compiled.arenaBytes),
                static_cast<unsigned long long>(compiled.intermediateBytes),
                static_cast<unsigned long long>(compiled.arenaLowerBound));
  // What create will ask of the CPU (mlcc/cpu.h).
  if (options.stats && compiled.interface.cpuFeatures != 0) {
    std::vector<char> names(
        mlcc_cpu_features_describe(compiled.interface.cpuFeatures, nullptr, 0) +
        1);
    mlcc_cpu_features_describe(compiled.interface.cpuFeatures, names.data(),
                               names.size());
    std::printf("cpu %s: needs %s\n", compiled.interface.cpuName.c_str(),
                names.data());
  }
  // A device schedule's launches: one per site in a model without loops.
  if (options.stats && compiled.launchSites > 0)
    std::printf("device schedule: %u launch sites (%u of one-thread "
                "kernels), %u read-backs\n",
                compiled.launchSites, compiled.serialLaunchSites,
                compiled.readBackSites);
  if (options.stats && compiled.demotedKernels > 0)
    std::printf("device without 64-bit floats: %u of %zu kernels compute in "
                "f32 what they would in f64\n",
                compiled.demotedKernels, compiled.numKernels);
  // The device assembler's resources per kernel (ptxas -v for cuda).
  if (options.stats && !compiled.kernelReports.empty()) {
    std::printf("device assembler: %u of %zu kernels spill registers\n",
                compiled.spillingKernels, compiled.numKernels);
    for (const std::string &report : compiled.kernelReports)
      std::printf("%s\n", report.c_str());
  }
  return 0;
}

} // namespace mlcc::cli
