//===- SelectConv.cpp - Conv -> AVX-512 direct convolution kernels --------===//
//
// f32 1-D, 2-D and 3-D convolution, dense (group 1), depthwise or (1-D and
// 2-D) grouped, with constant
// weights (packed now into OIhw16i16o) and explicit pads: the input is
// reordered to NCHW16c in a scratch buffer (a stem's few channels are read
// plain), the generated kernel runs, and the output stays blocked for the
// ops that take it so, reordered back only for those that do not. A grouped
// conv runs the dense kernel over chunks of groups whose channels fill whole
// blocks (groupedConvChunk).
//
// On several threads a conv runs as kernels for parts of it: images, chunks
// of groups, bands of output rows when it has few channel blocks
// (ConvRowBands.cpp), else chunks of two output channel blocks. The
// transposed conv's phases (SelectConvTranspose.cpp) are split the same way
// (emitConvCalls). A conv with more weights per group of output channels
// than L2 holds first runs as passes over slices of its input channels
// (ConvChannelPasses.cpp), each split as above. An expanding 1x1 conv whose
// result only a depthwise conv reads runs with it in bands of rows
// (ExpandDepthwiseBands.cpp), and so does a large depthwise conv with the
// 1x1 projection that alone reads it.
//
// graph.fused_conv's epilogue runs on the accumulators: bias, the residual
// Z read in NCHW16c (usually an earlier conv's output, blocked already),
// then the activation through the eltwise injector. graph.conv takes an
// activation that is its result's only user the same way.
//
//===----------------------------------------------------------------------===//

#include "BlockedLayout.h"
#include "ChunkedKernelCalls.h"
#include "Conv.h"
#include "ConvChannelPasses.h"
#include "ConvRowBands.h"
#include "ExpandDepthwiseBands.h"
#include "KernelABI.h"
#include "SelectionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// The most groups one dense kernel computes together (the FLOPs it does
/// per useful one): RegNet's groups of 8 channels take 2, of 4 take 4; a
/// conv needing more (groups of 1 or 2 channels) stays portable.
constexpr int64_t kMaxGroupsPerChunk = 8;

/// Fills the spec's geometry from the op; false for what the kernel does
/// not cover.
bool planConv(Operation *op, ConvSpec &spec) {
  ArrayRef<int64_t> x = shapeOf(op->getOperand(0)),
                    w = shapeOf(op->getOperand(1));
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size())
    return false;
  const size_t dims = x.size() - 2;
  std::string autoPad = stringAttr(op, "auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID")
    return false;
  std::vector<int64_t> strides = intsAttr(op, "strides"),
                       dilations = intsAttr(op, "dilations"),
                       pads = intsAttr(op, "pads");
  if ((!strides.empty() && strides.size() != dims) ||
      (!dilations.empty() && dilations.size() != dims) ||
      (!pads.empty() && pads.size() != 2 * dims))
    return false;
  if (strides.empty())
    strides.assign(dims, 1);
  if (dilations.empty())
    dilations.assign(dims, 1);
  if (pads.empty() || autoPad != "NOTSET")
    pads.assign(2 * dims, 0);
  spec.n = x[0];
  spec.c = x[1];
  spec.oc = w[0];
  // The spec's 2-D fields take the last two spatial dims: a 3-D conv's
  // first is its depth, a 1-D conv is a 2-D one of height 1.
  for (size_t i = 0; i < dims; ++i) {
    const int slot = static_cast<int>(i + 2) - static_cast<int>(dims);
    const int64_t begin = pads[i], end = pads[dims + i];
    if (slot < 0) {
      spec.d = x[2 + i];
      spec.depthKernel = w[2 + i];
      spec.depthStride = strides[i];
      spec.depthDilation = dilations[i];
      spec.depthPads[0] = begin;
      spec.depthPads[1] = end;
      continue;
    }
    (slot == 0 ? spec.h : spec.w) = x[2 + i];
    spec.kernel[slot] = w[2 + i];
    spec.strides[slot] = strides[i];
    spec.dilations[slot] = dilations[i];
    // The spec's pads are top, left, bottom, right.
    spec.pads[slot] = begin;
    spec.pads[2 + slot] = end;
  }
  spec.group = intAttr(op, "group", 1);
  return spec.group >= 1 && spec.c % spec.group == 0 &&
         w[1] == spec.c / spec.group && directConvGroupSupported(spec);
}

