//===- CudaLoader.h - The CUDA driver API, loaded at run time -----*- C -*-===//
//
// Not a public header. The runtime never includes cuda.h nor links
// libcuda: it declares the few driver types and entry points it uses (as
// the driver API defines them, by their exported names: the _v2 ones where
// the driver has those) and loads them from libcuda.so.1 with dlopen when a
// CUDA device is opened. The tests load a fake libcuda.so.1 the same way.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_RUNTIME_SRC_CUDALOADER_H
#define MLCC_RUNTIME_SRC_CUDALOADER_H

#include "mlcc/status.h"

#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NO_DEVICE = 100,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_STREAM_NON_BLOCKING = 1,
  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

// X(name, return type, parameters): every entry point the device layer
// calls. The graph ones are optional (drivers before CUDA 11.4 lack
// cuGraphInstantiateWithFlags): without them launches are never captured.
#define MLCC_CUDA_FUNCTIONS(X, OPTIONAL)                                       \
  X(cuInit, (unsigned flags))                                                  \
  X(cuGetErrorName, (CUresult error, const char **name))                       \
  X(cuDeviceGetCount, (int *count))                                            \
  X(cuDeviceGet, (CUdevice * device, int ordinal))                             \
  X(cuDeviceGetName, (char *name, int length, CUdevice device))                \
  X(cuDeviceGetAttribute, (int *value, int attribute, CUdevice device))        \
  X(cuDevicePrimaryCtxRetain, (CUcontext * context, CUdevice device))          \
  X(cuDevicePrimaryCtxRelease_v2, (CUdevice device))                           \
  X(cuCtxPushCurrent_v2, (CUcontext context))                                  \
  X(cuCtxPopCurrent_v2, (CUcontext * context))                                 \
  X(cuMemAlloc_v2, (CUdeviceptr * pointer, size_t bytes))                      \
  X(cuMemFree_v2, (CUdeviceptr pointer))                                       \
  X(cuMemsetD8Async,                                                           \
    (CUdeviceptr pointer, unsigned char value, size_t count, CUstream stream)) \
  X(cuMemcpyHtoDAsync_v2,                                                      \
    (CUdeviceptr dst, const void *src, size_t bytes, CUstream stream))         \
  X(cuMemcpyDtoHAsync_v2,                                                      \
    (void *dst, CUdeviceptr src, size_t bytes, CUstream stream))               \
  X(cuModuleLoadDataEx, (CUmodule * module, const void *image,                 \
                         unsigned numOptions, int *options, void **values))    \
  X(cuModuleGetFunction,                                                       \
    (CUfunction * function, CUmodule module, const char *name))                \
  X(cuModuleUnload, (CUmodule module))                                         \
  X(cuLaunchKernel,                                                            \
    (CUfunction function, unsigned gridX, unsigned gridY, unsigned gridZ,      \
     unsigned blockX, unsigned blockY, unsigned blockZ, unsigned sharedBytes,  \
     CUstream stream, void **params, void **extra))                            \
  X(cuStreamCreate, (CUstream * stream, unsigned flags))                       \
  X(cuStreamDestroy_v2, (CUstream stream))                                     \
  X(cuStreamSynchronize, (CUstream stream))                                    \
  OPTIONAL(cuStreamBeginCapture_v2, (CUstream stream, int mode))               \
  OPTIONAL(cuStreamEndCapture, (CUstream stream, CUgraph * graph))             \
  OPTIONAL(cuGraphInstantiateWithFlags,                                        \
           (CUgraphExec * exec, CUgraph graph, unsigned long long flags))      \
  OPTIONAL(cuGraphLaunch, (CUgraphExec exec, CUstream stream))                 \
  OPTIONAL(cuGraphExecDestroy, (CUgraphExec exec))                             \
  OPTIONAL(cuGraphDestroy, (CUgraph graph))

typedef struct mlcc_cuda_functions {
  void *Library;
#define MLCC_CUDA_MEMBER(name, params) CUresult(*name) params;
  MLCC_CUDA_FUNCTIONS(MLCC_CUDA_MEMBER, MLCC_CUDA_MEMBER)
#undef MLCC_CUDA_MEMBER
} mlcc_cuda_functions;

/// Loads libcuda.so.1 and its entry points; MLCC_NO_DEVICE with a message
/// when it is not there or lacks a required one.
mlcc_status mlccCudaLoadLibrary(mlcc_cuda_functions *cuda);
void mlccCudaUnloadLibrary(mlcc_cuda_functions *cuda);

/// Whether the graph entry points were all found.
int mlccCudaHasGraphs(const mlcc_cuda_functions *cuda);

#endif // MLCC_RUNTIME_SRC_CUDALOADER_H
