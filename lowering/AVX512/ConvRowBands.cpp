//===- ConvRowBands.cpp - A conv split over threads by rows ---------------===//
//
// Split by channel blocks, a conv with few of them leaves threads idle (two
// or three chunks) or loses the two-block kernel's reuse of each input load
// (chunks of one block). Bands of output rows keep that reuse: each band
// computes every channel block of its rows with the whole kernel's register
// blocking, and there are enough bands to keep every thread busy.
//
// A band kernel addresses rows from the tensors' bases (ConvSpec::rowBand).
// Bands whose rows read the same kernel taps share one kernel, called with
// the bases moved by whole rows; so a 3x3 conv with padding has three: the
// top band (it reads the top padding), the bands inside, and the bottom one.
//
//===----------------------------------------------------------------------===//

#include "ConvRowBands.h"
#include "ChunkedKernelCalls.h"
#include "SelectionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// Bands a split aims for: the pool takes up to 4 chunks per thread, and
/// each chunk then holds consecutive bands (their input rows overlap).
constexpr int64_t kTargetBands = 16;
/// Fewer output rows than this are not split by rows.
constexpr int64_t kMinRows = 8;
/// A conv with more weights than this (half of a 1 MiB L2) is split by rows
/// only for want of channel chunks: each band would read them from L3.
constexpr int64_t kMaxBandWeightBytes = 512 * 1024;

/// A run of consecutive bands [first, end) computed by one kernel, generated
/// for band `first` and called for the others with the bases moved.
struct BandRun {
  int64_t first = 0, end = 0;
  std::string kernel;
};

} // namespace

bool splitsConvByRows(const ConvSpec &spec) {
  int64_t oh = 0, ow = 0;
  if (spec.n != 1 || convOutputSize(spec, oh, ow).failed() || oh < kMinRows)
    return false;
  // Chunks of two blocks (one for depthwise): with eight or more of them the
  // channel split balances and keeps the reuse.
  const int64_t blocks = convBlocks(spec.oc);
  const int64_t channelChunks = spec.group == 1 ? blocks / 2 : blocks;
  if (channelChunks < 8)
    return true;
  if (spec.group != 1)
    return false;
  // But each channel chunk reads the whole input, and each band all the
  // weights: split by rows when that reads fewer bytes, and the weights stay
  // in L2 from band to band. ResNet-50's 1x1 64 -> 256 convs at 56x56 (an
  // 800 KB input, 64 KB of weights) ran at 1.2x on 2 threads in channel
  // chunks; in bands 1.4x (Zen 5).
  const int64_t srcBytes =
      (spec.plainInput ? spec.c : convBlocks(spec.c) * kConvBlock) * spec.d *
      spec.h * spec.w * 4;
  const int64_t weightBytes =
      packedConvWeightsSize(spec.oc, spec.c, spec.kernel[0], spec.kernel[1]) *
      spec.depthKernel * 4;
  const int64_t bands = std::min(oh, kTargetBands);
  return weightBytes <= kMaxBandWeightBytes &&
         weightBytes * bands < srcBytes * channelChunks;
}

LogicalResult emitConvRowBands(Operation *op, OpLoweringContext &ctx,
                               const ConvSpec &spec, StringRef wholeKernel,
                               ArrayRef<Value> fields) {
  int64_t oh = 0, ow = 0;
  (void)convOutputSize(spec, oh, ow);
  const int64_t rows = (oh + kTargetBands - 1) / kTargetBands;
  const int64_t bands = (oh + rows - 1) / rows;
  // What a band's code depends on: its height and its rows' taps.
  auto signature = [&](int64_t band) {
    std::vector<std::pair<int64_t, int64_t>> taps;
    for (int64_t y = band * rows; y < std::min(oh, (band + 1) * rows); ++y)
      taps.push_back(convRowTaps(spec, y));
    return taps;
  };
  std::vector<BandRun> runs;
  for (int64_t band = 0; band < bands;) {
    auto taps = signature(band);
    int64_t end = band + 1;
    while (end < bands && signature(end) == taps)
      ++end;
    ConvSpec part = spec;
    part.rowBand[0] = band * rows;
    part.rowBand[1] = std::min(oh, (band + 1) * rows);
    std::string kernel;
    if (!addGeneratedKernel(op, ctx, generateConv, part, spec.name + "_rows",
                            kernel))
      return failure();
    runs.push_back({band, end, kernel});
    band = end;
  }

  // Bytes one band moves each base: src, weights, bias, dst, residual.
  const int64_t srcRowBytes = spec.w * (spec.plainInput ? 4 : kConvBlock * 4);
  const int64_t dstRowBytes = convDstRowBytes(spec);
  const int64_t bandBytes[] = {rows * spec.strides[0] * srcRowBytes, 0, 0,
                               rows * dstRowBytes,
                               spec.residual ? rows * dstRowBytes : 0};

  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  auto i64 = [&](int64_t c) -> Value {
    return b.create<arith::ConstantIntOp>(loc, c, 64);
  };
  // Band `band` of a run: the run's kernel with the bases moved from the
  // run's first band to this one.
  auto callRun = [&](const BandRun &run, Value band, ValueRange f) {
    Value moved = b.create<arith::SubIOp>(loc, band, i64(run.first));
    SmallVector<Value> args;
    for (auto [field, bytes] : llvm::zip(f, bandBytes))
      args.push_back(
          bytes == 0 ? field
                     : b.create<arith::AddIOp>(
                           loc, field,
                           b.create<arith::MulIOp>(loc, moved, i64(bytes))));
    ctx.callKernel(run.kernel, args);
  };
  emitWholeOrParallel(
      ctx, wholeKernel, fields, bands, [&](Value band, ValueRange f) {
        // A chain of ifs over the runs, the last run in the innermost else.
        OpBuilder::InsertionGuard inner(b);
        for (size_t r = 0; r + 1 < runs.size(); ++r) {
          Value inRun = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt,
                                                band, i64(runs[r].end));
          auto ifRun = b.create<scf::IfOp>(loc, inRun, /*withElse=*/true);
          b.setInsertionPointToStart(&ifRun.getThenRegion().front());
          callRun(runs[r], band, f);
          b.setInsertionPointToStart(&ifRun.getElseRegion().front());
        }
        callRun(runs.back(), band, f);
      });
  return success();
}

} // namespace mlcc::avx512
