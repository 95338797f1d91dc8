//===- WinogradConv.cpp - 3x3 and 5x5 stride-1 convs as Winograd ----------===//
//
// The direct conv kernel runs at 60 to 95% of the FMA peak (ResNet-50's
// 3x3 convs on a Zen 5); past that ceiling only fewer multiplications help.
// F(4x4, 3x3) does 2.25 multiply-adds per output and channel pair, F(2x2,
// 3x3) 4, the direct conv 9; F(2x2, 5x5) 9 where the direct 5x5 conv does
// 25 (Kernels/Winograd.h): the input transform into V, one GEMM per
// position (the f32 GEMM kernel, B the compile-time transformed and packed
// weights, over the threads) into M, the output transform with the conv's
// bias, residual and activation. V and M are scratch of this op. F(4x4)
// is taken when there are enough tiles for its bigger U (kMinF4Tiles).
// With a small U and more than one thread, the conv runs in bands of tile
// rows instead (WinogradBands.h).
//
// Taken for group-1 3x3 and 5x5 convs with stride and dilation 1, pads
// smaller than the window, and enough channels on both sides that the
// GEMMs are not mostly edges (kMinWinogradChannels); a conv on a plain
// model input stays direct. The error against the direct conv is a few
// f32 roundings of the transforms' sums (relative 1e-6 typically for
// F(2x2, 3x3), a few times that for F(4x4, 3x3): ResNet-50's logits 4.5e-5
// and 5.1e-5 from the reference executor's, 4.2e-5 with direct convs;
// F(2x2, 5x5) moved Inception-v3's from 6.2e-4 to 6.6e-4 off PyTorch's).
//
//===----------------------------------------------------------------------===//

#include "BlockedLayout.h"
#include "ChunkedKernelCalls.h"
#include "Gemm.h"
#include "KernelABI.h"
#include "SelectionUtils.h"
#include "Winograd.h"
#include "WinogradBands.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// Input and output channels from which the GEMMs are worth it: with 16,
/// SqueezeNet 1.1's first fire modules (16 channels in) made the model 7%
/// faster than with 32 (Zen 5), and nothing measured got slower.
constexpr int64_t kMinWinogradChannels = 16;
/// Transforms of one image over this many bytes (of X or of Y) run chunks
/// of channel blocks over the threads, at most kTransformChunks. At 256 KiB
/// ResNet-50's 14x14 and 7x7 layers transformed on one thread while the
/// other waited: 32 KiB took it from 26.6 to 25.3 ms on 2 threads (Zen 5,
/// interleaved), its 14x14 Winograd convs from 0.57 to 0.42 ms.
constexpr int64_t kThreadedTransformBytes = int64_t(32) << 10;
constexpr int64_t kTransformChunks = 8;

/// F(4x4, 3x3) needs this many tiles (rows of its GEMMs) in all; with
/// fewer, F(2x2, 3x3). Each float of U serves one multiply-add per tile, so
/// with few tiles reading F(4x4)'s 2.25 times bigger U is the cost:
/// ResNet-50's 14x14 convs (16 tiles of 4x4, 9.4 MB of U) took 0.59 ms on
/// one thread as F(2x2) and 0.79 as F(4x4); its 56x56 and 28x28 ones (196
/// and 49 tiles) 0.64 -> 0.38 ms and 0.52 -> 0.34 (Zen 5).
constexpr int64_t kMinF4Tiles = 32;

/// Outputs per tile side for `spec`, at most `largest`: 4 does 2.25
/// multiply-adds per output and channel pair where 2 does 4. A 5x5 window
/// takes 2 (F(4x4, 5x5)'s 8x8 patches would round far more).
int64_t winogradTileSize(WinogradSpec spec, int64_t largest) {
  if (spec.r != 3)
    return 2;
  spec.m = 4;
  return largest >= 4 && spec.tiles() >= kMinF4Tiles ? 4 : 2;
}

using Generator = ref::Status (*)(const WinogradSpec &, std::vector<uint8_t> &);

