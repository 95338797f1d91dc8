//===- fake_driver_check.c - The CUDA device layer against FakeCuda -------===//
//
// Usage:
//   fake_driver_check run
//     Creates the model (compiled for --target cuda), runs it three times
//     and checks what the driver was asked: one module per kernel, loaded
//     once; launches of the model's kernels in schedule order with their
//     block size, no dynamic shared memory, one pointer per buffer plus
//     the parameter words', all inside allocations; copies of the inputs'
//     and outputs' sizes; run 1 direct, run 2 captured into a graph of the
//     same launches, run 3 that graph replayed with no launch of its own.
//   fake_driver_check run-without-graphs
//     The same with MLCC_CUDA_GRAPHS=0: every run launches directly.
//   fake_driver_check create-fails STATUS TEXT
//   fake_driver_check run-fails STATUS TEXT
//     mlcc_model_create (or the first run) returns STATUS with TEXT in its
//     message. FakeCuda's environment variables make the failure.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"

#include "mlcc/model.h"
#include "mlcc/runtime.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The model's descriptor (mlcc_<name>_model), named by the build.
extern const mlcc_model_desc FAKE_CHECK_MODEL;
static const mlcc_model_desc *const Desc = &FAKE_CHECK_MODEL;

static int Failures;
#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      ++Failures;                                                              \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                              \
      printf(__VA_ARGS__);                                                     \
      printf("\n");                                                            \
    }                                                                          \
  } while (0)

static int ExpectGraphs = 1;
static FakeCudaEventsFn Events;
static FakeCudaResetFn Reset;

static void bindFake(void) {
  void *fake = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!fake) {
    printf("FAIL: the runtime did not load libcuda.so.1\n");
    exit(1);
  }
  void *events = dlsym(fake, "fake_cuda_events");
  void *reset = dlsym(fake, "fake_cuda_reset");
  if (!events || !reset) {
    printf("FAIL: the libcuda.so.1 loaded is not the fake one\n");
    exit(1);
  }
  memcpy(&Events, &events, sizeof(events));
  memcpy(&Reset, &reset, sizeof(reset));
}

static size_t count(int kind, const FakeCudaEvent *e, size_t n) {
  size_t c = 0;
  for (size_t i = 0; i < n; ++i)
    c += e[i].Kind == kind;
  return c;
}

static const mlcc_device_kernel_desc *kernelNamed(const char *name) {
  for (uint32_t k = 0; k < Desc->device->num_kernels; ++k)
    if (strcmp(Desc->device->kernels[k].name, name) == 0)
      return &Desc->device->kernels[k];
  return NULL;
}

static uint64_t tensorBytes(const mlcc_model_tensor_desc *t) {
  uint64_t bytes = mlcc_dtype_size((mlcc_dtype)t->dtype);
  for (int32_t i = 0; i < t->rank; ++i)
    bytes *= (uint64_t)t->dims[i];
  return bytes;
}

// Zero-filled memory for every input and output of the model.
typedef struct Buffers {
  void *Inputs[64], *Outputs[64];
} Buffers;

static Buffers makeBuffers(void) {
  Buffers b;
  memset(&b, 0, sizeof(b));
  for (uint32_t i = 0; i < Desc->num_inputs && i < 64; ++i)
    b.Inputs[i] = calloc(1, tensorBytes(&Desc->inputs[i]) + 1);
  for (uint32_t i = 0; i < Desc->num_outputs && i < 64; ++i)
    b.Outputs[i] = calloc(1, tensorBytes(&Desc->outputs[i]) + 1);
  return b;
}

static void freeBuffers(Buffers *b) {
  for (int i = 0; i < 64; ++i) {
    free(b->Inputs[i]);
    free(b->Outputs[i]);
  }
}

// Checks one launch against its kernel's descriptor.
static void checkLaunch(const FakeCudaEvent *e) {
  const mlcc_device_kernel_desc *k = kernelNamed(e->Name);
  CHECK(k, "a launch of '%s', which is not one of the model's kernels",
        e->Name);
  if (!k)
    return;
  for (int d = 0; d < 3; ++d) {
    CHECK(e->Block[d] == k->workgroup_size[d],
          "%s: block[%d] %u, the kernel was written for %u", e->Name, d,
          e->Block[d], k->workgroup_size[d]);
    CHECK(e->Grid[d] >= 1 && e->Grid[d] <= 65535, "%s: grid[%d] is %u", e->Name,
          d, e->Grid[d]);
  }
  CHECK(e->Shared == 0, "%s: %u bytes of dynamic shared memory", e->Name,
        e->Shared);
  if (e->NumArgs >= 0)
    CHECK(e->NumArgs == (int)k->num_buffers + 1,
          "%s: the kernel has %d parameters, the launch is for %u buffers",
          e->Name, e->NumArgs, k->num_buffers);
  CHECK(e->ArgsInAllocations,
        "%s: a pointer argument is outside device "
        "memory",
        e->Name);
}