/// A grouped conv: images x chunks of groups (groupedConvChunk) over the
/// pool, each a dense kernel call at offsets into the blocked input and
/// output, the packed weights (packGroupedConvWeights) and the bias; a last
/// chunk of fewer groups has a kernel of its own.
LogicalResult emitGroupedConv(Operation *op, OpLoweringContext &ctx,
                              const ConvSpec &spec, int64_t groupsPerChunk,
                              ArrayRef<Value> fields) {
  const int64_t cg = spec.c / spec.group, ocg = spec.oc / spec.group;
  const int64_t chunks = (spec.group + groupsPerChunk - 1) / groupsPerChunk;
  const int64_t tailGroups = spec.group - (chunks - 1) * groupsPerChunk;
  auto generate = [&](int64_t groups, StringRef suffix, std::string &symbol) {
    ConvSpec part = spec;
    part.n = 1;
    part.group = 1;
    part.c = groups * cg;
    part.oc = groups * ocg;
    // Groups of 8, 4 or 2 channels in and out (RegNet's, ResNeXt's): each
    // half of the block on its own, without FMAs on the zeros between the
    // halves (the only zeros for groups of 8).
    part.pairedGroups =
        groups * cg == kConvBlock && cg == ocg && (kConvBlock / 2) % cg == 0;
    return addGeneratedKernel(op, ctx, generateConv, part,
                              spec.name + suffix.str(), symbol);
  };
  std::string chunkKernel, tailKernel;
  if (!generate(groupsPerChunk, "_groups", chunkKernel) ||
      (tailGroups != groupsPerChunk &&
       !generate(tailGroups, "_last_groups", tailKernel)))
    return failure();
  // Byte offsets per chunk (whole blocks when there are several) and per
  // image; src, weights, bias, dst, residual (laid out as dst).
  const int64_t blockFloats = kConvBlock * 4;
  const int64_t srcChunk = groupsPerChunk * cg / kConvBlock * spec.h * spec.w *
                           blockFloats,
                srcImage = convBlocks(spec.c) * spec.h * spec.w * blockFloats;
  const int64_t dstChunk =
                    groupsPerChunk * ocg / kConvBlock * convDstBlockBytes(spec),
                dstImage = convBlocks(spec.oc) * convDstBlockBytes(spec);
  const int64_t weightChunk =
      packedConvWeightsSize(groupsPerChunk * ocg, groupsPerChunk * cg,
                            spec.kernel[0], spec.kernel[1]) *
      4;
  const int64_t chunkBytes[] = {srcChunk, weightChunk,
                                spec.bias ? groupsPerChunk * ocg * 4 : 0,
                                dstChunk, spec.residual ? dstChunk : 0};
  const int64_t imageBytes[] = {srcImage, 0, 0, dstImage,
                                spec.residual ? dstImage : 0};
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  auto i64 = [&](int64_t c) -> Value {
    return b.create<arith::ConstantIntOp>(loc, c, 64);
  };
  ctx.parallelFor(spec.n * chunks, fields, [&](Value i, ValueRange f) {
    Value image = b.create<arith::DivUIOp>(loc, i, i64(chunks));
    Value chunk = b.create<arith::RemUIOp>(loc, i, i64(chunks));
    SmallVector<Value> args;
    for (auto [k, field] : llvm::enumerate(f)) {
      Value at = field;
      if (chunkBytes[k] != 0)
        at = b.create<arith::AddIOp>(
            loc, at, b.create<arith::MulIOp>(loc, chunk, i64(chunkBytes[k])));
      if (imageBytes[k] != 0 && spec.n > 1)
        at = b.create<arith::AddIOp>(
            loc, at, b.create<arith::MulIOp>(loc, image, i64(imageBytes[k])));
      args.push_back(at);
    }
    if (tailKernel.empty()) {
      ctx.callKernel(chunkKernel, args);
      return;
    }
    Value last = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, chunk,
                                         i64(chunks - 1));
    auto isLast = b.create<scf::IfOp>(loc, last, /*withElse=*/true);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(&isLast.getThenRegion().front());
    ctx.callKernel(tailKernel, args);
    b.setInsertionPointToStart(&isLast.getElseRegion().front());
    ctx.callKernel(chunkKernel, args);
  });
  return success();
}

