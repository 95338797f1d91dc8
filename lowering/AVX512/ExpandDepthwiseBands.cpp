//===- ExpandDepthwiseBands.cpp - A 1x1 conv and its depthwise conv -------===//
//
// MobileNet's inverted residual blocks expand C channels to 6C with a 1x1
// conv and filter them with a depthwise conv. On large images the expanded
// tensor (MobileNetV2's 112x112x96: 4.8 MB) does not fit in L2: the 1x1 conv
// writes it out to L3 or memory, and the depthwise conv reads it back.
//
// The pair runs instead in bands of the depthwise conv's output rows: for
// each band the 1x1 conv computes the expanded rows the band's window reads
// into a scratch of a few rows per channel block, and the depthwise conv
// reads them there while they are in L2. The expanded tensor never exists
// whole. Consecutive windows overlap (by 2 rows for a 3x3 stride 1, 1 for
// stride 2): a band copies those rows down from the top of the previous
// one's window in the scratch and expands only its new rows. A 1x1
// projection that alone reads the depthwise result (with its residual, if
// that is computed before the bands) runs on each band's rows too, from a
// second part of the scratch, so neither tensor between the three convs is
// written out.
//
// A depthwise conv without an expansion (MobileNetV2's first block, whose
// depthwise conv reads the stem's 112x112x32) runs in bands the same way
// when a projection alone reads it: its windows read X's rows where they
// are, and only the band's depthwise output goes to the scratch.
//
// The convs are the direct kernels of Conv.cpp on a few rows: the 1x1 conv
// reads rows of X's planes (ConvSpec::srcPlaneRows) and writes rows of the
// scratch's (dstPlaneRows); the depthwise conv reads the scratch's planes,
// with pads only where its window meets the image's edge, and writes rows
// of Y's (or of the scratch's second part, which the projection reads).
// Bands whose windows differ only by where they start share kernels,
// called with the bases moved.
//
// The threads take runs of consecutive bands, each run with a scratch of
// its own; the first band of a run expands its whole window. There are few
// runs (kRuns), so that little is expanded twice, which caps the pair at
// that many threads.
//
//===----------------------------------------------------------------------===//

#include "ExpandDepthwiseBands.h"
#include "ConvChannelPasses.h"
#include "Eltwise.h"
#include "SelectionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <algorithm>
#include <map>
#include <tuple>

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// The most bytes of one band's expanded rows (every channel block): a
/// quarter of a 1 MiB L2 (Zen 4 and 5), beside X's rows and Y's band.
constexpr int64_t kScratchBytes = 256 * 1024;
/// An expanded tensor up to this size stays in L2 between the two convs
/// anyway.
constexpr int64_t kMinExpandedBytes = 512 * 1024;
/// A depthwise result (no expansion) up to this size stays in L2 between
/// it and the projection: MnasNet's 112x112x16 (784 KiB) ran as fast
/// apart, MobileNetV2's 112x112x32 (1.5 MiB) 0.04 ms faster in bands (Zen
/// 4, one thread).
constexpr int64_t kMinDepthwiseBytes = 1024 * 1024;
/// Runs of consecutive bands over the threads, each with its own scratch.
constexpr int64_t kRuns = 4;

constexpr int64_t kPixelBytes = kConvBlock * 4;

int64_t windowSpan(const ConvSpec &dw) {
  return (dw.kernel[0] - 1) * dw.dilations[0] + 1;
}

/// The expanded rows one band of output rows reads: [lo, hi) of the padded
/// input, [a, b) of them inside the image.
struct Window {
  int64_t lo = 0, hi = 0, a = 0, b = 0;
};

/// The depthwise conv's output cut into `bands` bands of `bandRows` rows
/// (the last may be shorter), whose windows hold at most `scratchRows`.
struct Bands {
  int64_t oh = 0, ow = 0, bandRows = 0, bands = 0, scratchRows = 0;

