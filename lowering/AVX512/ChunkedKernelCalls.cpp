//===- ChunkedKernelCalls.cpp - One kernel or chunks over the pool --------===//

#include "ChunkedKernelCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mlcc::avx512 {

void emitWholeOrParallel(OpLoweringContext &ctx, StringRef whole,
                         ArrayRef<Value> fields, int64_t n,
                         function_ref<void(Value, ValueRange)> chunk) {
  if (ctx.oneThread()) {
    ctx.callKernel(whole, fields);
    return;
  }
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Value one = b.create<arith::ConstantIntOp>(loc, 1, 64);
  Value threaded = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt,
                                           ctx.numThreads(), one);
  auto ifOp = b.create<scf::IfOp>(loc, threaded, /*withElse=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  ctx.callKernel(whole, fields);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  ctx.parallelFor(n, fields, chunk);
}

void emitChunkedKernelCalls(OpLoweringContext &ctx,
                            const ChunkedKernels &kernels,
                            ArrayRef<Value> fields,
                            ArrayRef<int64_t> strideBytes) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  emitWholeOrParallel(
      ctx, kernels.whole, fields, kernels.chunks, [&](Value i, ValueRange f) {
        SmallVector<Value> args = offsetFields(ctx, i, f, strideBytes);
        if (kernels.tail.empty()) {
          ctx.callKernel(kernels.chunk, args);
          return;
        }
        Value last = b.create<arith::CmpIOp>(
            loc, arith::CmpIPredicate::eq, i,
            b.create<arith::ConstantIntOp>(loc, kernels.chunks - 1, 64));
        auto isLast = b.create<scf::IfOp>(loc, last, /*withElse=*/true);
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(&isLast.getThenRegion().front());
        ctx.callKernel(kernels.tail, args);
        b.setInsertionPointToStart(&isLast.getElseRegion().front());
        ctx.callKernel(kernels.chunk, args);
      });
}

SmallVector<Value> offsetFields(OpLoweringContext &ctx, Value index,
                                ValueRange fields,
                                ArrayRef<int64_t> strideBytes) {
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  SmallVector<Value> args;
  for (auto [field, stride] : llvm::zip(fields, strideBytes)) {
    if (stride == 0) {
      args.push_back(field);
      continue;
    }
    Value step = b.create<arith::ConstantIntOp>(loc, stride, 64);
    args.push_back(b.create<arith::AddIOp>(
        loc, field, b.create<arith::MulIOp>(loc, index, step)));
  }
  return args;
}

bool emitKernelChunks(
    OpLoweringContext &ctx, int64_t units, int64_t perChunk,
    function_ref<bool(int64_t units, std::string &symbol)> generate,
    ArrayRef<Value> fields, ArrayRef<int64_t> unitBytes) {
  ChunkedKernels kernels;
  if (!generate(units, kernels.whole))
    return false;
  perChunk = std::max<int64_t>(perChunk, 1);
  kernels.chunks = (units + perChunk - 1) / perChunk;
  if (ctx.oneThread() || kernels.chunks < 2) {
    ctx.callKernel(kernels.whole, fields);
    return true;
  }
  const int64_t last = units - (kernels.chunks - 1) * perChunk;
  if (!generate(perChunk, kernels.chunk) ||
      (last != perChunk && !generate(last, kernels.tail)))
    return false;
  SmallVector<int64_t> strides;
  for (int64_t bytes : unitBytes)
    strides.push_back(bytes * perChunk);
  emitChunkedKernelCalls(ctx, kernels, fields, strides);
  return true;
}

} // namespace mlcc::avx512
