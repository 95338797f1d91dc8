//===- CudaQueue.c - Recorded launches, run directly or as CUDA graphs ----===//
//
// Launches are recorded into a batch and run at the next wait or copy. A
// model's run records the same batch every time (the same kernels, grids,
// addresses and parameter words), and launching it as one CUDA graph
// costs one call instead of one per kernel. So:
//
// - a batch seen for the first time runs directly, and its fingerprint is
//   kept;
// - a batch seen again is captured into a graph (with its own copy of the
//   parameter words on the device), which runs, and is kept;
// - a batch equal to a kept graph's (compared in full, not only by
//   fingerprint) launches that graph and nothing else.
//
// A loop whose parameter words change every iteration (a counter) never
// repeats a batch, so it never pays for a capture. Destroying a buffer or a
// kernel forgets the graphs, which name their addresses.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"
#include "LastError.h"

#include <stdlib.h>
#include <string.h>

struct mlccCudaGraph {
  uint64_t Fingerprint;
  mlccCudaBatch Batch; // a copy, to compare with
  CUdeviceptr Params;
  CUgraphExec Exec;
};

enum { ParamsAlignment = 16 };

static bool grow(void **array, uint64_t *capacity, uint64_t needed,
                 size_t element) {
  if (needed <= *capacity)
    return true;
  uint64_t next = *capacity ? *capacity : 64;
  while (next < needed)
    next *= 2;
  void *grown = realloc(*array, (size_t)(next * element));
  if (!grown)
    return false;
  *array = grown;
  *capacity = next;
  return true;
}

mlcc_status mlccCudaLaunch(mlccCudaDevice *device, mlccCudaKernel *kernel,
                           const uint32_t groups[3], const uint32_t *params,
                           uint32_t num_params,
                           const mlcc_device_binding *bindings,
                           uint32_t num_bindings) {
  static const char fn[] = "mlcc_device_launch";
  if (kernel->Device != device)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: the kernel is not this device's", fn);
  if (!groups || (num_params > 0 && !params) || (num_bindings > 0 && !bindings))
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: kernel '%s': groups, params or bindings "
                               "is NULL",
                               fn, kernel->Name);
  if (num_bindings != kernel->NumBuffers)
    return mlcc_last_error_set(
        MLCC_INVALID_ARGUMENT, "%s: kernel '%s' takes %u buffers, not %u", fn,
        kernel->Name, (unsigned)kernel->NumBuffers, (unsigned)num_bindings);
  for (uint32_t i = 0; i < num_bindings; ++i) {
    const mlccCudaBuffer *b = (const mlccCudaBuffer *)bindings[i].buffer;
    if (!b || b->Device != device || bindings[i].offset > b->Size)
      return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                                 "%s: kernel '%s': bindings[%u] is not a "
                                 "place in a buffer of this device",
                                 fn, kernel->Name, (unsigned)i);
  }
  for (int d = 0; d < 3; ++d) {
    if (groups[d] == 0)
      return MLCC_OK;
    if ((int64_t)groups[d] > device->MaxGrid[d])
      return mlcc_last_error_set(MLCC_OUT_OF_RANGE,
                                 "%s: kernel '%s': %u blocks in dimension %d, "
                                 "the device has at most %d",
                                 fn, kernel->Name, (unsigned)groups[d], d,
                                 device->MaxGrid[d]);
  }

  mlccCudaBatch *batch = &device->Batch;
  uint64_t paramsAt = (batch->ParamsBytes + ParamsAlignment - 1) /
                      ParamsAlignment * ParamsAlignment;
  uint64_t paramsEnd = paramsAt + (uint64_t)num_params * sizeof(uint32_t);
  uint64_t pointers = 1 + (uint64_t)num_bindings;
  if (!grow((void **)&batch->Launches, &batch->LaunchCapacity,
            batch->NumLaunches + 1, sizeof(mlccCudaLaunchRecord)) ||
      !grow((void **)&batch->Pointers, &batch->PointerCapacity,
            batch->NumPointers + pointers, sizeof(CUdeviceptr)) ||
      !grow((void **)&batch->Params, &batch->ParamsCapacity, paramsEnd, 1))
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "%s: cannot record the launch", fn);
  mlccCudaLaunchRecord *launch = &batch->Launches[batch->NumLaunches++];
  launch->Kernel = kernel;
  memcpy(launch->Groups, groups, sizeof(launch->Groups));
  launch->NumPointers = (uint32_t)pointers;
  launch->FirstPointer = batch->NumPointers;
  launch->ParamsOffset = paramsAt;
  // The parameter words' address is known when the batch runs.
  batch->Pointers[batch->NumPointers++] = 0;
  for (uint32_t i = 0; i < num_bindings; ++i) {
    const mlccCudaBuffer *b = (const mlccCudaBuffer *)bindings[i].buffer;
    batch->Pointers[batch->NumPointers++] = b->Pointer + bindings[i].offset;
  }
  memset(batch->Params + batch->ParamsBytes, 0,
         (size_t)(paramsAt - batch->ParamsBytes));
  if (num_params > 0)
    memcpy(batch->Params + paramsAt, params, num_params * sizeof(uint32_t));
  batch->ParamsBytes = paramsEnd;
  return MLCC_OK;
}

