//===- SelectEmbedLayerNorm.cpp - graph.embed_layer_norm -> AVX-512 -------===//
//
// The table rows of the ids are copied into Y by a host loop (an id out of
// [-V, V) is clamped, as the portable gather does; a negative one counts
// from the end), then one chain kernel adds the addend to Y in place and
// the layer norm kernel normalises Y in place: two passes over [B, S, D]
// after the copy, where the unfused ops made four.
//
//===----------------------------------------------------------------------===//

#include "Eltwise.h"
#include "KernelABI.h"
#include "Normalization.h"
#include "SelectionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mlcc::avx512 {
namespace {

/// y[b, s, :] = table[clamp(ids[b, s]), :].
void emitRowCopies(OpLoweringContext &ctx, Value ids, Value table, Value y,
                   int64_t batch, int64_t seq, int64_t rows, int64_t dim) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  auto index = [&](int64_t v) {
    return b.create<arith::ConstantIndexOp>(loc, v).getResult();
  };
  Value zero = index(0), one = index(1);
  auto outer = b.create<scf::ForOp>(loc, zero, index(batch), one);
  b.setInsertionPointToStart(outer.getBody());
  auto inner = b.create<scf::ForOp>(loc, zero, index(seq), one);
  b.setInsertionPointToStart(inner.getBody());
  Value bi = outer.getInductionVar(), si = inner.getInductionVar();
  Value id = b.create<memref::LoadOp>(loc, ids, ValueRange{bi, si});
  id = b.create<arith::IndexCastOp>(loc, b.getIndexType(), id);
  Value v = index(rows);
  Value negative =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, id, zero);
  id = b.create<arith::SelectOp>(loc, negative,
                                 b.create<arith::AddIOp>(loc, id, v), id);
  id = b.create<arith::MaxSIOp>(loc, id, zero);
  id = b.create<arith::MinSIOp>(loc, id, index(rows - 1));
  auto copy = b.create<scf::ForOp>(loc, zero, index(dim), one);
  b.setInsertionPointToStart(copy.getBody());
  Value di = copy.getInductionVar();
  Value x = b.create<memref::LoadOp>(loc, table, ValueRange{id, di});
  b.create<memref::StoreOp>(loc, x, y, ValueRange{bi, si, di});
  b.setInsertionPointAfter(outer);
}

} // namespace

TargetLowering selectEmbedLayerNorm(Operation *op, OpLoweringContext &ctx,
                                    SelectionState &) {
  if (op->getName().stripDialect() != "embed_layer_norm")
    return TargetLowering::Declined;
  Value ids = op->getOperand(0), table = op->getOperand(1),
        addend = op->getOperand(2), scale = op->getOperand(3),
        bias = op->getOperand(4), y = op->getResult(0);
  ArrayRef<int64_t> shape = shapeOf(y);
  if (shape.size() != 3 || !isF32Tensor(table) || !isF32Tensor(addend) ||
      !isF32Tensor(scale) || shapeOf(table).size() != 2)
    return TargetLowering::Declined;
  int64_t batch = shape[0], seq = shape[1], dim = shape[2];
  int64_t perBatch = seq * dim;
  // The addend per batch item ([1, S, D] or [S, D]) or for all of them.
  int64_t addendSize = numElements(addend);
  bool hasBias = !isa<NoneType>(bias.getType());
  if (batch * perBatch == 0 || shapeOf(table)[1] != dim ||
      shapeOf(table)[0] == 0 ||
      (addendSize != perBatch && addendSize != batch * perBatch) ||
      numElements(scale) != dim ||
      (hasBias && (!isF32Tensor(bias) || numElements(bias) != dim)))
    return TargetLowering::Declined;

  Value yBuffer = ctx.buffer(y);
  emitRowCopies(ctx, ctx.buffer(ids), ctx.buffer(table), yBuffer, batch, seq,
                shapeOf(table)[0], dim);

  // Y += addend, in place, one call per batch item sharing the addend.
  EltwiseSpec add;
  add.name = nodeName(op) + "_add";
  add.n = addendSize;
  add.ops.push_back(EltwiseOp::binary(EltwiseKind::Add,
                                      EltwiseOperand::array(1)));
  std::vector<uint8_t> code;
  if (ref::Status s = generateEltwise(add, code); s.failed())
    return failed(op, s);
  std::string addKernel = ctx.addKernel(add.name, std::move(code));
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  auto i64 = [&](int64_t v) {
    return b.create<arith::ConstantIntOp>(loc, v, 64).getResult();
  };
  Value yAddress = ctx.address(yBuffer);
  Value addendAddress = ctx.address(ctx.buffer(addend));
  for (int64_t i = 0; i < batch * perBatch / addendSize; ++i) {
    Value at = b.create<arith::AddIOp>(loc, yAddress, i64(i * addendSize * 4));
    // mlcc_eltwise_args: src[4], dst, n.
    SmallVector<Value> fields(MLCC_ELTWISE_MAX_SRC, i64(0));
    fields[0] = at;
    fields[1] = addendAddress;
    fields.push_back(at);
    fields.push_back(i64(add.n));
    ctx.callKernel(addKernel, fields);
  }

  LayerNormSpec norm;
  norm.name = nodeName(op);
  norm.rows = batch * seq;
  norm.cols = dim;
  norm.epsilon = floatAttr(op, "epsilon", 1e-5f);
  code.clear();
  if (ref::Status s = generateLayerNorm(norm, code); s.failed())
    return failed(op, s);
  std::string normKernel = ctx.addKernel(norm.name, std::move(code));
  Value beta = hasBias ? ctx.address(ctx.buffer(bias))
                       : ctx.addData(norm.name + "_zero_bias",
                                     bytesOf(std::vector<float>(dim)));
  // mlcc_layer_norm_args: src, gamma, beta, dst (in place).
  ctx.callKernel(normKernel,
                 {yAddress, ctx.address(ctx.buffer(scale)), beta, yAddress});
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