/// Output channel blocks per chunk of a split dense conv: two, as the whole
/// kernel computes them together (each input value it loads feeds both), so
/// that a chunk reads its input once per two blocks as the one-thread
/// kernel does. Chunks of one block read the input twice as often: ResNet-50's
/// 1x1 convs on 64 channels at 56x56 ran 1.06-1.12x faster on 2 threads
/// than on 1 (Zen 5), and the 7x7 stem slower.
int64_t blocksPerChunk(const ConvSpec &spec) {
  return spec.group == 1 && convBlocks(spec.oc) >= 4 ? 2 : 1;
}

/// On a pool of several threads, the output channel blocks are split over
/// the threads in chunks of blocksPerChunk, each computed by a kernel
/// generated for that many output channels (and one for a last, narrower
/// chunk) at offsets into the weights, bias and output (and, depthwise, the
/// input: each channel block reads only its own); on one thread the
/// whole-conv kernel runs.
LogicalResult emitThreadedConv(Operation *op, OpLoweringContext &ctx,
                               const ConvSpec &spec, StringRef wholeKernel,
                               ArrayRef<Value> fields) {
  const int64_t perChunk = blocksPerChunk(spec);
  const int64_t chunkChannels = perChunk * kConvBlock;
  const int64_t chunks = (convBlocks(spec.oc) + perChunk - 1) / perChunk;
  bool depthwise = spec.group != 1;
  auto generate = [&](int64_t oc, bool last, std::string &symbol) {
    ConvSpec part = spec;
    part.oc = oc;
    if (depthwise)
      part.c = part.group = oc;
    part.nextWeightsFollow = !last;
    return addGeneratedKernel(op, ctx, generateConv, part, spec.name + "_block",
                              symbol);
  };
  std::string chunkKernel, tailKernel;
  int64_t tail = spec.oc - (chunks - 1) * chunkChannels;
  // The chunk kernel runs the last chunk too when there is no tail: its
  // prefetch past the weights then loads nothing (a prefetch never faults).
  if (!generate(chunkChannels, /*last=*/false, chunkKernel) ||
      (tail != chunkChannels && !generate(tail, /*last=*/true, tailKernel)))
    return failure();
  int64_t taps = spec.depthKernel * spec.kernel[0] * spec.kernel[1];
  int64_t weightBlockBytes = depthwise
                                 ? taps * kConvBlock * 4
                                 : convBlocks(spec.c) * taps * 256 * 4;
  // src, weights, bias, dst, residual (laid out as dst).
  const int64_t dstBlockBytes = convDstBlockBytes(spec);
  emitChunkedKernelCalls(
      ctx, {wholeKernel.str(), chunkKernel, tailKernel, chunks}, fields,
      {depthwise ? spec.d * spec.h * spec.w * kConvBlock * 4 : 0,
       perChunk * weightBlockBytes, spec.bias ? chunkChannels * 4 : 0,
       perChunk * dstBlockBytes, spec.residual ? perChunk * dstBlockBytes : 0});
  return success();
}

/// A batch of several images on a pool of several threads: the images
/// over the threads, each a kernel call of one image at its offsets into
/// the input, output and residual (the weights and bias shared); on one
/// thread the whole-batch kernel runs. Without it a batch ran on one
/// thread: CIFAR-10's net at batch 32 took 3.5 ms on 1 thread and 3.7 ms
/// on 2 (Zen 5).
LogicalResult emitImagesConv(Operation *op, OpLoweringContext &ctx,
                             const ConvSpec &spec, StringRef wholeKernel,
                             ArrayRef<Value> fields) {
  ConvSpec one = spec;
  one.n = 1;
  std::string imageKernel;
  if (!addGeneratedKernel(op, ctx, generateConv, one, spec.name + "_image",
                          imageKernel))
    return failure();
  const int64_t srcImage =
      (spec.plainInput ? spec.c : convBlocks(spec.c) * kConvBlock) * spec.d *
      spec.h * spec.w * 4;
  const int64_t dstImage = convBlocks(spec.oc) * convDstBlockBytes(spec);
  // src, weights, bias, dst, residual (laid out as dst).
  emitChunkedKernelCalls(
      ctx, {wholeKernel.str(), imageKernel, "", spec.n}, fields,
      {srcImage, 0, 0, dstImage, spec.residual ? dstImage : 0});
  return success();
}

} // namespace