//===-- Running a batch ---------------------------------------------------===//

static uint64_t hashBytes(uint64_t h, const void *data, size_t bytes) {
  const unsigned char *p = data;
  for (size_t i = 0; i < bytes; ++i)
    h = (h ^ p[i]) * UINT64_C(1099511628211);
  return h;
}

static uint64_t fingerprint(const mlccCudaBatch *b) {
  uint64_t h = UINT64_C(14695981039346656037);
  for (uint64_t i = 0; i < b->NumLaunches; ++i) {
    const mlccCudaLaunchRecord *l = &b->Launches[i];
    h = hashBytes(h, &l->Kernel, sizeof(l->Kernel));
    h = hashBytes(h, l->Groups, sizeof(l->Groups));
  }
  h = hashBytes(h, b->Pointers, (size_t)b->NumPointers * sizeof(CUdeviceptr));
  return hashBytes(h, b->Params, (size_t)b->ParamsBytes);
}

static bool sameBatch(const mlccCudaBatch *a, const mlccCudaBatch *b) {
  if (a->NumLaunches != b->NumLaunches || a->NumPointers != b->NumPointers ||
      a->ParamsBytes != b->ParamsBytes)
    return false;
  for (uint64_t i = 0; i < a->NumLaunches; ++i) {
    const mlccCudaLaunchRecord *x = &a->Launches[i], *y = &b->Launches[i];
    if (x->Kernel != y->Kernel ||
        memcmp(x->Groups, y->Groups, sizeof(x->Groups)) != 0 ||
        x->FirstPointer != y->FirstPointer ||
        x->ParamsOffset != y->ParamsOffset)
      return false;
  }
  return memcmp(a->Pointers, b->Pointers,
                (size_t)a->NumPointers * sizeof(CUdeviceptr)) == 0 &&
         memcmp(a->Params, b->Params, (size_t)a->ParamsBytes) == 0;
}

static void freeBatch(mlccCudaBatch *b) {
  free(b->Launches);
  free(b->Pointers);
  free(b->Params);
  memset(b, 0, sizeof(*b));
}

static bool copyBatch(mlccCudaBatch *to, const mlccCudaBatch *from) {
  memset(to, 0, sizeof(*to));
  to->Launches =
      malloc((size_t)from->NumLaunches * sizeof(mlccCudaLaunchRecord));
  to->Pointers = malloc((size_t)from->NumPointers * sizeof(CUdeviceptr));
  to->Params = malloc((size_t)from->ParamsBytes + 1);
  if (!to->Launches || !to->Pointers || !to->Params) {
    freeBatch(to);
    return false;
  }
  memcpy(to->Launches, from->Launches,
         (size_t)from->NumLaunches * sizeof(mlccCudaLaunchRecord));
  memcpy(to->Pointers, from->Pointers,
         (size_t)from->NumPointers * sizeof(CUdeviceptr));
  memcpy(to->Params, from->Params, (size_t)from->ParamsBytes);
  to->NumLaunches = from->NumLaunches;
  to->NumPointers = from->NumPointers;
  to->ParamsBytes = from->ParamsBytes;
  return true;
}

