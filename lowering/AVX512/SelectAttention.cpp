//===- SelectAttention.cpp - graph.attention -> AVX-512 kernels -----------===//
//
// Head by head, on data that stays in cache: for each batch b and head h,
//   scores = Q_bh K_bh^T * scale (+ mask)  the GEMM kernel, A = Q read in
//                                          place (lda = H*D), K_bh^T packed
//                                          with the scale folded in, the
//                                          mask its bias (a [.., 1, S] row)
//                                          or residual (a full [S, S] block)
//   probs = softmax(scores)                the softmax kernel
//   Y_bh = probs V_bh                      the GEMM kernel, V_bh packed, C
//                                          written in place into Y
//                                          (ldc = H*D)
// so none of the [B, H, S, D] transposed copies of the group exist, and
// the scores are a [S, S] scratch buffer reused by every head of a run:
// the pool's threads take runs of (b, h) pairs, each with its scratch. A
// mask of another broadcast shape goes to the portable lowering (the
// decomposed group).
//
// Padded keys: with a row mask per sequence ([B or 1, 1, 1, S], BERT's),
// the keys after the last one whose mask is above kPaddedKeyMask are the
// padding of a shorter sequence. Their exp(score + mask - max) is 0 in f32
// (it underflows below -104), so the scores, the softmax and the context
// product run over the keys before them only (the kernels' run-time N,
// cols and K): a short sequence in a padded batch costs the attention of
// a short sequence. A sequence with every key masked keeps them all, as
// the softmax of the whole row is what the model computes then.
//
// A variant of a range of lengths (graph::kRunTimeLengthAttr): the
// positions past the run's length are padding the runtime added, so the
// kernels run over that many queries (the GEMMs' run-time M, the softmax's
// rows) and at most that many keys.
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"
#include "KernelABI.h"
#include "Normalization.h"
#include "PackPanels.h"
#include "SelectionUtils.h"

#include "RunTimeExtents.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <algorithm>

using namespace mlir;

namespace mlcc::avx512 {

/// A mask value at or below this marks a padded key: what BERT's exports
/// add for padding ((1 - mask) * -10000; newer ones use the f32 minimum).
constexpr float kPaddedKeyMask = -1.0e4f;

/// Runs of (batch item, head) pairs the pool's threads take, each with a
/// scratch of its own (packed K^T and V, the scores and the probs: 192 KiB
/// for BERT-base's 128 positions, 2.3 MiB for 512), at most this many and
/// at most kAttentionScratchBytes of scratch in all (but one run).
constexpr int64_t kAttentionRuns = 8;
constexpr int64_t kAttentionScratchBytes = int64_t(8) << 20;

/// The keys of batch item `bi` before the padding its row mask marks (see
/// above), as i64; all `seq` when there is none or every key is masked.
static Value unpaddedKeys(OpBuilder &b, Location loc, Value mask,
                          int64_t maskBatch, Value bi, int64_t seq) {
  auto maskType = cast<MemRefType>(mask.getType());
  int64_t rank = maskType.getRank();
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  Value seqIndex = indexConst(b, loc, seq);
  Value threshold =
      b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(kPaddedKeyMask));
  auto scan = b.create<scf::ForOp>(
      loc, zero, seqIndex, one, ValueRange{zero},
      [&](OpBuilder &lb, Location l, Value j, ValueRange last) {
        // The mask's dims padded to [mb, 1, 1, S]: only the batch (when
        // not broadcast) and the key are indices.
        SmallVector<Value> at(rank, zero);
        at[rank - 1] = j;
        if (rank == 4 && maskBatch != 1)
          at[0] = bi;
        Value m = lb.create<memref::LoadOp>(l, mask, at);
        // Unordered: a NaN mask is no padding (the result is NaN).
        Value kept = lb.create<arith::CmpFOp>(l, arith::CmpFPredicate::UGT, m,
                                              threshold);
        Value next = lb.create<arith::AddIOp>(l, j, one);
        lb.create<scf::YieldOp>(
            l, ValueRange{lb.create<arith::SelectOp>(l, kept, next, last[0])});
      });
  Value keys = scan.getResult(0);
  Value none =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, keys, zero);
  keys = b.create<arith::SelectOp>(loc, none, seqIndex, keys);
  return b.create<arith::IndexCastOp>(loc, b.getI64Type(), keys);
}

