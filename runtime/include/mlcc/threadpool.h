//===- threadpool.h - Worker threads for parallel loops -----------*- C -*-===//
//
// A fixed set of worker threads that run a parallel-for over [0, n). Model
// code calls it once per op, so a call costs little (about 0.1 us when the
// workers are awake): idle workers spin for up to 50 us, yielding the CPU,
// and then sleep on a condition variable, so they burn no CPU between model
// runs. The calling thread takes chunks too.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_THREADPOOL_H
#define MLCC_THREADPOOL_H

#include "mlcc/status.h"

#include <stdint.h>

MLCC_EXTERN_C_BEGIN

/// An opaque pool of worker threads.
typedef struct mlcc_threadpool mlcc_threadpool;

/// The body of a parallel loop: handles indices [begin, end), begin < end.
typedef void (*mlcc_parallel_fn)(void *ctx, int64_t begin, int64_t end);

/// Creates a pool in which `num_threads` threads, the calling thread
/// included, share each parallel_for: it starts num_threads - 1 workers.
/// 0 means one thread per CPU this process may run on; 1 starts none.
/// On success the caller owns *out_pool and releases it with
/// mlcc_threadpool_destroy; on failure *out_pool is NULL.
MLCC_API mlcc_status mlcc_threadpool_create(int32_t num_threads,
                                            mlcc_threadpool **out_pool);

/// Stops and joins the workers and frees the pool. NULL is a no-op. No
/// parallel_for on this pool may be running or start meanwhile.
MLCC_API void mlcc_threadpool_destroy(mlcc_threadpool *pool);

/// The number of threads that share a parallel_for, the caller included;
/// 1 for a NULL pool.
MLCC_API int32_t mlcc_threadpool_num_threads(const mlcc_threadpool *pool);

/// Calls fn(ctx, begin, end) over disjoint, contiguous chunks that cover
/// [0, n) exactly once (at most 4 chunks per thread), on the workers and the
/// calling thread, and returns when all chunks are done; what fn wrote is
/// then visible to the caller. n == 0 calls nothing. fn must not fail; it
/// may run on any of the threads, in any order.
///
/// Runs the whole range serially on the calling thread, as fn(ctx, 0, n),
/// when the pool is NULL or has one thread, when called from inside a
/// parallel_for body (of any pool: nesting never deadlocks), or when another
/// thread's parallel_for holds the pool. Thread-safe.
///
/// Returns MLCC_INVALID_ARGUMENT when fn is NULL or n < 0.
MLCC_API mlcc_status mlcc_threadpool_parallel_for(mlcc_threadpool *pool,
                                                  int64_t n,
                                                  mlcc_parallel_fn fn,
                                                  void *ctx);

MLCC_EXTERN_C_END

#endif // MLCC_THREADPOOL_H
