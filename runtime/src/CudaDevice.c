//===- CudaDevice.c - The device layer over the CUDA driver API -----------===//
//
// mlcc_device_* for MLCC_DEVICE_API_CUDA, with the Vulkan layer's contract:
//
// - One device, its primary context (shared with an application that uses
//   the CUDA runtime API on it), made current around each call and
//   restored after.
// - Memory: cuMemAlloc per buffer, zero-filled; copies are async copies on
//   the device's stream followed by a wait (the caller's memory is
//   pageable).
// - Work: launches are recorded (CudaQueue.c) and run at the next wait or
//   copy, in order, on one stream: the device's own, or one the application
//   gives (mlcc_device_set_stream). A batch seen a second time is captured
//   into a CUDA graph and replayed from then on.
// - Kernels: a bundle of PTX and cubins per kernel (CudaKernel.c).
//
// Nothing of CUDA is needed to build this: CudaLoader.c loads libcuda.so.1
// when a device is opened, and without it opening gives MLCC_NO_DEVICE.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"
#include "LastError.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

mlcc_status mlccCudaFailed(const mlccCudaDevice *device, CUresult result,
                           const char *fn, const char *call) {
  const char *name = NULL;
  if (device && device->Cuda.cuGetErrorName)
    device->Cuda.cuGetErrorName(result, &name);
  return mlcc_last_error_set(
      result == CUDA_ERROR_OUT_OF_MEMORY ? MLCC_OUT_OF_MEMORY : MLCC_INTERNAL,
      "%s: %s failed (CUresult %d, %s)", fn, call, (int)result,
      name ? name : "unknown");
}

mlcc_status mlccCudaEnter(mlccCudaDevice *device, const char *fn) {
  CUresult r = device->Cuda.cuCtxPushCurrent_v2(device->Context);
  return r == CUDA_SUCCESS ? MLCC_OK
                           : mlccCudaFailed(device, r, fn, "cuCtxPushCurrent");
}

void mlccCudaLeave(mlccCudaDevice *device) {
  CUcontext previous;
  device->Cuda.cuCtxPopCurrent_v2(&previous);
}

//===-- Opening -----------------------------------------------------------===//

// The device `selector` names among `count`: an index, or a substring of
// its name; -1 when none matches.
static int selectDevice(mlccCudaDevice *device, const char *selector,
                        int count) {
  if (!selector || !*selector)
    return count > 0 ? 0 : -1;
  char *end = NULL;
  long index = strtol(selector, &end, 10);
  if (*end == '\0')
    return index >= 0 && index < count ? (int)index : -1;
  for (int i = 0; i < count; ++i) {
    CUdevice d;
    char name[256] = "";
    if (device->Cuda.cuDeviceGet(&d, i) == CUDA_SUCCESS &&
        device->Cuda.cuDeviceGetName(name, sizeof(name), d) == CUDA_SUCCESS &&
        mlccContainsIgnoringCase(name, selector))
      return i;
  }
  return -1;
}

