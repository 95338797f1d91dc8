// The runtime under load and misuse (test/tools/concurrency.test), on the
// model of make_concurrency_model.py compiled twice: cm (weights in the
// object) and cmx (--weights external, its file in argv[1]).
//
//   1. References: every input run alone in one context without a pool.
//   2. Eight threads, each with its own context (embedded or external
//      weights, a shared pool of two threads or none), run every input
//      many times; each result must equal its reference bit for bit.
//   3. Two threads share one context: each call either runs (and its
//      result is the reference) or is refused with the documented error.
//   4. 1000 cycles of create (pool, context), run, destroy, alternating
//      the kinds; afterwards no worker thread is left. Built with
//      -fsanitize=address, LeakSanitizer fails the run on any leak.
//
// Prints one line per part; exits 1 on the first thing that is wrong.
// nanosleep under -std=c11.
#define _POSIX_C_SOURCE 200809L

#include "cm.h"
#include "cmx.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { NumInputs = 6, NumThreads = 8, RunsPerThread = 30, Cycles = 1000 };
enum { InCount = 16 * 24 * 24, OutCount = 10 };

static float inputs[NumInputs][InCount];
static float references[NumInputs][OutCount];
static const char *weightsPath;
static mlcc_threadpool *sharedPool;

static void fail(const char *what) {
  printf("FAIL: %s: %s\n", what, mlcc_last_error_message());
  exit(1);
}

// One model instance of either kind, so that every part runs both.
typedef struct Instance {
  mlcc_cm_context *embedded;
  mlcc_cmx_context *external;
} Instance;

static Instance create(int external, mlcc_threadpool *pool) {
  Instance in = {NULL, NULL};
  mlcc_status status = external
                           ? mlcc_cmx_create(pool, weightsPath, &in.external)
                           : mlcc_cm_create(pool, &in.embedded);
  if (status != MLCC_OK)
    fail("create");
  return in;
}

static void destroy(Instance in) {
  mlcc_cm_destroy(in.embedded);
  mlcc_cmx_destroy(in.external);
}

static mlcc_status run(Instance in, int k, float *y) {
  int64_t xDims[4] = {1, 16, 24, 24}, yDims[2] = {1, OutCount};
  mlcc_tensor x = {inputs[k], xDims, 4, MLCC_DTYPE_F32};
  mlcc_tensor out = {y, yDims, 2, MLCC_DTYPE_F32};
  return in.embedded ? mlcc_cm_run(in.embedded, &x, &out)
                     : mlcc_cmx_run(in.external, &x, &out);
}

static int matches(int k, const float *y) {
  return memcmp(y, references[k], sizeof(references[k])) == 0;
}

static void *ownContext(void *arg) {
  int t = (int)(size_t)arg;
  Instance in = create(t % 2, t % 4 >= 2 ? sharedPool : NULL);
  size_t wrong = 0;
  for (int r = 0; r < RunsPerThread; ++r) {
    int k = (t + r) % NumInputs;
    float y[OutCount];
    if (run(in, k, y) != MLCC_OK)
      fail("run in a thread's own context");
    wrong += !matches(k, y);
  }
  destroy(in);
  return (void *)wrong;
}

typedef struct SharedUse {
  Instance in;
  atomic_int ran, refused, wrong;
} SharedUse;

static const char kRefusal[] = "the context is running a call on another "
                               "thread; a context runs one call at a time";

static void *useShared(void *arg) {
  SharedUse *s = arg;
  for (int r = 0; r < 200; ++r) {
    int k = r % NumInputs;
    float y[OutCount];
    mlcc_status status = run(s->in, k, y);
    if (status == MLCC_OK) {
      atomic_fetch_add(&s->ran, 1);
      atomic_fetch_add(&s->wrong, !matches(k, y));
    } else if (status == MLCC_INVALID_ARGUMENT &&
               strstr(mlcc_last_error_message(), kRefusal)) {
      atomic_fetch_add(&s->refused, 1);
    } else {
      fail("run on a shared context");
    }
  }
  return NULL;
}