bool fusedActivationOf(Operation *op, std::vector<EltwiseOp> &ops) {
  std::string act = stringAttr(op, "activation", "none");
  float alpha = floatAttr(op, "activation_alpha", 0.0f);
  float beta = floatAttr(op, "activation_beta", 0.0f);
  if (act == "none")
    return true;
  if (act == "leaky_relu") {
    ops.push_back(EltwiseOp::leakyRelu(alpha));
    return true;
  }
  if (act == "clip") {
    ops.push_back(EltwiseOp::clip(alpha, beta));
    return true;
  }
  // Kinds the injector lacks are declined by eltwiseKindFromName.
  static const char *const unary[] = {
      "relu", "sigmoid", "tanh", "hard_swish", "silu", "gelu", "gelu_tanh"};
  EltwiseKind kind;
  if (!llvm::is_contained(unary, act) ||
      eltwiseKindFromName(act, kind).failed())
    return false;
  ops.push_back(EltwiseOp::unary(kind));
  return true;
}

bool directConvGroupSupported(const ConvSpec &spec) {
  if (spec.group == 1 || isDepthwiseConv(spec))
    return true;
  // A 3-D conv is not grouped: its depth has no place in the chunks.
  return spec.d == 1 && spec.depthKernel == 1 && spec.depthPads[0] == 0 &&
         spec.depthPads[1] == 0 && spec.group > 1 && spec.c % spec.group == 0 &&
         spec.oc % spec.group == 0 &&
         groupedConvChunk(spec.c, spec.oc, spec.group, kMaxGroupsPerChunk) > 0;
}

LogicalResult emitConvCalls(Operation *op, OpLoweringContext &ctx,
                            const ConvSpec &spec, ArrayRef<float> w, Value src,
                            Value bias, Value dst, Value residual) {
  if (convChannelPassBlocks(spec))
    return emitConvChannelPasses(op, ctx, spec, w, src, bias, dst, residual);
  const bool grouped = spec.group != 1 && !isDepthwiseConv(spec);
  const int64_t groupsPerChunk =
      grouped
          ? groupedConvChunk(spec.c, spec.oc, spec.group, kMaxGroupsPerChunk)
          : 0;
  std::vector<float> packed;
  if (grouped)
    packGroupedConvWeights(w.data(), spec.oc, spec.c, spec.kernel[0],
                           spec.kernel[1], spec.group, groupsPerChunk, packed);
  else if (spec.group == 1)
    packConv3dWeights(w.data(), spec.oc, spec.c, spec.depthKernel,
                      spec.kernel[0], spec.kernel[1], packed);
  else
    packDepthwiseConv3dWeights(w.data(), spec.c, spec.depthKernel,
                               spec.kernel[0], spec.kernel[1], packed);
  // The grouped conv's kernels are generated per chunk below.
  std::string symbol;
  if (!grouped &&
      !addGeneratedKernel(op, ctx, generateConv, spec, spec.name, symbol))
    return failure();

  Value weights = ctx.addData(spec.name + "_packed", bytesOf(packed));
  SmallVector<Value> fields{src, weights, bias, dst, residual};
  // mlcc_conv_args: src, weights, bias, dst, residual.
  // Chunks of one block lose the whole kernel's reuse of each input load
  // across two blocks; with under one block of input channels (a stem conv
  // on RGB) that reuse is most of the work, and such a split was measured
  // slower (3 -> 32 channels at 224x224 stride 2: 1.0 ms on one thread,
  // 1.8 ms on two), so a stem is split only in chunks of two blocks.
  bool splittable =
      convBlocks(spec.oc) >= 2 &&
      (spec.group != 1 || spec.c >= kConvBlock || blocksPerChunk(spec) == 2);
  if (grouped)
    return emitGroupedConv(op, ctx, spec, groupsPerChunk, fields);
  if (ctx.oneThread()) {
    ctx.callKernel(symbol, fields);
    return success();
  }
  if (spec.n != 1)
    return emitImagesConv(op, ctx, spec, symbol, fields);
  if (splitsConvByRows(spec))
    return emitConvRowBands(op, ctx, spec, symbol, fields);
  if (splittable)
    return emitThreadedConv(op, ctx, spec, symbol, fields);
  ctx.callKernel(symbol, fields);
  return success();
}