static int kernelIndex(const char *name) {
  return strncmp(name, "mlcc_k", 6) == 0 ? atoi(name + 6) : -1;
}

static int checkRuns(mlcc_model_context *ctx) {
  const FakeCudaEvent *e;
  size_t n;
  Events(&e, &n);
  CHECK(count(FAKE_INIT, e, n) == 1, "cuInit called %zu times",
        count(FAKE_INIT, e, n));
  CHECK(count(FAKE_MODULE_LOAD, e, n) == Desc->device->num_kernels,
        "%zu modules loaded for %u kernels", count(FAKE_MODULE_LOAD, e, n),
        Desc->device->num_kernels);
  size_t functions = 0;
  for (size_t i = 0; i < n; ++i)
    if (e[i].Kind == FAKE_GET_FUNCTION)
      CHECK(kernelIndex(e[i].Name) == (int)functions++,
            "function '%s' looked up in place %zu", e[i].Name, functions - 1);
  for (size_t i = 0; i < n; ++i)
    if (e[i].Kind == FAKE_MODULE_LOAD)
      printf("module: %s\n", e[i].Name);
  // Creating uploads the weights once (if there are any), last.
  uint64_t weights = Desc->device->weights_bytes;
  CHECK(count(FAKE_COPY_TO_DEVICE, e, n) == (weights > 0) &&
            (weights == 0 || (e[n - 2].Kind == FAKE_COPY_TO_DEVICE &&
                              e[n - 2].Bytes == weights)),
        "the weights (%llu bytes) are not uploaded once, at the end",
        (unsigned long long)weights);

  Buffers io = makeBuffers();
  FakeCudaEvent first[4096];
  size_t firstLaunches = 0;
  for (int run = 1; run <= 3; ++run) {
    Reset();
    mlcc_status s = mlcc_model_run_pointers(
        Desc, ctx, (const void *const *)io.Inputs, io.Outputs);
    CHECK(s == MLCC_OK, "run %d: %s", run, mlcc_last_error_message());
    Events(&e, &n);
    size_t launches = count(FAKE_LAUNCH, e, n);
    // The inputs are copied in before any launch, in order (then, for a
    // batch launched directly or captured, its parameter words); the
    // outputs out after the last, in order.
    size_t firstWork = n, lastWork = 0;
    for (size_t i = 0; i < n; ++i)
      if (e[i].Kind == FAKE_LAUNCH || e[i].Kind == FAKE_GRAPH_LAUNCH) {
        firstWork = i < firstWork ? i : firstWork;
        lastWork = i;
      }
    uint32_t copied = 0;
    for (size_t i = 0; i < firstWork; ++i)
      if (e[i].Kind == FAKE_COPY_TO_DEVICE) {
        if (copied < Desc->num_inputs)
          CHECK(e[i].Bytes == tensorBytes(&Desc->inputs[copied]),
                "run %d: copy %u of %llu bytes is not input %u's", run, copied,
                (unsigned long long)e[i].Bytes, copied);
        ++copied;
      }
    CHECK(copied == Desc->num_inputs + (launches > 0),
          "run %d: %u copies in for %u inputs and %s parameter words", run,
          copied, Desc->num_inputs, launches > 0 ? "the" : "no");
    copied = 0;
    for (size_t i = lastWork; i < n; ++i)
      if (e[i].Kind == FAKE_COPY_TO_HOST) {
        CHECK(copied < Desc->num_outputs &&
                  e[i].Bytes == tensorBytes(&Desc->outputs[copied]),
              "run %d: copy %u of %llu bytes is not output %u's", run, copied,
              (unsigned long long)e[i].Bytes, copied);
        ++copied;
      }
    CHECK(copied == Desc->num_outputs, "run %d: %u of %u outputs copied out",
          run, copied, Desc->num_outputs);
    printf("run %d: %zu launches, %zu captures, %zu graph launches\n", run,
           launches, count(FAKE_BEGIN_CAPTURE, e, n),
           count(FAKE_GRAPH_LAUNCH, e, n));
    size_t l = 0;
    for (size_t i = 0; i < n; ++i) {
      if (e[i].Kind != FAKE_LAUNCH)
        continue;
      checkLaunch(&e[i]);
      CHECK(e[i].Captured == (ExpectGraphs && run == 2),
            "run %d: launch %zu %s captured", run, l,
            e[i].Captured ? "is" : "is not");
      if (run == 1 && l < sizeof(first) / sizeof(*first))
        first[l] = e[i];
      if (run >= 2 && l < firstLaunches)
        CHECK(strcmp(first[l].Name, e[i].Name) == 0 &&
                  memcmp(first[l].Grid, e[i].Grid, sizeof(e[i].Grid)) == 0 &&
                  memcmp(first[l].Params, e[i].Params, sizeof(e[i].Params)) ==
                      0,
              "run %d: launch %zu (%s) differs from run 1's (%s)", run, l,
              e[i].Name, first[l].Name);
      ++l;
    }
    if (run == 1)
      for (size_t i = 0; i < launches && i < sizeof(first) / sizeof(*first);
           ++i)
        printf("launch %s grid %ux%ux%u\n", first[i].Name, first[i].Grid[0],
               first[i].Grid[1], first[i].Grid[2]);
    if (run == 1 || !ExpectGraphs) {
      CHECK(run == 1 || launches == firstLaunches,
            "run %d: %zu launches, run 1 had %zu", run, launches,
            firstLaunches);
      firstLaunches = launches;
      CHECK(launches >= Desc->device->num_kernels,
            "%zu launches for %u kernels", launches, Desc->device->num_kernels);
      // Kernels are numbered where the schedule first launches them.
      int next = 0;
      for (size_t i = 0; i < launches; ++i) {
        int k = kernelIndex(first[i].Name);
        CHECK(k <= next, "launch %zu is of %s before mlcc_k%d", i,
              first[i].Name, next);
        if (k == next)
          ++next;
      }
      CHECK(count(FAKE_BEGIN_CAPTURE, e, n) == 0 &&
                count(FAKE_GRAPH_LAUNCH, e, n) == 0,
            "run %d used a graph", run);
    } else if (run == 2) {
      CHECK(launches == firstLaunches, "run 2 captured %zu launches of %zu",
            launches, firstLaunches);
      CHECK(count(FAKE_BEGIN_CAPTURE, e, n) == 1 &&
                count(FAKE_END_CAPTURE, e, n) == 1 &&
                count(FAKE_INSTANTIATE, e, n) == 1 &&
                count(FAKE_GRAPH_LAUNCH, e, n) == 1,
            "run 2 did not capture one graph and launch it");
    } else {
      CHECK(launches == 0, "run 3 launched %zu kernels itself", launches);
      size_t graphs = count(FAKE_GRAPH_LAUNCH, e, n);
      CHECK(graphs == 1, "run 3 launched %zu graphs", graphs);
      for (size_t i = 0; i < n; ++i)
        if (e[i].Kind == FAKE_GRAPH_LAUNCH)
          CHECK(e[i].Nodes == firstLaunches,
                "run 3's graph holds %u launches of %zu", e[i].Nodes,
                firstLaunches);
    }
  }
  freeBuffers(&io);
  return Failures;
}