static mlcc_status openDevice(mlccCudaDevice *device, const char *selector) {
  static const char fn[] = "mlcc_device_open";
  mlcc_cuda_functions *cuda = &device->Cuda;
  CUresult r = cuda->cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE)
    return mlcc_last_error_set(MLCC_NO_DEVICE,
                               "%s: the CUDA driver sees no device", fn);
  if (r != CUDA_SUCCESS) {
    mlccCudaFailed(device, r, fn, "cuInit");
    return mlcc_last_error_set(MLCC_NO_DEVICE, "%s", mlcc_last_error_message());
  }
  int count = 0;
  if ((r = cuda->cuDeviceGetCount(&count)) != CUDA_SUCCESS)
    return mlccCudaFailed(device, r, fn, "cuDeviceGetCount");
  if (!selector || !*selector)
    selector = getenv("MLCC_DEVICE");
  int index = selectDevice(device, selector, count);
  if (index < 0)
    return mlcc_last_error_set(MLCC_NO_DEVICE,
                               "%s: no CUDA device matches '%s' (%d devices)",
                               fn, selector ? selector : "", count);
  if ((r = cuda->cuDeviceGet(&device->Device, index)) != CUDA_SUCCESS)
    return mlccCudaFailed(device, r, fn, "cuDeviceGet");
  if ((r = cuda->cuDeviceGetName(device->Name, sizeof(device->Name),
                                 device->Device)) != CUDA_SUCCESS)
    return mlccCudaFailed(device, r, fn, "cuDeviceGetName");
  int major = 0, minor = 0;
  const int gridAttributes[3] = {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
                                 CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                                 CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z};
  if ((r = cuda->cuDeviceGetAttribute(
           &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
           device->Device)) != CUDA_SUCCESS ||
      (r = cuda->cuDeviceGetAttribute(
           &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
           device->Device)) != CUDA_SUCCESS)
    return mlccCudaFailed(device, r, fn, "cuDeviceGetAttribute");
  for (int i = 0; i < 3; ++i)
    if ((r = cuda->cuDeviceGetAttribute(&device->MaxGrid[i], gridAttributes[i],
                                        device->Device)) != CUDA_SUCCESS)
      return mlccCudaFailed(device, r, fn, "cuDeviceGetAttribute");
  device->Arch = major * 10 + minor;
  if ((r = cuda->cuDevicePrimaryCtxRetain(&device->Context, device->Device)) !=
      CUDA_SUCCESS) {
    device->Context = NULL;
    return mlccCudaFailed(device, r, fn, "cuDevicePrimaryCtxRetain");
  }
  mlcc_status status = mlccCudaEnter(device, fn);
  if (status != MLCC_OK)
    return status;
  r = cuda->cuStreamCreate(&device->OwnStream, CU_STREAM_NON_BLOCKING);
  mlccCudaLeave(device);
  if (r != CUDA_SUCCESS) {
    device->OwnStream = NULL;
    return mlccCudaFailed(device, r, fn, "cuStreamCreate");
  }
  device->Stream = device->OwnStream;
  const char *graphs = getenv("MLCC_CUDA_GRAPHS");
  device->UseGraphs =
      mlccCudaHasGraphs(cuda) && !(graphs && strcmp(graphs, "0") == 0);
  return MLCC_OK;
}

static void closeDevice(mlccCudaDevice *device) {
  mlcc_cuda_functions *cuda = &device->Cuda;
  if (device->Context &&
      mlccCudaEnter(device, "mlcc_device_close") == MLCC_OK) {
    if (device->Stream)
      cuda->cuStreamSynchronize(device->Stream);
    mlccCudaFreeQueue(device);
    while (device->Kernels)
      mlccCudaKernelDestroy(device, device->Kernels);
    for (mlccCudaBuffer *b = device->Buffers, *next; b; b = next) {
      next = b->Next;
      cuda->cuMemFree_v2(b->Pointer);
      free(b);
    }
    if (device->OwnStream)
      cuda->cuStreamDestroy_v2(device->OwnStream);
    mlccCudaLeave(device);
    cuda->cuDevicePrimaryCtxRelease_v2(device->Device);
  }
  mlccCudaUnloadLibrary(cuda);
  free(device);
}

//===-- Buffers and copies ------------------------------------------------===//

static mlcc_status bufferCreate(mlcc_device *handle, uint64_t bytes,
                                mlcc_device_buffer **out) {
  static const char fn[] = "mlcc_device_buffer_create";
  mlccCudaDevice *device = (mlccCudaDevice *)handle;
  mlccCudaBuffer *buffer = calloc(1, sizeof(*buffer));
  if (!buffer)
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "%s: cannot allocate the handle", fn);
  mlcc_status status = mlccCudaEnter(device, fn);
  if (status != MLCC_OK) {
    free(buffer);
    return status;
  }
  CUresult r = device->Cuda.cuMemAlloc_v2(&buffer->Pointer, (size_t)bytes);
  if (r == CUDA_SUCCESS) {
    // On the device's stream: what uses the buffer comes after it there
    // (a plain cuMemsetD8 is ordered with the legacy stream only).
    r = device->Cuda.cuMemsetD8Async(buffer->Pointer, 0, (size_t)bytes,
                                     device->Stream);
    if (r != CUDA_SUCCESS)
      device->Cuda.cuMemFree_v2(buffer->Pointer);
    status = r == CUDA_SUCCESS
                 ? MLCC_OK
                 : mlccCudaFailed(device, r, fn, "cuMemsetD8Async");
  } else {
    status = mlccCudaFailed(device, r, fn, "cuMemAlloc");
  }
  mlccCudaLeave(device);
  if (status != MLCC_OK) {
    free(buffer);
    return status;
  }
  buffer->Device = device;
  buffer->Size = bytes;
  buffer->Next = device->Buffers;
  if (device->Buffers)
    device->Buffers->Prev = buffer;
  device->Buffers = buffer;
  *out = (mlcc_device_buffer *)buffer;
  return MLCC_OK;
}

