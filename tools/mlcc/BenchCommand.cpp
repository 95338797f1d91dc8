//===- BenchCommand.cpp - mlcc bench --------------------------------------===//
//
// Compiles the model, links the object into this process and times whole
// runs through the runtime API an application uses: median and min of
// --runs runs after --warmup untimed ones.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "MachinePeak.h"
#include "ShapeVariants.h"

#include "mlcc/Driver/CompiledModelRunner.h"

#include "mlir/IR/MLIRContext.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

using namespace mlir;

namespace mlcc::cli {

/// Floats in [-1, 1) from a fixed LCG; integers and bools 0, so that index
/// inputs (token ids) stay in range.
static void fillDeterministic(ref::Tensor &t) {
  uint32_t state = 12345;
  for (int64_t i = 0; i < t.numel(); ++i) {
    state = state * 1664525u + 1013904223u;
    double v = ref::isFloatType(t.dtype()) ? (state >> 8) / double(1 << 23) - 1
                                           : 0.0;
    t.setDouble(i, v);
  }
}

// --per-op: the compiled model calls this before each op and at its end;
// the time between two calls is the op's (what its kernels and any layout
// conversion it triggered took).
namespace {
struct OpProfile {
  std::vector<double> seconds;
  int32_t current = -1;
  std::chrono::steady_clock::time_point since;
  bool recording = false;
} profile;

void profileHook(int32_t index) {
  auto now = std::chrono::steady_clock::now();
  if (profile.recording && profile.current >= 0 &&
      size_t(profile.current) < profile.seconds.size())
    profile.seconds[profile.current] +=
        std::chrono::duration<double>(now - profile.since).count();
  profile.current = index;
  profile.since = now;
}

const char *precisionName(lowering::WorkPrecision p) {
  switch (p) {
  case lowering::WorkPrecision::Int8:
    return "int8";
  case lowering::WorkPrecision::Bf16:
    return "bf16";
  default:
    return "f32";
  }
}

/// Each op's time, share and rate, and with `peak` the share of its
/// roofline bound it reaches (MachinePeak.h); then the ops above 2% of the
/// time that reach less than 80% of it.
void printProfile(const std::vector<lowering::ProfiledOp> &ops, size_t runs,
                  const MachinePeak &peak) {
  std::vector<size_t> order(ops.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [](size_t a, size_t b) {
    return profile.seconds[a] > profile.seconds[b];
  });
  double total = 0;
  for (double s : profile.seconds)
    total += s;
  std::printf("%-6s %10s %7s %7s %10s %10s %8s %8s %6s %5s  %s\n", "#",
              "ms/run", "share", "cumul", "Mop", "kB", "GOP/s", "GB/s", "roof",
              "prec", "op");
  double cumulative = 0, farTime = 0, boundTotal = 0;
  int big = 0, far = 0;
  for (size_t i : order) {
    const lowering::OpWork &work = ops[i].work;
    const double seconds = runs ? profile.seconds[i] / runs : 0;
    const double share = total ? profile.seconds[i] / total : 0;
    cumulative += profile.seconds[i];
    char gops[16] = "-", gbs[16] = "-", roof[16] = "-";
    if (seconds > 0 && work.product)
      std::snprintf(gops, sizeof(gops), "%.1f", work.ops / seconds * 1e-9);
    if (seconds > 0 && work.bytes > 0)
      std::snprintf(gbs, sizeof(gbs), "%.1f", work.bytes / seconds * 1e-9);
    const double bound = peak.boundSeconds(work);
    boundTotal += bound;
    if (seconds > 0 && bound > 0) {
      const double reached = bound / seconds;
      std::snprintf(roof, sizeof(roof), "%.0f%%", 100 * reached);
      if (share > 0.02) {
        ++big;
        if (reached < 0.8) {
          ++far;
          farTime += share;
        }
      }
    }
    std::printf("%-6zu %10.4f %6.1f%% %6.1f%% %10.3f %10.1f %8s %8s %6s %5s  "
                "%s\n",
                i, 1e3 * seconds, 100 * share,
                total ? 100 * cumulative / total : 0, work.ops * 1e-6,
                work.bytes * 1e-3, gops, gbs, roof,
                work.product ? precisionName(work.precision) : "",
                ops[i].what.c_str());
  }
  std::printf("total %.3f ms/run over %zu ops\n", runs ? 1e3 * total / runs : 0,
              ops.size());
  std::printf("roofline: %d of the %d ops above 2%% of the time reach less "
              "than 80%% of their bound (%.1f%% of the time); bound = "
              "max(ops / peak of their precision, bytes / copy bandwidth "
              "of their working set), measured first on %d thread(s)\n",
              far, big, 100 * farTime, peak.threads);
  // The model's floor: no kernel doing the same arithmetic beats it on this
  // machine, so another runtime's time compares against it too. Convs and
  // GEMMs count their direct arithmetic: Winograd's and Strassen's can go
  // below it.
  if (boundTotal > 0 && total > 0 && runs)
    std::printf("model bound: %.3f ms/run, the sum of the ops' bounds; this "
                "run takes %.2fx it\n",
                1e3 * boundTotal, total / runs / boundTotal);
}
} // namespace

// The shape of input `i` without --data: the descriptor's, for a model with
// variants the last variant's (the last --dim value), a range's dim at its
// largest.
static ref::Shape benchInputShape(const mlcc_model_desc *desc, uint32_t i) {
  const mlcc_model_tensor_desc &in = desc->inputs[i];
  const int64_t *dims = in.dims;
  if (desc->num_variants > 0) {
    dims = desc->variants[desc->num_variants - 1].dims;
    for (uint32_t j = 0; j < i; ++j)
      dims += desc->inputs[j].rank;
  }
  ref::Shape shape(dims, dims + in.rank);
  if (desc->range && desc->range->mapped[i] && !shape.empty())
    shape[0] = desc->range->max;
  return shape;
}

/// --peak (and --per-op's roofline): the machine first, on the bench's
/// threads. Without --peak a failure only leaves the roofline out.
static bool measurePeak(const BenchOptions &options, mlcc_threadpool *pool,
                        MachinePeak &peak) {
  std::string error;
  if (!measureMachinePeak(pool, peak, error)) {
    if (options.peak) {
      printErrors({"--peak: " + error});
      return false;
    }
    std::fprintf(stderr, "mlcc: note: no roofline (%s)\n", error.c_str());
    peak = MachinePeak();
    return true;
  }
  if (options.peak)
    printMachinePeak(peak);
  return true;
}

int runBench(const BenchOptions &options) {
  if (options.model.model.empty()) {
    if (!options.peak) {
      printErrors({"bench needs a model (or --peak alone)"});
      return 1;
    }
    mlcc_threadpool *pool = nullptr;
    if (mlcc_threadpool_create(options.threads, &pool) != MLCC_OK) {
      printErrors({mlcc_last_error_message()});
      return 1;
    }
    MachinePeak peak;
    bool ok = measurePeak(options, pool, peak);
    mlcc_threadpool_destroy(pool);
    return ok ? 0 : 1;
  }
  noteInt8Kernels(options.model, options.target, options.cpu);
  // Symbolic dims that --dim leaves open: the data's, or 1 for a batch
  // without data (loadAndSimplify says which).
  ModelOptions model = options.model;
  if (options.data.empty())
    model.batchDefaultsToOne = true;
  else if (ref::Status s = readInputShapes(options.data, model.dataShapes);
           s.failed()) {
    printErrors({s.message()});
    return 1;
  }
  // A --dim of several values or a range is one object, as `mlcc compile`
  // writes it.
  MLIRContext ctx;
  ShapeVariants shapes;
  if (hasSeveralShapes(model.dims)) {
    if (!loadShapeVariants(ctx, model, /*stats=*/false, shapes))
      return 1;
  } else if (OwningOpRef<ModuleOp> module = loadAndSimplify(ctx, model)) {
    shapes.modules.push_back(std::move(module));
  } else {
    return 1;
  }
  func::FuncOp func = mainFunction(*shapes.modules.front());
  std::vector<ref::Tensor> inputs, outputs;
  if (!options.data.empty()) {
    ref::Status s = readInputs(func, options.data, inputs);
    if (s.failed()) {
      printErrors({s.message()});
      return 1;
    }
  }

  auto compileStart = std::chrono::steady_clock::now();
  lowering::CompileModelOptions compileOptions;
  compileOptions.name = defaultModelName(options.model.model);
  compileOptions.profile = options.perOp;
  compileOptions.targetKernels = !options.portableOnly;
  compileOptions.target.cpu = options.cpu;
  compileOptions.target.precision = options.precision;
  compileOptions.target.winograd = options.winograd;
  compileOptions.target.strassen = options.strassen;
  compileOptions.target.minParallelMicros = options.minParallelMicros;
  compileOptions.range = shapes.interfaceRange;
  compileOptions.padded = shapes.interfacePadded;
  lowering::CompiledModel compiled;
  ref::Status s = compileForTarget(shapes.views(), options.target,
                                   compileOptions, compiled);
  if (s.failed()) {
    printErrors({s.message()});
    return 1;
  }
  double compileSeconds = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - compileStart)
                              .count();

