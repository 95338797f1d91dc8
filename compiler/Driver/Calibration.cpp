//===- Calibration.cpp - Activation ranges from the model's own runs ------===//

#include "mlcc/Driver/Calibration.h"
#include "mlcc/Driver/CompiledModelRunner.h"
#include "mlcc/Driver/Driver.h"

#include "GraphDialect.h"
#include "Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unistd.h>

using namespace mlir;

namespace mlcc {

using ref::Status;
using ref::Tensor;

namespace {

constexpr int kHistogramBins = 2048;
/// Calibration sets the sensitivity measure runs (the first ones).
constexpr size_t kSensitivitySets = 8;

/// What the runs showed of one activation.
struct Observation {
  float min = INFINITY, max = -INFINITY;
  std::vector<double> histogram; // of x over [min, max], or of |x| (entropy)
};

void observeRange(Observation &o, const Tensor &t) {
  const float *v = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i)
    if (std::isfinite(v[i])) {
      o.min = std::min(o.min, v[i]);
      o.max = std::max(o.max, v[i]);
    }
}

/// Entropy histograms |x| over [0, absmax]; percentile ones x over
/// [min, max].
void observeHistogram(Observation &o, const Tensor &t, bool magnitude) {
  if (o.histogram.empty())
    o.histogram.assign(kHistogramBins, 0.0);
  float lo = magnitude ? 0.0f : o.min;
  float hi = magnitude ? std::max(std::fabs(o.min), std::fabs(o.max)) : o.max;
  if (!(hi > lo))
    return;
  double width = (double(hi) - lo) / kHistogramBins;
  const float *v = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (!std::isfinite(v[i]))
      continue;
    double x = magnitude ? std::fabs(v[i]) : v[i];
    int bin = static_cast<int>((x - lo) / width);
    o.histogram[std::clamp(bin, 0, kHistogramBins - 1)] += 1;
  }
}

/// TensorRT's threshold: the |x| cut-off whose clipped distribution loses
/// the least information (KL divergence) when quantised to `levels` bins.
float entropyThreshold(const std::vector<double> &hist, float absMax,
                       int levels) {
  const int n = static_cast<int>(hist.size());
  double width = double(absMax) / n;
  double bestKl = INFINITY;
  int best = n;
  std::vector<double> p, q;
  for (int i = levels; i <= n; ++i) {
    p.assign(hist.begin(), hist.begin() + i);
    for (int j = i; j < n; ++j)
      p[i - 1] += hist[j];
    // Q: P's first i bins merged into `levels`, spread back over the bins
    // that were not empty.
    q.assign(i, 0.0);
    double perLevel = double(i) / levels;
    for (int l = 0; l < levels; ++l) {
      int start = static_cast<int>(l * perLevel);
      int end = l == levels - 1 ? i : static_cast<int>((l + 1) * perLevel);
      double sum = 0;
      int nonzero = 0;
      for (int j = start; j < end; ++j) {
        sum += hist[j];
        nonzero += hist[j] != 0;
      }
      for (int j = start; j < end; ++j)
        if (hist[j] != 0)
          q[j] = sum / nonzero;
    }
    double pSum = 0, qSum = 0;
    for (int j = 0; j < i; ++j) {
      pSum += p[j];
      qSum += q[j];
    }
    if (pSum == 0 || qSum == 0)
      continue;
    double kl = 0;
    for (int j = 0; j < i; ++j) {
      if (p[j] == 0)
        continue;
      double pj = p[j] / pSum;
      // A bin P has and Q lost (the clipped outliers' bin): smoothed.
      double qj = std::max(q[j] / qSum, 1e-12);
      kl += pj * std::log(pj / qj);
    }
    if (kl < bestKl) {
      bestKl = kl;
      best = i;
    }
  }
  return static_cast<float>((best + 0.5) * width);
}

/// The values below which `fraction` of the histogram's mass lies.
float histogramQuantile(const std::vector<double> &hist, float lo, float hi,
                        double fraction) {
  double total = 0;
  for (double h : hist)
    total += h;
  double target = fraction * total, sum = 0;
  double width = (double(hi) - lo) / hist.size();
  for (size_t i = 0; i < hist.size(); ++i) {
    sum += hist[i];
    if (sum >= target)
      return static_cast<float>(lo + (i + 1) * width);
  }
  return hi;
}