/// The transform `generate` for the whole conv, and for chunks of its
/// channels (C for the input transform, OC for the output one: `channels`
/// of `spec`) when one image's transform is big enough. A chunk kernel
/// covers whole blocks; it keeps the conv's rows of V and M.
bool transformKernels(Operation *op, OpLoweringContext &ctx,
                      const WinogradSpec &spec, int64_t WinogradSpec::*channels,
                      Generator generate, StringRef suffix, int64_t planeBytes,
                      ChunkedKernels &out, int64_t &perChunk) {
  auto add = [&](const WinogradSpec &part, std::string &symbol) {
    return addGeneratedKernel(op, ctx, generate, part, spec.name + suffix.str(),
                              symbol);
  };
  if (!add(spec, out.whole))
    return false;
  const int64_t total = spec.*channels, blocks = convBlocks(total);
  if (ctx.oneThread() || spec.n != 1 || blocks < 2 ||
      blocks * planeBytes < kThreadedTransformBytes)
    return true;
  const int64_t most = std::min(blocks, kTransformChunks);
  perChunk = (blocks + most - 1) / most;
  out.chunks = (blocks + perChunk - 1) / perChunk;
  WinogradSpec part = spec;
  part.vRow = spec.vRowFloats();
  part.mRow = spec.mRowFloats();
  part.*channels = perChunk * kConvBlock;
  if (!add(part, out.chunk))
    return false;
  const int64_t last = total - (out.chunks - 1) * perChunk * kConvBlock;
  part.*channels = last;
  return last == perChunk * kConvBlock || add(part, out.tail);
}

/// The conv on whole images: each stage split over the threads its own way.
bool emitWholeImage(Operation *op, OpLoweringContext &ctx,
                    const WinogradSpec &spec, const WinogradOperands &in) {
  const int64_t xPlane = spec.h * spec.w * kConvBlock * 4,
                yPlane = spec.outH() * spec.outW() * kConvBlock * 4;
  ChunkedKernels input, output;
  int64_t inBlocks = 0, outBlocks = 0;
  if (!transformKernels(op, ctx, spec, &WinogradSpec::c, generateWinogradInput,
                        "_winograd_in", xPlane, input, inBlocks) ||
      !transformKernels(op, ctx, spec, &WinogradSpec::oc,
                        generateWinogradOutput, "_winograd_out", yPlane, output,
                        outBlocks))
    return false;
  const int64_t cp = convBlocks(spec.c) * kConvBlock,
                ocp = convBlocks(spec.oc) * kConvBlock, tiles = spec.tiles();
  GemmSpec gemm = winogradGemm(spec, spec.name + "_winograd_gemm");
  std::string gemmSymbol;
  if (!addGeneratedKernel(op, ctx, generateGemm, gemm, gemm.name, gemmSymbol))
    return false;

  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  auto i64 = [&](int64_t v) -> Value {
    return b.create<arith::ConstantIntOp>(loc, v, 64);
  };
  Value zero = i64(0);
  // mlcc_winograd_args: src, dst, bias, residual; a chunk of the input
  // transform moves to its blocks of X and its columns of V.
  auto transform = [&](const ChunkedKernels &kernels, ArrayRef<Value> fields,
                       ArrayRef<int64_t> blockBytes, int64_t perChunk) {
    if (kernels.chunks == 0) {
      ctx.callKernel(kernels.whole, fields);
      return;
    }
    SmallVector<int64_t> strides;
    for (int64_t bytes : blockBytes)
      strides.push_back(bytes * perChunk);
    emitChunkedKernelCalls(ctx, kernels, fields, strides);
  };
  transform(input, {in.x, in.v, zero, zero}, {xPlane, kConvBlock * 4, 0, 0},
            inBlocks);
  // mlcc_gemm_args: a, packed_b, bias, c; position i's three matrices.
  ctx.parallelFor(
      spec.positions(), {in.v, in.u, in.m}, [&](Value i, ValueRange f) {
        auto at = [&](Value base, int64_t floats) {
          return b.create<arith::AddIOp>(
              loc, base, b.create<arith::MulIOp>(loc, i, i64(floats * 4)));
        };
        ctx.callKernel(gemmSymbol,
                       {at(f[0], tiles * cp), at(f[1], in.packedFloats), i64(0),
                        at(f[2], tiles * ocp)});
      });
  // The output transform's chunk: its columns of M, blocks of Y and of the
  // residual, and bias.
  transform(
      output,
      {in.m, in.y, in.bias ? in.bias : zero, in.residual ? in.residual : zero},
      {kConvBlock * 4, yPlane, in.bias ? kConvBlock * 4 : 0,
       in.residual ? yPlane : 0},
      outBlocks);
  return true;
}

} // namespace

