//===- ThreadPool.c - Worker threads for parallel loops -------------------===//
//
// One job at a time is published through a generation counter. Workers that
// see a new generation join it and claim chunks; the calling thread claims
// chunks too, so a job finishes even before any worker wakes.
//
// Each thread has a home: the t-th of NumThreads equal runs of the job's
// chunks, claimed through a counter of its own. A thread takes its home's
// chunks first, then claims what is left of the others'. Consecutive ops
// of a model mostly split their data the same way (channel blocks, rows), so
// a thread mostly reads what it wrote itself in the op before, from its own
// L2: with chunks claimed from one shared counter, in whatever order the
// threads got there, a depthwise conv after a 1x1 conv read half its input
// from the other core's cache. Claiming the rest keeps a late or slow
// thread from holding up the job.
//
// Waiting threads (idle workers, a caller waiting for the last chunk) first
// spin for up to 50 microseconds, yielding the CPU while they do, and then
// sleep on a condition variable. Model code calls parallel_for once per op,
// back to back, and waking a sleeping thread costs a system call (6 to 60 us
// on a virtual machine) that a small op cannot afford; an idle pool still
// uses no CPU. The yield matters on machines with more runnable threads than
// cores: without it a spinning thread can keep the very thread it waits for
// off its CPU for the whole spin.
//
// The calling thread closes the job once every chunk is claimed and then
// waits until no worker is inside it (Active == 0). A worker counts itself
// in Active before it looks at Open, and the caller clears Open before it
// reads Active: with sequentially consistent atomics, either the caller
// waits for that worker or the worker sees the job closed. So the job fields
// are never rewritten while a worker may still read them.
//
//===----------------------------------------------------------------------===//

#ifndef _GNU_SOURCE
#define _GNU_SOURCE // sched_getaffinity, CPU_COUNT
#endif

#include "mlcc/threadpool.h"
#include "LastError.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
  MaxThreads = 1024,
  // More chunks than threads, so that a late-waking worker leaves the caller
  // no more than one small chunk of extra work.
  ChunksPerThread = 4,
  // How long a waiting thread spins before it sleeps: about the cost of a
  // wake-up (so spinning never wastes more than twice the best choice),
  // longer than the gap between two ops of a model run.
  SpinNanoseconds = 50 * 1000,
  // Pauses before the first yield: about a microsecond.
  PauseSteps = 64,
  CacheLine = 64,
};

// A counter on a cache line of its own, so that claiming in one's home does
// not contend with the other threads'.
typedef struct HomeCounter {
  _Alignas(CacheLine) atomic_int_fast64_t Value;
} HomeCounter;

struct mlcc_threadpool {
  int32_t NumThreads; // the caller included
  int32_t NumWorkers; // started, so destroy joins only those
  pthread_t *Workers;

  pthread_mutex_t Mutex;       // guards sleeping only
  pthread_cond_t WakeWorkers;  // a new generation (or stop) was published
  pthread_cond_t JobDone;      // Active dropped to 0 while the caller slept
  pthread_mutex_t SubmitMutex; // one job at a time

  // The job. Written only by the submitting thread while Open is false and
  // no worker is Active; read by workers after they saw Open.
  mlcc_parallel_fn Fn;
  void *Ctx;
  int64_t N;
  int64_t ChunkSize;
  int64_t NumChunks;

  _Alignas(CacheLine) atomic_uint_fast64_t Generation;
  atomic_bool Open;
  atomic_bool Stop;
  atomic_int Sleepers;
  atomic_bool CallerSleeping;
  _Alignas(CacheLine) atomic_int Active;
  // The next chunk of each thread's home (NumThreads of them).
  HomeCounter *Next;
  // Hands the workers their indices (1, 2, ...; the caller is 0).
  atomic_int WorkersStarted;
};

// True on worker threads and on a caller while it runs chunks: a
// parallel_for from there runs serially instead of waiting for threads that
// may be busy running the caller itself.
static _Thread_local bool InParallelFor;

static inline void cpuRelax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static int64_t nowNanoseconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// One step of waiting for another thread before blocking: a few pauses (the
// answer is often a few hundred nanoseconds away), then sched_yield until
// SpinNanoseconds have passed. False when it is time to block.
typedef struct Backoff {
  unsigned Steps;
  int64_t Start;
} Backoff;

static bool keepSpinning(Backoff *backoff) {
  if (backoff->Steps < PauseSteps) {
    ++backoff->Steps;
    cpuRelax();
    return true;
  }
  int64_t now = nowNanoseconds();
  if (backoff->Steps++ == PauseSteps)
    backoff->Start = now;
  else if (now - backoff->Start > SpinNanoseconds)
    return false;
  sched_yield();
  return true;
}

static int32_t cpuCount(void) {
#ifdef __linux__
  // The CPUs this process may use (taskset, cgroup cpusets), not all online.
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
#endif
  long count = sysconf(_SC_NPROCESSORS_ONLN);
  if (count < 1)
    return 1;
  return count > MaxThreads ? MaxThreads : (int32_t)count;
}

