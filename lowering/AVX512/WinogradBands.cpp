//===- WinogradBands.cpp - A Winograd conv in bands of tile rows ----------===//
//
// A band is a conv of its own over the input rows its tiles read: pads
// where those rows are outside the image, X's and Y's channel blocks the
// whole image's planes apart (WinogradSpec::xPlane, yPlane), its V and M
// positions x its tiles, one after the other in the conv's scratch. Bands
// differ only at the image's edges, so three kinds of band (first, inner,
// last) cover every shape; each kind has its two transforms and its GEMM.
//
//===----------------------------------------------------------------------===//

#include "WinogradBands.h"

#include "PackPanels.h"
#include "SelectionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// U up to this many bytes is read by every band; bigger U is better read
/// once, by the whole-image conv's GEMMs split by position: ResNet-50's
/// 28x28 convs (2.4 MB of U) took 0.30 ms on 2 threads in bands of one
/// tile row and 0.26 whole, its 56x56 ones (590 KB) 0.26 in bands and 0.36
/// whole (Zen 5, per op).
constexpr int64_t kMaxBandedUBytes = int64_t(1) << 20;
/// Tiles of a band at least: rows of its GEMMs.
constexpr int64_t kMinBandTiles = 8;

/// One kind of band: its spec, its kernels, and where its X starts
/// relative to its first tile row.
struct BandKind {
  WinogradSpec spec;
  int64_t rowShift = 0; // firstRow - r0 * m
  std::string input, gemm, output;
};

/// The bands of `rows` tile rows of one image and their kinds: those of the
/// first band, of the inner ones and of the last (equal kinds once; `first`,
/// `inner` and `last` index `kinds`).
struct BandPlan {
  SmallVector<BandKind, 3> kinds;
  int64_t bands = 0, first = 0, inner = 0, last = 0;
};

/// False for fewer than two bands, and when the inner bands differ (one
/// before a short last band reads past the image), which the band's index
/// alone could not tell apart.
bool planBands(const WinogradSpec &whole, int64_t rows, BandPlan &plan) {
  WinogradSpec spec = whole;
  spec.n = 1;
  plan.bands = rows > 0 ? (spec.tileRows() + rows - 1) / rows : 0;
  if (plan.bands < 2)
    return false;
  SmallVector<int64_t> kindOf;
  for (int64_t i = 0; i < plan.bands; ++i) {
    int64_t firstRow;
    WinogradSpec band = winogradBand(
        spec, i * rows, std::min(spec.tileRows(), (i + 1) * rows), firstRow);
    const int64_t shift = firstRow - i * rows * spec.m;
    auto same = llvm::find_if(plan.kinds, [&](const BandKind &k) {
      return k.spec.h == band.h &&
             std::equal(band.pads, band.pads + 4, k.spec.pads) &&
             k.rowShift == shift;
    });
    kindOf.push_back(same - plan.kinds.begin());
    if (same == plan.kinds.end())
      plan.kinds.push_back({band, shift, "", "", ""});
  }
  plan.first = kindOf.front();
  plan.last = kindOf.back();
  plan.inner = plan.bands > 2 ? kindOf[1] : plan.last;
  for (int64_t i = 1; i + 1 < plan.bands; ++i)
    if (kindOf[i] != plan.inner)
      return false;
  return true;
}

} // namespace

GemmSpec winogradGemm(const WinogradSpec &spec, std::string name) {
  GemmSpec gemm;
  gemm.name = std::move(name);
  gemm.m = spec.tiles();
  gemm.n = spec.mRowFloats();
  gemm.k = spec.c;
  gemm.lda = spec.vRowFloats();
  gemm.prefetchNextB = true; // U of position i + 1 follows that of i
  return gemm;
}

int64_t winogradBandRows(const WinogradSpec &spec) {
  const int64_t uBytes = spec.positions() * spec.c * spec.mRowFloats() * 4;
  if (uBytes > kMaxBandedUBytes)
    return 0;
  const int64_t rows = std::max<int64_t>(
      1, (kMinBandTiles + spec.tileCols() - 1) / spec.tileCols());
  BandPlan plan;
  return planBands(spec, rows, plan) ? rows : 0;
}