static void bufferDestroy(mlcc_device *handle, mlcc_device_buffer *opaque) {
  static const char fn[] = "mlcc_device_buffer_destroy";
  mlccCudaDevice *device = (mlccCudaDevice *)handle;
  mlccCudaBuffer *buffer = (mlccCudaBuffer *)opaque;
  if (buffer->Device != device || mlccCudaEnter(device, fn) != MLCC_OK)
    return;
  // Recorded launches may use it, and captured graphs name its address:
  // run the former, forget the latter.
  mlccCudaSubmitAndWait(device, fn);
  mlccCudaFreeQueue(device);
  device->Cuda.cuMemFree_v2(buffer->Pointer);
  mlccCudaLeave(device);
  if (buffer->Prev)
    buffer->Prev->Next = buffer->Next;
  else
    device->Buffers = buffer->Next;
  if (buffer->Next)
    buffer->Next->Prev = buffer->Prev;
  free(buffer);
}

static mlcc_status checkCopy(const mlccCudaDevice *device,
                             const mlccCudaBuffer *buffer, uint64_t offset,
                             const void *host, uint64_t bytes, const char *fn) {
  if (!buffer || (!host && bytes > 0))
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                               buffer ? "the host pointer" : "buffer");
  if (buffer->Device != device)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: the buffer is not this device's", fn);
  if (offset > buffer->Size || bytes > buffer->Size - offset)
    return mlcc_last_error_set(MLCC_OUT_OF_RANGE,
                               "%s: %llu bytes at offset %llu are outside "
                               "the buffer of %llu bytes",
                               fn, (unsigned long long)bytes,
                               (unsigned long long)offset,
                               (unsigned long long)buffer->Size);
  return MLCC_OK;
}

// The recorded launches, then the copy, then a wait for both.
// One of `src` (to the device) and `dst` (from it) is given.
static mlcc_status copy(mlcc_device *handle, mlcc_device_buffer *opaque,
                        uint64_t offset, const void *src, void *dst,
                        uint64_t bytes, const char *fn) {
  mlccCudaDevice *device = (mlccCudaDevice *)handle;
  mlccCudaBuffer *buffer = (mlccCudaBuffer *)opaque;
  bool toDevice = dst == NULL;
  mlcc_status status =
      checkCopy(device, buffer, offset, toDevice ? src : dst, bytes, fn);
  if (status != MLCC_OK)
    return status;
  if ((status = mlccCudaEnter(device, fn)) != MLCC_OK)
    return status;
  status = mlccCudaSubmitAndWait(device, fn);
  if (status == MLCC_OK && bytes > 0) {
    const mlcc_cuda_functions *cuda = &device->Cuda;
    CUdeviceptr at = buffer->Pointer + offset;
    CUresult r = toDevice ? cuda->cuMemcpyHtoDAsync_v2(at, src, (size_t)bytes,
                                                       device->Stream)
                          : cuda->cuMemcpyDtoHAsync_v2(dst, at, (size_t)bytes,
                                                       device->Stream);
    if (r == CUDA_SUCCESS)
      r = cuda->cuStreamSynchronize(device->Stream);
    if (r != CUDA_SUCCESS)
      status = mlccCudaFailed(
          device, r, fn, toDevice ? "cuMemcpyHtoDAsync" : "cuMemcpyDtoHAsync");
  }
  mlccCudaLeave(device);
  return status;
}

static mlcc_status copyIn(mlcc_device *handle, mlcc_device_buffer *buffer,
                          uint64_t offset, const void *src, uint64_t bytes) {
  return copy(handle, buffer, offset, src, NULL, bytes, "mlcc_device_write");
}

static mlcc_status copyOut(mlcc_device *handle, mlcc_device_buffer *buffer,
                           uint64_t offset, void *dst, uint64_t bytes) {
  return copy(handle, buffer, offset, NULL, dst, bytes, "mlcc_device_read");
}

