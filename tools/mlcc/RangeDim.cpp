//===- RangeDim.cpp - mlcc compile --dim NAME=LO..HI ----------------------===//

#include "RangeDim.h"

#include "mlcc/Driver/Driver.h"
#include "mlcc/Driver/MappedDim.h"
#include "mlcc/Driver/PaddingMask.h"

#include "GraphDialect.h"
#include "RunTimeExtents.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace mlcc::cli {

bool isRangeValue(llvm::StringRef value) { return value.contains(".."); }

std::string rangeChunkValue() { return "1"; }

bool findDimRanges(mlir::MLIRContext &ctx, const ModelOptions &options,
                   std::vector<DimRange> &ranges) {
  ranges.clear();
  for (const std::string &d : options.dims) {
    std::optional<DimRange> range;
    size_t eq = d.find('=');
    if (eq == std::string::npos)
      continue; // loadAndSimplify says what is wrong
    llvm::SmallVector<llvm::StringRef> values;
    llvm::StringRef(d).substr(eq + 1).split(values, ',');
    for (llvm::StringRef value : values) {
      if (!isRangeValue(value))
        continue;
      auto [lo, hi] = value.split("..");
      DimRange r{d.substr(0, eq), 0, 0, d};
      if (lo.getAsInteger(10, r.min) || hi.getAsInteger(10, r.max) ||
          r.min < 1 || r.max < r.min) {
        printErrors({"--dim '" + d +
                     "': a range is NAME=LO..HI with "
                     "1 <= LO <= HI (--dim batch=1..64)"});
        return false;
      }
      if (range) {
        printErrors({"--dim '" + d + "': a dim has one range"});
        return false;
      }
      range = r;
    }
    if (!range)
      continue;
    // The values beside a range are chunks (or buckets) that must fit in
    // it.
    for (llvm::StringRef value : values) {
      int64_t chunk = 0;
      if (isRangeValue(value))
        continue;
      if (value.getAsInteger(10, chunk) || chunk < 1 || chunk > range->max) {
        printErrors({"--dim '" + d + "': " + value.str() +
                     " is no chunk of the range (1.." +
                     std::to_string(range->max) + ")"});
        return false;
      }
      range->values.push_back(chunk);
    }
    if (!classifyDimRange(ctx, options, *range))
      return false;
    // One range of each kind: the runtime pads each chunk of a batch.
    for (const DimRange &other : ranges)
      if (other.padded == range->padded) {
        printErrors({"--dim '" + d + "': one dim may be a range " +
                     (range->padded ? "of lengths" : "of a batch") + " (" +
                     other.flag + " is one already)"});
        return false;
      }
    ranges.push_back(*range);
  }
  if (!options.trimPadding.empty() &&
      (ranges.size() != 2 || ranges[0].padded == ranges[1].padded)) {
    printErrors({"--trim-padding " + options.trimPadding +
                 ": needs a batch range and a range of lengths (--dim "
                 "batch=1..8 --dim seq=1..512), so that each item of a call "
                 "can run at its own length"});
    return false;
  }
  return true;
}

bool classifyDimRange(MLIRContext &ctx, const ModelOptions &options,
                      DimRange &range) {
  // The dims as the model declares them: nothing fixed, not even by the
  // data `bench --data` times.
  ModelOptions imported = options;
  imported.pipeline = "none";
  imported.dims.clear();
  imported.dataShapes.clear();
  imported.batchDefaultsToOne = false;
  OwningOpRef<ModuleOp> module = loadAndSimplify(ctx, imported);
  if (!module)
    return false;
  func::FuncOp main = mainFunction(*module);
  range.padded = false;
  for (unsigned i = 0; main && i < main.getNumArguments(); ++i) {
    auto type = dyn_cast<RankedTensorType>(main.getArgument(i).getType());
    auto params = main.getArgAttrOfType<ArrayAttr>(i, "graph.dim_params");
    for (int64_t d = 1; type && d < type.getRank(); ++d)
      range.padded |=
          type.isDynamicDim(d) && graph::dimParamName(params, d) == range.name;
  }
  return true;
}

