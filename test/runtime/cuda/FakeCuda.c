//===- FakeCuda.c - A libcuda.so.1 that records what it is asked ----------===//
//
// See FakeCuda.h. Device memory is host memory (copies are memcpy), so a
// model's weights and inputs arrive and its outputs come back (zeros: no
// kernel runs). Launches check their pointer arguments against the live
// allocations and read the parameter words the first argument points at.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
enum {
  OK = 0,
  OUT_OF_MEMORY = 2,
  NO_DEVICE = 100,
  LAUNCH_FAILED = 719,
  UNKNOWN = 999
};

static FakeCudaEvent *Events;
static size_t NumEvents, EventCapacity;
static bool Capturing;
static unsigned CapturedLaunches;

typedef struct Allocation {
  unsigned char *Data;
  size_t Bytes;
} Allocation;
static Allocation Allocations[4096];

typedef struct Function {
  char Name[64];
  int NumArgs;
} Function;
static Function Functions[1024];
static unsigned NumFunctions;

typedef struct Module {
  char *Ptx; // a copy, or NULL for a cubin
} Module;
static Module Modules[1024];
static unsigned NumModules;

typedef struct GraphExec {
  unsigned Nodes;
} GraphExec;
static GraphExec Graphs[1024];
static unsigned NumGraphs;

static FakeCudaEvent *record(int kind) {
  if (NumEvents == EventCapacity) {
    EventCapacity = EventCapacity ? 2 * EventCapacity : 256;
    Events = realloc(Events, EventCapacity * sizeof(*Events));
  }
  FakeCudaEvent *e = &Events[NumEvents++];
  memset(e, 0, sizeof(*e));
  e->Kind = kind;
  return e;
}

EXPORT void fake_cuda_events(const FakeCudaEvent **events, size_t *count) {
  *events = Events;
  *count = NumEvents;
}

EXPORT void fake_cuda_reset(void) { NumEvents = 0; }

// Whether FAKE_CUDA_FAIL names `entry` for this call.
static bool fails(const char *entry) {
  static char counted[64];
  static unsigned calls;
  const char *spec = getenv("FAKE_CUDA_FAIL");
  if (!spec)
    return false;
  size_t n = strcspn(spec, ":");
  if (strlen(entry) != n || strncmp(spec, entry, n) != 0)
    return false;
  if (spec[n] != ':')
    return true;
  if (strcmp(counted, entry) != 0) {
    snprintf(counted, sizeof(counted), "%s", entry);
    calls = 0;
  }
  return ++calls == (unsigned)atoi(spec + n + 1);
}

static int envInt(const char *name, int fallback) {
  const char *v = getenv(name);
  return v && *v ? atoi(v) : fallback;
}

// The bytes from `p` to the end of its live allocation, or -1 outside
// every one.
static long long bytesLeft(CUdeviceptr p) {
  for (size_t i = 0; i < sizeof(Allocations) / sizeof(*Allocations); ++i) {
    const Allocation *a = &Allocations[i];
    if (a->Data && p >= (CUdeviceptr)a->Data &&
        p <= (CUdeviceptr)a->Data + a->Bytes)
      return (long long)((CUdeviceptr)a->Data + a->Bytes - p);
  }
  return -1;
}

static bool inAllocation(CUdeviceptr p) { return bytesLeft(p) >= 0; }

EXPORT CUresult cuInit(unsigned flags) {
  (void)flags;
  record(FAKE_INIT);
  if (fails("cuInit"))
    return UNKNOWN;
  return envInt("FAKE_CUDA_DEVICES", 1) > 0 ? OK : NO_DEVICE;
}

EXPORT CUresult cuGetErrorName(CUresult error, const char **name) {
  switch (error) {
  case OUT_OF_MEMORY:
    *name = "CUDA_ERROR_OUT_OF_MEMORY";
    return OK;
  case LAUNCH_FAILED:
    *name = "CUDA_ERROR_LAUNCH_FAILED";
    return OK;
  default:
    *name = "CUDA_ERROR_UNKNOWN";
    return OK;
  }
}

