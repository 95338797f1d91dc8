//===- mlcc.cpp - the mlcc command line -----------------------------------===//
//
// mlcc compile | run | inspect. Each subcommand fills an options struct and
// calls into compiler/Driver; nothing here knows about passes or kernels.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "Targets.h"
#include <cstdlib>

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"

#include <CLI/CLI.hpp>

using namespace mlcc::cli;

static void addModelOptions(CLI::App *cmd, ModelOptions &o,
                            bool modelRequired = true) {
  cmd->add_option("model", o.model, "ONNX model (.onnx) or graph-dialect MLIR (.mlir)")
      ->required(modelRequired)
      ->check(CLI::ExistingFile);
  cmd->add_option("--dim", o.dims,
                  "Fix a symbolic dimension, e.g. --dim batch=1 (repeatable); "
                  "compile takes several values, --dim batch=1,8: one object "
                  "with a variant per value, chosen by the inputs' dims");
  cmd->add_option("--trim-padding", o.trimPadding,
                  "With a batch range and a range of lengths: the input (a "
                  "0/1 attention mask) whose zeros mark padding; each item "
                  "runs at the length up to its last 1, and the outputs' "
                  "positions past it are 0");
  cmd->add_option("--pipeline", o.pipeline,
                  "Graph pipeline to run: simplify (shape inference, constant "
                  "folding, DCE) or none")
      ->check(CLI::IsMember({"simplify", "none"}));
  cmd->add_option("--disable-pass", o.disabledPasses,
                  "Leave a pass out of the pipeline, by its flag name "
                  "(e.g. mlcc-fold-constants)");
  cmd->add_flag("--mlir-print-ir-after-all", o.printIRAfterAll,
                "Print the IR after every pass (to stderr)");
  cmd->add_flag("--mlir-timing", o.timing, "Report the time of each pass");
  cmd->add_option("--quantize", o.quantize,
                  "int8: post-training quantisation of matmul/gemm/fc/conv "
                  "layers and of attention's two matmuls (u8 activations, "
                  "s8 weights per output channel), calibrated on "
                  "--calibrate")
      ->check(CLI::IsMember({"int8"}));
  cmd->add_option("--calibrate", o.calibrate,
                  "Calibration inputs: a folder of input_N.pb, or of sets "
                  "of them (test_data_set_0/, ...)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--calibration", o.calibration,
                  "How activation ranges are chosen: minmax, entropy "
                  "(TensorRT's KL threshold), percentile (99.999%) or mse "
                  "(the clipping with the least squared error)")
      ->capture_default_str()
      ->check(CLI::IsMember({"minmax", "entropy", "percentile", "mse"}));
  cmd->add_option("--max-layer-error", o.maxLayerError,
                  "A layer whose own int8 error (relative RMS of its output "
                  "with only it quantised, on the first 8 calibration sets) "
                  "is above this stays f32; inf skips the measure")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string &text) {
            char *end = nullptr;
            double v = std::strtod(text.c_str(), &end);
            return *end == 0 && v > 0 ? std::string()
                                      : "must be a number above 0, or inf";
          },
          "POSITIVE|inf"));
  cmd->add_option("--calibration-samples", o.calibrationSamples,
                  "Calibration sets to use, in name order (0: all)")
      ->capture_default_str();
  cmd->add_option("--max-weights-bytes", o.maxWeightsBytes,
                  "Refuse a model whose initializers and Constant values "
                  "declare more than this, before reading them (32GiB by "
                  "default; units: KiB/MiB/GiB or k/M/G, 1024-based; 0: no "
                  "limit)")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::NonNegativeNumber);
}