std::vector<int64_t> rangeVariantValues(const DimRange &range) {
  if (!range.padded)
    return {1};
  std::vector<int64_t> buckets = range.values;
  if (buckets.empty())
    for (int64_t b = kMinLengthBucket; b < range.max; b *= 2)
      if (b >= range.min)
        buckets.push_back(b);
  buckets.push_back(range.max);
  llvm::sort(buckets);
  buckets.erase(std::unique(buckets.begin(), buckets.end()), buckets.end());
  return buckets;
}

// --trim-padding NAME: an item runs at the length its mask NAME gives, on
// the first positions of its own tensors (so each must hold them right
// after the batch), when the attentions count NAME's padding for nothing.
static bool trimPadding(ModuleOp one, const ModelOptions &options,
                        const DimRange &range, InterfacePaddedDim &out) {
  const std::string &mask = options.trimPadding;
  func::FuncOp main = mainFunction(one);
  std::vector<std::string> names;
  for (unsigned i = 0; i < main.getNumArguments(); ++i)
    names.push_back(inputName(main, i));
  for (unsigned i = 0; i < main.getNumResults(); ++i)
    names.push_back(outputName(main, i));
  for (size_t i = 0; i < names.size(); ++i) {
    if (out.axes[i] >= 0 && out.axes[i] != 1) {
      printErrors({"--trim-padding " + mask + ": '" + names[i] +
                   "' has the positions of " + range.name + " in dim " +
                   std::to_string(out.axes[i]) +
                   "; an item runs on its first positions only where they "
                   "are dim 1, right after the batch"});
      return false;
    }
    if (names[i] == mask && i < main.getNumArguments())
      out.maskInput = static_cast<int32_t>(i);
  }
  int64_t axis = out.maskInput >= 0 ? out.axes[out.maskInput] : -1;
  if (ref::Status s = checkPaddingMask(one, mask, axis); s.failed()) {
    printErrors({"--trim-padding " + mask + ": " + s.message()});
    return false;
  }
  return true;
}

bool hasRangeOfLengths(const std::vector<DimRange> &ranges) {
  return llvm::any_of(ranges,
                      [](const DimRange &range) { return range.padded; });
}

bool describePaddedRange(MLIRContext &ctx, const ModelOptions &options,
                         ArrayRef<ModuleOp> variants, const DimRange &range,
                         InterfacePaddedDim &out) {
  out = {range.name, range.min, range.max, {}};
  // The model at n and 2n positions: the first n of the second must be the
  // first, whatever the others hold.
  int64_t n = std::clamp<int64_t>(range.max / 2, 1, kMinLengthBucket);
  auto at = [&](int64_t extent) {
    ModelOptions o = options;
    o.passChanges = false;
    for (std::string &d : o.dims)
      if (llvm::StringRef(d).starts_with(range.name + "="))
        d = range.name + "=" + std::to_string(extent);
    return loadAndSimplify(ctx, o);
  };
  OwningOpRef<ModuleOp> one = at(n), two = at(2 * n);
  if (!one || !two)
    return false;
  std::vector<unsigned> lengthOps;
  std::vector<std::pair<unsigned, int64_t>> rowOps;
  if (ref::Status s =
          checkPaddedDim(*one, *two, range.name, out.axes, lengthOps, rowOps);
      s.failed()) {
    printErrors({"--dim " + range.flag + ": " + s.message(),
                 "a range of lengths compiles only a model whose positions "
                 "past a run's length cannot change those before it; give "
                 "values instead, --dim " +
                     range.name + "=16,128 compiles a variant for each"});
    return false;
  }
  if (!options.trimPadding.empty() && !trimPadding(*one, options, range, out))
    return false;
  // Each variant is the same ops (the proof's): mark those that take the
  // run's length, and those that may skip the positions past it.
  Block &proved = mainFunction(*two).getBody().front();
  for (ModuleOp variant : variants) {
    Block &body = mainFunction(variant).getBody().front();
    auto ops = body.without_terminator();
    auto provedOps = proved.without_terminator();
    if (std::distance(ops.begin(), ops.end()) !=
            std::distance(provedOps.begin(), provedOps.end()) ||
        !llvm::all_of(llvm::zip(ops, provedOps), [](auto pair) {
          return std::get<0>(pair).getName() == std::get<1>(pair).getName();
        })) {
      printErrors({"--dim " + range.flag +
                   ": the model simplifies to other ops at some of its "
                   "buckets than at " +
                   range.name + "=" + std::to_string(2 * n) +
                   "; give values instead"});
      return false;
    }
    std::vector<Operation *> list;
    for (Operation &op : ops)
      list.push_back(&op);
    for (unsigned i : lengthOps)
      list[i]->setAttr(graph::kRunTimeLengthAttr, UnitAttr::get(&ctx));
    for (auto [i, axis] : rowOps)
      list[i]->setAttr(graph::kPaddedAxisAttr,
                       IntegerAttr::get(IntegerType::get(&ctx, 64), axis));
  }
  return true;
}