/// The range [t * min, t * max] (widened to hold 0, as the quantiser
/// does), t in (0, 1], whose u8 quantisation has the least squared error
/// over the histogram of x on [min, max]: rounding error (step^2 / 12)
/// inside, the clipped distance outside.
graph::ActivationRange leastSquaredErrorRange(const Observation &o) {
  const std::vector<double> &hist = o.histogram;
  const double width = (double(o.max) - o.min) / hist.size();
  graph::ActivationRange best{o.min, o.max};
  double bestError = INFINITY;
  constexpr int kSteps = 200;
  for (int i = 1; i <= kSteps; ++i) {
    double t = double(i) / kSteps;
    double lo = std::min(t * o.min, 0.0), hi = std::max(t * o.max, 0.0);
    double step = (hi - lo) / 255.0, rounding = step * step / 12.0;
    double error = 0;
    for (size_t b = 0; b < hist.size(); ++b) {
      if (hist[b] == 0)
        continue;
      double x = o.min + (b + 0.5) * width;
      double d = x < lo ? lo - x : x > hi ? x - hi : 0.0;
      error += hist[b] * (d > 0 ? d * d : rounding);
    }
    if (error < bestError) {
      bestError = error;
      best = {static_cast<float>(t * o.min), static_cast<float>(t * o.max)};
    }
  }
  return best;
}

graph::ActivationRange chooseRange(const Observation &o,
                                   const CalibrationOptions &options) {
  graph::ActivationRange r{o.min, o.max};
  if (!std::isfinite(o.min) || options.method == CalibrationMethod::MinMax ||
      o.histogram.empty())
    return r;
  if (options.method == CalibrationMethod::Mse)
    return leastSquaredErrorRange(o);
  if (options.method == CalibrationMethod::Percentile) {
    double keep = options.percentile / 100.0;
    r.min = o.min < 0 ? histogramQuantile(o.histogram, o.min, o.max, 1 - keep)
                      : o.min;
    r.max = histogramQuantile(o.histogram, o.min, o.max, keep);
    return r;
  }
  // Entropy: u8 spends 256 levels on a range that is one-signed, 128 per
  // side on one that is not.
  float absMax = std::max(std::fabs(o.min), std::fabs(o.max));
  float t = entropyThreshold(o.histogram, absMax, o.min >= 0 ? 256 : 128);
  r.min = std::max(o.min, -t);
  r.max = std::min(o.max, t);
  return r;
}

/// `func` returning `observed` too, after its own results (named so that no
/// output name collides).
void returnObserved(func::FuncOp func, ArrayRef<Value> observed) {
  Operation *ret = func.getBody().front().getTerminator();
  unsigned first = ret->getNumOperands();
  SmallVector<Value> values(ret->getOperands());
  values.append(observed.begin(), observed.end());
  ret->setOperands(values);
  SmallVector<Type> results(ret->getOperandTypes());
  func.setType(FunctionType::get(func.getContext(),
                                 func.getFunctionType().getInputs(), results));
  for (unsigned i = first; i < values.size(); ++i)
    func.setResultAttr(
        i, "graph.name",
        StringAttr::get(func.getContext(),
                        "mlcc_calibration_" + std::to_string(i - first)));
}