// The first chunk of thread `t`'s home; homeStart(pool, NumThreads) is the
// number of chunks.
static int64_t homeStart(const mlcc_threadpool *pool, int32_t t) {
  return pool->NumChunks * t / pool->NumThreads;
}

// Runs the chunks of thread `self`'s home, then those left in the others'.
static void runChunks(mlcc_threadpool *pool, int32_t self) {
  mlcc_parallel_fn fn = pool->Fn;
  void *ctx = pool->Ctx;
  int64_t n = pool->N, chunkSize = pool->ChunkSize;
  for (int32_t i = 0; i < pool->NumThreads; ++i) {
    int32_t home = (self + i) % pool->NumThreads;
    int64_t end = homeStart(pool, home + 1);
    for (;;) {
      int64_t chunk = atomic_fetch_add_explicit(&pool->Next[home].Value, 1,
                                                memory_order_relaxed);
      if (chunk >= end)
        break;
      int64_t begin = chunk * chunkSize;
      fn(ctx, begin, n - begin > chunkSize ? begin + chunkSize : n);
    }
  }
}

// Returns the first generation other than `seen`.
static uint_fast64_t waitForGeneration(mlcc_threadpool *pool,
                                       uint_fast64_t seen) {
  Backoff backoff = {0, 0};
  do {
    uint_fast64_t generation =
        atomic_load_explicit(&pool->Generation, memory_order_acquire);
    if (generation != seen)
      return generation;
  } while (keepSpinning(&backoff));
  // Sleepers is raised before Generation is read again; the publisher bumps
  // Generation before it reads Sleepers. One of the two sees the other.
  pthread_mutex_lock(&pool->Mutex);
  atomic_fetch_add(&pool->Sleepers, 1);
  uint_fast64_t generation;
  while ((generation = atomic_load(&pool->Generation)) == seen)
    pthread_cond_wait(&pool->WakeWorkers, &pool->Mutex);
  atomic_fetch_sub(&pool->Sleepers, 1);
  pthread_mutex_unlock(&pool->Mutex);
  return generation;
}

static void publish(mlcc_threadpool *pool) {
  atomic_fetch_add(&pool->Generation, 1);
  if (atomic_load(&pool->Sleepers) == 0)
    return;
  // Taking the mutex orders this publication after any worker's check of
  // Generation; waking after unlocking spares the woken workers a second
  // futex wait on a mutex still held here.
  pthread_mutex_lock(&pool->Mutex);
  pthread_mutex_unlock(&pool->Mutex);
  pthread_cond_broadcast(&pool->WakeWorkers);
}

static void leaveJob(mlcc_threadpool *pool) {
  if (atomic_fetch_sub(&pool->Active, 1) != 1 ||
      !atomic_load(&pool->CallerSleeping))
    return;
  pthread_mutex_lock(&pool->Mutex);
  pthread_mutex_unlock(&pool->Mutex);
  pthread_cond_signal(&pool->JobDone);
}

static void waitForWorkers(mlcc_threadpool *pool) {
  Backoff backoff = {0, 0};
  do {
    if (atomic_load(&pool->Active) == 0)
      return;
  } while (keepSpinning(&backoff));
  pthread_mutex_lock(&pool->Mutex);
  atomic_store(&pool->CallerSleeping, true);
  while (atomic_load(&pool->Active) != 0)
    pthread_cond_wait(&pool->JobDone, &pool->Mutex);
  atomic_store(&pool->CallerSleeping, false);
  pthread_mutex_unlock(&pool->Mutex);
}

static void *workerMain(void *arg) {
  mlcc_threadpool *pool = arg;
  InParallelFor = true;
  const int32_t self = atomic_fetch_add(&pool->WorkersStarted, 1) + 1;
  uint_fast64_t seen = 0;
  for (;;) {
    seen = waitForGeneration(pool, seen);
    if (atomic_load(&pool->Stop))
      return NULL;
    atomic_fetch_add(&pool->Active, 1);
    if (atomic_load(&pool->Open))
      runChunks(pool, self);
    leaveJob(pool);
  }
}

