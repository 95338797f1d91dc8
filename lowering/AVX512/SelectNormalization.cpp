//===- SelectNormalization.cpp - Softmax and LayerNorm -> AVX-512 kernels -===//
//
// Over the last axis, which is where models put them (attention scores,
// classifier logits, transformer hidden states): rows x cols with every row
// contiguous. Softmax and log_softmax also over another axis (a
// segmentation net's channels), 16 softmaxes a vector (SoftmaxAxis.cpp);
// layer norms over another axis go to the portable lowering.
// graph.skip_layer_norm is layer_norm's kernel reading a second row;
// graph.instance_norm is layer_norm's kernel over rows that are the planes
// of each image's channels, with a scale and bias per row.
// Unless the op is small enough for one thread, the pool's threads take
// chunks of rows, each a call of a kernel generated for a chunk's rows.
//
//===----------------------------------------------------------------------===//

#include "ChunkedKernelCalls.h"
#include "KernelABI.h"
#include "Normalization.h"
#include "SelectionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// Chunks of rows a split aims for: four per thread on two threads.
constexpr int64_t kRowChunks = 8;

/// Generates `generator`'s kernel for `spec` and calls it with `fields`;
/// or, on several threads, calls kernels it generates for chunks of
/// spec.rows (and for a shorter last chunk), with fields[i] moved by
/// rowBytes[i] per row. False after a generator error.
template <typename Spec>
bool callByRows(Operation *op, OpLoweringContext &ctx,
                ref::Status (*generator)(const Spec &, std::vector<uint8_t> &),
                const Spec &spec, ArrayRef<Value> fields,
                ArrayRef<int64_t> rowBytes) {
  auto generate = [&](int64_t rows, std::string &symbol) {
    Spec part = spec;
    part.rows = rows;
    return addGeneratedKernel(op, ctx, generator, part, spec.name, symbol);
  };
  // Run-time rows: the call says how many; one kernel takes them.
  const int64_t perChunk = spec.runTimeRows
                               ? spec.rows
                               : (spec.rows + kRowChunks - 1) / kRowChunks;
  return emitKernelChunks(ctx, spec.rows, perChunk, generate, fields,
                          rowBytes);
}

bool isLastAxis(Operation *op, Value x, int64_t fallback) {
  int64_t rank = shapeOf(x).size();
  int64_t axis = intAttr(op, "axis", fallback);
  return rank > 0 && (axis == rank - 1 || axis == -1);
}

/// Bytes of columns from which a softmax over a non-last axis is split
/// over the threads, by columns.
constexpr int64_t kMinAxisChunkBytes = int64_t(64) << 10;
/// Chunks of columns are whole vectors but the last.
constexpr int64_t kVectorLanes = 16;

/// softmax or log_softmax along a non-last axis: the kernel of
/// SoftmaxAxis.cpp over [outer, len, inner]; on several threads, chunks of
/// the inner columns (multiples of 16) for every outer block.
TargetLowering selectSoftmaxAxis(Operation *op, OpLoweringContext &ctx,
                                 bool log) {
  Value x = op->getOperand(0), y = op->getResult(0);
  ArrayRef<int64_t> shape = shapeOf(x);
  const int64_t rank = shape.size();
  int64_t axis = intAttr(op, "axis", -1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank - 1)
    return TargetLowering::Declined;
  SoftmaxSpec spec;
  spec.name = nodeName(op);
  spec.log = log;
  spec.rows = 1;
  spec.inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    spec.rows *= shape[d];
  for (int64_t d = axis + 1; d < rank; ++d)
    spec.inner *= shape[d];
  spec.cols = shape[axis];
  if (spec.rows == 0 || spec.cols == 0 || spec.inner < 2)
    return TargetLowering::Declined;
  auto generate = [&](int64_t columns, std::string &symbol) {
    SoftmaxSpec part = spec;
    part.columns = columns;
    return addGeneratedKernel(op, ctx, generateSoftmax, part, spec.name,
                              symbol);
  };
  // mlcc_softmax_args: src, dst.
  SmallVector<Value> fields{ctx.address(ctx.buffer(x)),
                            ctx.address(ctx.buffer(y))};
  const int64_t columnBytes = 4 * spec.rows * spec.cols;
  int64_t perChunk = std::max<int64_t>(
      (spec.inner + kRowChunks - 1) / kRowChunks,
      (kMinAxisChunkBytes + columnBytes - 1) / columnBytes);
  perChunk = (perChunk + kVectorLanes - 1) / kVectorLanes * kVectorLanes;
  if (!emitKernelChunks(ctx, spec.inner, perChunk, generate, fields, {4, 4}))
    return TargetLowering::Failed;
  return TargetLowering::Lowered;
}

TargetLowering selectSoftmax(Operation *op, OpLoweringContext &ctx, bool log) {
  Value x = op->getOperand(0), y = op->getResult(0);
  if (!isF32Tensor(x))
    return TargetLowering::Declined;
  if (!isLastAxis(op, x, -1))
    return selectSoftmaxAxis(op, ctx, log);
  SoftmaxSpec spec;
  spec.name = nodeName(op);
  spec.log = log;
  spec.cols = shapeOf(x).back();
  spec.rows = spec.cols ? numElements(x) / spec.cols : 0;
  if (spec.rows == 0 || spec.cols == 0)
    return TargetLowering::Declined;
  // mlcc_softmax_args: src, dst.
  const int64_t rowBytes = spec.cols * 4;
  if (!callByRows(op, ctx, generateSoftmax, spec,
                  {ctx.address(ctx.buffer(x)), ctx.address(ctx.buffer(y))},
                  {rowBytes, rowBytes}))
    return TargetLowering::Failed;
  return TargetLowering::Lowered;
}

