//===- GpuNormalization.cpp - softmax and layer norms, a row a workgroup --===//
//
// softmax / log_softmax along the last axis (or one followed only by dims
// of 1), layer_norm, skip_layer_norm and embed_layer_norm over their
// trailing dims: each row is reduced by a whole workgroup
// (WorkgroupReduce.h), in f32 (the reference accumulates in double; a tree
// of f32 partials stays within the avx512 kernels' tolerances). Steps in
// the reference kernels' order: softmax exp(x - max) * (1 / sum),
// log_softmax (x - max) - log(sum), layer norm (x - mean) * inv_std *
// scale + bias.
//
//===----------------------------------------------------------------------===//

#include "GpuKernels.h"
#include "WorkgroupReduce.h"

#include "DataMovementUtils.h"
#include "NNUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mlcc::gpukernels {

using lowering::TargetLowering;
using portable::dm::viewAs;
using namespace portable::nn;

namespace {

Value addF(OpBuilder &b, Location loc, Value x, Value y) {
  return b.create<arith::AddFOp>(loc, x, y);
}

/// The larger of two partial maxima, '>' as the reference (a NaN does not
/// win).
Value maxF(OpBuilder &b, Location loc, Value x, Value y) {
  Value gt = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, y, x);
  return b.create<arith::SelectOp>(loc, gt, y, x);
}

std::optional<int64_t> axisOf(Operation *op, int64_t rank, int64_t dflt) {
  int64_t axis = intAttr(op, "axis", dflt);
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

/// A parameter (scale, bias) that broadcasts along the normalised dims
/// as a suffix of them (after leading 1s): flat, element k % its size
/// goes with element k of a row. Null if it broadcasts otherwise.
Value asParameterRow(OpBuilder &b, Location loc, Value buffer,
                     ArrayRef<int64_t> shape, ArrayRef<int64_t> normDims) {
  while (!shape.empty() && shape.front() == 1)
    shape = shape.drop_front();
  if (shape.size() > normDims.size() ||
      shape != normDims.take_back(shape.size()))
    return Value();
  return viewAs(b, loc, buffer, {std::max<int64_t>(1, numElements(shape))});
}

/// Element k of a row of `param` (asParameterRow).
Value parameterAt(OpBuilder &b, Location loc, Value param, Value k) {
  int64_t size = cast<MemRefType>(param.getType()).getDimSize(0);
  Value at = size == 1
                 ? b.create<arith::ConstantIndexOp>(loc, 0).getResult()
                 : b.create<arith::RemUIOp>(
                        loc, k, b.create<arith::ConstantIndexOp>(loc, size))
                       .getResult();
  return b.create<memref::LoadOp>(loc, param, at);
}

} // namespace

void buildSoftmaxRows(OpBuilder &b, Location loc, Value x, Value y,
                      int64_t rows, int64_t len, bool logarithm,
                      const GpuTraits &traits) {
  buildRowLoop(b, loc, rows, [&](OpBuilder &rb, Value row) {
    RowGroup group(rb, loc, len, traits.subgroupSize);
    Type f32 = rb.getF32Type();
    auto at = [&](OpBuilder &eb, Value k) -> Value {
      return eb.create<memref::LoadOp>(loc, x, ValueRange{row, k});
    };
    Value mx =
        group.reduce(rb, scalarConstant(rb, loc, f32, -INFINITY), maxF, at);
    auto shifted = [&](OpBuilder &eb, Value k) -> Value {
      return eb.create<arith::SubFOp>(loc, at(eb, k), mx);
    };
    Value sum =
        group.reduce(rb, scalarConstant(rb, loc, f32, 0.0), addF,
                     [&](OpBuilder &eb, Value k) -> Value {
                       return eb.create<math::ExpOp>(loc, shifted(eb, k));
                     });
    Value scale = logarithm ? rb.create<math::LogOp>(loc, sum).getResult()
                            : rb.create<arith::DivFOp>(
                                    loc, scalarConstant(rb, loc, f32, 1.0), sum)
                                  .getResult();
    group.forEach(rb, [&](OpBuilder &eb, Value k) {
      Value v =
          logarithm
              ? eb.create<arith::SubFOp>(loc, shifted(eb, k), scale).getResult()
              : eb.create<arith::MulFOp>(
                      loc, eb.create<math::ExpOp>(loc, shifted(eb, k)), scale)
                    .getResult();
      eb.create<memref::StoreOp>(loc, v, y, ValueRange{row, k});
    });
  });
}

TargetLowering lowerSoftmax(Operation *op, lowering::OpLoweringContext &ctx,
                            const GpuTraits &traits) {
  bool logarithm = op->getName().getStringRef() == "graph.log_softmax";
  ArrayRef<int64_t> shape = shapeOf(op->getOperand(0));
  std::optional<int64_t> axis = axisOf(op, shape.size(), -1);
  if (!allF32(op) || shape.empty() || !axis ||
      numElements(shape.drop_front(*axis + 1)) != 1)
    return TargetLowering::Declined;
  int64_t rows = numElements(shape.take_front(*axis)), len = shape[*axis];
  if (rows * len == 0)
    return TargetLowering::Lowered;
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  buildSoftmaxRows(b, loc,
                   viewAs(b, loc, ctx.buffer(op->getOperand(0)), {rows, len}),
                   viewAs(b, loc, ctx.buffer(op->getResult(0)), {rows, len}),
                   rows, len, logarithm, traits);
  return TargetLowering::Lowered;
}

