//===- ChunkedKernelCalls.h - One kernel or chunks over the pool -*- C++ -*-===//
//
// How a kernel's work is split over the thread pool: on one thread the
// kernel generated for the whole op runs; on several, parallelFor calls a
// kernel generated for one chunk (and another for a narrower last chunk)
// with each args field moved by a fixed number of bytes per chunk.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_CHUNKEDKERNELCALLS_H
#define MLCC_LOWERING_AVX512_CHUNKEDKERNELCALLS_H

#include "KernelSelection.h"

namespace mlcc::avx512 {

struct ChunkedKernels {
  std::string whole;
  std::string chunk;
  /// For the last chunk when it is narrower; empty when all are equal.
  std::string tail;
  int64_t chunks = 0;
};

/// On one thread calls `whole` with `fields`; on several, parallelFor(n)
/// with `chunk` as the body (the chunk index, the fields as loaded there).
void emitWholeOrParallel(
    OpLoweringContext &ctx, llvm::StringRef whole,
    llvm::ArrayRef<mlir::Value> fields, int64_t n,
    llvm::function_ref<void(mlir::Value, mlir::ValueRange)> chunk);

/// Emits the run-time choice above. fields[i] of chunk c is
/// fields[i] + c * strideBytes[i] (0: the same for every chunk).
void emitChunkedKernelCalls(OpLoweringContext &ctx,
                            const ChunkedKernels &kernels,
                            llvm::ArrayRef<mlir::Value> fields,
                            llvm::ArrayRef<int64_t> strideBytes);

/// fields[i] + index * strideBytes[i] (fields[i] itself for a stride of 0),
/// for the call of chunk `index` (an i64 value).
llvm::SmallVector<mlir::Value> offsetFields(OpLoweringContext &ctx,
                                            mlir::Value index,
                                            mlir::ValueRange fields,
                                            llvm::ArrayRef<int64_t> strideBytes);

/// An op of `units` units of work, generate(k, symbol) making a kernel for
/// k of them: the kernel for all of them, called with `fields` on one thread
/// or when `perChunk` units take them all; else chunks of perChunk units
/// (and a kernel for a shorter last chunk), fields[i] moved by
/// unitBytes[i] per unit. False after a generator error.
bool emitKernelChunks(
    OpLoweringContext &ctx, int64_t units, int64_t perChunk,
    llvm::function_ref<bool(int64_t units, std::string &symbol)> generate,
    llvm::ArrayRef<mlir::Value> fields, llvm::ArrayRef<int64_t> unitBytes);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_CHUNKEDKERNELCALLS_H
