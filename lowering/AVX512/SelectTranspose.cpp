//===- SelectTranspose.cpp - Transpose -> AVX-512 kernels -----------------===//
//
// graph.transpose of 4-byte elements (f32, i32, u32) with static shapes that
// moves the input's last dim: Kernels/Transpose.h's tiled 2-D transposes;
// on several threads, chunks of the planes' rows (whole tiles), each a
// kernel for its rows of every plane.
// Transposes that keep the last dim (row copies), other element sizes and
// more than three outer dims after merging go to the portable lowering.
//
//===----------------------------------------------------------------------===//

#include "ChunkedKernelCalls.h"
#include "KernelABI.h"
#include "SelectionUtils.h"
#include "Transpose.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// Chunks of rows a split aims for: four per thread on two threads.
constexpr int64_t kRowChunks = 8;
/// Rows a chunk has at least, and a multiple of: whole 16-row tiles.
constexpr int64_t kChunkRows = 16;

} // namespace

TargetLowering selectTranspose(Operation *op, OpLoweringContext &ctx,
                               SelectionState &) {
  if (op->getName().stripDialect() != "transpose")
    return TargetLowering::Declined;
  Value x = op->getOperand(0), y = op->getResult(0);
  auto type = dyn_cast<RankedTensorType>(x.getType());
  if (!type || !type.hasStaticShape() ||
      !type.getElementType().isIntOrFloat() ||
      type.getElementType().getIntOrFloatBitWidth() != 32)
    return TargetLowering::Declined;
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  std::vector<int64_t> perm = intsAttr(op, "perm");
  if (perm.empty())
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d)
      perm.push_back(d);
  for (int64_t &d : perm)
    if (d < 0)
      d += static_cast<int64_t>(shape.size());
  TransposeSpec spec;
  if (!planTranspose(shape, perm, spec))
    return TargetLowering::Declined;
  spec.name = nodeName(op);
  // Strides past 2 GiB: the portable lowering.
  if (validateTranspose(spec).failed())
    return TargetLowering::Declined;
  auto generate = [&](int64_t rows, std::string &symbol) {
    TransposeSpec part = spec;
    part.rows = rows;
    return addGeneratedKernel(op, ctx, generateTranspose, part, spec.name,
                              symbol);
  };
  // mlcc_transpose_args: src, dst. A chunk's rows of each plane: src rows
  // srcRowStride apart, dst columns.
  int64_t perChunk = (spec.rows + kRowChunks - 1) / kRowChunks;
  perChunk = (perChunk + kChunkRows - 1) / kChunkRows * kChunkRows;
  if (!emitKernelChunks(
          ctx, spec.rows, perChunk, generate,
          {ctx.address(ctx.buffer(x)), ctx.address(ctx.buffer(y))},
          {4 * spec.srcRowStride, 4}))
    return TargetLowering::Failed;
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
