//===- ShapeVariants.cpp - The shapes one object is compiled for ----------===//

#include "ShapeVariants.h"

#include "mlcc/Driver/Calibration.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace mlcc::cli {

std::vector<ModuleOp> ShapeVariants::views() const {
  std::vector<ModuleOp> out;
  for (const OwningOpRef<ModuleOp> &m : modules)
    out.push_back(*m);
  return out;
}

bool hasSeveralShapes(const std::vector<std::string> &dims) {
  return llvm::any_of(dims, [](const std::string &d) {
    llvm::StringRef values = llvm::StringRef(d).split('=').second;
    return values.contains(',') || isRangeValue(values);
  });
}

// The options of each variant, with one value per dim (every combination
// of several such dims). Empty after printing an error.
// A range stands for its rangeVariantValues.
static std::vector<ModelOptions>
shapeOptions(const ModelOptions &options, const std::vector<DimRange> &ranges) {
  std::vector<ModelOptions> variants{options};
  for (ModelOptions &v : variants)
    v.dims.clear();
  for (const std::string &d : options.dims) {
    size_t eq = d.find('=');
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(d).substr(eq == std::string::npos ? d.size() : eq + 1)
        .split(parts, ',');
    // A range stands for its chunk of one item beside the chunks given
    // with it, or for the buckets of a range of lengths (RangeDim.h).
    std::string name = d.substr(0, eq);
    auto range = llvm::find_if(
        ranges, [&](const DimRange &r) { return r.name == name; });
    std::vector<std::string> chunks;
    auto add = [&](const std::string &chunk) {
      if (!llvm::is_contained(chunks, chunk))
        chunks.push_back(chunk);
    };
    if (range != ranges.end())
      for (int64_t value : rangeVariantValues(*range))
        add(std::to_string(value));
    for (llvm::StringRef value : parts)
      if (!isRangeValue(value))
        add(value.str());
    std::vector<ModelOptions> next;
    for (const ModelOptions &v : variants)
      for (const std::string &value : chunks) {
        next.push_back(v);
        next.back().dims.push_back(d.substr(0, eq + 1) + value);
      }
    variants = std::move(next);
  }
  constexpr size_t kMaxVariants = 16;
  if (variants.size() > kMaxVariants) {
    printErrors({"the --dim values ask for " + std::to_string(variants.size()) +
                 " shapes; at most " + std::to_string(kMaxVariants) +
                 " variants fit in one object"});
    return {};
  }
  return variants;
}

// The ops of every variant that mix positions are told the length.
static bool describeLengths(MLIRContext &ctx,
                            const std::vector<ModelOptions> &shapes,
                            ShapeVariants &out, const DimRange &range,
                            bool stats) {
  if (!describePaddedRange(ctx, shapes.front(), out.views(), range,
                           out.interfacePadded.emplace()))
    return false;
  if (stats)
    std::printf(
        "range of lengths %s=%lld..%lld: %zu buckets, %zu of the "
        "model's tensors padded, run by the smallest bucket that "
        "holds a run\n",
        range.name.c_str(), static_cast<long long>(range.min),
        static_cast<long long>(range.max), rangeVariantValues(range).size(),
        static_cast<size_t>(llvm::count_if(out.interfacePadded->axes,
                                           [](int64_t a) { return a >= 0; })));
  return true;
}

// The first variant of one item proves the model maps over the dim.
static bool describeBatch(MLIRContext &ctx,
                          const std::vector<ModelOptions> &shapes,
                          ShapeVariants &out, const DimRange &range,
                          bool stats) {
  const std::string one = range.name + "=" + rangeChunkValue();
  size_t i = 0;
  while (!llvm::is_contained(shapes[i].dims, one))
    ++i;
  if (!describeRange(ctx, shapes[i], *out.modules[i], range,
                     out.interfaceRange.emplace()))
    return false;
  if (stats)
    std::printf("range %s=%lld..%lld: dim 0 of %zu of the model's "
                "tensors, run in chunks of the compiled variants\n",
                range.name.c_str(), static_cast<long long>(range.min),
                static_cast<long long>(range.max),
                static_cast<size_t>(
                    llvm::count(out.interfaceRange->mapped, true)));
  return true;
}

// --quantize with ranges: one calibration, of the model at the first
// calibration set's shapes, quantises every variant alike. Per-tensor
// scales do not depend on the batch or the length, and quantising does not
// change which item or position an op reads, so the f32 model's proofs
// hold for them: the ops they marked keep their marks, and the Q/DQ ops it
// adds compute every position. Attention stays one f32 op with a range of
// lengths, for its run-time length.
static bool quantizeVariants(MLIRContext &ctx, const ModelOptions &model,
                             ShapeVariants &out, bool stats) {
  CalibrationOptions calibration;
  if (!calibrationOptions(ctx, model, calibration))
    return false;
  calibration.keepAttention = hasRangeOfLengths(out.ranges);
  ModelOptions atData = model;
  atData.quantize.clear();
  llvm::erase_if(atData.dims, [](const std::string &d) {
    return isRangeValue(llvm::StringRef(d).split('=').second);
  });
  std::vector<std::string> sets;
  ref::Status s = dataSets(model.calibrate, 1, sets);
  if (s.ok())
    s = readInputShapes(sets.front(), atData.dataShapes);
  OwningOpRef<ModuleOp> calibrated;
  if (s.ok() && !(calibrated = loadAndSimplify(ctx, atData)))
    return false;
  Int8Calibration decided;
  if (s.ok())
    s = calibrateInt8(*calibrated, calibration, decided);
  for (size_t i = 0; s.ok() && i < out.modules.size(); ++i) {
    graph::QuantizationReport report;
    s = applyInt8(*out.modules[i], decided, calibration.maxLayerError, report);
    if (s.ok() && stats && i == 0)
      printQuantization(report);
  }
  if (s.failed()) {
    printErrors({"--calibrate " + model.calibrate + ": " + s.message()});
    return false;
  }
  return true;
}

bool loadShapeVariants(MLIRContext &ctx, const ModelOptions &model, bool stats,
                       ShapeVariants &out) {
  out = {};
  if (!findDimRanges(ctx, model, out.ranges))
    return false;
  // A range's variants and its proof are the f32 model, quantised after.
  ModelOptions f32 = model;
  if (!out.ranges.empty())
    f32.quantize.clear();
  std::vector<ModelOptions> shapes = shapeOptions(f32, out.ranges);
  if (shapes.empty())
    return false;
  for (ModelOptions &shape : shapes) {
    shape.passChanges = stats && out.modules.empty();
    out.modules.push_back(loadAndSimplify(ctx, shape));
    if (!out.modules.back())
      return false;
  }
  for (const DimRange &range : out.ranges)
    if (!(range.padded ? describeLengths(ctx, shapes, out, range, stats)
                       : describeBatch(ctx, shapes, out, range, stats)))
      return false;
  return model.quantize.empty() || out.ranges.empty() ||
         quantizeVariants(ctx, model, out, stats);
}

} // namespace mlcc::cli
