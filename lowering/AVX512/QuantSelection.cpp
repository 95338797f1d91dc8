//===- QuantSelection.cpp - What the int8 selectors share -----------------===//

#include "QuantSelection.h"
#include "ChunkedKernelCalls.h"
#include "KernelABI.h"
#include "SelectionUtils.h"

#include "PackPanels.h"
#include "Quantize.h"

#include "mlcc/int8_pack.h"

#include "mlcc/Reference/MlirBridge.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

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

namespace {

/// A constant bias of N values (or one, broadcast), times `beta`.
bool planBias(OpLoweringContext &ctx, Value bias, float beta,
              Int8GemmPlan &plan) {
  if (isa<NoneType>(bias.getType()))
    return true;
  std::vector<float> values;
  if (!isF32Tensor(bias) || !constantFloats(ctx, bias, values) ||
      (values.size() != 1 && static_cast<int64_t>(values.size()) != plan.n))
    return false;
  ArrayRef<int64_t> shape = shapeOf(bias);
  if (shape.size() == 2 && shape[0] != 1)
    return false;
  plan.bias.resize(plan.n);
  for (int64_t j = 0; j < plan.n; ++j)
    plan.bias[j] = beta * values[values.size() == 1 ? 0 : j];
  return true;
}

} // namespace

bool planGemmEpilogue(Operation *op, OpLoweringContext &ctx,
                      Int8GemmPlan &plan) {
  StringRef name = op->getName().stripDialect();
  if (name == "gemm") {
    float alpha = floatAttr(op, "alpha", 1.0f);
    if (plan.scale.empty() && alpha != 1.0f)
      plan.scale.assign(plan.n, 1.0f);
    for (float &s : plan.scale)
      s *= alpha;
    return planBias(ctx, op->getOperand(2), floatAttr(op, "beta", 1.0f), plan);
  }
  if (name != "fc")
    return true;
  Value z = op->getOperand(3);
  if (!planBias(ctx, op->getOperand(2), 1.0f, plan) ||
      !fusedActivationOf(op, plan.epilogue) ||
      (!isa<NoneType>(z.getType()) &&
       (!isF32Tensor(z) || shapeOf(z) != shapeOf(plan.result))))
    return false;
  if (!isa<NoneType>(z.getType()))
    plan.residual = z;
  return true;
}

bool useAmx(const lowering::CpuTarget &cpu, bool bf16, int64_t m, int64_t k) {
  const uint64_t amx =
      MLCC_CPU_AMX_TILE | (bf16 ? MLCC_CPU_AMX_BF16 : MLCC_CPU_AMX_INT8);
  return cpu.has(amx) && m >= 16 && k >= (bf16 ? 32 : 64);
}