  mlcc_threadpool *pool = nullptr;
  if (mlcc_threadpool_create(options.threads, &pool) != MLCC_OK) {
    printErrors({mlcc_last_error_message()});
    return 1;
  }
  MachinePeak peak;
  if ((options.peak || options.perOp) && !measurePeak(options, pool, peak)) {
    mlcc_threadpool_destroy(pool);
    return 1;
  }
  std::unique_ptr<CompiledModelRunner> runner;
  profile.seconds.assign(compiled.profiledOps.size(), 0.0);
  s = CompiledModelRunner::load(compiled, pool, runner,
                                options.perOp ? &profileHook : nullptr);
  if (s.ok())
    runner->poisonArena = false;
  if (s.ok() && inputs.empty()) {
    const mlcc_model_desc *desc = runner->descriptor();
    for (uint32_t i = 0; i < desc->num_inputs; ++i) {
      const mlcc_model_tensor_desc &in = desc->inputs[i];
      inputs.emplace_back(static_cast<ref::DType>(in.dtype),
                          benchInputShape(desc, i));
      fillDeterministic(inputs.back());
    }
    if (const mlcc_model_padded_dim *padded = desc->padded)
      std::fprintf(stderr,
                   "mlcc: note: timing %s=%lld, the range's largest (--data "
                   "chooses another)\n",
                   padded->name, static_cast<long long>(padded->max));
    else if (const mlcc_model_range *range = desc->range)
      std::fprintf(stderr,
                   "mlcc: note: timing %s=%lld, the range's largest (--data "
                   "chooses another)\n",
                   range->name, static_cast<long long>(range->max));
    else if (desc->num_variants > 0)
      std::fprintf(stderr, "mlcc: note: timing the shapes of the last --dim "
                           "value (--data chooses others)\n");
  }
  std::vector<double> times;
  for (int i = 0; s.ok() && i < options.warmup + options.runs; ++i) {
    profile.recording = i >= options.warmup;
    auto start = std::chrono::steady_clock::now();
    s = runner->run(inputs, outputs);
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    if (i >= options.warmup)
      times.push_back(ms);
  }
  runner.reset();
  mlcc_threadpool_destroy(pool);
  if (s.failed()) {
    printErrors({s.message()});
    return 1;
  }
  if (options.json)
    for (double ms : times)
      std::printf("{\"kind\": \"run\", \"ms\": %.6f}\n", ms);
  if (options.perOp)
    printProfile(compiled.profiledOps, times.size(), peak);
  std::sort(times.begin(), times.end());
  double median = times.empty() ? 0 : times[times.size() / 2];
  std::printf("model '%s' on %s, %d thread(s): median %.3f ms, min %.3f ms "
              "over %zu runs (compile %.2f s, %zu kernels, arena %llu "
              "bytes)\n",
              compiled.interface.name.c_str(), options.target.c_str(),
              options.threads, median, times.empty() ? 0 : times.front(),
              times.size(), compileSeconds, compiled.numKernels,
              static_cast<unsigned long long>(compiled.arenaBytes));
  return 0;
}

} // namespace mlcc::cli
