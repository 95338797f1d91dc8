//===- QuantSelection.cpp - What the int8 selectors share -----------------===//

#include "QuantSelection.h"
#include "ChunkedKernelCalls.h"
#include "KernelABI.h"
#include "SelectionUtils.h"

#include "mlcc/Reference/MlirBridge.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// Columns one thread computes per call: four panels, the widest block.
constexpr int64_t kThreadedColumns = 4 * kInt8Panel;

} // namespace

bool isInt8Tensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getElementType().isInteger(8);
}

bool isUnsignedTensor(Value v) {
  return cast<ShapedType>(v.getType()).getElementType().isUnsignedInteger();
}

bool constantInts(OpLoweringContext &ctx, Value v, std::vector<int32_t> &out) {
  if (isa<NoneType>(v.getType())) {
    out = {0};
    return true;
  }
  ElementsAttr attr = ctx.constantValue(v);
  ref::Tensor t;
  if (!attr || !attr.getElementType().isInteger(8) ||
      tensorFromElementsAttr(attr, t).failed())
    return false;
  out.resize(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i)
    out[i] = static_cast<int32_t>(t.getInt(i));
  return true;
}

TargetLowering emitInt8Gemm(Operation *op, OpLoweringContext &ctx,
                            Int8GemmPlan &plan) {
  PackedInt8B packed =
      packInt8B(plan.b.data(), plan.k, plan.n, plan.unsignedB, plan.zb, plan.za,
                plan.signedA, plan.scale, plan.bias);
  Int8GemmSpec spec;
  spec.name = nodeName(op);
  spec.m = plan.m;
  spec.n = plan.n;
  spec.k = plan.k;
  spec.signedA = plan.signedA;
  spec.rowSums = packed.rowSums;
  spec.output = plan.output;
  spec.residual = static_cast<bool>(plan.residual);
  spec.epilogue = plan.epilogue;
  std::vector<uint8_t> code;
  if (ref::Status s = generateInt8Gemm(spec, code); s.failed())
    return failed(op, s);
  std::string whole = ctx.addKernel(spec.name + "_int8", std::move(code));
  // mlcc_int8_gemm_args: a, packed_b, column_data, c (, residual).
  std::vector<uint8_t> panels(packed.panels.begin(), packed.panels.end());
  SmallVector<Value> fields{
      ctx.address(ctx.buffer(plan.a)),
      ctx.addData(spec.name + "_packed", std::move(panels)),
      ctx.addData(spec.name + "_columns", std::move(packed.columnData)),
      ctx.address(ctx.buffer(plan.result))};
  if (plan.residual)
    fields.push_back(ctx.address(ctx.buffer(plan.residual)));
  // Over the pool: chunks of columns, as the f32 GEMM's; a chunk kernel
  // that cannot be generated leaves the whole one on one thread.
  int64_t chunks = (spec.n + kThreadedColumns - 1) / kThreadedColumns;
  int64_t tail = spec.n - (chunks - 1) * kThreadedColumns;
  auto generate = [&](int64_t n, std::string &symbol) {
    Int8GemmSpec part = spec;
    part.n = n;
    part.ldc = spec.n;
    std::vector<uint8_t> partCode;
    if (generateInt8Gemm(part, partCode).failed())
      return false;
    symbol = ctx.addKernel(spec.name + "_int8_cols", std::move(partCode));
    return true;
  };
  std::string chunkKernel, tailKernel;
  if (chunks <= 1 || !generate(kThreadedColumns, chunkKernel) ||
      (tail != kThreadedColumns && !generate(tail, tailKernel))) {
    ctx.callKernel(whole, fields);
    return TargetLowering::Lowered;
  }
  int64_t groups = (spec.k + 3) / 4;
  int64_t cBytes =
      spec.output == Int8GemmOutput::U8 || spec.output == Int8GemmOutput::S8
          ? 1
          : 4;
  // Bytes per chunk: 4 panels of packed B (64 bytes per k group each), 4
  // panels of column data, kThreadedColumns of C.
  SmallVector<int64_t> strides{0, groups * 4 * 64, 4 * kInt8ColumnDataBytes,
                               kThreadedColumns * cBytes};
  if (plan.residual)
    strides.push_back(kThreadedColumns * 4);
  emitChunkedKernelCalls(ctx, {whole, chunkKernel, tailKernel, chunks}, fields,
                         strides);
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
