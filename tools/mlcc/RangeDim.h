//===- RangeDim.h - mlcc compile --dim NAME=LO..HI --------------*- C++ -*-===//
//
// A range of a dim the model maps over (one that is dim 0 of every input
// that has it: a batch) compiles the model for one item of the dim (and for
// each value given beside it: --dim batch=1..64,8) and proves that the
// model maps over it (mlcc/Driver/MappedDim.h); the runtime runs a call's
// items in chunks. Without any --dim, a model whose only symbolic dims are
// one batch gets the range 1..64 in chunks of 8 and 1.
// A range of any other dim (a sequence: --dim seq=1..512) is a range of
// lengths: the model is compiled for buckets of them (16, 32, 64, ... and
// the range's max, or the values given beside it) and proved to let no
// position past a run's length reach those before it (checkPaddedDim); the
// runtime pads a run to its bucket. With both ranges, --trim-padding NAME
// runs each item at the length its mask input NAME gives, where the
// attentions count its padding for nothing (mlcc/Driver/PaddingMask.h).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_TOOLS_MLCC_RANGEDIM_H
#define MLCC_TOOLS_MLCC_RANGEDIM_H

#include "Commands.h"

#include "HeaderWriter.h"

#include <optional>

namespace mlcc::cli {

/// The batch range a model gets without --dim, and the chunk compiled
/// beside one item: a model bound by its weights (an MLP, a transformer's
/// fc layers) reads them once per chunk, and one-item chunks were measured
/// 4x (batch 8) to 6x (batch 64) slower than the exact batch on such a
/// model, against 1.0x for chunks of 8 (tools/bench/range_chunks.py).
constexpr int64_t kDefaultBatchMax = 64;
constexpr int64_t kDefaultBatchChunk = 8;

struct DimRange {
  std::string name;
  int64_t min = 1, max = 1;
  /// The --dim text, for messages ("batch=1..64,8").
  std::string flag;
  /// The values given beside the range: chunks, or a range of lengths'
  /// buckets.
  std::vector<int64_t> values;
  /// A range of lengths (set by classifyDimRange).
  bool padded = false;
};

/// The smallest bucket of a range of lengths without values beside it.
constexpr int64_t kMinLengthBucket = 16;

/// The ranges among the --dim values of `options` ("NAME=LO..HI" as one
/// of a dim's values), classified (classifyDimRange): at most one of a
/// batch and one of lengths. False after printing an error: a malformed
/// range, two of a kind, a model that does not import.
bool findDimRanges(mlir::MLIRContext &ctx, const ModelOptions &options,
                   std::vector<DimRange> &ranges);

/// Whether one of `ranges` is a range of lengths.
bool hasRangeOfLengths(const std::vector<DimRange> &ranges);

/// The value a range stands for in a variant's --dim: its chunk of one.
std::string rangeChunkValue();

/// Sets `range.padded` when some input of the model has the dim elsewhere
/// than in dim 0. False when the model does not import (errors printed).
bool classifyDimRange(mlir::MLIRContext &ctx, const ModelOptions &options,
                      DimRange &range);

/// The values a range stands for in the variants' --dim: its chunk of one,
/// or a range of lengths' buckets (ascending, the max last).
std::vector<int64_t> rangeVariantValues(const DimRange &range);

/// Whether `value` (one of a --dim's comma-separated values) is a range.
bool isRangeValue(llvm::StringRef value);

/// For a model with symbolic dims and no --dim: `range` is "NAME=1..64"
/// when its only symbolic dims are one batch-like name (said on stderr),
/// else nothing. False when the model does not import (its errors printed,
/// once: the caller stops there).
bool defaultDimRange(mlir::MLIRContext &ctx, const ModelOptions &options,
                     std::optional<std::string> &range);

/// Proves that the model `one` (compiled with `oneOptions`, whose --dim
/// gives the range's dim 1) maps over the range's dim, and describes the
/// range for the object. False after printing why not.
bool describeRange(mlir::MLIRContext &ctx, const ModelOptions &oneOptions,
                   mlir::ModuleOp one, const DimRange &range,
                   InterfaceRange &out);

/// For a range of lengths: proves that the model (compiled with
/// `options`, a --dim value for every dim) lets no padding reach a run's
/// positions, marks the ops of each variant that must run over the run's
/// length, and describes the range for the object. False after printing
/// why not.
bool describePaddedRange(mlir::MLIRContext &ctx, const ModelOptions &options,
                         llvm::ArrayRef<mlir::ModuleOp> variants,
                         const DimRange &range, InterfacePaddedDim &out);

} // namespace mlcc::cli

#endif // MLCC_TOOLS_MLCC_RANGEDIM_H
