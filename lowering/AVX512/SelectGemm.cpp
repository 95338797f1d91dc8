//===- SelectGemm.cpp - Gemm and MatMul -> AVX-512 kernels ----------------===//
//
// f32 A x B with B a constant: B is packed now (alpha folded in), a constant
// bias row becomes the kernel's bias, and the kernel is generated for the
// exact M, N, K. MatMul's leading batch dims of A are rows of one GEMM when
// B is 2-D. A MatMul whose B is computed at run time (attention's QK^T and
// scores x V) packs each batch's B in the host code, then calls the same
// kind of kernel, in a loop over the batch. graph.fc is a MatMul whose
// epilogue the kernel applies to its accumulators: the bias, the residual
// Z (read like C) and the activation, so Y is written once. In a variant of
// a range of lengths, the kernel computes the rows of the run's positions
// only (a run-time M; lengthRows).
//
//===----------------------------------------------------------------------===//

#include "ChunkedKernelCalls.h"
#include "Gemm.h"
#include "KernelABI.h"
#include "PackPanels.h"
#include "SelectionUtils.h"
#include "StrassenGemm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

struct GemmPlan {
  Value a, result;
  int64_t m = 0, n = 0, k = 0;
  std::vector<float> b; // K x N, or N x K when transB
  bool transB = false;
  float alpha = 1.0f;
  std::vector<float> bias; // empty, or N values
  Value residual;          // fc's Z: null, or a tensor like the result
  std::vector<EltwiseOp> epilogue;
};

/// Gemm: Y = alpha * A' * B' + beta * C, A not transposed, B and C constant
/// (C a row of N or a scalar).
bool planGemm(Operation *op, OpLoweringContext &ctx, GemmPlan &plan) {
  if (intAttr(op, "transA", 0) != 0)
    return false;
  plan.a = op->getOperand(0);
  plan.result = op->getResult(0);
  plan.transB = intAttr(op, "transB", 0) != 0;
  plan.alpha = floatAttr(op, "alpha", 1.0f);
  if (!constantFloats(ctx, op->getOperand(1), plan.b))
    return false;
  ArrayRef<int64_t> a = shapeOf(plan.a), y = shapeOf(plan.result);
  plan.m = a[0];
  plan.k = a[1];
  plan.n = y[1];
  Value c = op->getOperand(2);
  if (isa<NoneType>(c.getType()))
    return true;
  std::vector<float> cValues;
  if (!isF32Tensor(c) || !constantFloats(ctx, c, cValues))
    return false;
  ArrayRef<int64_t> cShape = shapeOf(c);
  int64_t rows = cShape.size() == 2 ? cShape[0] : 1;
  if (rows != 1 || (cValues.size() != 1 && int64_t(cValues.size()) != plan.n))
    return false;
  float beta = floatAttr(op, "beta", 1.0f);
  plan.bias.resize(plan.n);
  for (int64_t j = 0; j < plan.n; ++j)
    plan.bias[j] = beta * cValues[cValues.size() == 1 ? 0 : j];
  return true;
}

/// MatMul: A [..., M, K] x B [K, N] constant.
bool planMatmul(Operation *op, OpLoweringContext &ctx, GemmPlan &plan) {
  plan.a = op->getOperand(0);
  plan.result = op->getResult(0);
  Value b = op->getOperand(1);
  ArrayRef<int64_t> a = shapeOf(plan.a);
  if (a.size() < 2 || shapeOf(b).size() != 2 ||
      !constantFloats(ctx, b, plan.b))
    return false;
  plan.k = a.back();
  plan.n = shapeOf(b)[1];
  plan.m = numElements(plan.a) / std::max<int64_t>(plan.k, 1);
  return plan.k > 0;
}

/// fc: X [..., K] x W [K, N] constant, B constant [N] or none, Z of the
/// result's shape or none, an activation the injector has.
bool planFc(Operation *op, OpLoweringContext &ctx, GemmPlan &plan) {
  if (!planMatmul(op, ctx, plan) || !fusedActivationOf(op, plan.epilogue))
    return false;
  Value b = op->getOperand(2), z = op->getOperand(3);
  if (!isa<NoneType>(b.getType()) &&
      (!isF32Tensor(b) || !constantFloats(ctx, b, plan.bias) ||
       static_cast<int64_t>(plan.bias.size()) != plan.n))
    return false;
  if (isa<NoneType>(z.getType()))
    return true;
  if (!isF32Tensor(z) || shapeOf(z) != shapeOf(plan.result))
    return false;
  plan.residual = z;
  return true;
}

/// Packs batch `batch` of the [batches, K, N] memref `bBatches`.
void emitPackB(OpBuilder &b, Location loc, Value bBatches, Value batch,
               Value packed, int64_t k, int64_t n) {
  emitPackedPanels(b, loc, packed, k, n,
                   [&](OpBuilder &lb, Location l, Value kk, Value col) {
                     return lb.create<memref::LoadOp>(
                         l, bBatches, ValueRange{batch, kk, col});
                   });
}