namespace {

/// What a layer norm's rows are: element k of row r is at(r, k), the
/// parameters rows of asParameterRow, the statistics (layer_norm's Mean
/// and InvStdDev, [rows] each) null where not asked for.
struct LayerNormRows {
  int64_t rows, len;
  double eps;
  Value scale, bias, y;
  Value statistics[2];
  std::function<Value(OpBuilder &, Value row, Value k)> at;
};

void buildLayerNormRows(OpBuilder &b, Location loc, const LayerNormRows &n,
                        const GpuTraits &traits) {
  buildRowLoop(b, loc, n.rows, [&](OpBuilder &rb, Value row) {
    RowGroup group(rb, loc, n.len, traits.subgroupSize);
    Type f32 = rb.getF32Type();
    auto at = [&](OpBuilder &eb, Value k) { return n.at(eb, row, k); };
    Value count = scalarConstant(rb, loc, f32, static_cast<double>(n.len));
    Value zero = scalarConstant(rb, loc, f32, 0.0);
    Value mean =
        rb.create<arith::DivFOp>(loc, group.reduce(rb, zero, addF, at), count);
    auto centred = [&](OpBuilder &eb, Value k) -> Value {
      return eb.create<arith::SubFOp>(loc, at(eb, k), mean);
    };
    Value var = rb.create<arith::DivFOp>(
        loc,
        group.reduce(rb, zero, addF,
                     [&](OpBuilder &eb, Value k) -> Value {
                       Value d = centred(eb, k);
                       return eb.create<arith::MulFOp>(loc, d, d);
                     }),
        count);
    Value inv = rb.create<arith::DivFOp>(
        loc, scalarConstant(rb, loc, f32, 1.0),
        rb.create<math::SqrtOp>(
            loc, addF(rb, loc, var, scalarConstant(rb, loc, f32, n.eps))));
    if (n.statistics[0] || n.statistics[1])
      rb.create<scf::IfOp>(
          loc, group.isFirstThread(rb), [&](OpBuilder &tb, Location) {
            Value values[] = {mean, inv};
            for (auto [stat, v] : llvm::zip(n.statistics, values))
              if (stat)
                tb.create<memref::StoreOp>(loc, v, stat, row);
            tb.create<scf::YieldOp>(loc);
          });
    group.forEach(rb, [&](OpBuilder &eb, Value k) {
      Value v = eb.create<arith::MulFOp>(
          loc, eb.create<arith::MulFOp>(loc, centred(eb, k), inv),
          parameterAt(eb, loc, n.scale, k));
      if (n.bias)
        v = addF(eb, loc, v, parameterAt(eb, loc, n.bias, k));
      eb.create<memref::StoreOp>(loc, v, n.y, ValueRange{row, k});
    });
  });
}

/// The scale and bias operands (bias may be none) of a layer norm over
/// `normDims`, as parameter rows; false if they broadcast otherwise.
bool readParameters(OpBuilder &b, Location loc,
                    lowering::OpLoweringContext &ctx, Value scaleValue,
                    Value biasValue, ArrayRef<int64_t> normDims,
                    LayerNormRows &n) {
  if (biasValue && isa<NoneType>(biasValue.getType()))
    biasValue = nullptr;
  n.scale = asParameterRow(b, loc, ctx.buffer(scaleValue), shapeOf(scaleValue),
                           normDims);
  n.bias = biasValue ? asParameterRow(b, loc, ctx.buffer(biasValue),
                                      shapeOf(biasValue), normDims)
                     : Value();
  return n.scale && (!biasValue || n.bias);
}

} // namespace