  int64_t firstRow(int64_t band) const { return band * bandRows; }
  int64_t rowsOf(int64_t band) const {
    return std::min(oh, firstRow(band) + bandRows) - firstRow(band);
  }
  Window window(const ConvSpec &dw, int64_t band) const {
    Window w;
    w.lo = firstRow(band) * dw.strides[0] - dw.pads[0];
    w.hi = w.lo + (rowsOf(band) - 1) * dw.strides[0] + windowSpan(dw);
    w.a = std::clamp<int64_t>(w.lo, 0, dw.h);
    w.b = std::clamp<int64_t>(w.hi, 0, dw.h);
    return w;
  }
};

/// Bands of as many rows as keep a window's expanded rows (when expanding)
/// and, when a projection follows, the band's depthwise output within
/// kScratchBytes; none when one row's do not fit, or some window lies
/// wholly in the padding.
Bands planBands(const ConvSpec &dw, bool expand, bool project) {
  Bands g;
  if (convOutputSize(dw, g.oh, g.ow).failed())
    return g;
  const int64_t rowBytes = expand ? convBlocks(dw.c) * dw.w * kPixelBytes : 0;
  const int64_t outRowBytes =
      project ? convBlocks(dw.oc) * g.ow * kPixelBytes : 0;
  for (int64_t rows = g.oh; rows >= 1 && g.bandRows == 0; --rows)
    if (((rows - 1) * dw.strides[0] + windowSpan(dw)) * rowBytes +
            rows * outRowBytes <=
        kScratchBytes)
      g.bandRows = rows;
  if (g.bandRows == 0)
    return g;
  g.bands = (g.oh + g.bandRows - 1) / g.bandRows;
  for (int64_t band = 0; band < g.bands; ++band) {
    Window w = g.window(dw, band);
    if (w.b <= w.a) {
      g.bands = 0;
      return g;
    }
    g.scratchRows = std::max(g.scratchRows, w.b - w.a);
  }
  return g;
}

/// What one band does: copies `carried` expanded rows from scratch row
/// `carriedFrom` to the top, expands `expandRows` rows of X from row
/// `expandFirst` into the scratch from row `carried`, and filters its
/// window (`windowRows` rows with pads `padTop` and `padBottom`) into
/// output rows from `outFirst`.
struct BandStep {
  int64_t carried = 0, carriedFrom = 0;
  int64_t expandFirst = 0, expandRows = 0;
  int64_t windowRows = 0, padTop = 0, padBottom = 0;
  int64_t outFirst = 0, outRows = 0;

  /// What its code depends on (not where its rows start).
  auto key() const {
    return std::make_tuple(carried, carriedFrom, expandRows, windowRows, padTop,
                           padBottom, outRows);
  }
};

/// Band `band` expanding its whole window, or (`carry`) only the rows the
/// previous band's window did not hold, when those can be copied down
/// without the copy overwriting its own source.
BandStep stepOf(const ConvSpec &dw, const Bands &g, int64_t band, bool carry) {
  const Window w = g.window(dw, band);
  BandStep s;
  s.expandFirst = w.a;
  s.expandRows = w.b - w.a;
  s.windowRows = w.b - w.a;
  s.padTop = w.a - w.lo;
  s.padBottom = w.hi - w.b;
  s.outFirst = g.firstRow(band);
  s.outRows = g.rowsOf(band);
  if (carry && band > 0) {
    const Window p = g.window(dw, band - 1);
    const int64_t overlap = std::min(p.b, w.b) - w.a, shift = w.a - p.a;
    if (overlap > 0 && shift >= overlap) {
      s.carried = overlap;
      s.carriedFrom = shift;
      s.expandFirst = w.a + overlap;
      s.expandRows = w.b - s.expandFirst;
    }
  }
  return s;
}

/// Consecutive bands [first, end) whose steps share code.
struct BandClass {
  int64_t first = 0, end = 0;
  BandStep whole, carried;
};

} // namespace