static void freeGraph(mlccCudaDevice *device, mlccCudaGraph *graph) {
  if (!graph)
    return;
  if (graph->Exec)
    device->Cuda.cuGraphExecDestroy(graph->Exec);
  if (graph->Params)
    device->Cuda.cuMemFree_v2(graph->Params);
  freeBatch(&graph->Batch);
  free(graph);
}

void mlccCudaFreeQueue(mlccCudaDevice *device) {
  for (uint32_t i = 0; i < MLCC_CUDA_GRAPH_CACHE; ++i) {
    freeGraph(device, device->Captured[i]);
    device->Captured[i] = NULL;
  }
  memset(device->Seen, 0, sizeof(device->Seen));
  freeBatch(&device->Batch);
  if (device->DirectParams)
    device->Cuda.cuMemFree_v2(device->DirectParams);
  device->DirectParams = 0;
  device->DirectParamsBytes = 0;
}

// Copies the batch's parameter words to `at` (on the stream).
static mlcc_status uploadParams(mlccCudaDevice *device, CUdeviceptr at,
                                const char *fn) {
  const mlccCudaBatch *b = &device->Batch;
  if (b->ParamsBytes == 0)
    return MLCC_OK;
  CUresult r = device->Cuda.cuMemcpyHtoDAsync_v2(
      at, b->Params, (size_t)b->ParamsBytes, device->Stream);
  return r == CUDA_SUCCESS ? MLCC_OK
                           : mlccCudaFailed(device, r, fn, "cuMemcpyHtoDAsync");
}

// Launches every recorded kernel, its parameter words at `params`.
static mlcc_status launchAll(mlccCudaDevice *device, CUdeviceptr params,
                             const char *fn) {
  mlccCudaBatch *b = &device->Batch;
  void **args = malloc((size_t)b->NumPointers * sizeof(void *));
  if (!args)
    return mlcc_last_error_set(
        MLCC_OUT_OF_MEMORY, "%s: cannot allocate the launches' arguments", fn);
  for (uint64_t i = 0; i < b->NumPointers; ++i)
    args[i] = &b->Pointers[i];
  mlcc_status status = MLCC_OK;
  for (uint64_t i = 0; i < b->NumLaunches && status == MLCC_OK; ++i) {
    const mlccCudaLaunchRecord *l = &b->Launches[i];
    const mlccCudaKernel *k = l->Kernel;
    b->Pointers[l->FirstPointer] = params + l->ParamsOffset;
    CUresult r = device->Cuda.cuLaunchKernel(
        k->Function, l->Groups[0], l->Groups[1], l->Groups[2], k->Block[0],
        k->Block[1], k->Block[2], 0, device->Stream, &args[l->FirstPointer],
        NULL);
    if (r != CUDA_SUCCESS) {
      mlccCudaFailed(device, r, fn, "cuLaunchKernel");
      status = mlcc_last_error_set(MLCC_INTERNAL, "%s (kernel '%s')",
                                   mlcc_last_error_message(), k->Name);
    }
  }
  free(args);
  return status;
}

static mlcc_status runDirectly(mlccCudaDevice *device, const char *fn) {
  const mlccCudaBatch *b = &device->Batch;
  if (b->ParamsBytes > device->DirectParamsBytes) {
    if (device->DirectParams)
      device->Cuda.cuMemFree_v2(device->DirectParams);
    device->DirectParams = 0;
    device->DirectParamsBytes = 0;
    CUresult r = device->Cuda.cuMemAlloc_v2(&device->DirectParams,
                                            (size_t)b->ParamsBytes);
    if (r != CUDA_SUCCESS) {
      device->DirectParams = 0;
      return mlccCudaFailed(device, r, fn, "cuMemAlloc");
    }
    device->DirectParamsBytes = b->ParamsBytes;
  }
  mlcc_status status = uploadParams(device, device->DirectParams, fn);
  return status == MLCC_OK ? launchAll(device, device->DirectParams, fn)
                           : status;
}