bool emitWinogradBands(Operation *op, OpLoweringContext &ctx,
                       const WinogradSpec &spec, int64_t rows,
                       const WinogradOperands &operands) {
  BandPlan plan;
  if (!planBands(spec, rows, plan))
    return op->emitError() << spec.name << ": no Winograd bands of " << rows
                           << " tile rows",
           false;
  const int64_t cp = spec.vRowFloats(), ocp = spec.mRowFloats();
  const int64_t positions = spec.positions();
  for (auto [index, kind] : llvm::enumerate(plan.kinds)) {
    const std::string name = spec.name + "_band" + std::to_string(index);
    if (!addGeneratedKernel(op, ctx, generateWinogradInput, kind.spec,
                            name + "_winograd_in", kind.input) ||
        !addGeneratedKernel(op, ctx, generateWinogradOutput, kind.spec,
                            name + "_winograd_out", kind.output))
      return false;
    GemmSpec gemm = winogradGemm(kind.spec, name + "_winograd_gemm");
    if (!addGeneratedKernel(op, ctx, generateGemm, gemm, gemm.name, kind.gemm))
      return false;
  }

  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  auto i64 = [&](int64_t v) -> Value {
    return b.create<arith::ConstantIntOp>(loc, v, 64);
  };
  const int64_t bandTiles = rows * spec.tileCols(),
                imageTiles = spec.tileRows() * spec.tileCols();
  const int64_t xRowBytes = spec.w * 16 * 4, yRowBytes = spec.outW() * 16 * 4;
  const int64_t xImageBytes = cp * spec.h * xRowBytes / 16,
                yImageBytes = ocp * spec.outH() * yRowBytes / 16;
  Value zero = i64(0);
  Value residual = operands.residual ? operands.residual : zero;
  Value bias = operands.bias ? operands.bias : zero;

  // Band `band` of image `image` (null for one image); fields: x, y,
  // residual, u, bias, v, m. Its V and M follow those of the tiles before
  // it.
  auto runBand = [&](const BandKind &kind, Value band, Value image,
                     ValueRange f) {
    auto at = [&](Value base, Value index, int64_t stride) -> Value {
      return b.create<arith::AddIOp>(
          loc, base, b.create<arith::MulIOp>(loc, index, i64(stride)));
    };
    auto inImage = [&](Value base, int64_t imageBytes) {
      return image ? at(base, image, imageBytes) : base;
    };
    Value x = at(inImage(f[0], xImageBytes), band, rows * spec.m * xRowBytes);
    x = b.create<arith::AddIOp>(loc, x, i64(kind.rowShift * xRowBytes));
    Value y = at(inImage(f[1], yImageBytes), band, rows * spec.m * yRowBytes);
    Value z = operands.residual ? at(inImage(f[2], yImageBytes), band,
                                     rows * spec.m * yRowBytes)
                                : f[2];
    Value firstTile = b.create<arith::MulIOp>(loc, band, i64(bandTiles));
    if (image)
      firstTile = b.create<arith::AddIOp>(
          loc, firstTile, b.create<arith::MulIOp>(loc, image, i64(imageTiles)));
    Value vBand = at(f[5], firstTile, positions * cp * 4);
    Value mBand = at(f[6], firstTile, positions * ocp * 4);
    Value none = i64(0);
    ctx.callKernel(kind.input, {x, vBand, none, none});
    const int64_t tiles = kind.spec.tiles();
    auto loop = b.create<scf::ForOp>(loc, indexConst(b, loc, 0),
                                     indexConst(b, loc, positions),
                                     indexConst(b, loc, 1));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      Value xi = b.create<arith::IndexCastOp>(loc, b.getI64Type(),
                                              loop.getInductionVar());
      ctx.callKernel(kind.gemm, {at(vBand, xi, tiles * cp * 4),
                                 at(f[3], xi, operands.packedFloats * 4), none,
                                 at(mBand, xi, tiles * ocp * 4)});
    }
    ctx.callKernel(kind.output, {mBand, y, f[4], z});
  };
  const int64_t bands = plan.bands, first = plan.first, inner = plan.inner,
                last = plan.last;
  ctx.parallelFor(
      spec.n * bands,
      {operands.x, operands.y, residual, operands.u, bias, operands.v,
       operands.m},
      [&](Value i, ValueRange f) {
        Value band = i, image;
        if (spec.n > 1) {
          band = b.create<arith::RemUIOp>(loc, i, i64(bands));
          image = b.create<arith::DivUIOp>(loc, i, i64(bands));
        }
        // Band 0 is of kind `first`, band bands - 1 of `last`, the others
        // of `inner`.
        auto runKind = [&](int64_t kind) {
          runBand(plan.kinds[kind], band, image, f);
        };
        auto branch = [&](int64_t index, int64_t kind,
                          function_ref<void()> otherwise) {
          Value is = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                             band, i64(index));
          auto ifOp = b.create<scf::IfOp>(loc, is, /*withElse=*/true);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&ifOp.getThenRegion().front());
          runKind(kind);
          b.setInsertionPointToStart(&ifOp.getElseRegion().front());
          otherwise();
        };
        auto lastOrInner = [&] {
          if (last == inner)
            runKind(inner);
          else
            branch(bands - 1, last, [&] { runKind(inner); });
        };
        if (first == inner && first == last)
          runKind(first);
        else
          branch(0, first, lastOrInner);
      });
  return true;
}

} // namespace mlcc::avx512