static mlcc_status statusNamed(const char *name) {
  if (strcmp(name, "NO_DEVICE") == 0)
    return MLCC_NO_DEVICE;
  if (strcmp(name, "OUT_OF_MEMORY") == 0)
    return MLCC_OUT_OF_MEMORY;
  if (strcmp(name, "INTERNAL") == 0)
    return MLCC_INTERNAL;
  return MLCC_OK;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  mlcc_model_context *ctx = NULL;
  mlcc_status s = mlcc_model_create(Desc, NULL, &ctx);
  if (strcmp(argv[1], "create-fails") == 0 && argc == 4) {
    printf("create: status %d: %s\n", (int)s, mlcc_last_error_message());
    CHECK(s == statusNamed(argv[2]) && !ctx, "create returned %d", (int)s);
    CHECK(strstr(mlcc_last_error_message(), argv[3]),
          "the message does not say '%s'", argv[3]);
  } else if (strcmp(argv[1], "run-fails") == 0 && argc == 4) {
    CHECK(s == MLCC_OK, "create: %s", mlcc_last_error_message());
    Buffers io = makeBuffers();
    if (s == MLCC_OK)
      s = mlcc_model_run_pointers(Desc, ctx, (const void *const *)io.Inputs,
                                  io.Outputs);
    printf("run: status %d: %s\n", (int)s, mlcc_last_error_message());
    CHECK(s == statusNamed(argv[2]), "run returned %d", (int)s);
    CHECK(strstr(mlcc_last_error_message(), argv[3]),
          "the message does not say '%s'", argv[3]);
    freeBuffers(&io);
  } else if (strcmp(argv[1], "run") == 0 ||
             strcmp(argv[1], "run-without-graphs") == 0) {
    ExpectGraphs = strcmp(argv[1], "run") == 0;
    CHECK(s == MLCC_OK, "create: %s", mlcc_last_error_message());
    if (s == MLCC_OK) {
      bindFake();
      printf("device: %s\n", mlcc_device_name(mlcc_model_device(ctx)));
      checkRuns(ctx);
    }
  } else {
    return 2;
  }
  mlcc_model_destroy(ctx);
  printf(Failures ? "FAILED\n" : "PASSED\n");
  return Failures ? 1 : 0;
}
