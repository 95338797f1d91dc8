//===- parallel_for_overhead.c - What one parallel_for costs --------------===//
//
// Not a test: a measurement. Times an empty mlcc_threadpool_parallel_for
// (the body does nothing) so what is left is the pool's own cost, in two
// situations that model runs produce:
//   back to back     the next op starts right away: workers are still awake;
//   after N us       the caller did N microseconds of serial work first, so
//                    past the spin time the workers sleep and must be woken.
// Prints the median, 90th and 99th percentile and mean per call: on a shared
// machine the tail is other processes, the median is the pool.
//
// Usage: parallel_for_overhead [threads=2] [n=1000]
//
//===----------------------------------------------------------------------===//

#define _POSIX_C_SOURCE 200809L

#include <mlcc/runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

enum { BackToBackCalls = 100000, GapCalls = 2000 };

static double Samples[BackToBackCalls];

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void nothing(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  (void)begin;
  (void)end;
}

// Busy, not asleep: serial work keeps the calling core running.
static void serialWork(double microseconds) {
  double end = now() + microseconds * 1e-6;
  while (now() < end) {
  }
}

static double cpuSeconds(void) {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

static int compareDoubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void report(const char *what, int count) {
  double sum = 0;
  for (int i = 0; i < count; ++i)
    sum += Samples[i];
  qsort(Samples, (size_t)count, sizeof(double), compareDoubles);
  printf("%-26s median %7.2f  p90 %7.2f  p99 %8.2f  mean %7.2f us\n", what,
         Samples[count / 2] * 1e6, Samples[count * 9 / 10] * 1e6,
         Samples[count * 99 / 100] * 1e6, sum / count * 1e6);
}

static int timeCalls(mlcc_threadpool *pool, int64_t n, int count,
                     double gapMicroseconds) {
  for (int i = 0; i < count; ++i) {
    if (gapMicroseconds > 0)
      serialWork(gapMicroseconds);
    double start = now();
    if (mlcc_threadpool_parallel_for(pool, n, nothing, NULL) != MLCC_OK)
      return 1;
    Samples[i] = now() - start;
  }
  return 0;
}

int main(int argc, char **argv) {
  int32_t threads = argc > 1 ? (int32_t)atoi(argv[1]) : 2;
  int64_t n = argc > 2 ? atoll(argv[2]) : 1000;
  mlcc_threadpool *pool = NULL;
  if (mlcc_threadpool_create(threads, &pool) != MLCC_OK) {
    fprintf(stderr, "%s\n", mlcc_last_error_message());
    return 1;
  }
  printf("empty parallel_for, %d threads, n = %lld\n",
         (int)mlcc_threadpool_num_threads(pool), (long long)n);

  if (timeCalls(pool, n, 1000, 0) || timeCalls(pool, n, BackToBackCalls, 0))
    return 1;
  report("back to back", BackToBackCalls);
  const double gaps[] = {10, 100, 1000};
  for (int g = 0; g < 3; ++g) {
    char what[64];
    if (timeCalls(pool, n, GapCalls, gaps[g]))
      return 1;
    snprintf(what, sizeof(what), "after %g us serial", gaps[g]);
    report(what, GapCalls);
  }

  // Idle workers must sleep: a second of idling should cost ~no CPU.
  double cpuBefore = cpuSeconds();
  struct timespec second = {1, 0};
  nanosleep(&second, NULL);
  printf("CPU used by the idle pool in 1 s: %.2f ms\n",
         (cpuSeconds() - cpuBefore) * 1e3);
  mlcc_threadpool_destroy(pool);
  return 0;
}