TargetLowering selectAttention(Operation *op, OpLoweringContext &ctx,
                               SelectionState &) {
  if (op->getName().stripDialect() != "attention")
    return TargetLowering::Declined;
  Value q = op->getOperand(0), k = op->getOperand(1), v = op->getOperand(2),
        mask = op->getOperand(3), y = op->getResult(0);
  for (Value x : {q, k, v, y})
    if (!isF32Tensor(x) || shapeOf(x) != shapeOf(y) || shapeOf(x).size() != 3)
      return TargetLowering::Declined;
  int64_t heads = intAttr(op, "num_heads", 0);
  ArrayRef<int64_t> shape = shapeOf(y);
  int64_t batch = shape[0], seq = shape[1], hidden = shape[2];
  if (heads <= 0 || hidden % heads != 0 || batch == 0 || seq == 0 ||
      hidden == 0)
    return TargetLowering::Declined;
  int64_t dim = hidden / heads;
  float scale = floatAttr(op, "scale", 1.0f);

  // The mask, padded to [mb, mh, mr, S]: its rows for (b, h) are the GEMM's
  // bias (mr = 1) or its residual (mr = S).
  bool hasMask = !isa<NoneType>(mask.getType());
  int64_t mb = 1, mh = 1, mr = 1;
  if (hasMask) {
    ArrayRef<int64_t> ms = shapeOf(mask);
    if (!isF32Tensor(mask) || ms.size() > 4 || ms.empty() || ms.back() != seq)
      return TargetLowering::Declined;
    SmallVector<int64_t> m4(4 - ms.size(), 1);
    m4.append(ms.begin(), ms.end());
    mb = m4[0];
    mh = m4[1];
    mr = m4[2];
    if ((mb != 1 && mb != batch) || (mh != 1 && mh != heads) ||
        (mr != 1 && mr != seq))
      return TargetLowering::Declined;
  }
  bool maskRow = hasMask && mr == 1, maskBlock = hasMask && mr == seq;
  // A mask row per sequence marks its padded keys.
  bool skipPadded = maskRow && mh == 1;
  // A variant of a range of lengths: queries and keys past the run's
  // length are padding (see the file comment).
  bool padded = op->hasAttr(graph::kRunTimeLengthAttr);
  Value length = padded ? ctx.runTimeLength() : Value();
  if (padded && !length)
    return failed(op, ref::Status::error("is marked to run over a run-time "
                                         "length, but the model has none"));
  bool runTimeKeys = skipPadded || padded;

  GemmSpec scoresSpec;
  scoresSpec.name = nodeName(op) + "_scores";
  scoresSpec.m = seq;
  scoresSpec.n = seq;
  scoresSpec.k = dim;
  scoresSpec.lda = hidden;
  scoresSpec.bias = maskRow;
  scoresSpec.residual = maskBlock;
  scoresSpec.runTimeN = runTimeKeys;
  scoresSpec.runTimeM = padded;
  GemmSpec contextSpec;
  contextSpec.name = nodeName(op) + "_context";
  contextSpec.m = seq;
  contextSpec.n = dim;
  contextSpec.k = seq;
  contextSpec.ldc = hidden;
  contextSpec.runTimeK = runTimeKeys;
  contextSpec.runTimeM = padded;
  SoftmaxSpec softmaxSpec;
  softmaxSpec.name = nodeName(op) + "_softmax";
  softmaxSpec.rows = seq;
  softmaxSpec.cols = seq;
  softmaxSpec.runTimeCols = runTimeKeys;
  softmaxSpec.runTimeRows = padded;
  std::vector<uint8_t> scoresCode, contextCode, softmaxCode;
  if (ref::Status s = generateGemm(scoresSpec, scoresCode); s.failed())
    return failed(op, s);
  if (ref::Status s = generateGemm(contextSpec, contextCode); s.failed())
    return failed(op, s);
  if (ref::Status s = generateSoftmax(softmaxSpec, softmaxCode); s.failed())
    return failed(op, s);
  std::string scoresKernel =
      ctx.addKernel(scoresSpec.name, std::move(scoresCode));
  std::string contextKernel =
      ctx.addKernel(contextSpec.name, std::move(contextCode));
  std::string softmaxKernel =
      ctx.addKernel(softmaxSpec.name, std::move(softmaxCode));

  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Type f32 = b.getF32Type();
  auto i64 = [&](int64_t c) -> Value {
    return b.create<arith::ConstantIntOp>(loc, c, 64);
  };
  auto mul = [&](Value x, int64_t c) -> Value {
    return b.create<arith::MulIOp>(loc, x, i64(c));
  };
  auto add = [&](Value x, Value y) -> Value {
    return b.create<arith::AddIOp>(loc, x, y);
  };
  auto identity = [](Value buffer) {
    auto t = cast<MemRefType>(buffer.getType());
    return MemRefType::get(t.getShape(), t.getElementType());
  };
  auto panels = [](int64_t n) { return (n + kGemmPanel - 1) / kGemmPanel; };
  auto packedKType = MemRefType::get({panels(seq), dim, kGemmPanel}, f32);
  auto packedVType = MemRefType::get({panels(dim), seq, kGemmPanel}, f32);
  // Each run's scratch: packed K^T, packed V, the scores, the probs.
  const int64_t packedKBytes = packedKType.getNumElements() * 4,
                packedVBytes = packedVType.getNumElements() * 4,
                scoresBytes = seq * seq * 4;
  const int64_t runBytes = packedKBytes + packedVBytes + 2 * scoresBytes;
  const int64_t items = batch * heads;
  const int64_t runs =
      ctx.oneThread() ? 1
                      : std::clamp<int64_t>(kAttentionScratchBytes / runBytes,
                                            1, std::min(items, kAttentionRuns));
  Value keyBuffer = ctx.buffer(k), valueBuffer = ctx.buffer(v);
  Value maskBuffer = hasMask ? ctx.buffer(mask) : Value();
  enum Field { Q, K, V, Y, Mask, Length, Scratch };
  SmallVector<Value> fields{
      ctx.address(ctx.buffer(q)),
      ctx.address(keyBuffer),
      ctx.address(valueBuffer),
      ctx.address(ctx.buffer(y)),
      hasMask ? ctx.address(maskBuffer) : i64(0),
      padded ? length : i64(0),
      ctx.address(ctx.scratch(MemRefType::get({runs * runBytes / 4}, f32)))};

  // Runs of (b, h) pairs over the threads, each on a scratch of its own.
  ctx.parallelForRanges(
      runs, fields, [&](Value begin, Value end, ValueRange f) {
        // Runs [begin, end) are pairs [begin * items / runs, ...): one stretch,
        // on the scratch of run `begin`.
        auto itemOf = [&](Value run) -> Value {
          return b.create<arith::DivSIOp>(loc, mul(run, items), i64(runs));
        };
        auto toIndex = [&](Value x) -> Value {
          return b.create<arith::IndexCastOp>(loc, b.getIndexType(), x);
        };
        Value slot = add(f[Scratch], mul(begin, runBytes));
        Value packedKAddress = slot,
              packedVAddress = add(slot, i64(packedKBytes));
        Value scoresAddress = add(packedVAddress, i64(packedVBytes));
        Value probsAddress = add(scoresAddress, i64(scoresBytes));
        Value packedK = ctx.memrefAt(packedKAddress, packedKType);
        Value packedV = ctx.memrefAt(packedVAddress, packedVType);
        Value kBuffer = ctx.memrefAt(f[K], identity(keyBuffer));
        Value vBuffer = ctx.memrefAt(f[V], identity(valueBuffer));
        // Constants of the body's own function.
        Value zero = i64(0);
        Value scaleValue =
            b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(scale));
        auto itemLoop =
            b.create<scf::ForOp>(loc, toIndex(itemOf(begin)),
                                 toIndex(itemOf(end)), indexConst(b, loc, 1));
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(itemLoop.getBody()->getTerminator());
        Value item = itemLoop.getInductionVar();
        Value bi =
            b.create<arith::DivUIOp>(loc, item, indexConst(b, loc, heads));
        Value hi =
            b.create<arith::RemUIOp>(loc, item, indexConst(b, loc, heads));
        Value keys =
            skipPadded
                ? unpaddedKeys(b, loc,
                               ctx.memrefAt(f[Mask], identity(maskBuffer)), mb,
                               bi, seq)
                : f[Length];
        if (skipPadded && padded)
          keys = b.create<arith::MinSIOp>(loc, keys, f[Length]);
        Value headCol =
            b.create<arith::MulIOp>(loc, hi, indexConst(b, loc, dim)); // h * D

        // K_bh^T (D x S): element (d, j) is K[b, j, hD + d], times the scale.
        emitPackedPanels(
            b, loc, packedK, dim, seq,
            [&](OpBuilder &lb, Location l, Value d, Value j) -> Value {
              Value col = lb.create<arith::AddIOp>(l, headCol, d);
              Value x =
                  lb.create<memref::LoadOp>(l, kBuffer, ValueRange{bi, j, col});
              return scale == 1.0f ? x
                                   : lb.create<arith::MulFOp>(l, x, scaleValue);
            });
        // V_bh (S x D): element (j, d) is V[b, j, hD + d].
        emitPackedPanels(
            b, loc, packedV, seq, dim,
            [&](OpBuilder &lb, Location l, Value j, Value d) -> Value {
              Value col = lb.create<arith::AddIOp>(l, headCol, d);
              return lb.create<memref::LoadOp>(l, vBuffer,
                                               ValueRange{bi, j, col});
            });

        Value b64 = b.create<arith::IndexCastOp>(loc, b.getI64Type(), bi);
        Value h64 = b.create<arith::IndexCastOp>(loc, b.getI64Type(), hi);
        // Bytes to Q_bh's and Y_bh's first element: (b S H D + h D) * 4.
        Value headOffset = add(mul(b64, seq * hidden * 4), mul(h64, dim * 4));
        SmallVector<Value> scoresFields{add(f[Q], headOffset), packedKAddress};
        Value maskOffset;
        if (hasMask) {
          maskOffset = f[Mask];
          if (mb != 1)
            maskOffset = add(maskOffset, mul(b64, mh * mr * seq * 4));
          if (mh != 1)
            maskOffset = add(maskOffset, mul(h64, mr * seq * 4));
        }
        // mlcc_gemm_args: a, packed_b, bias, c (, residual).
        scoresFields.push_back(maskRow ? maskOffset : zero);
        scoresFields.push_back(scoresAddress);
        if (maskBlock)
          scoresFields.push_back(maskOffset);
        if (!runTimeKeys) {
          ctx.callKernel(scoresKernel, scoresFields);
          // mlcc_softmax_args: src, dst.
          ctx.callKernel(softmaxKernel, {scoresAddress, probsAddress});
          ctx.callKernel(contextKernel, {probsAddress, packedVAddress, zero,
                                         add(f[Y], headOffset)});
          return;
        }
        // The same over the unpadded keys (and the run's queries): (, residual,
        // m, k, n) and (, rows, cols) after the fields above.
        Value queries = padded ? f[Length] : i64(seq);
        if (!maskBlock)
          scoresFields.push_back(zero);
        scoresFields.append({queries, i64(dim), keys});
        ctx.callKernel(scoresKernel, scoresFields);
        ctx.callKernel(softmaxKernel,
                       {scoresAddress, probsAddress, queries, keys});
        ctx.callKernel(contextKernel,
                       {probsAddress, packedVAddress, zero,
                        add(f[Y], headOffset), zero, queries, keys, i64(dim)});
      });
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