namespace {

/// One image, 2-D, none of the kernel's variants for parts of tensors.
bool plainConv2d(const ConvSpec &s) {
  return s.n == 1 && s.d == 1 && s.depthKernel == 1 && !s.plainInput &&
         s.dstFrame[0] == 0 && s.rowBand[1] == 0 && s.srcPlaneRows == 0 &&
         s.dstPlaneRows == 0;
}

/// A dense 1x1 conv of stride 1 without pads that runs in one pass.
bool pointwise(const ConvSpec &s) {
  return s.group == 1 && s.kernel[0] == 1 && s.kernel[1] == 1 &&
         s.strides[0] == 1 && s.strides[1] == 1 &&
         std::all_of(std::begin(s.pads), std::end(s.pads),
                     [](int64_t p) { return p == 0; }) &&
         convChannelPassBlocks(s) == 0;
}

} // namespace

bool expandDepthwiseApplies(const ConvSpec &expand, const ConvSpec &dw) {
  if (!plainConv2d(expand) || !plainConv2d(dw) || expand.residual ||
      dw.residual || !pointwise(expand) || !isDepthwiseConv(dw) ||
      dw.c != expand.oc || dw.h != expand.h || dw.w != expand.w)
    return false;
  const int64_t expandedBytes = convBlocks(dw.c) * dw.h * dw.w * kPixelBytes;
  return expandedBytes > kMinExpandedBytes &&
         planBands(dw, /*expand=*/true, /*project=*/false).bands > 1;
}

bool projectionApplies(const ConvSpec &dw, const ConvSpec &project,
                       bool expanded) {
  int64_t oh = 0, ow = 0;
  return plainConv2d(project) && pointwise(project) &&
         !convOutputSize(dw, oh, ow).failed() && project.c == dw.oc &&
         project.h == oh && project.w == ow &&
         planBands(dw, expanded, /*project=*/true).bands > 1;
}

bool depthwiseProjectionApplies(const ConvSpec &dw, const ConvSpec &project) {
  int64_t oh = 0, ow = 0;
  if (!plainConv2d(dw) || dw.residual || !isDepthwiseConv(dw) ||
      convOutputSize(dw, oh, ow).failed())
    return false;
  const int64_t dwBytes = convBlocks(dw.oc) * oh * ow * kPixelBytes;
  return dwBytes > kMinDepthwiseBytes &&
         projectionApplies(dw, project, /*expanded=*/false);
}