// The pools' worker threads alive in this process (the runtime names them
// "mlcc-worker"; a sanitizer's own threads are not counted), waiting up to
// a second for joined workers to leave the kernel's list: their entries go
// a little after pthread_join returns.
static int countWorkers(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d)
    return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.')
      continue;
    char path[300], name[32] = "";
    snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (f) {
      n +=
          fgets(name, sizeof(name), f) && strncmp(name, "mlcc-worker", 11) == 0;
      fclose(f);
    }
  }
  closedir(d);
  return n;
}

static int workersLeft(void) {
  int left = countWorkers();
  for (int i = 0; i < 100 && left > 0; ++i) {
    struct timespec tick = {0, 10 * 1000 * 1000};
    nanosleep(&tick, NULL);
    left = countWorkers();
  }
  return left;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    printf("usage: %s CMX_WEIGHTS\n", argv[0]);
    return 2;
  }
  weightsPath = argv[1];
  unsigned seed = 12345;
  for (int k = 0; k < NumInputs; ++k)
    for (int i = 0; i < InCount; ++i) {
      seed = seed * 1103515245u + 12345u;
      inputs[k][i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
    }

  // 1. References, and both kinds agree with them.
  Instance alone = create(0, NULL);
  for (int k = 0; k < NumInputs; ++k)
    if (run(alone, k, references[k]) != MLCC_OK)
      fail("reference run");
  destroy(alone);
  if (mlcc_threadpool_create(2, &sharedPool) != MLCC_OK)
    fail("pool");
  if (countWorkers() != 1) {
    printf("FAIL: a pool of 2 threads has %d named workers, not 1\n",
           countWorkers());
    return 1;
  }
  for (int kind = 0; kind < 2; ++kind) {
    Instance in = create(kind, sharedPool);
    for (int k = 0; k < NumInputs; ++k) {
      float y[OutCount];
      if (run(in, k, y) != MLCC_OK || !matches(k, y)) {
        printf("FAIL: %s weights on 2 threads differ from the reference\n",
               kind ? "external" : "embedded");
        return 1;
      }
    }
    destroy(in);
  }
  printf("references: %d inputs, equal on a pool of 2 and with external "
         "weights\n",
         NumInputs);

  // 2. Many contexts at once.
  pthread_t threads[NumThreads];
  for (int t = 0; t < NumThreads; ++t)
    pthread_create(&threads[t], NULL, ownContext, (void *)(size_t)t);
  size_t wrong = 0;
  for (int t = 0; t < NumThreads; ++t) {
    void *w;
    pthread_join(threads[t], &w);
    wrong += (size_t)w;
  }
  printf("own contexts: %d threads x %d runs, %zu results differ\n", NumThreads,
         RunsPerThread, wrong);
  if (wrong)
    return 1;

  // 3. One context, two threads.
  SharedUse shared = {create(0, sharedPool), 0, 0, 0};
  pthread_t a, b;
  pthread_create(&a, NULL, useShared, &shared);
  pthread_create(&b, NULL, useShared, &shared);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  destroy(shared.in);
  int ran = atomic_load(&shared.ran), refused = atomic_load(&shared.refused);
  printf("shared context: %d calls, each ran or was refused; %d results "
         "differ\n",
         ran + refused, atomic_load(&shared.wrong));
  if (ran + refused != 400 || atomic_load(&shared.wrong) || ran == 0)
    return 1;
  mlcc_threadpool_destroy(sharedPool);

  // 4. Cycles.
  for (int c = 0; c < Cycles; ++c) {
    mlcc_threadpool *pool = NULL;
    if (c % 2 && mlcc_threadpool_create(2, &pool) != MLCC_OK)
      fail("pool in a cycle");
    Instance in = create(c % 4 >= 2, pool);
    float y[OutCount];
    int k = c % NumInputs;
    if (run(in, k, y) != MLCC_OK)
      fail("run in a cycle");
    if (!matches(k, y)) {
      printf("FAIL: cycle %d: the result differs\n", c);
      return 1;
    }
    destroy(in);
    mlcc_threadpool_destroy(pool);
  }
  int left = workersLeft();
  printf("cycles: %d, worker threads left: %d\n", Cycles, left);
  return left == 0 ? 0 : 1;
}