namespace {

/// A conv op as the direct kernels take it: its spec (the activation after
/// it, if its epilogue applies one, included), its weights, its residual
/// (null: none) and that activation op (null: none).
struct PlannedConv {
  ConvSpec spec;
  std::vector<float> weights;
  Value residual;
  Operation *activation = nullptr;
};

/// False when `op` is no f32 conv the direct kernels cover.
bool planConvOp(Operation *op, OpLoweringContext &ctx, PlannedConv &conv) {
  StringRef name = op->getName().stripDialect();
  if (name != "conv" && name != "fused_conv")
    return false;
  Value x = op->getOperand(0), weight = op->getOperand(1),
        bias = op->getOperand(2), y = op->getResult(0);
  Value residual = name == "fused_conv" ? op->getOperand(3) : Value();
  if (residual && isa<NoneType>(residual.getType()))
    residual = Value();
  if (residual && (!isF32Tensor(residual) || shapeOf(residual) != shapeOf(y)))
    return false;
  if (!isF32Tensor(x) || !isF32Tensor(y) ||
      !constantFloats(ctx, weight, conv.weights))
    return false;
  bool hasBias = !isa<NoneType>(bias.getType());
  if (hasBias && !isF32Tensor(bias))
    return false;
  ConvSpec &spec = conv.spec;
  spec.name = nodeName(op);
  spec.bias = hasBias;
  spec.residual = static_cast<bool>(residual);
  conv.residual = residual;
  int64_t oh, ow;
  if (!planConv(op, spec) || convOutputSize(spec, oh, ow).failed())
    return false;
  SmallVector<int64_t> expected{spec.n, spec.oc};
  if (shapeOf(x).size() == 5)
    expected.push_back(convOutputDepth(spec));
  if (shapeOf(x).size() > 3)
    expected.push_back(oh);
  expected.push_back(ow);
  if (shapeOf(y) != ArrayRef<int64_t>(expected) ||
      (name == "fused_conv" && !fusedActivationOf(op, spec.epilogue)))
    return false;
  EltwiseOp act;
  conv.activation = fusableActivation(y, ctx, act);
  if (conv.activation)
    spec.epilogue.push_back(act);
  return true;
}

/// The conv that alone reads `op`'s result (after `planned`'s activation),
/// as its input, planned into `reader`.
Operation *soleConvReader(Operation *op, const PlannedConv &planned,
                          OpLoweringContext &ctx, PlannedConv &reader) {
  Value t =
      planned.activation ? planned.activation->getResult(0) : op->getResult(0);
  if (!t.hasOneUse())
    return nullptr;
  Operation *user = *t.getUsers().begin();
  if (user->getOperand(0) != t || !planConvOp(user, ctx, reader))
    return nullptr;
  return user;
}

/// The depthwise conv that alone reads `expand`'s result, when the two run
/// in bands (ExpandDepthwiseBands.cpp).
Operation *bandedDepthwiseReader(Operation *op, const PlannedConv &expand,
                                 OpLoweringContext &ctx, PlannedConv &dw) {
  Operation *reader = soleConvReader(op, expand, ctx, dw);
  return reader && expandDepthwiseApplies(expand.spec, dw.spec) ? reader
                                                                : nullptr;
}

/// The 1x1 conv that alone reads the depthwise conv's result, when it runs
/// in the bands too (`op` the expansion, or the depthwise conv itself). The
/// bands run where `op` is, so its residual must have been computed by
/// then.
Operation *bandedProjection(Operation *op, Operation *dwOp,
                            const PlannedConv &dw, OpLoweringContext &ctx,
                            PlannedConv &project) {
  Operation *reader = soleConvReader(dwOp, dw, ctx, project);
  if (!reader ||
      !(op == dwOp ? depthwiseProjectionApplies(dw.spec, project.spec)
                   : projectionApplies(dw.spec, project.spec,
                                       /*expanded=*/true)))
    return nullptr;
  if (Value z = project.residual) {
    Operation *def = z.getDefiningOp();
    Block *block = def ? def->getBlock() : cast<BlockArgument>(z).getOwner();
    Operation *bandsAt = block->findAncestorOpInBlock(*op);
    if (!bandsAt || (def && !def->isBeforeInBlock(bandsAt)))
      return nullptr;
  }
  return reader;
}

/// The expansion `op` (`expand`; none: `op` is `dwOp`), the depthwise conv
/// `dwOp` and the projection `projectOp` (none: only with an expansion) in
/// bands: the convs after `op` (and their activations) are then done, and
/// their lowering only hands on the last one's result.
TargetLowering lowerDepthwiseBands(Operation *op, OpLoweringContext &ctx,
                                   SelectionState &state,
                                   const PlannedConv *expand, Operation *dwOp,
                                   const PlannedConv &dw, Operation *projectOp,
                                   const PlannedConv &project) {
  Operation *lastOp = projectOp ? projectOp : dwOp;
  const PlannedConv &last = projectOp ? project : dw;
  Value y =
      last.activation ? last.activation->getResult(0) : lastOp->getResult(0);
  Value yBlocked = allocateBlocked(y, ctx, state);
  Value none = ctx.builder().create<arith::ConstantIntOp>(ctx.loc(), 0, 64);
  auto banded = [&](Operation *conv, const PlannedConv &p) {
    return BandedConv{p.spec, p.weights,
                      p.spec.bias ? ctx.address(ctx.buffer(conv->getOperand(2)))
                                  : none};
  };
  BandedConvs convs{std::nullopt,
                    banded(dwOp, dw),
                    std::nullopt,
                    ctx.address(blockedOperand(op->getOperand(0), ctx, state)),
                    ctx.address(yBlocked),
                    none};
  if (expand)
    convs.expand = banded(op, *expand);
  if (projectOp) {
    convs.project = banded(projectOp, project);
    if (project.residual)
      convs.residual =
          ctx.address(blockedOperand(project.residual, ctx, state));
  }
  if (failed(emitExpandDepthwiseBands(op, ctx, convs)))
    return TargetLowering::Failed;
  auto done = [&](Operation *conv, const PlannedConv &p, Value result) {
    state.fused[conv] = p.activation ? Value() : result;
    ctx.noteWorkDoneFor(conv);
    if (p.activation) {
      state.fused[p.activation] = result;
      ctx.noteWorkDoneFor(p.activation);
    }
  };
  // `op`, the first conv, is lowered now; its activation has no result.
  const PlannedConv &first = expand ? *expand : dw;
  if (first.activation) {
    state.fused[first.activation] = Value();
    ctx.noteWorkDoneFor(first.activation);
  }
  if (expand)
    done(dwOp, dw, projectOp ? Value() : yBlocked);
  if (projectOp)
    done(projectOp, project, yBlocked);
  return TargetLowering::Lowered;
}

} // namespace