// layer_norm(X, Scale, B) over [axis, rank); skip_layer_norm(X, Skip,
// Scale, B) normalises X + Skip over the last axis.
TargetLowering lowerLayerNorm(Operation *op, lowering::OpLoweringContext &ctx,
                              const GpuTraits &traits) {
  bool skip = op->getName().getStringRef() == "graph.skip_layer_norm";
  unsigned first = skip ? 2 : 1; // Scale's operand
  if (!allF32(op) || op->getNumOperands() < first + 1)
    return TargetLowering::Declined;
  ArrayRef<int64_t> shape = shapeOf(op->getOperand(0));
  std::optional<int64_t> axis = skip ? std::optional<int64_t>(shape.size() - 1)
                                     : axisOf(op, shape.size(), -1);
  if (shape.empty() || !axis || (skip && shapeOf(op->getOperand(1)) != shape))
    return TargetLowering::Declined;
  ArrayRef<int64_t> normDims = shape.drop_front(*axis);
  LayerNormRows n;
  n.rows = numElements(shape.take_front(*axis));
  n.len = numElements(normDims);
  n.eps = floatAttr(op, "epsilon", 1e-5f);

  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Value biasValue =
      op->getNumOperands() > first + 1 ? op->getOperand(first + 1) : Value();
  if (!readParameters(b, loc, ctx, op->getOperand(first), biasValue, normDims,
                      n))
    return TargetLowering::Declined;
  if (n.rows * n.len == 0)
    return TargetLowering::Lowered;
  Value x = viewAs(b, loc, ctx.buffer(op->getOperand(0)), {n.rows, n.len});
  Value addend =
      skip ? viewAs(b, loc, ctx.buffer(op->getOperand(1)), {n.rows, n.len})
           : Value();
  n.y = viewAs(b, loc, ctx.buffer(op->getResult(0)), {n.rows, n.len});
  for (auto [i, r] : llvm::enumerate(op->getResults().drop_front()))
    if (i < 2 && !isa<NoneType>(r.getType()))
      n.statistics[i] = viewAs(b, loc, ctx.buffer(r), {n.rows});
  n.at = [&](OpBuilder &eb, Value row, Value k) -> Value {
    Value v = eb.create<memref::LoadOp>(loc, x, ValueRange{row, k});
    if (addend)
      v = addF(eb, loc, v,
               eb.create<memref::LoadOp>(loc, addend, ValueRange{row, k}));
    return v;
  };
  buildLayerNormRows(b, loc, n, traits);
  return TargetLowering::Lowered;
}

// embed_layer_norm(Ids [B, S], Table [V, D], Addend (broadcast to
// [B, S, D]), Scale, B): row (b, s) normalises Table[Ids[b, s]] + Addend.
TargetLowering lowerEmbedLayerNorm(Operation *op,
                                   lowering::OpLoweringContext &ctx,
                                   const GpuTraits &traits) {
  if (op->getNumOperands() != 5)
    return TargetLowering::Declined;
  Value idsValue = op->getOperand(0);
  auto idsType = dyn_cast<IntegerType>(elementTypeOf(idsValue));
  ArrayRef<int64_t> ids = shapeOf(idsValue), table = shapeOf(op->getOperand(1)),
                    addendShape = shapeOf(op->getOperand(2));
  auto f32 = [&](unsigned i) {
    return elementTypeOf(op->getOperand(i)).isF32();
  };
  if (!idsType || !f32(1) || !f32(2) || !f32(3) ||
      !elementTypeOf(op->getResult(0)).isF32() || ids.size() != 2 ||
      table.size() != 2 || addendShape.size() > 3)
    return TargetLowering::Declined;
  int64_t full[] = {ids[0], ids[1], table[1]};
  for (size_t i = 0; i < addendShape.size(); ++i)
    if (addendShape[i] != 1 &&
        addendShape[i] != full[3 - addendShape.size() + i])
      return TargetLowering::Declined;
  LayerNormRows n;
  n.rows = ids[0] * ids[1];
  n.len = table[1];
  n.eps = floatAttr(op, "epsilon", 1e-5f);
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  if (!readParameters(b, loc, ctx, op->getOperand(3), op->getOperand(4),
                      {n.len}, n))
    return TargetLowering::Declined;
  if (n.rows * n.len == 0)
    return TargetLowering::Lowered;
  Value idBuffer = viewAs(b, loc, ctx.buffer(idsValue), {n.rows});
  Value tableBuffer = ctx.buffer(op->getOperand(1));
  Value addend = ctx.buffer(op->getOperand(2));
  n.y = viewAs(b, loc, ctx.buffer(op->getResult(0)), {n.rows, n.len});
  n.at = [&](OpBuilder &eb, Value row, Value k) -> Value {
    // A negative id counts from the end, as Gather's (the index checks
    // have kept it in [-V, V)).
    Value id = eb.create<memref::LoadOp>(loc, idBuffer, row);
    Value zero = eb.create<arith::ConstantIntOp>(loc, 0, idsType);
    Value negative =
        eb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, id, zero);
    Value wrapped = eb.create<arith::AddIOp>(
        loc, id, eb.create<arith::ConstantIntOp>(loc, table[0], idsType));
    Value tableRow = eb.create<arith::IndexCastOp>(
        loc, eb.getIndexType(),
        eb.create<arith::SelectOp>(loc, negative, wrapped, id));
    Value v =
        eb.create<memref::LoadOp>(loc, tableBuffer, ValueRange{tableRow, k});
    Value coords[] = {
        eb.create<arith::DivUIOp>(
            loc, row, eb.create<arith::ConstantIndexOp>(loc, ids[1])),
        eb.create<arith::RemUIOp>(
            loc, row, eb.create<arith::ConstantIndexOp>(loc, ids[1])),
        k};
    SmallVector<Value> at;
    for (size_t i = 0; i < addendShape.size(); ++i)
      at.push_back(addendShape[i] == 1
                       ? eb.create<arith::ConstantIndexOp>(loc, 0).getResult()
                       : coords[3 - addendShape.size() + i]);
    return addF(eb, loc, v, eb.create<memref::LoadOp>(loc, addend, at));
  };
  buildLayerNormRows(b, loc, n, traits);
  return TargetLowering::Lowered;
}

} // namespace mlcc::gpukernels