// Captures the batch into a graph with its own parameter words, keeps it,
// and launches it.
static mlcc_status capture(mlccCudaDevice *device, uint64_t print,
                           const char *fn) {
  const mlcc_cuda_functions *cuda = &device->Cuda;
  mlccCudaGraph *graph = calloc(1, sizeof(*graph));
  if (!graph || !copyBatch(&graph->Batch, &device->Batch)) {
    free(graph);
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "%s: cannot keep the launches' graph", fn);
  }
  graph->Fingerprint = print;
  uint64_t bytes = device->Batch.ParamsBytes;
  CUresult r = cuda->cuMemAlloc_v2(&graph->Params, (size_t)(bytes ? bytes : 4));
  mlcc_status status = r == CUDA_SUCCESS
                           ? uploadParams(device, graph->Params, fn)
                           : mlccCudaFailed(device, r, fn, "cuMemAlloc");
  if (r != CUDA_SUCCESS)
    graph->Params = 0;
  CUgraph captured = NULL;
  if (status == MLCC_OK) {
    r = cuda->cuStreamBeginCapture_v2(device->Stream,
                                      CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    if (r != CUDA_SUCCESS)
      status = mlccCudaFailed(device, r, fn, "cuStreamBeginCapture");
  }
  if (status == MLCC_OK) {
    status = launchAll(device, graph->Params, fn);
    r = cuda->cuStreamEndCapture(device->Stream, &captured);
    if (status == MLCC_OK && r != CUDA_SUCCESS)
      status = mlccCudaFailed(device, r, fn, "cuStreamEndCapture");
  }
  if (status == MLCC_OK) {
    r = cuda->cuGraphInstantiateWithFlags(&graph->Exec, captured, 0);
    if (r != CUDA_SUCCESS) {
      graph->Exec = NULL;
      status = mlccCudaFailed(device, r, fn, "cuGraphInstantiateWithFlags");
    }
  }
  if (captured)
    cuda->cuGraphDestroy(captured);
  if (status == MLCC_OK) {
    r = cuda->cuGraphLaunch(graph->Exec, device->Stream);
    if (r != CUDA_SUCCESS)
      status = mlccCudaFailed(device, r, fn, "cuGraphLaunch");
  }
  if (status != MLCC_OK) {
    freeGraph(device, graph);
    return status;
  }
  uint32_t slot = device->NextCaptured++ % MLCC_CUDA_GRAPH_CACHE;
  freeGraph(device, device->Captured[slot]);
  device->Captured[slot] = graph;
  return MLCC_OK;
}

static mlcc_status runBatch(mlccCudaDevice *device, const char *fn) {
  uint64_t print = fingerprint(&device->Batch);
  for (uint32_t i = 0; device->UseGraphs && i < MLCC_CUDA_GRAPH_CACHE; ++i) {
    mlccCudaGraph *g = device->Captured[i];
    if (g && g->Fingerprint == print && sameBatch(&g->Batch, &device->Batch)) {
      CUresult r = device->Cuda.cuGraphLaunch(g->Exec, device->Stream);
      return r == CUDA_SUCCESS ? MLCC_OK
                               : mlccCudaFailed(device, r, fn, "cuGraphLaunch");
    }
  }
  bool seen = false;
  for (uint32_t i = 0; i < MLCC_CUDA_GRAPH_CACHE; ++i)
    seen |= device->Seen[i] == print;
  if (device->UseGraphs && seen)
    return capture(device, print, fn);
  device->Seen[device->NextSeen++ % MLCC_CUDA_GRAPH_CACHE] = print;
  return runDirectly(device, fn);
}

mlcc_status mlccCudaSubmitAndWait(mlccCudaDevice *device, const char *fn) {
  mlccCudaBatch *b = &device->Batch;
  // Nothing of ours is in flight between calls: every batch is waited for.
  if (b->NumLaunches == 0)
    return MLCC_OK;
  mlcc_status status = runBatch(device, fn);
  b->NumLaunches = 0;
  b->NumPointers = 0;
  b->ParamsBytes = 0;
  CUresult r = device->Cuda.cuStreamSynchronize(device->Stream);
  if (status == MLCC_OK && r != CUDA_SUCCESS)
    status = mlccCudaFailed(device, r, fn, "cuStreamSynchronize");
  return status;
}
