//===- CudaDevice.h - The CUDA device layer's own pieces ----------*- C -*-===//
//
// Not a public header. The handles behind a CUDA mlcc_device, its buffers
// and kernels, and what CudaDevice.c (opening, buffers, copies),
// CudaKernel.c (modules from a kernel's bundle) and CudaQueue.c (launches,
// CUDA graphs) share. CudaDevice.c says how the pieces work together.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_RUNTIME_SRC_CUDADEVICE_H
#define MLCC_RUNTIME_SRC_CUDADEVICE_H

#include "CudaLoader.h"
#include "DeviceLayer.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct mlccCudaDevice mlccCudaDevice;
typedef struct mlccCudaGraph mlccCudaGraph;

typedef struct mlccCudaBuffer {
  mlccCudaDevice *Device;
  struct mlccCudaBuffer *Prev, *Next; // the device's list, for close
  CUdeviceptr Pointer;
  uint64_t Size;
} mlccCudaBuffer;

typedef struct mlccCudaKernel {
  mlccCudaDevice *Device;
  struct mlccCudaKernel *Prev, *Next;
  CUmodule Module;
  CUfunction Function;
  uint32_t NumBuffers;
  uint32_t Block[3];
  char *Name;
} mlccCudaKernel;

/// One recorded launch: its kernel arguments are Pointers[FirstPointer..]
/// (the parameter words' address, then the buffers'), the parameter words
/// Params[ParamsOffset..] until uploaded.
typedef struct mlccCudaLaunchRecord {
  mlccCudaKernel *Kernel;
  uint32_t Groups[3];
  uint32_t NumPointers;
  uint64_t FirstPointer;
  uint64_t ParamsOffset; // bytes
} mlccCudaLaunchRecord;

/// What is recorded between two waits: a batch.
typedef struct mlccCudaBatch {
  mlccCudaLaunchRecord *Launches;
  uint64_t NumLaunches, LaunchCapacity;
  CUdeviceptr *Pointers; // buffer addresses; the params' are filled in late
  uint64_t NumPointers, PointerCapacity;
  unsigned char *Params;
  uint64_t ParamsBytes, ParamsCapacity;
} mlccCudaBatch;

enum {
  // Batches remembered for graph capture: one seen once is only
  // fingerprinted; one seen twice is captured, and replayed from then on.
  MLCC_CUDA_GRAPH_CACHE = 16,
};

struct mlccCudaDevice {
  mlcc_device Base; // first: the public handle
  mlcc_cuda_functions Cuda;
  CUdevice Device;
  CUcontext Context; // the device's primary context, retained
  CUstream OwnStream;
  CUstream Stream; // OwnStream or the application's
  int Arch;        // compute capability: 90 for sm_90
  int MaxGrid[3];
  bool UseGraphs; // the driver has them and MLCC_CUDA_GRAPHS is not 0
  mlccCudaBuffer *Buffers;
  mlccCudaKernel *Kernels;
  mlccCudaBatch Batch;
  // The parameter words of a batch launched directly (not from a graph).
  CUdeviceptr DirectParams;
  uint64_t DirectParamsBytes;
  // Fingerprints of batches seen once, and the captured graphs (each with
  // its own parameter words on the device), oldest replaced first.
  uint64_t Seen[MLCC_CUDA_GRAPH_CACHE];
  uint32_t NextSeen;
  mlccCudaGraph *Captured[MLCC_CUDA_GRAPH_CACHE];
  uint32_t NextCaptured;
  char Name[256];
};

/// Records the failure of driver call `call` made by `fn`: "fn: call failed
/// (CUresult 2, CUDA_ERROR_OUT_OF_MEMORY)"; out of memory gives
/// MLCC_OUT_OF_MEMORY, anything else MLCC_INTERNAL.
mlcc_status mlccCudaFailed(const mlccCudaDevice *device, CUresult result,
                           const char *fn, const char *call);

/// Makes the device's context current on this thread for one call;
/// mlccCudaLeave restores what was current.
mlcc_status mlccCudaEnter(mlccCudaDevice *device, const char *fn);
void mlccCudaLeave(mlccCudaDevice *device);

mlcc_status mlccCudaKernelCreate(mlccCudaDevice *device,
                                 const mlcc_device_kernel_desc *desc,
                                 mlccCudaKernel **out);
void mlccCudaKernelDestroy(mlccCudaDevice *device, mlccCudaKernel *kernel);

mlcc_status mlccCudaLaunch(mlccCudaDevice *device, mlccCudaKernel *kernel,
                           const uint32_t groups[3], const uint32_t *params,
                           uint32_t num_params,
                           const mlcc_device_binding *bindings,
                           uint32_t num_bindings);
/// Runs the recorded batch (from a graph where one was captured for it)
/// and waits for it; the batch is emptied, also when this fails. The
/// context is current (mlccCudaEnter).
mlcc_status mlccCudaSubmitAndWait(mlccCudaDevice *device, const char *fn);
/// Frees the batch's arrays, the graphs and the parameter buffers.
void mlccCudaFreeQueue(mlccCudaDevice *device);

#endif // MLCC_RUNTIME_SRC_CUDADEVICE_H