static mlcc_status waitIdle(mlcc_device *handle) {
  static const char fn[] = "mlcc_device_wait";
  mlccCudaDevice *device = (mlccCudaDevice *)handle;
  mlcc_status status = mlccCudaEnter(device, fn);
  if (status != MLCC_OK)
    return status;
  status = mlccCudaSubmitAndWait(device, fn);
  mlccCudaLeave(device);
  return status;
}

static mlcc_status setStream(mlcc_device *handle, void *stream) {
  static const char fn[] = "mlcc_device_set_stream";
  mlccCudaDevice *device = (mlccCudaDevice *)handle;
  mlcc_status status = mlccCudaEnter(device, fn);
  if (status != MLCC_OK)
    return status;
  // What was recorded (and zero-fills) run on the old stream first; graphs
  // stay valid (a graph is launched on whichever stream is current).
  status = mlccCudaSubmitAndWait(device, fn);
  if (status == MLCC_OK) {
    CUresult r = device->Cuda.cuStreamSynchronize(device->Stream);
    if (r != CUDA_SUCCESS)
      status = mlccCudaFailed(device, r, fn, "cuStreamSynchronize");
  }
  mlccCudaLeave(device);
  if (status == MLCC_OK)
    device->Stream = stream ? (CUstream)stream : device->OwnStream;
  return status;
}

//===-- The device's ops --------------------------------------------------===//

static void opClose(mlcc_device *d) { closeDevice((mlccCudaDevice *)d); }
static const char *opName(const mlcc_device *d) {
  return ((const mlccCudaDevice *)d)->Name;
}
// The compiler's buffer bases (lowering/Cuda): CUDA needs none, but a
// binding at a multiple of 256 is what the kernels were written for.
static uint64_t opOffsetAlignment(const mlcc_device *d) {
  (void)d;
  return 256;
}
static uint64_t opValidationMessages(const mlcc_device *d) {
  (void)d;
  return 0;
}
static mlcc_status opKernelCreate(mlcc_device *d,
                                  const mlcc_device_kernel_desc *desc,
                                  mlcc_device_kernel **out) {
  return mlccCudaKernelCreate((mlccCudaDevice *)d, desc,
                              (mlccCudaKernel **)out);
}
static void opKernelDestroy(mlcc_device *d, mlcc_device_kernel *kernel) {
  mlccCudaDevice *device = (mlccCudaDevice *)d;
  mlccCudaKernel *k = (mlccCudaKernel *)kernel;
  if (k->Device != device ||
      mlccCudaEnter(device, "mlcc_device_kernel_destroy") != MLCC_OK)
    return;
  mlccCudaSubmitAndWait(device, "mlcc_device_kernel_destroy");
  mlccCudaFreeQueue(device);
  mlccCudaKernelDestroy(device, k);
  mlccCudaLeave(device);
}
static mlcc_status opLaunch(mlcc_device *d, mlcc_device_kernel *kernel,
                            const uint32_t groups[3], const uint32_t *params,
                            uint32_t num_params,
                            const mlcc_device_binding *bindings,
                            uint32_t num_bindings) {
  return mlccCudaLaunch((mlccCudaDevice *)d, (mlccCudaKernel *)kernel, groups,
                        params, num_params, bindings, num_bindings);
}

static const mlccDeviceOps CudaOps = {
    .close = opClose,
    .name = opName,
    .offsetAlignment = opOffsetAlignment,
    .validationMessages = opValidationMessages,
    .bufferCreate = bufferCreate,
    .bufferDestroy = bufferDestroy,
    .kernelCreate = opKernelCreate,
    .kernelDestroy = opKernelDestroy,
    .launch = opLaunch,
    .write = copyIn,
    .read = copyOut,
    .wait = waitIdle,
    .setStream = setStream,
};

mlcc_status mlccCudaOpen(const char *selector, mlcc_device **out) {
  mlccCudaDevice *device = calloc(1, sizeof(*device));
  if (!device)
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "mlcc_device_open: cannot allocate the handle");
  device->Base.Ops = &CudaOps;
  mlcc_status status = mlccCudaLoadLibrary(&device->Cuda);
  if (status == MLCC_OK)
    status = openDevice(device, selector);
  if (status != MLCC_OK) {
    closeDevice(device);
    return status;
  }
  *out = &device->Base;
  return MLCC_OK;
}