bool prepareInt8Gemm(Operation *op, OpLoweringContext &ctx,
                     const Int8GemmPlan &plan, Int8GemmKernels &out) {
  PackedInt8B packed;
  if (plan.bf16)
    packed =
        packBf16B(plan.bFloat.data(), plan.k, plan.n, plan.scale, plan.bias);
  else if (!plan.packAtRunTime)
    packed =
        packInt8B(plan.b.data(), plan.k, plan.n, plan.unsignedB, plan.zb,
                  plan.za, plan.signedA, plan.scale, plan.bias, plan.intBias);
  else
    // B's zero points are not known: the kernel computes A's row sums.
    packed.rowSums = true;
  Int8GemmSpec &spec = out.spec;
  spec.name = nodeName(op);
  spec.bf16 = plan.bf16;
  spec.amx = plan.amx && !packed.rowSums && !plan.aBlockStride && !plan.rows;
  spec.runTimeM = static_cast<bool>(plan.rows);
  out.rows = plan.rows;
  if (spec.amx && plan.signedA)
    amxCompensation(packed, plan.k, plan.n);
  spec.m = plan.m;
  spec.n = plan.n;
  spec.k = plan.k;
  spec.lda = plan.lda;
  spec.aBlockStride = plan.aBlockStride;
  spec.ldc = plan.ldc;
  spec.cBlockStride = plan.cBlockStride;
  spec.signedA = plan.signedA;
  spec.rowSums = packed.rowSums;
  spec.output = plan.output;
  spec.outputZero = plan.outputZero;
  spec.outputZeroArgument = plan.packAtRunTime && plan.runtime.yZero;
  spec.residual = static_cast<bool>(plan.residual);
  spec.epilogue = plan.epilogue;
  std::vector<uint8_t> code;
  if (ref::Status s = generateInt8Gemm(spec, code); s.failed()) {
    op->emitError() << s.message();
    return false;
  }
  ctx.noteProductPrecision(plan.bf16 ? lowering::WorkPrecision::Bf16
                                     : lowering::WorkPrecision::Int8);
  const std::string kind = plan.bf16 ? "_bf16" : "_int8";
  out.whole = ctx.addKernel(spec.name + kind, std::move(code));
  if (plan.packAtRunTime) {
    auto bytes = [&](int64_t n) {
      return ctx.address(
          ctx.scratch(MemRefType::get({n}, ctx.builder().getIntegerType(8))));
    };
    out.packed = bytes(mlcc_int8_packed_bytes(spec.k, spec.n));
    out.columns = bytes(mlcc_int8_column_data_bytes(spec.n));
    if (spec.outputZeroArgument)
      out.outputZero = loadZeroPoint(ctx, plan.runtime.yZero);
  } else {
    std::vector<uint8_t> panels(packed.panels.begin(), packed.panels.end());
    out.packed = ctx.addData(spec.name + "_packed", std::move(panels));
    out.columns =
        ctx.addData(spec.name + "_columns", std::move(packed.columnData));
  }
  // Over the pool: chunks of columns, as the f32 GEMM's; a chunk kernel
  // that cannot be generated leaves the whole one on one thread.
  int64_t chunks = (spec.n + kThreadedColumns - 1) / kThreadedColumns;
  int64_t tail = spec.n - (chunks - 1) * kThreadedColumns;
  auto generate = [&](int64_t n, std::string &symbol) {
    Int8GemmSpec part = spec;
    part.n = n;
    part.ldc = spec.ldc ? spec.ldc : spec.n;
    std::vector<uint8_t> partCode;
    if (generateInt8Gemm(part, partCode).failed())
      return false;
    symbol = ctx.addKernel(spec.name + kind + "_cols", std::move(partCode));
    return true;
  };
  if (!ctx.oneThread() && chunks > 1 && generate(kThreadedColumns, out.chunk) &&
      (tail == kThreadedColumns || generate(tail, out.tail)))
    out.chunks = chunks;
  return true;
}

void callInt8Gemm(OpLoweringContext &ctx, const Int8GemmKernels &kernels,
                  Value a, Value c, Value residual) {
  const Int8GemmSpec &spec = kernels.spec;
  // mlcc_int8_gemm_args: a, packed_b, column_data, c (, residual (,
  // output_zero (, m))).
  SmallVector<Value> fields{a, kernels.packed, kernels.columns, c};
  OpBuilder &b = ctx.builder();
  auto zero = [&] { return b.create<arith::ConstantIntOp>(ctx.loc(), 0, 64); };
  bool zeroField = spec.outputZeroArgument || spec.runTimeM;
  if (spec.residual || zeroField)
    fields.push_back(spec.residual ? residual : zero());
  if (zeroField)
    fields.push_back(spec.outputZeroArgument ? kernels.outputZero : zero());
  if (spec.runTimeM)
    fields.push_back(kernels.rows);
  if (kernels.chunks == 0) {
    ctx.callKernel(kernels.whole, fields);
    return;
  }
  const int64_t perGroup = spec.bf16 ? 2 : 4; // k per 4-byte lane
  int64_t groups = (spec.k + perGroup - 1) / perGroup;
  // Bytes per chunk: 4 panels of packed B (64 bytes per k group each), 4
  // panels of column data, kThreadedColumns of C (and of the residual):
  // 4 blocks of C in a blocked layout.
  int64_t cElements =
      spec.cBlockStride ? 4 * spec.cBlockStride : kThreadedColumns;
  SmallVector<int64_t> strides{0, groups * 4 * 64, 4 * kInt8ColumnDataBytes,
                               cElements * outputBytes(spec.output)};
  if (spec.residual || zeroField)
    strides.push_back(spec.residual ? cElements * 4 : 0);
  if (zeroField)
    strides.push_back(0);
  if (spec.runTimeM)
    strides.push_back(0);
  emitChunkedKernelCalls(
      ctx, {kernels.whole, kernels.chunk, kernels.tail, kernels.chunks}, fields,
      strides);
}