EXPORT CUresult cuDeviceGetCount(int *count) {
  *count = envInt("FAKE_CUDA_DEVICES", 1);
  return OK;
}

EXPORT CUresult cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return ordinal < envInt("FAKE_CUDA_DEVICES", 1) ? OK : UNKNOWN;
}

EXPORT CUresult cuDeviceGetName(char *name, int length, int device) {
  snprintf(name, (size_t)length, "Fake CUDA device %d", device);
  return OK;
}

EXPORT CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  (void)device;
  int arch = envInt("FAKE_CUDA_ARCH", 90);
  switch (attribute) {
  case 75:
    *value = arch / 10;
    return OK;
  case 76:
    *value = arch % 10;
    return OK;
  case 5:
    *value = 2147483647;
    return OK;
  case 6:
  case 7:
    *value = 65535;
    return OK;
  }
  return UNKNOWN;
}

static int TheContext;
EXPORT CUresult cuDevicePrimaryCtxRetain(void **context, int device) {
  (void)device;
  *context = &TheContext;
  return OK;
}
EXPORT CUresult cuDevicePrimaryCtxRelease_v2(int device) {
  (void)device;
  return OK;
}
EXPORT CUresult cuCtxPushCurrent_v2(void *context) {
  return context == &TheContext ? OK : UNKNOWN;
}
EXPORT CUresult cuCtxPopCurrent_v2(void **context) {
  *context = &TheContext;
  return OK;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  record(FAKE_ALLOC)->Bytes = bytes;
  if (fails("cuMemAlloc_v2"))
    return OUT_OF_MEMORY;
  for (size_t i = 0; i < sizeof(Allocations) / sizeof(*Allocations); ++i)
    if (!Allocations[i].Data) {
      Allocations[i].Data = malloc(bytes);
      Allocations[i].Bytes = bytes;
      *pointer = (CUdeviceptr)Allocations[i].Data;
      return OK;
    }
  return OUT_OF_MEMORY;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr pointer) {
  record(FAKE_FREE);
  for (size_t i = 0; i < sizeof(Allocations) / sizeof(*Allocations); ++i)
    if (Allocations[i].Data && (CUdeviceptr)Allocations[i].Data == pointer) {
      free(Allocations[i].Data);
      Allocations[i].Data = NULL;
      return OK;
    }
  return UNKNOWN;
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr pointer, unsigned char value,
                                size_t count, void *stream) {
  (void)stream;
  memset((void *)pointer, value, count);
  return OK;
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src,
                                     size_t bytes, void *stream) {
  (void)stream;
  record(FAKE_COPY_TO_DEVICE)->Bytes = bytes;
  if (!inAllocation(dst) || !inAllocation(dst + bytes))
    return UNKNOWN;
  memcpy((void *)dst, src, bytes);
  return OK;
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes,
                                     void *stream) {
  (void)stream;
  record(FAKE_COPY_TO_HOST)->Bytes = bytes;
  if (!inAllocation(src) || !inAllocation(src + bytes))
    return UNKNOWN;
  memcpy(dst, (const void *)src, bytes);
  return OK;
}

// The number of .param of entry `name` in `ptx`, or -1.
static int countParams(const char *ptx, const char *name) {
  char entry[96];
  snprintf(entry, sizeof(entry), ".entry %s(", name);
  const char *at = strstr(ptx, entry);
  if (!at)
    return -1;
  const char *end = strchr(at, ')');
  int count = 0;
  for (const char *p = at; p && p < end; ++count)
    p = strstr(p + 1, ".param");
  return count - 1;
}

EXPORT CUresult cuModuleLoadDataEx(void **module, const void *image,
                                   unsigned numOptions, int *options,
                                   void **values) {
  (void)numOptions;
  (void)options;
  (void)values;
  FakeCudaEvent *e = record(FAKE_MODULE_LOAD);
  const char *text = image;
  bool elf = memcmp(text, "\177ELF", 4) == 0;
  if (elf) {
    snprintf(e->Name, sizeof(e->Name), "cubin");
  } else {
    const char *target = strstr(text, ".target sm_");
    snprintf(e->Name, sizeof(e->Name), "ptx sm_%d",
             target ? atoi(target + 11) : 0);
  }
  if (fails("cuModuleLoadDataEx") || NumModules == 1024)
    return UNKNOWN;
  Modules[NumModules].Ptx = elf ? NULL : strdup(text);
  *module = &Modules[NumModules++];
  return OK;
}