bool defaultDimRange(MLIRContext &ctx, const ModelOptions &options,
                     std::optional<std::string> &range) {
  range.reset();
  ModelOptions imported = options;
  imported.pipeline = "none";
  OwningOpRef<ModuleOp> module = loadAndSimplify(ctx, imported);
  if (!module)
    return false;
  func::FuncOp main = mainFunction(*module);
  if (!main)
    return true;
  std::string batch;
  for (unsigned i = 0; i < main.getNumArguments(); ++i) {
    auto type = dyn_cast<RankedTensorType>(main.getArgument(i).getType());
    auto params = main.getArgAttrOfType<ArrayAttr>(i, "graph.dim_params");
    if (!type)
      continue;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d))
        continue;
      std::string name = graph::dimParamName(params, d).str();
      bool batchLike =
          llvm::StringRef(name).lower().find("batch") != std::string::npos ||
          name == "N";
      if (d != 0 || !batchLike || (!batch.empty() && batch != name))
        return true;
      batch = name;
    }
  }
  if (batch.empty())
    return true;
  std::fprintf(stderr,
               "mlcc: note: symbolic dim '%s' compiled as the range 1..%lld "
               "in chunks of %lld and 1 (a batch); --dim %s=N or "
               "%s=LO..HI chooses\n",
               batch.c_str(), static_cast<long long>(kDefaultBatchMax),
               static_cast<long long>(kDefaultBatchChunk), batch.c_str(),
               batch.c_str());
  range = batch + "=1.." + std::to_string(kDefaultBatchMax) + "," +
          std::to_string(kDefaultBatchChunk);
  return true;
}

bool describeRange(MLIRContext &ctx, const ModelOptions &oneOptions,
                   ModuleOp one, const DimRange &range, InterfaceRange &out) {
  out = {range.name, range.min, range.max, {}};
  // The model at two items, to compare with one.
  ModelOptions twoOptions = oneOptions;
  twoOptions.passChanges = false;
  for (std::string &d : twoOptions.dims)
    if (llvm::StringRef(d).starts_with(range.name + "="))
      d = range.name + "=2";
  OwningOpRef<ModuleOp> two = loadAndSimplify(ctx, twoOptions);
  if (!two)
    return false;
  std::vector<bool> mapped;
  if (ref::Status s = checkMappedDim(one, *two, range.name, mapped);
      s.failed()) {
    printErrors({"--dim " + range.flag + ": " + s.message(),
                 "a range compiles only for a dim the model maps over (a "
                 "batch); give values instead, --dim " +
                     range.name + "=1,8 compiles a variant for each"});
    return false;
  }
  out.mapped = mapped;
  return true;
}

} // namespace mlcc::cli