/// graph.layer_norm (X, Scale, B) or graph.skip_layer_norm (X, Skip,
/// Scale, B).
TargetLowering selectLayerNorm(Operation *op, OpLoweringContext &ctx,
                               bool hasSkip) {
  unsigned first = hasSkip ? 2 : 1;
  Value x = op->getOperand(0), scale = op->getOperand(first),
        bias = op->getOperand(first + 1), y = op->getResult(0);
  for (unsigned i = 1; i < op->getNumResults(); ++i)
    if (!isa<NoneType>(op->getResult(i).getType()))
      return TargetLowering::Declined;
  if (!isF32Tensor(x) || !isF32Tensor(scale) || !isLastAxis(op, x, -1))
    return TargetLowering::Declined;
  if (hasSkip && op->getOperand(1).getType() != x.getType())
    return TargetLowering::Declined;
  LayerNormSpec spec;
  spec.name = nodeName(op);
  spec.cols = shapeOf(x).back();
  spec.rows = spec.cols ? numElements(x) / spec.cols : 0;
  // With a range of lengths, the rows of the run's positions only.
  Value rows = spec.rows ? lengthRows(op, ctx, y, spec.rows) : Value();
  spec.runTimeRows = static_cast<bool>(rows);
  spec.epsilon = floatAttr(op, "epsilon", 1e-5f);
  spec.skip = hasSkip;
  bool hasBias = !isa<NoneType>(bias.getType());
  if (spec.rows == 0 || numElements(scale) != spec.cols ||
      (hasBias && (!isF32Tensor(bias) || numElements(bias) != spec.cols)))
    return TargetLowering::Declined;
  Value beta = hasBias ? ctx.address(ctx.buffer(bias))
                       : ctx.addData(spec.name + "_zero_bias",
                                     bytesOf(std::vector<float>(spec.cols)));
  // mlcc_layer_norm_args: src, gamma, beta, dst, skip.
  SmallVector<Value> args = {ctx.address(ctx.buffer(x)),
                             ctx.address(ctx.buffer(scale)), beta,
                             ctx.address(ctx.buffer(y))};
  if (hasSkip || rows)
    args.push_back(
        hasSkip ? ctx.address(ctx.buffer(op->getOperand(1)))
                : ctx.builder().create<arith::ConstantIntOp>(ctx.loc(), 0, 64));
  if (rows)
    args.push_back(rows); // the run's rows: the kernel reads how many
  const int64_t rowBytes = spec.cols * 4;
  SmallVector<int64_t> strides{rowBytes, 0, 0, rowBytes};
  if (hasSkip)
    strides.push_back(rowBytes);
  if (!callByRows(op, ctx, generateLayerNorm, spec, args, strides))
    return TargetLowering::Failed;
  return TargetLowering::Lowered;
}

/// graph.instance_norm (X, Scale, B): [N, C, spatial...] as N C rows of the
/// spatial size. The kernel walks a scale and bias per row: the op's [C]
/// ones for one image, else constants repeated for each image.
TargetLowering selectInstanceNorm(Operation *op, OpLoweringContext &ctx) {
  Value x = op->getOperand(0), scale = op->getOperand(1),
        bias = op->getOperand(2), y = op->getResult(0);
  if (!isF32Tensor(x) || !isF32Tensor(scale) || !isF32Tensor(bias) ||
      shapeOf(x).size() < 3)
    return TargetLowering::Declined;
  ArrayRef<int64_t> shape = shapeOf(x);
  const int64_t n = shape[0], c = shape[1];
  LayerNormSpec spec;
  spec.name = nodeName(op);
  spec.rowAffine = true;
  spec.rows = n * c;
  spec.cols = spec.rows ? numElements(x) / spec.rows : 0;
  spec.epsilon = floatAttr(op, "epsilon", 1e-5f);
  if (spec.rows == 0 || spec.cols == 0 || numElements(scale) != c ||
      numElements(bias) != c)
    return TargetLowering::Declined;
  Value gamma, beta;
  if (n == 1) {
    gamma = ctx.address(ctx.buffer(scale));
    beta = ctx.address(ctx.buffer(bias));
  } else {
    std::vector<float> perChannel[2], perRow[2];
    if (!constantFloats(ctx, scale, perChannel[0]) ||
        !constantFloats(ctx, bias, perChannel[1]))
      return TargetLowering::Declined;
    for (int i = 0; i < 2; ++i)
      for (int64_t image = 0; image < n; ++image)
        perRow[i].insert(perRow[i].end(), perChannel[i].begin(),
                         perChannel[i].end());
    gamma = ctx.addData(spec.name + "_row_scale", bytesOf(perRow[0]));
    beta = ctx.addData(spec.name + "_row_bias", bytesOf(perRow[1]));
  }
  // mlcc_layer_norm_args: src, gamma, beta, dst.
  const int64_t rowBytes = spec.cols * 4;
  if (!callByRows(op, ctx, generateLayerNorm, spec,
                  {ctx.address(ctx.buffer(x)), gamma, beta,
                   ctx.address(ctx.buffer(y))},
                  {rowBytes, 4, 4, rowBytes}))
    return TargetLowering::Failed;
  return TargetLowering::Lowered;
}

} // namespace

TargetLowering selectNormalization(Operation *op, OpLoweringContext &ctx,
                              SelectionState &) {
  StringRef name = op->getName().stripDialect();
  if (name == "softmax" || name == "log_softmax")
    return selectSoftmax(op, ctx, name == "log_softmax");
  if (name == "layer_norm" || name == "skip_layer_norm")
    return selectLayerNorm(op, ctx, name == "skip_layer_norm");
  if (name == "instance_norm")
    return selectInstanceNorm(op, ctx);
  return TargetLowering::Declined;
}

} // namespace mlcc::avx512