void printProgress(size_t done, size_t total) {
  constexpr int kWidth = 30;
  int filled = static_cast<int>(kWidth * done / std::max<size_t>(total, 1));
  std::fprintf(stderr, "\rcalibration [%-*s] %zu/%zu sets", kWidth,
               std::string(filled, '#').c_str(), done, total);
  if (done == total)
    std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

/// `module` compiled for avx512 with `extra` returned after its results.
Status compileProbe(ModuleOp probe, func::FuncOp probeFunc,
                    ArrayRef<Value> extra,
                    std::unique_ptr<CompiledModelRunner> &runner) {
  returnObserved(probeFunc, extra);
  lowering::CompileModelOptions compileOptions;
  compileOptions.name = "mlcc_calibration";
  if (Status s = CompiledModelRunner::compileAndLoad(
          probe, "avx512", compileOptions, nullptr, runner);
      s.failed())
    return Status::error("--quantize: compiling the fp32 model for "
                         "calibration: ",
                         s.message());
  return Status::success();
}

/// Each quantisable op's own error: the relative RMS difference between
/// its f32 output and a copy's with its activation and weight quantised
/// (graph::insertQuantizedCopies), over `sets`.
Status
measureSensitivity(ModuleOp module, func::FuncOp func,
                   const llvm::DenseMap<Value, graph::ActivationRange> &ranges,
                   const std::vector<std::string> &sets,
                   llvm::DenseMap<Operation *, double> &errors) {
  IRMapping mapping;
  OwningOpRef<ModuleOp> probe(cast<ModuleOp>(module->clone(mapping)));
  llvm::DenseMap<Value, graph::ActivationRange> probeRanges;
  for (auto &[v, r] : ranges)
    probeRanges[mapping.lookup(v)] = r;
  llvm::DenseMap<Operation *, Operation *> original;
  for (auto &[from, to] : mapping.getOperationMap())
    original[to] = from;
  func::FuncOp probeFunc = mainFunction(*probe);
  unsigned first = probeFunc.getNumResults();
  auto pairs = graph::insertQuantizedCopies(probeFunc, probeRanges);
  SmallVector<Value> extra;
  for (auto &[f32, quantized] : pairs) {
    extra.push_back(f32);
    extra.push_back(quantized);
  }
  std::unique_ptr<CompiledModelRunner> runner;
  MLCC_RETURN_IF_ERROR(compileProbe(*probe, probeFunc, extra, runner));
  std::vector<double> diff(pairs.size(), 0.0), norm(pairs.size(), 0.0);
  for (const std::string &set : sets) {
    std::vector<Tensor> inputs, outputs;
    MLCC_RETURN_IF_ERROR(readInputs(func, set, inputs));
    if (Status st = runner->run(inputs, outputs); st.failed())
      return Status::error("--calibrate: set '", set, "': ", st.message());
    for (size_t i = 0; i < pairs.size(); ++i) {
      const Tensor &y = outputs[first + 2 * i], &q = outputs[first + 2 * i + 1];
      const float *a = y.data<float>(), *b = q.data<float>();
      for (int64_t j = 0; j < y.numel(); ++j) {
        diff[i] += (double(a[j]) - b[j]) * (double(a[j]) - b[j]);
        norm[i] += double(a[j]) * a[j];
      }
    }
  }
  for (size_t i = 0; i < pairs.size(); ++i)
    errors[original.lookup(pairs[i].first.getDefiningOp())] =
        norm[i] > 0 ? std::sqrt(diff[i] / norm[i]) : 0.0;
  return Status::success();
}

} // namespace

bool parseCalibrationMethod(const std::string &name, CalibrationMethod &out) {
  if (name == "minmax")
    out = CalibrationMethod::MinMax;
  else if (name == "entropy")
    out = CalibrationMethod::Entropy;
  else if (name == "percentile")
    out = CalibrationMethod::Percentile;
  else if (name == "mse")
    out = CalibrationMethod::Mse;
  else
    return false;
  return true;
}

