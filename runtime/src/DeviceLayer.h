//===- DeviceLayer.h - What each device API implements ------------*- C -*-===//
//
// Not a public header. mlcc/device.h's functions check their arguments
// (Device.c) and call the opened device's implementation through its ops:
// Vulkan (Vulkan*.c), CUDA (Cuda*.c) and Metal (runtime/metal, Apple only).
// Each API's device handle begins with a struct mlcc_device, and its buffers
// and kernels are its own types behind the public handles: a device only ever
// sees its own.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_RUNTIME_SRC_DEVICELAYER_H
#define MLCC_RUNTIME_SRC_DEVICELAYER_H

#include "mlcc/device.h"

typedef struct mlccDeviceOps {
  void (*close)(mlcc_device *device);
  const char *(*name)(const mlcc_device *device);
  uint64_t (*offsetAlignment)(const mlcc_device *device);
  uint64_t (*validationMessages)(const mlcc_device *device);
  mlcc_status (*bufferCreate)(mlcc_device *device, uint64_t bytes,
                              mlcc_device_buffer **out);
  void (*bufferDestroy)(mlcc_device *device, mlcc_device_buffer *buffer);
  mlcc_status (*kernelCreate)(mlcc_device *device,
                              const mlcc_device_kernel_desc *desc,
                              mlcc_device_kernel **out);
  void (*kernelDestroy)(mlcc_device *device, mlcc_device_kernel *kernel);
  mlcc_status (*launch)(mlcc_device *device, mlcc_device_kernel *kernel,
                        const uint32_t groups[3], const uint32_t *params,
                        uint32_t num_params,
                        const mlcc_device_binding *bindings,
                        uint32_t num_bindings);
  mlcc_status (*write)(mlcc_device *device, mlcc_device_buffer *buffer,
                       uint64_t offset, const void *src, uint64_t bytes);
  mlcc_status (*read)(mlcc_device *device, mlcc_device_buffer *buffer,
                      uint64_t offset, void *dst, uint64_t bytes);
  mlcc_status (*wait)(mlcc_device *device);
  /// Runs later work on `stream` (CUDA: a CUstream); NULL where the API
  /// has no such thing.
  mlcc_status (*setStream)(mlcc_device *device, void *stream);
} mlccDeviceOps;

struct mlcc_device {
  const mlccDeviceOps *Ops;
};

/// Opens a device of each API (mlcc_device_open's contract for it; `out`
/// is not NULL). Metal's exists only in a runtime built for Apple.
mlcc_status mlccVkOpen(const char *selector, mlcc_device **out);
mlcc_status mlccCudaOpen(const char *selector, mlcc_device **out);
mlcc_status mlccMetalOpen(const char *selector, mlcc_device **out);

/// Whether `needle` occurs in `haystack`, ignoring ASCII case: how a
/// selector names a device.
int mlccContainsIgnoringCase(const char *haystack, const char *needle);

#endif // MLCC_RUNTIME_SRC_DEVICELAYER_H