int main(int argc, char **argv) {
  CLI::App app{"mlcc: an ahead-of-time compiler for ONNX models.\n"
               "Reads an ONNX model (or graph-dialect MLIR) and compiles it "
               "for a target, runs it, or describes it."};
  app.set_version_flag(
      "--version",
      "mlcc " MLCC_VERSION " (LLVM and MLIR " LLVM_VERSION_STRING
      ", ONNX " MLCC_ONNX_VERSION ")",
      "Print the versions of mlcc, of the LLVM and MLIR it was built with "
      "and of the ONNX it reads models with");
  app.require_subcommand(1);

  CompileOptions compile;
  CLI::App *compileCmd =
      app.add_subcommand("compile", "Compile a model to an object file and a C "
                                    "header (or print its IR)");
  addModelOptions(compileCmd, compile.model);
  // The compiled targets, as the backends register them (lowering/Targets).
  const std::vector<std::string> targets = mlcc::lowering::targetNames();
  std::string targetHelp = "Target: " + llvm::join(targets, ", ");
  std::string runTargetHelp =
      "Target: ref (the reference executor) or a compiled one (" +
      llvm::join(targets, ", ") +
      ": compile and run the object in this "
      "process)";
  std::vector<std::string> runTargets{"ref"};
  runTargets.insert(runTargets.end(), targets.begin(), targets.end());
  compileCmd->add_option("--target", compile.target, targetHelp)
      ->capture_default_str()
      ->check(CLI::IsMember(targets));
  compileCmd
      ->add_option(
          "--emit", compile.emit,
          "What to write: obj (object + header), mlir (graph "
          "dialect after the pipeline), host-mlir (the host "
          "module before it goes to LLVM), kernels (a device "
          "target's kernels in the gpu dialect) or device-asm (the "
          "kernels as the API's assembly: PTX for cuda, MSL for metal)")
      ->capture_default_str()
      ->check(
          CLI::IsMember({"mlir", "obj", "host-mlir", "kernels", "device-asm"}));
  compileCmd->add_option("-o,--output", compile.output,
                         "Output file (obj: default NAME.o in the current "
                         "folder, NAME as --name; the IR: default stdout)");
  compileCmd->add_option("--header", compile.header,
                         "Where to write the C header (default: the object's "
                         "path with .h)");
  compileCmd->add_option("--name", compile.name,
                         "C identifier of the model in its API, "
                         "mlcc_<name>_run (default: the model file's stem)");
  compileCmd->add_option("--gpu-arch", compile.targetOptions.gpuArchs,
                         "GPU architectures of --target cuda, comma-separated "
                         "(default: sm_80,sm_90)");
  compileCmd->add_option("--cuda-path", compile.targetOptions.cudaPath,
                         "CUDA toolkit for --target cuda: libdevice for math "
                         "functions, ptxas for cubins (default: $CUDA_PATH, "
                         "/usr/local/cuda, /usr/lib/cuda; none: PTX only, "
                         "f32 math expanded into polynomials)");
  const char *subgroupHelp =
      "--target vulkan: the device's subgroup size, so that reductions "
      "end in subgroup shuffles (for tests: lavapipe's is 8; unchecked)";
  compileCmd->add_option("--vulkan-subgroup-size",
                         compile.targetOptions.vulkanSubgroupSize,
                         subgroupHelp);
  const char *noFloat64Help =
      "--target vulkan: the device has no 64-bit floats; kernels compute in "
      "f32 where they would in f64, as --target metal's do";
  compileCmd->add_flag("--vulkan-no-float64",
                       compile.targetOptions.vulkanNoFloat64, noFloat64Help);
  compileCmd->add_option("--triple", compile.targetOptions.triple,
                         "--target metal: the Apple host of the object "
                         "(default arm64-apple-macos; x86_64-apple-macos for "
                         "Intel Macs, arm64-apple-ios)");
  const char *cpuHelp =
      "--target avx512: the CPU whose instructions the object may use: "
      "native, x86-64-v4 (AVX-512 F/CD/BW/DQ/VL: any AVX-512 CPU), "
      "skylake-avx512, icelake-server, sapphirerapids, znver4, znver5 or "
      "another CPU LLVM knows; create refuses to run it on a CPU without "
      "them (MLCC_UNSUPPORTED_CPU)";
  compileCmd->add_option("--cpu", compile.targetOptions.cpu, cpuHelp);
  const char *minParallelHelp =
      "--target avx512: an op estimated to take less than this many "
      "microseconds on one core runs on the calling thread, not split over "
      "the pool's threads (0: split every op that can be)";
  compileCmd
      ->add_option("--min-parallel-us", compile.targetOptions.minParallelMicros,
                   minParallelHelp)
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  const char *precisionHelp =
      "--target avx512: fp32, or bf16: matmul/gemm/fc layers with constant "
      "weights compute in bf16 with f32 accumulation (vdpbf16ps; needs a "
      "--cpu with avx512_bf16); inputs and outputs stay f32";
  const std::vector<std::string> precisions{"fp32", "bf16"};
  compileCmd
      ->add_option("--precision", compile.targetOptions.precision,
                   precisionHelp)
      ->check(CLI::IsMember(precisions));
  const char *winogradHelp =
      "--target avx512: 3x3 and 5x5 stride-1 convs as Winograd: auto "
      "(F(4x4, 3x3) where a conv has 32 tiles of 4x4 or more, else F(2x2, "
      "3x3); F(2x2, 5x5)), f2 (F(2x2, 3x3) and F(2x2, 5x5) only: about half "
      "the rounding error on 3x3 convs), off (direct convs)";
  const std::vector<std::string> winogradModes{"auto", "f2", "off"};
  compileCmd
      ->add_option("--winograd", compile.targetOptions.winograd, winogradHelp)
      ->check(CLI::IsMember(winogradModes));
  const char *strassenHelp =
      "--target avx512: f32 matmul/gemm/fc layers with constant weights of "
      "at least 64 x 512 x 512 as one level of Strassen's algorithm: auto "
      "(7/8 of the multiply-adds, a little more rounding, 7/4 of those "
      "layers' weight bytes in the object), off (direct GEMMs)";
  const std::vector<std::string> strassenModes{"auto", "off"};
  compileCmd
      ->add_option("--strassen", compile.targetOptions.strassen, strassenHelp)
      ->check(CLI::IsMember(strassenModes));
  compileCmd->add_option("--weights", compile.weights,
                         "Where the weights go: embedded (read-only data in "
                         "the object) or external (a weights file that "
                         "mlcc_<name>_create reads)")
      ->capture_default_str()
      ->check(CLI::IsMember({"embedded", "external"}));
  compileCmd->add_option("--weights-file", compile.weightsFile,
                         "Where --weights external writes the weights "
                         "(default: the object's path with .weights)");
  const char *portableHelp = "Lower every op through the portable "
                             "lowerings, no target kernel (for testing them)";
  compileCmd->add_flag("--portable-only", compile.portableOnly, portableHelp);
  compileCmd->add_flag("--stats", compile.stats,
                       "Print what each pass changed (op counts by kind), "
                       "then kernels, weights and arena sizes");

  RunOptions run;
  CLI::App *runCmd = app.add_subcommand(
      "run", "Run a model on test data (model-zoo layout: input_N.pb, "
             "output_N.pb)");
  addModelOptions(runCmd, run.model);
  runCmd->add_option("--target", run.target, runTargetHelp)
      ->capture_default_str()
      ->check(CLI::IsMember(runTargets));
  runCmd->add_option("--data", run.data, "Folder with input_N.pb files")
      ->required()
      ->check(CLI::ExistingDirectory);
  runCmd->add_flag("--check", run.check,
                   "Compare with the folder's output_N.pb; exit 1 on mismatch");
  runCmd->add_option("--rtol", run.rtol, "Relative tolerance for --check")
      ->capture_default_str();
  runCmd->add_option("--atol", run.atol, "Absolute tolerance for --check")
      ->capture_default_str();
  runCmd->add_option("--save", run.save, "Write the outputs as output_N.pb here");
  runCmd->add_flag("--portable-only", run.portableOnly, portableHelp);
  runCmd->add_option("--vulkan-subgroup-size",
                     run.targetOptions.vulkanSubgroupSize, subgroupHelp);
  runCmd->add_flag("--vulkan-no-float64", run.targetOptions.vulkanNoFloat64,
                   noFloat64Help);
  runCmd->add_option("--cpu", run.targetOptions.cpu, cpuHelp);
  runCmd
      ->add_option("--min-parallel-us", run.targetOptions.minParallelMicros,
                   minParallelHelp)
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  runCmd->add_option("--precision", run.targetOptions.precision, precisionHelp)
      ->check(CLI::IsMember(precisions));
  runCmd->add_option("--winograd", run.targetOptions.winograd, winogradHelp)
      ->check(CLI::IsMember(winogradModes));
  runCmd->add_option("--strassen", run.targetOptions.strassen, strassenHelp)
      ->check(CLI::IsMember(strassenModes));
  runCmd->add_option("--threads", run.threads,
                     "Threads of the runtime's pool for a compiled target "
                     "(0: one per core)")
      ->capture_default_str();

  BenchOptions bench;
  CLI::App *benchCmd = app.add_subcommand(
      "bench", "Compile a model and time it in this process (median latency)");
  addModelOptions(benchCmd, bench.model, /*modelRequired=*/false);
  benchCmd->add_option("--target", bench.target, targetHelp)
      ->capture_default_str()
      ->check(CLI::IsMember(targets));
  benchCmd->add_option("--data", bench.data,
                       "Folder with input_N.pb files (default: random inputs)")
      ->check(CLI::ExistingDirectory);
  benchCmd->add_option("--threads", bench.threads,
                       "Threads of the runtime's pool (0: one per core)")
      ->capture_default_str();
  benchCmd->add_option("--runs", bench.runs, "Timed runs")
      ->capture_default_str();
  benchCmd->add_option("--warmup", bench.warmup, "Untimed runs first")
      ->capture_default_str();
  benchCmd->add_flag("--per-op", bench.perOp,
                     "Time each op too (a profiling build of the model) and "
                     "print them by share, like `caffe time`");
  benchCmd->add_flag("--peak", bench.peak,
                     "Measure this CPU's peak f32/int8/bf16 arithmetic and "
                     "its copy bandwidth by working set on --threads, and "
                     "print them (then bench the model, if one is given); "
                     "--per-op measures them too, for each op's roofline");
  benchCmd->add_flag("--json", bench.json,
                     "Also print each timed run as a JSON line");
  benchCmd->add_flag("--portable-only", bench.portableOnly, portableHelp);
  benchCmd->add_option("--cpu", bench.cpu, cpuHelp);
  benchCmd
      ->add_option("--min-parallel-us", bench.minParallelMicros,
                   minParallelHelp)
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  benchCmd->add_option("--precision", bench.precision, precisionHelp)
      ->check(CLI::IsMember(precisions));
  benchCmd->add_option("--winograd", bench.winograd, winogradHelp)
      ->check(CLI::IsMember(winogradModes));
  benchCmd->add_option("--strassen", bench.strassen, strassenHelp)
      ->check(CLI::IsMember(strassenModes));

  InspectOptions inspect;
  CLI::App *inspectCmd = app.add_subcommand(
      "inspect", "Print inputs, outputs, op histogram and unsupported ops");
  addModelOptions(inspectCmd, inspect.model);
  inspectCmd->add_flag("--memory", inspect.memory,
                       "Compile for --target and print its activation arena: "
                       "size, sum of all intermediates, live peak");
  inspectCmd
      ->add_option("--target", inspect.target,
                   "Target whose memory plan --memory reports")
      ->capture_default_str()
      ->check(CLI::IsMember(targets));

  QuantizeOptions quantize;
  CLI::App *quantizeCmd = app.add_subcommand(
      "quantize", "Calibrate a model (--calibrate DIR) and write its int8 "
                  "decision as a QDQ ONNX model that other runtimes run");
  addModelOptions(quantizeCmd, quantize.model);
  quantizeCmd
      ->add_option("-o,--output", quantize.output, "The QDQ model to write")
      ->required();

  CLI11_PARSE(app, argc, argv);
  if (quantizeCmd->parsed())
    return runQuantize(quantize);
  if (compileCmd->parsed())
    return runCompile(compile);
  if (runCmd->parsed())
    return runRun(run);
  if (benchCmd->parsed())
    return runBench(bench);
  return runInspect(inspect);
}