bool planInt8Shapes(Value a, Value b, bool runtime, Int8GemmPlan &plan) {
  if (!isInt8Tensor(a) || !isInt8Tensor(b))
    return false;
  ArrayRef<int64_t> as = shapeOf(a), bs = shapeOf(b);
  const size_t rank = bs.size();
  if (as.size() < 2 || rank < 2 || as.back() != bs[rank - 2] ||
      (rank > 2 && (!runtime || as.size() != rank ||
                    !std::equal(bs.begin(), bs.end() - 2, as.begin()))))
    return false;
  plan.a = a;
  plan.signedA = !isUnsignedTensor(a);
  plan.unsignedB = isUnsignedTensor(b);
  plan.k = bs[rank - 2];
  plan.n = bs[rank - 1];
  if (plan.k == 0 || plan.n == 0)
    return false;
  plan.batches = numElements(b) / (plan.k * plan.n);
  plan.m = numElements(a) / plan.batches / plan.k;
  return true;
}

bool runtimeScalars(Value v, int64_t slices, bool zeroPoint) {
  if (isa<NoneType>(v.getType()))
    return zeroPoint;
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() &&
         (zeroPoint ? t.getElementType().isInteger(8)
                    : t.getElementType().isF32()) &&
         oneOrPerSlice(t.getNumElements(), slices);
}

Value loadZeroPoint(OpLoweringContext &ctx, Value v) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  if (!v || isa<NoneType>(v.getType()))
    return b.create<arith::ConstantIntOp>(loc, 0, 64);
  Value buffer = ctx.buffer(v);
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<Value> zeros(type.getRank(), indexConst(b, loc, 0));
  Value byte = b.create<memref::LoadOp>(loc, buffer, zeros);
  if (isUnsignedTensor(v))
    return b.create<arith::ExtUIOp>(loc, b.getI64Type(), byte);
  return b.create<arith::ExtSIOp>(loc, b.getI64Type(), byte);
}

void packAtRunTime(OpLoweringContext &ctx, const Int8GemmPlan &plan,
                   const Int8GemmKernels &kernels, Value b) {
  OpBuilder &builder = ctx.builder();
  Location loc = ctx.loc();
  const RuntimeOperands &r = plan.runtime;
  auto i64 = [&](int64_t v) {
    return builder.create<arith::ConstantIntOp>(loc, v, 64);
  };
  auto addressOf = [&](Value v) {
    return v && !isa<NoneType>(v.getType()) ? ctx.address(ctx.buffer(v))
                                            : i64(0);
  };
  auto count = [&](Value v) {
    return i64(v && !isa<NoneType>(v.getType()) ? numElements(v) : 1);
  };
  // mlcc_int8_pack_args, field by field.
  static_assert(sizeof(mlcc_int8_pack_args) == 17 * 8 &&
                    offsetof(mlcc_int8_pack_args, column_data) == 16 * 8,
                "mlcc_int8_pack_args: 17 fields of 8 bytes");
  SmallVector<Value> fields{
      b ? b : addressOf(r.b),
      i64(plan.k),
      i64(plan.n),
      i64(r.strideK),
      i64(r.strideN),
      i64((plan.unsignedB ? MLCC_INT8_PACK_B_UNSIGNED : 0) |
          (plan.signedA ? MLCC_INT8_PACK_A_SIGNED : 0)),
      addressOf(r.aZero),
      addressOf(r.bZero),
      count(r.bZero),
      addressOf(r.aScale),
      addressOf(r.bScale),
      count(r.bScale),
      addressOf(r.yScale),
      i64(0), // bias: a run-time f32 bias is not planned
      addressOf(r.intBias),
      kernels.packed,
      kernels.columns};
  ctx.callRuntime("mlcc_int8_pack_b", fields);
}