namespace {

using Shapes = std::vector<std::vector<int64_t>>;

/// The calibration sets of one input shape: the model at it, its observed
/// activations (at the same positions as every other shape's) and its
/// probe.
struct ShapeGroup {
  Shapes shapes;
  OwningOpRef<ModuleOp> owned; // null for the module being quantised
  func::FuncOp func;
  std::vector<Value> observed;
  std::unique_ptr<CompiledModelRunner> runner;
  unsigned firstObserved = 0;
};

Shapes inputShapes(func::FuncOp func) {
  Shapes shapes;
  for (Type t : func.getArgumentTypes()) {
    auto ranked = dyn_cast<RankedTensorType>(t);
    shapes.emplace_back(ranked ? ranked.getShape() : ArrayRef<int64_t>());
  }
  return shapes;
}

std::string describeShapes(const Shapes &shapes) {
  std::string text;
  for (const std::vector<int64_t> &shape : shapes)
    text += (text.empty() ? "" : ", ") + ref::shapeToString(shape);
  return text;
}

size_t numOps(func::FuncOp func) {
  return func.getBody().front().getOperations().size();
}

/// The group of `set`'s shapes in `groups` (groups[0] is the module's own),
/// added with the model at them when new.
Status groupOf(const std::string &set, const CalibrationOptions &options,
               std::vector<ShapeGroup> &groups, size_t &out) {
  if (!options.atShapes) { // the sets must be of the module's shapes
    out = 0;
    return Status::success();
  }
  Shapes shapes;
  MLCC_RETURN_IF_ERROR(readInputShapes(set, shapes));
  for (out = 0; out < groups.size(); ++out)
    if (groups[out].shapes == shapes)
      return Status::success();
  ShapeGroup group;
  group.shapes = shapes;
  MLCC_RETURN_IF_ERROR(options.atShapes(shapes, group.owned));
  group.func = mainFunction(*group.owned);
  if (group.func && !options.keepAttention)
    graph::decomposeAttention(group.func);
  if (group.func)
    group.observed = graph::quantizableActivations(group.func);
  if (!group.func || group.observed.size() != groups[0].observed.size() ||
      numOps(group.func) != numOps(groups[0].func))
    return Status::error(
        "--calibrate: set '", set, "' (inputs ", describeShapes(shapes),
        "): the model simplifies to other layers at its "
        "shapes than at ",
        describeShapes(groups[0].shapes), "; calibrate with sets of one shape");
  groups.push_back(std::move(group));
  return Status::success();
}

/// The probe of `group`: its model returning the observed activations too.
Status compileGroupProbe(ModuleOp module, ShapeGroup &group) {
  IRMapping mapping;
  OwningOpRef<ModuleOp> probe(cast<ModuleOp>(module->clone(mapping)));
  SmallVector<Value> probeValues;
  for (Value v : group.observed)
    probeValues.push_back(mapping.lookup(v));
  func::FuncOp probeFunc = mainFunction(*probe);
  group.firstObserved = probeFunc.getNumResults();
  return compileProbe(*probe, probeFunc, probeValues, group.runner);
}

} // namespace