LogicalResult emitExpandDepthwiseBands(Operation *op, OpLoweringContext &ctx,
                                       const BandedConvs &convs) {
  const ConvSpec *expand = convs.expand ? &convs.expand->spec : nullptr;
  const ConvSpec &dw = convs.depthwise.spec;
  const ConvSpec *project = convs.project ? &convs.project->spec : nullptr;
  const Bands g = planBands(dw, expand != nullptr, project != nullptr);
  const int64_t blocks = convBlocks(dw.c);
  const int64_t rowBytes = dw.w * kPixelBytes; // of X and of the scratch
  const int64_t planeBytes = g.scratchRows * rowBytes;
  // Per run: the windows' rows (expanding), then (projecting) the band's
  // output rows.
  const int64_t windowBytes = expand ? blocks * planeBytes : 0;
  const int64_t scratchBytes =
      windowBytes +
      (project ? convBlocks(dw.oc) * g.bandRows * g.ow * kPixelBytes : 0);
  const int64_t dstRowBytes = g.ow * kPixelBytes;
  const int64_t runs = std::min(g.bands, kRuns);

  // Kernels by what their code depends on.
  std::map<int64_t, std::string> expandKernels, copyKernels, projectKernels;
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::string> dwKernels;
  auto kernelsFor = [&](const BandStep &s) {
    if (s.carried && !copyKernels.count(s.carried)) {
      EltwiseSpec copy; // no ops: a copy of src[0]
      copy.name = dw.name + "_carry";
      copy.n = s.carried * dw.w * kConvBlock;
      if (!addGeneratedKernel(op, ctx, generateEltwise, copy, copy.name,
                              copyKernels[s.carried]))
        return false;
    }
    if (s.expandRows && !expandKernels.count(s.expandRows)) {
      ConvSpec part = *expand;
      part.h = s.expandRows;
      part.srcPlaneRows = expand->h;
      part.dstPlaneRows = g.scratchRows;
      if (!addGeneratedKernel(op, ctx, generateConv, part,
                              expand->name + "_band",
                              expandKernels[s.expandRows]))
        return false;
    }
    auto key = std::make_tuple(s.windowRows, s.padTop, s.padBottom);
    if (!dwKernels.count(key)) {
      ConvSpec part = dw;
      part.h = s.windowRows;
      part.pads[0] = s.padTop;
      part.pads[2] = s.padBottom;
      part.srcPlaneRows = expand ? g.scratchRows : dw.h;
      part.dstPlaneRows = project ? g.bandRows : g.oh;
      if (!addGeneratedKernel(op, ctx, generateConv, part, dw.name + "_band",
                              dwKernels[key]))
        return false;
    }
    if (project && !projectKernels.count(s.outRows)) {
      ConvSpec part = *project;
      part.h = s.outRows;
      part.srcPlaneRows = g.bandRows;
      part.dstPlaneRows = g.oh;
      if (!addGeneratedKernel(op, ctx, generateConv, part,
                              project->name + "_band",
                              projectKernels[s.outRows]))
        return false;
    }
    return true;
  };
  // Without an expansion there is nothing to carry, nor to expand.
  auto step = [&](int64_t of, bool carry) {
    BandStep s = stepOf(dw, g, of, carry && expand);
    if (!expand)
      s.expandRows = 0;
    return s;
  };
  std::vector<BandClass> classes;
  for (int64_t band = 0; band < g.bands;) {
    BandClass c{band, band + 1, step(band, false), step(band, true)};
    while (c.end < g.bands && step(c.end, false).key() == c.whole.key() &&
           step(c.end, true).key() == c.carried.key())
      ++c.end;
    if (!kernelsFor(c.whole) || !kernelsFor(c.carried))
      return failure();
    classes.push_back(c);
    band = c.end;
  }

  std::vector<float> packedExpand, packedDw, packedProject;
  if (expand)
    packConvWeights(convs.expand->weights.data(), expand->oc, expand->c, 1, 1,
                    packedExpand);
  packDepthwiseConvWeights(convs.depthwise.weights.data(), dw.c, dw.kernel[0],
                           dw.kernel[1], packedDw);
  if (project)
    packConvWeights(convs.project->weights.data(), project->oc, project->c, 1,
                    1, packedProject);
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  auto i64 = [&](int64_t c) -> Value {
    return b.create<arith::ConstantIntOp>(loc, c, 64);
  };
  auto add = [&](Value x, Value y) -> Value {
    return b.create<arith::AddIOp>(loc, x, y);
  };
  auto mul = [&](Value x, int64_t c) -> Value {
    return b.create<arith::MulIOp>(loc, x, i64(c));
  };
  Value absent = i64(0);
  Value scratch = ctx.address(
      ctx.scratch(MemRefType::get({runs * scratchBytes / 4}, b.getF32Type())));
  enum Field {
    Src,
    ExpandW,
    ExpandBias,
    DwW,
    DwBias,
    Dst,
    Scratch,
    ProjectW,
    ProjectBias,
    Residual
  };
  SmallVector<Value> fields{
      convs.src,
      expand ? ctx.addData(expand->name + "_packed", bytesOf(packedExpand))
             : absent,
      expand ? convs.expand->bias : absent,
      ctx.addData(dw.name + "_packed", bytesOf(packedDw)),
      convs.depthwise.bias,
      convs.dst,
      scratch,
      project ? ctx.addData(project->name + "_packed", bytesOf(packedProject))
              : absent,
      project ? convs.project->bias : absent,
      convs.residual ? convs.residual : absent};

  ctx.parallelForRanges(
      runs, fields, [&](Value begin, Value end, ValueRange f) {
        // Runs [begin, end) are bands [begin * bands / runs, ...): one stretch,
        // on the scratch of run `begin`.
        auto bandOf = [&](Value run) -> Value {
          return b.create<arith::DivSIOp>(loc, mul(run, g.bands), i64(runs));
        };
        Value first = bandOf(begin), last = bandOf(end);
        Value slot = add(f[Scratch], mul(begin, scratchBytes));
        Value none = i64(0);
        auto emitStep = [&](const BandStep &s, Value moved) {
          for (int64_t block = 0; s.carried && block < blocks; ++block) {
            Value plane = add(slot, i64(block * planeBytes));
            ctx.callKernel(copyKernels.at(s.carried),
                           {add(plane, i64(s.carriedFrom * rowBytes)), none,
                            none, none, plane,
                            i64(s.carried * dw.w * kConvBlock)});
          }
          // X's rows from the first one to expand (without an expansion,
          // the window's first).
          Value srcRows =
              add(f[Src], mul(add(i64(s.expandFirst),
                                  mul(moved, g.bandRows * dw.strides[0])),
                              rowBytes));
          if (s.expandRows)
            ctx.callKernel(expandKernels.at(s.expandRows),
                           {srcRows, f[ExpandW], f[ExpandBias],
                            add(slot, i64(s.carried * rowBytes)), none});
          Value out =
              mul(add(i64(s.outFirst), mul(moved, g.bandRows)), dstRowBytes);
          Value window = expand ? slot : srcRows;
          const std::string &dwKernel = dwKernels.at(
              std::make_tuple(s.windowRows, s.padTop, s.padBottom));
          if (!project) {
            ctx.callKernel(dwKernel,
                           {window, f[DwW], f[DwBias], add(f[Dst], out), none});
            return;
          }
          // The band's depthwise output goes to the scratch after the
          // windows, and the projection reads it there.
          Value band = add(slot, i64(windowBytes));
          ctx.callKernel(dwKernel, {window, f[DwW], f[DwBias], band, none});
          ctx.callKernel(projectKernels.at(s.outRows),
                         {band, f[ProjectW], f[ProjectBias], add(f[Dst], out),
                          convs.residual ? add(f[Residual], out) : none});
        };
        auto toIndex = [&](Value v) -> Value {
          return b.create<arith::IndexCastOp>(loc, b.getIndexType(), v);
        };
        auto loop =
            b.create<scf::ForOp>(loc, toIndex(first), toIndex(last),
                                 b.create<arith::ConstantIndexOp>(loc, 1));
        OpBuilder::InsertionGuard inLoop(b);
        b.setInsertionPointToStart(loop.getBody());
        Value band = b.create<arith::IndexCastOp>(loc, b.getI64Type(),
                                                  loop.getInductionVar());
        Value startsRun =
            b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, band, first);
        // A band of a class: its whole window at the start of a run, else the
        // carried form where it differs.
        auto emitClass = [&](const BandClass &c) {
          Value moved = b.create<arith::SubIOp>(loc, band, i64(c.first));
          if (c.whole.key() == c.carried.key()) {
            emitStep(c.whole, moved);
            return;
          }
          auto ifStart = b.create<scf::IfOp>(loc, startsRun, /*withElse=*/true);
          OpBuilder::InsertionGuard inIf(b);
          b.setInsertionPointToStart(&ifStart.getThenRegion().front());
          emitStep(c.whole, moved);
          b.setInsertionPointToStart(&ifStart.getElseRegion().front());
          emitStep(c.carried, moved);
        };
        // A chain of ifs over the classes, the last in the innermost else.
        for (size_t c = 0; c + 1 < classes.size(); ++c) {
          Value inClass = b.create<arith::CmpIOp>(
              loc, arith::CmpIPredicate::slt, band, i64(classes[c].end));
          auto ifClass = b.create<scf::IfOp>(loc, inClass, /*withElse=*/true);
          b.setInsertionPointToStart(&ifClass.getThenRegion().front());
          emitClass(classes[c]);
          b.setInsertionPointToStart(&ifClass.getElseRegion().front());
        }
        emitClass(classes.back());
      });
  return success();
}

} // namespace mlcc::avx512