TargetLowering emitInt8Gemm(Operation *op, OpLoweringContext &ctx,
                            Int8GemmPlan &plan) {
  Int8GemmKernels kernels;
  if (!prepareInt8Gemm(op, ctx, plan, kernels))
    return TargetLowering::Failed;
  Value a = ctx.address(ctx.buffer(plan.a));
  Value c = ctx.address(ctx.buffer(plan.result));
  Value residual =
      plan.residual ? ctx.address(ctx.buffer(plan.residual)) : Value();
  if (!plan.packAtRunTime) {
    callInt8Gemm(ctx, kernels, a, c, residual);
    return TargetLowering::Lowered;
  }
  if (plan.batches == 1) {
    packAtRunTime(ctx, plan, kernels);
    callInt8Gemm(ctx, kernels, a, c, residual);
    return TargetLowering::Lowered;
  }
  // A batched matmul: each batch packs its own B.
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Value bAddress = ctx.address(ctx.buffer(plan.runtime.b));
  auto loop = b.create<scf::ForOp>(loc, indexConst(b, loc, 0),
                                   indexConst(b, loc, plan.batches),
                                   indexConst(b, loc, 1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value i =
      b.create<arith::IndexCastOp>(loc, b.getI64Type(), loop.getInductionVar());
  auto at = [&](Value base, int64_t bytes) {
    return b.create<arith::AddIOp>(
        loc, base,
        b.create<arith::MulIOp>(
            loc, i, b.create<arith::ConstantIntOp>(loc, bytes, 64)));
  };
  packAtRunTime(ctx, plan, kernels, at(bAddress, plan.k * plan.n));
  callInt8Gemm(ctx, kernels, at(a, plan.m * plan.k),
               at(c, plan.m * plan.n * outputBytes(plan.output)), Value());
  return TargetLowering::Lowered;
}

Value emitToBf16(Operation *op, OpLoweringContext &ctx, SelectionState &state,
                 Value v, Value f32) {
  if (Value done = state.bf16.lookup(f32))
    return done;
  auto type = cast<MemRefType>(f32.getType());
  std::vector<uint8_t> code;
  std::string name = nodeName(op) + "_to_bf16";
  if (ref::Status s = generateToBf16(name, type.getNumElements(), code);
      s.failed()) {
    op->emitError() << s.message();
    return {};
  }
  std::string symbol = ctx.addKernel(name, std::move(code));
  OpBuilder &b = ctx.builder();
  Value bf16 =
      ctx.allocate(MemRefType::get(type.getShape(), b.getIntegerType(16)), v);
  Value zero = b.create<arith::ConstantIntOp>(ctx.loc(), 0, 64);
  SmallVector<Value> fields(MLCC_ELTWISE_MAX_SRC, zero);
  fields[0] = ctx.address(f32);
  fields.push_back(ctx.address(bf16));
  fields.push_back(
      b.create<arith::ConstantIntOp>(ctx.loc(), type.getNumElements(), 64));
  ctx.callKernel(symbol, fields);
  return state.bf16[f32] = bf16;
}

bool dequantizedFrom(OpLoweringContext &ctx, Value v, Dequantized &d) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getName().getStringRef() != "graph.dequantize" ||
      !isInt8Tensor(def->getOperand(0)) ||
      !constantFloats(ctx, def->getOperand(1), d.scale) ||
      !constantInts(ctx, def->getOperand(2), d.zero))
    return false;
  d.q = def->getOperand(0);
  int64_t rank = static_cast<int64_t>(shapeOf(d.q).size());
  d.axis = intAttr(def, "axis", 1);
  if (d.axis < 0)
    d.axis += rank;
  if (d.scale.size() == 1)
    return d.zero.size() == 1;
  return d.axis >= 0 && d.axis < rank &&
         static_cast<int64_t>(d.scale.size()) == shapeOf(d.q)[d.axis] &&
         (d.zero.size() == 1 || d.zero.size() == d.scale.size());
}

void forLoop(OpBuilder &b, Location loc, int64_t n,
             llvm::function_ref<void(OpBuilder &, Value)> body) {
  b.create<scf::ForOp>(loc, indexConst(b, loc, 0), indexConst(b, loc, n),
                       indexConst(b, loc, 1), ValueRange{},
                       [&](OpBuilder &lb, Location, Value i, ValueRange) {
                         body(lb, i);
                         lb.create<scf::YieldOp>(loc);
                       });
}

Value view(OpBuilder &b, Location loc, Value buffer, ArrayRef<int64_t> shape) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return b.create<memref::ReinterpretCastOp>(
      loc, MemRefType::get(shape, type.getElementType()), buffer, 0, shape,
      strides);
}

} // namespace mlcc::avx512