TargetLowering selectConv(Operation *op, OpLoweringContext &ctx,
                          SelectionState &state) {
  PlannedConv conv;
  if (!planConvOp(op, ctx, conv))
    return TargetLowering::Declined;
  ConvSpec &spec = conv.spec;
  Value x = op->getOperand(0), bias = op->getOperand(2), y = op->getResult(0);
  Value residual = conv.residual;
  Operation *activation = conv.activation;
  // A stem conv on few channels reads its plain input (a model input, so
  // not blocked yet) rather than a reorder into blocks of mostly padding.
  spec.plainInput =
      spec.group == 1 && spec.c < kConvBlock && !state.blocked.contains(x);
  if (state.winogradTile > 0 && winogradApplies(spec))
    return lowerWinogradConv(op, ctx, state, spec, conv.weights, residual,
                             activation);
  PlannedConv dw, project;
  if (Operation *dwOp = bandedDepthwiseReader(op, conv, ctx, dw))
    return lowerDepthwiseBands(op, ctx, state, &conv, dwOp, dw,
                               bandedProjection(op, dwOp, dw, ctx, project),
                               project);
  if (isDepthwiseConv(spec))
    if (Operation *projectOp = bandedProjection(op, op, conv, ctx, project))
      return lowerDepthwiseBands(op, ctx, state, nullptr, op, conv, projectOp,
                                 project);

  // The input in NCHW16c (a previous conv's output already is) unless it is
  // read plain; the output stays blocked until an op needs it plain.
  OpBuilder &b = ctx.builder();
  Value xBuffer =
      spec.plainInput ? ctx.buffer(x) : blockedOperand(x, ctx, state);
  Value yBlocked = allocateBlocked(activation ? activation->getResult(0) : y,
                                  ctx, state);
  Value none = b.create<arith::ConstantIntOp>(ctx.loc(), 0, 64);
  // Z in Y's layout: an earlier conv's blocked output, or converted now.
  if (failed(emitConvCalls(
          op, ctx, spec, conv.weights, ctx.address(xBuffer),
          spec.bias ? ctx.address(ctx.buffer(bias)) : none,
          ctx.address(yBlocked),
          residual ? ctx.address(blockedOperand(residual, ctx, state)) : none)))
    return TargetLowering::Failed;
  setBlockedResultOrFused(y, activation, yBlocked, ctx, state);
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