EXPORT CUresult cuModuleGetFunction(void **function, void *module,
                                    const char *name) {
  snprintf(record(FAKE_GET_FUNCTION)->Name, 64, "%s", name);
  const Module *m = module;
  if (NumFunctions == 1024 || (m->Ptx && countParams(m->Ptx, name) < 0))
    return UNKNOWN;
  Function *f = &Functions[NumFunctions++];
  snprintf(f->Name, sizeof(f->Name), "%s", name);
  f->NumArgs = m->Ptx ? countParams(m->Ptx, name) : -1;
  *function = f;
  return OK;
}

EXPORT CUresult cuModuleUnload(void *module) {
  Module *m = module;
  free(m->Ptx);
  m->Ptx = NULL;
  return OK;
}

EXPORT CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy,
                               unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, void *stream,
                               void **params, void **extra) {
  (void)stream;
  (void)extra;
  const Function *f = function;
  FakeCudaEvent *e = record(FAKE_LAUNCH);
  snprintf(e->Name, sizeof(e->Name), "%s", f->Name);
  unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  memcpy(e->Grid, grid, sizeof(grid));
  memcpy(e->Block, block, sizeof(block));
  e->Shared = shared;
  e->NumArgs = f->NumArgs;
  e->Captured = Capturing;
  e->ArgsInAllocations = 1;
  for (int i = 0; i < f->NumArgs; ++i)
    e->ArgsInAllocations &= inAllocation(*(CUdeviceptr *)params[i]);
  if (f->NumArgs > 0 && e->ArgsInAllocations) {
    CUdeviceptr words = *(CUdeviceptr *)params[0];
    size_t bytes = (size_t)bytesLeft(words);
    memcpy(e->Params, (const void *)words,
           bytes < sizeof(e->Params) ? bytes : sizeof(e->Params));
  }
  if (fails("cuLaunchKernel"))
    return LAUNCH_FAILED;
  CapturedLaunches += Capturing;
  return OK;
}

static int TheStream;
EXPORT CUresult cuStreamCreate(void **stream, unsigned flags) {
  (void)flags;
  *stream = &TheStream;
  return OK;
}
EXPORT CUresult cuStreamDestroy_v2(void *stream) {
  (void)stream;
  return OK;
}
EXPORT CUresult cuStreamSynchronize(void *stream) {
  (void)stream;
  record(FAKE_SYNC);
  return OK;
}

EXPORT CUresult cuStreamBeginCapture_v2(void *stream, int mode) {
  (void)stream;
  (void)mode;
  record(FAKE_BEGIN_CAPTURE);
  Capturing = true;
  CapturedLaunches = 0;
  return OK;
}

EXPORT CUresult cuStreamEndCapture(void *stream, void **graph) {
  (void)stream;
  record(FAKE_END_CAPTURE)->Nodes = CapturedLaunches;
  Capturing = false;
  if (NumGraphs == 1024)
    return UNKNOWN;
  Graphs[NumGraphs].Nodes = CapturedLaunches;
  *graph = &Graphs[NumGraphs++];
  return OK;
}

EXPORT CUresult cuGraphInstantiateWithFlags(void **exec, void *graph,
                                            unsigned long long flags) {
  (void)flags;
  record(FAKE_INSTANTIATE)->Nodes = ((GraphExec *)graph)->Nodes;
  *exec = graph;
  return OK;
}

EXPORT CUresult cuGraphLaunch(void *exec, void *stream) {
  (void)stream;
  record(FAKE_GRAPH_LAUNCH)->Nodes = ((GraphExec *)exec)->Nodes;
  return fails("cuGraphLaunch") ? LAUNCH_FAILED : OK;
}

EXPORT CUresult cuGraphExecDestroy(void *exec) {
  (void)exec;
  return OK;
}
EXPORT CUresult cuGraphDestroy(void *graph) {
  (void)graph;
  return OK;
}