/// `buffer` seen as [rows, d1, d2] (a contiguous memref of that many
/// elements).
Value asBatches(OpBuilder &b, Location loc, Value buffer, int64_t d1,
                int64_t d2) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t rows = type.getNumElements() / (d1 * d2);
  auto batches = MemRefType::get({rows, d1, d2}, type.getElementType());
  return b.create<memref::ReinterpretCastOp>(
      loc, batches, buffer, 0, ArrayRef<int64_t>{rows, d1, d2},
      ArrayRef<int64_t>{d1 * d2, d2, 1});
}

/// MatMul A [..., M, K] x B [..., K, N] with B computed at run time and the
/// same batch dims on both sides (or B 2-D).
TargetLowering selectRuntimeMatmul(Operation *op, OpLoweringContext &ctx) {
  Value a = op->getOperand(0), bv = op->getOperand(1), y = op->getResult(0);
  ArrayRef<int64_t> as = shapeOf(a), bs = shapeOf(bv);
  if (as.size() < 2 || bs.size() < 2 ||
      (bs.size() != 2 && as.drop_back(2) != bs.drop_back(2)))
    return TargetLowering::Declined;
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (m == 0 || k == 0 || n == 0)
    return TargetLowering::Declined;
  int64_t batches = numElements(a) / (m * k);
  bool sharedB = bs.size() == 2;

  GemmSpec spec;
  spec.name = nodeName(op);
  spec.m = m;
  spec.n = n;
  spec.k = k;
  std::vector<uint8_t> code;
  if (ref::Status s = generateGemm(spec, code); s.failed())
    return failed(op, s);
  std::string symbol = ctx.addKernel(spec.name, std::move(code));

  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  int64_t panels = (n + kGemmPanel - 1) / kGemmPanel;
  Value packed = ctx.scratch(
      MemRefType::get({panels, k, kGemmPanel}, b.getF32Type()));
  Value bBatches = asBatches(b, loc, ctx.buffer(bv), k, n);
  Value aAddress = ctx.address(ctx.buffer(a));
  Value cAddress = ctx.address(ctx.buffer(y));
  Value packedAddress = ctx.address(packed);
  Value zero = b.create<arith::ConstantIntOp>(loc, 0, 64);
  if (sharedB)
    emitPackB(b, loc, bBatches, indexConst(b, loc, 0), packed, k, n);
  // Built first and filled after: the kernel calls need the loop to be in
  // the function already.
  auto loop = b.create<scf::ForOp>(loc, indexConst(b, loc, 0),
                                   indexConst(b, loc, batches),
                                   indexConst(b, loc, 1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value batch = loop.getInductionVar();
  if (!sharedB)
    emitPackB(b, loc, bBatches, batch, packed, k, n);
  Value i = b.create<arith::IndexCastOp>(loc, b.getI64Type(), batch);
  auto offset = [&](Value base, int64_t elements) -> Value {
    Value bytes = b.create<arith::MulIOp>(
        loc, i, b.create<arith::ConstantIntOp>(loc, elements * 4, 64));
    return b.create<arith::AddIOp>(loc, base, bytes);
  };
  // mlcc_gemm_args: a, packed_b, bias, c.
  ctx.callKernel(symbol, {offset(aAddress, m * k), packedAddress, zero,
                          offset(cAddress, m * n)});
  return TargetLowering::Lowered;
}

/// Columns of C one thread computes per kernel call: four panels, the
/// kernel's widest register block.
constexpr int64_t kThreadedColumns = 4 * kGemmPanel;

/// On a pool of several threads, C's columns are split in chunks of
/// kThreadedColumns over the threads, each chunk a kernel call at offsets
/// into packed B (whole panels), the bias and C (ldc = N); on one thread the
/// whole-GEMM kernel runs. Fails (nothing emitted) if a chunk kernel cannot
/// be generated.
LogicalResult emitThreadedGemm(Operation *op, OpLoweringContext &ctx,
                               const GemmSpec &spec, StringRef wholeKernel,
                               ArrayRef<Value> fields) {
  int64_t chunks = (spec.n + kThreadedColumns - 1) / kThreadedColumns;
  int64_t tail = spec.n - (chunks - 1) * kThreadedColumns;
  auto generate = [&](int64_t n, std::string &symbol) {
    GemmSpec part = spec;
    part.n = n;
    part.ldc = spec.n;
    std::vector<uint8_t> code;
    if (generateGemm(part, code).failed())
      return false;
    symbol = ctx.addKernel(spec.name + "_cols", std::move(code));
    return true;
  };
  std::string chunkKernel, tailKernel;
  if (!generate(kThreadedColumns, chunkKernel) ||
      (tail != kThreadedColumns && !generate(tail, tailKernel)))
    return failure();

  // a, packed_b, bias, c (, residual (, m)).
  SmallVector<int64_t> strides{0, spec.k * kThreadedColumns * 4,
                               spec.bias ? kThreadedColumns * 4 : 0,
                               kThreadedColumns * 4};
  if (fields.size() > 4)
    strides.push_back(spec.residual ? kThreadedColumns * 4 : 0);
  if (spec.runTimeM)
    strides.push_back(0);
  emitChunkedKernelCalls(ctx,
                         {wholeKernel.str(), chunkKernel, tailKernel, chunks},
                         fields, strides);
  return success();
}

} // namespace

/// The plan as one level of Strassen (StrassenGemm.h): B dense K x N with
/// alpha folded in.
TargetLowering selectStrassen(Operation *op, OpLoweringContext &ctx,
                              const GemmPlan &plan) {
  StrassenGemm g;
  g.name = nodeName(op);
  g.m = plan.m;
  g.k = plan.k;
  g.n = plan.n;
  g.b.resize(static_cast<size_t>(plan.k * plan.n));
  for (int64_t r = 0; r < plan.k; ++r)
    for (int64_t col = 0; col < plan.n; ++col)
      g.b[r * plan.n + col] =
          plan.alpha *
          plan.b[plan.transB ? col * plan.k + r : r * plan.n + col];
  g.bias = plan.bias;
  g.a = ctx.address(ctx.buffer(plan.a));
  g.c = ctx.address(ctx.buffer(plan.result));
  if (plan.residual)
    g.residual = ctx.address(ctx.buffer(plan.residual));
  g.epilogue = plan.epilogue;
  return failed(emitStrassenGemm(op, ctx, g)) ? TargetLowering::Failed
                                              : TargetLowering::Lowered;
}

TargetLowering selectGemm(Operation *op, OpLoweringContext &ctx,
                          SelectionState &state) {
  StringRef name = op->getName().stripDialect();
  if ((name != "gemm" && name != "matmul" && name != "fc") ||
      !isF32Tensor(op->getOperand(0)) || !isF32Tensor(op->getOperand(1)) ||
      !isF32Tensor(op->getResult(0)))
    return TargetLowering::Declined;
  GemmPlan plan;
  bool planned = name == "gemm"     ? planGemm(op, ctx, plan)
                 : name == "matmul" ? planMatmul(op, ctx, plan)
                                    : planFc(op, ctx, plan);
  if (!planned)
    return name == "matmul" && !ctx.constantValue(op->getOperand(1))
               ? selectRuntimeMatmul(op, ctx)
               : TargetLowering::Declined;

  // With a range of lengths, the rows of the positions before the run's
  // length.
  Value rows = lengthRows(op, ctx, plan.result, plan.m);
  if (state.strassen && !rows && strassenApplies(plan.m, plan.k, plan.n))
    return selectStrassen(op, ctx, plan);

  std::vector<float> packed;
  int64_t ldb = plan.transB ? plan.k : plan.n;
  packB(plan.b.data(), plan.k, plan.n, ldb, plan.transB, packed);
  if (plan.alpha != 1.0f)
    for (float &v : packed)
      v *= plan.alpha;

  GemmSpec spec;
  spec.name = nodeName(op);
  spec.m = plan.m;
  spec.n = plan.n;
  spec.k = plan.k;
  spec.bias = !plan.bias.empty();
  spec.residual = static_cast<bool>(plan.residual);
  spec.epilogue = plan.epilogue;
  spec.runTimeM = static_cast<bool>(rows);
  std::vector<uint8_t> code;
  if (ref::Status s = generateGemm(spec, code); s.failed())
    return failed(op, s);
  std::string symbol = ctx.addKernel(spec.name, std::move(code));

  OpBuilder &b = ctx.builder();
  Value packedB = ctx.addData(spec.name + "_packed", bytesOf(packed));
  Value bias = spec.bias ? ctx.addData(spec.name + "_bias", bytesOf(plan.bias))
                         : b.create<arith::ConstantIntOp>(ctx.loc(), 0, 64);
  // mlcc_gemm_args: a, packed_b, bias, c (, residual).
  SmallVector<Value> fields{ctx.address(ctx.buffer(plan.a)), packedB, bias,
                            ctx.address(ctx.buffer(plan.result))};
  if (plan.residual || rows)
    fields.push_back(plan.residual
                         ? ctx.address(ctx.buffer(plan.residual))
                         : b.create<arith::ConstantIntOp>(ctx.loc(), 0, 64));
  if (rows) // m; the chunks of columns all take it
    fields.push_back(rows);
  if (ctx.oneThread() || spec.n <= kThreadedColumns ||
      failed(emitThreadedGemm(op, ctx, spec, symbol, fields)))
    ctx.callKernel(symbol, fields);
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