Status calibrateInt8(ModuleOp module, const CalibrationOptions &options,
                     Int8Calibration &out) {
  out = {};
  func::FuncOp func = mainFunction(module);
  if (!func)
    return Status::error("--quantize: the module has no main function");
  out.keepAttention = options.keepAttention;
  if (!options.keepAttention)
    graph::decomposeAttention(func);
  std::vector<ShapeGroup> groups(1);
  groups[0].shapes = inputShapes(func);
  groups[0].func = func;
  groups[0].observed = graph::quantizableActivations(func);
  const size_t observed = groups[0].observed.size();
  out.ranges.resize(observed);
  if (observed == 0)
    return Status::success();
  std::vector<std::string> sets;
  if (Status st = dataSets(options.dir, options.maxSamples, sets); st.failed())
    return Status::error("--calibrate: ", st.message());
  // Each set runs the model at its own shapes (with options.atShapes).
  std::vector<size_t> setGroup(sets.size());
  for (size_t s = 0; s < sets.size(); ++s)
    MLCC_RETURN_IF_ERROR(groupOf(sets[s], options, groups, setGroup[s]));
  for (size_t g : setGroup) // the shapes some set has
    if (!groups[g].runner)
      MLCC_RETURN_IF_ERROR(compileGroupProbe(
          groups[g].owned ? *groups[g].owned : module, groups[g]));

  std::vector<Observation> seen(observed);
  bool histograms = options.method != CalibrationMethod::MinMax;
  int passes = histograms ? 2 : 1;
  bool tty = options.progress && isatty(2);
  for (int pass = 0; pass < passes; ++pass)
    for (size_t s = 0; s < sets.size(); ++s) {
      ShapeGroup &group = groups[setGroup[s]];
      std::vector<Tensor> inputs, outputs;
      MLCC_RETURN_IF_ERROR(readInputs(group.func, sets[s], inputs));
      if (Status st = group.runner->run(inputs, outputs); st.failed())
        return Status::error("--calibrate: set '", sets[s],
                             "': ", st.message());
      for (size_t i = 0; i < observed; ++i) {
        const Tensor &t = outputs[group.firstObserved + i];
        if (pass == 0)
          observeRange(seen[i], t);
        else
          observeHistogram(seen[i], t,
                           options.method == CalibrationMethod::Entropy);
      }
      if (tty || (options.progress && s + 1 == sets.size()))
        printProgress(pass * sets.size() + s + 1, passes * sets.size());
    }
  for (size_t i = 0; i < observed; ++i)
    if (std::isfinite(seen[i].min))
      out.ranges[i] = chooseRange(seen[i], options);
  if (options.maxLayerError < INFINITY) {
    // Measured on the first sets of the first set's shapes, at positions
    // that are every shape's.
    ShapeGroup &group = groups[setGroup.front()];
    llvm::DenseMap<Value, graph::ActivationRange> ranges;
    for (size_t i = 0; i < observed; ++i)
      if (out.ranges[i])
        ranges[group.observed[i]] = *out.ranges[i];
    std::vector<std::string> some;
    for (size_t s = 0; s < sets.size() && some.size() < kSensitivitySets; ++s)
      if (setGroup[s] == setGroup.front())
        some.push_back(sets[s]);
    llvm::DenseMap<Operation *, double> errors;
    MLCC_RETURN_IF_ERROR(measureSensitivity(group.owned ? *group.owned : module,
                                            group.func, ranges, some, errors));
    unsigned position = 0;
    for (Operation &op : group.func.getBody().front()) {
      if (auto it = errors.find(&op); it != errors.end())
        out.errors.emplace_back(position, it->second);
      ++position;
    }
  }
  return Status::success();
}

Status applyInt8(ModuleOp module, const Int8Calibration &calibration,
                 double maxLayerError, graph::QuantizationReport &report) {
  func::FuncOp func = mainFunction(module);
  if (!func)
    return Status::error("--quantize: the module has no main function");
  if (!calibration.keepAttention)
    graph::decomposeAttention(func);
  std::vector<Value> observed = graph::quantizableActivations(func);
  std::vector<Operation *> ops;
  for (Operation &op : func.getBody().front())
    ops.push_back(&op);
  if (observed.size() != calibration.ranges.size() ||
      llvm::any_of(calibration.errors,
                   [&](auto &e) { return e.first >= ops.size(); }))
    return Status::error("--quantize: the model simplifies to other layers "
                         "at these shapes than at the calibration data's (",
                         observed.size(), " against ",
                         calibration.ranges.size(), ")");
  llvm::DenseMap<Value, graph::ActivationRange> ranges;
  for (size_t i = 0; i < observed.size(); ++i)
    if (calibration.ranges[i])
      ranges[observed[i]] = *calibration.ranges[i];
  llvm::DenseMap<Operation *, double> errors;
  for (auto [position, error] : calibration.errors)
    errors[ops[position]] = error;
  report = graph::insertQuantDequant(func, ranges, errors, maxLayerError);
  if (calibration.keepAttention)
    func.walk([&](graph::AttentionOp attention) {
      report.kept.push_back(graph::describeOp(attention) +
                            ": attention stays one f32 op, over the run's "
                            "keys (a range of lengths)");
    });
  // The attentions whose matmuls stay f32 fuse again.
  PassManager pm(module.getContext());
  pm.addNestedPass<func::FuncOp>(graph::createFuseAttention());
  if (failed(pm.run(module)))
    return Status::error("--quantize: mlcc-fuse-attention failed");
  return Status::success();
}

Status quantizeInt8(ModuleOp module, const CalibrationOptions &options,
                    graph::QuantizationReport &report) {
  Int8Calibration calibration;
  MLCC_RETURN_IF_ERROR(calibrateInt8(module, options, calibration));
  if (calibration.ranges.empty())
    return Status::success();
  return applyInt8(module, calibration, options.maxLayerError, report);
}

} // namespace mlcc