bool winogradApplies(const ConvSpec &spec) {
  // No depth: a 3-D conv of one plane is laid out as a 2-D one.
  return spec.d == 1 && spec.depthKernel == 1 && spec.depthPads[0] == 0 &&
         spec.depthPads[1] == 0 && spec.group == 1 && !spec.plainInput &&
         (spec.kernel[0] == 3 || spec.kernel[0] == 5) &&
         spec.kernel[1] == spec.kernel[0] && spec.strides[0] == 1 &&
         spec.strides[1] == 1 && spec.dilations[0] == 1 &&
         spec.dilations[1] == 1 &&
         llvm::all_of(
             spec.pads,
             [&](int64_t p) { return p >= 0 && p < spec.kernel[0]; }) &&
         spec.c >= kMinWinogradChannels && spec.oc >= kMinWinogradChannels &&
         spec.n >= 1;
}

TargetLowering lowerWinogradConv(Operation *op, OpLoweringContext &ctx,
                                 SelectionState &state, const ConvSpec &conv,
                                 const std::vector<float> &weights,
                                 Value residual, Operation *activation) {
  WinogradSpec spec;
  spec.name = conv.name;
  spec.n = conv.n;
  spec.c = conv.c;
  spec.h = conv.h;
  spec.w = conv.w;
  spec.oc = conv.oc;
  spec.r = conv.kernel[0];
  std::copy(std::begin(conv.pads), std::end(conv.pads), spec.pads);
  spec.bias = conv.bias;
  spec.residual = conv.residual;
  spec.epilogue = conv.epilogue;
  spec.m = winogradTileSize(spec, state.winogradTile);
  if (ref::Status s = checkWinograd(spec); s.failed())
    return failed(op, s);
  const int64_t cp = convBlocks(spec.c) * kConvBlock,
                ocp = convBlocks(spec.oc) * kConvBlock;
  // U per position, packed for the GEMM kernel, one after the other.
  std::vector<float> u, packed, part;
  transformWinogradWeights(weights.data(), spec.oc, spec.c, ocp, spec.m, spec.r,
                           u);
  WinogradOperands operands;
  operands.packedFloats = packedBSize(spec.c, ocp);
  packed.reserve(spec.positions() * operands.packedFloats);
  for (int64_t xi = 0; xi < spec.positions(); ++xi) {
    packB(u.data() + xi * spec.c * ocp, spec.c, ocp, ocp, /*transB=*/false,
          part);
    packed.insert(packed.end(), part.begin(), part.end());
  }

  OpBuilder &b = ctx.builder();
  auto scratch = [&](int64_t floats) {
    return ctx.address(ctx.scratch(MemRefType::get(
        {spec.positions() * spec.tiles() * floats}, b.getF32Type())));
  };
  Value y = op->getResult(0);
  Value yBlocked =
      allocateBlocked(activation ? activation->getResult(0) : y, ctx, state);
  operands.x = ctx.address(blockedOperand(op->getOperand(0), ctx, state));
  operands.y = ctx.address(yBlocked);
  operands.residual =
      residual ? ctx.address(blockedOperand(residual, ctx, state)) : Value();
  operands.bias =
      spec.bias ? ctx.address(ctx.buffer(op->getOperand(2))) : Value();
  operands.u = ctx.addData(spec.name + "_winograd_u", bytesOf(packed));
  operands.v = scratch(cp);
  operands.m = scratch(ocp);

  // Bands where they apply on more than one thread; on one, the whole
  // image: ResNet-50's 56x56 convs took 0.42 ms in bands, 0.39 whole.
  const int64_t rows = ctx.oneThread() ? 0 : winogradBandRows(spec);
  if (rows == 0) {
    if (!emitWholeImage(op, ctx, spec, operands))
      return TargetLowering::Failed;
  } else {
    Value threaded = b.create<arith::CmpIOp>(
        ctx.loc(), arith::CmpIPredicate::sgt, ctx.numThreads(),
        b.create<arith::ConstantIntOp>(ctx.loc(), 1, 64));
    auto ifOp = b.create<scf::IfOp>(ctx.loc(), threaded, /*withElse=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    if (!emitWinogradBands(op, ctx, spec, rows, operands))
      return TargetLowering::Failed;
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    if (!emitWholeImage(op, ctx, spec, operands))
      return TargetLowering::Failed;
  }
  setBlockedResultOrFused(y, activation, yBlocked, ctx, state);
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