mlcc_status mlcc_threadpool_create(int32_t num_threads,
                                   mlcc_threadpool **out_pool) {
  if (!out_pool)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "mlcc_threadpool_create: out_pool is NULL");
  *out_pool = NULL;
  if (num_threads < 0)
    return mlcc_last_error_set(
        MLCC_INVALID_ARGUMENT,
        "mlcc_threadpool_create: num_threads is negative (%d)",
        (int)num_threads);
  if (num_threads > MaxThreads)
    return mlcc_last_error_set(
        MLCC_OUT_OF_RANGE,
        "mlcc_threadpool_create: num_threads is %d, at most %d are supported",
        (int)num_threads, MaxThreads);
  if (num_threads == 0)
    num_threads = cpuCount();

  // Aligned, so that the hot atomics sit on cache lines of their own.
  size_t size =
      (sizeof(mlcc_threadpool) + CacheLine - 1) / CacheLine * CacheLine;
  mlcc_threadpool *pool = aligned_alloc(CacheLine, size);
  HomeCounter *next =
      aligned_alloc(CacheLine, (size_t)num_threads * sizeof(HomeCounter));
  pthread_t *workers = num_threads > 1
                           ? calloc((size_t)num_threads - 1, sizeof(pthread_t))
                           : NULL;
  if (!pool || !next || (num_threads > 1 && !workers)) {
    free(pool);
    free(next);
    free(workers);
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "mlcc_threadpool_create: out of memory");
  }
  memset(pool, 0, sizeof(*pool));
  pool->NumThreads = num_threads;
  pool->Workers = workers;
  pool->Next = next;
  for (int32_t t = 0; t < num_threads; ++t)
    atomic_init(&next[t].Value, 0);
  atomic_init(&pool->WorkersStarted, 0);
  atomic_init(&pool->Generation, 0);
  atomic_init(&pool->Open, false);
  atomic_init(&pool->Stop, false);
  atomic_init(&pool->Sleepers, 0);
  atomic_init(&pool->CallerSleeping, false);
  atomic_init(&pool->Active, 0);
  if (pthread_mutex_init(&pool->Mutex, NULL) ||
      pthread_mutex_init(&pool->SubmitMutex, NULL) ||
      pthread_cond_init(&pool->WakeWorkers, NULL) ||
      pthread_cond_init(&pool->JobDone, NULL)) {
    // With default attributes these do not fail on glibc or macOS; should
    // one ever fail, the ones already made are dropped without destroy,
    // which on those systems frees nothing that malloc'd memory holds.
    free(workers);
    free(next);
    free(pool);
    return mlcc_last_error_set(MLCC_INTERNAL,
                               "mlcc_threadpool_create: cannot create a mutex");
  }

  for (int32_t i = 0; i < num_threads - 1; ++i) {
    int error = pthread_create(&workers[i], NULL, workerMain, pool);
    if (error) {
      mlcc_threadpool_destroy(pool);
      return mlcc_last_error_set(
          MLCC_INTERNAL,
          "mlcc_threadpool_create: cannot start worker %d of %d (error %d)",
          (int)i + 1, (int)num_threads - 1, error);
    }
    pool->NumWorkers = i + 1;
#ifdef __linux__
    // What debuggers, top -H and the runtime's tests see (15 characters at
    // most); a failure only leaves the inherited name.
    pthread_setname_np(workers[i], "mlcc-worker");
#endif
  }
  *out_pool = pool;
  return MLCC_OK;
}

void mlcc_threadpool_destroy(mlcc_threadpool *pool) {
  if (!pool)
    return;
  atomic_store(&pool->Stop, true);
  atomic_fetch_add(&pool->Generation, 1);
  pthread_mutex_lock(&pool->Mutex);
  pthread_cond_broadcast(&pool->WakeWorkers);
  pthread_mutex_unlock(&pool->Mutex);
  for (int32_t i = 0; i < pool->NumWorkers; ++i)
    pthread_join(pool->Workers[i], NULL);
  pthread_cond_destroy(&pool->JobDone);
  pthread_cond_destroy(&pool->WakeWorkers);
  pthread_mutex_destroy(&pool->SubmitMutex);
  pthread_mutex_destroy(&pool->Mutex);
  free(pool->Workers);
  free(pool->Next);
  free(pool);
}

int32_t mlcc_threadpool_num_threads(const mlcc_threadpool *pool) {
  return pool ? pool->NumThreads : 1;
}

mlcc_status mlcc_threadpool_parallel_for(mlcc_threadpool *pool, int64_t n,
                                         mlcc_parallel_fn fn, void *ctx) {
  if (!fn)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "mlcc_threadpool_parallel_for: fn is NULL");
  if (n < 0)
    return mlcc_last_error_set(
        MLCC_INVALID_ARGUMENT,
        "mlcc_threadpool_parallel_for: n is negative (%lld)", (long long)n);
  if (n == 0)
    return MLCC_OK;
  if (!pool || pool->NumThreads == 1 || n == 1 || InParallelFor ||
      pthread_mutex_trylock(&pool->SubmitMutex) != 0) {
    fn(ctx, 0, n);
    return MLCC_OK;
  }

  int64_t numChunks = (int64_t)pool->NumThreads * ChunksPerThread;
  if (numChunks > n)
    numChunks = n;
  int64_t chunkSize = n / numChunks + (n % numChunks != 0);
  pool->Fn = fn;
  pool->Ctx = ctx;
  pool->N = n;
  pool->ChunkSize = chunkSize;
  pool->NumChunks = n / chunkSize + (n % chunkSize != 0);
  for (int32_t t = 0; t < pool->NumThreads; ++t)
    atomic_store_explicit(&pool->Next[t].Value, homeStart(pool, t),
                          memory_order_relaxed);
  atomic_store(&pool->Open, true);
  publish(pool);

  InParallelFor = true;
  runChunks(pool, 0);
  InParallelFor = false;

  atomic_store(&pool->Open, false);
  waitForWorkers(pool);
  pthread_mutex_unlock(&pool->SubmitMutex);
  return MLCC_OK;
}
