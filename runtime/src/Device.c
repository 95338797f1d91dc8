//===- Device.c - mlcc/device.h over the APIs' implementations ------------===//
//
// Opening picks the API's implementation; every other call goes to the
// device's ops (DeviceLayer.h) after the checks every API shares.
//
//===----------------------------------------------------------------------===//

#include "DeviceLayer.h"
#include "LastError.h"

#include <ctype.h>
#include <stddef.h>
#include <string.h>

mlcc_status mlcc_device_open(mlcc_device_api api, const char *selector,
                             mlcc_device **out) {
  if (!out)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "mlcc_device_open: out is NULL");
  *out = NULL;
  switch (api) {
  case MLCC_DEVICE_API_VULKAN:
    return mlccVkOpen(selector, out);
  case MLCC_DEVICE_API_CUDA:
    return mlccCudaOpen(selector, out);
  case MLCC_DEVICE_API_METAL:
#ifdef MLCC_HAVE_METAL
    return mlccMetalOpen(selector, out);
#else
    return mlcc_last_error_set(MLCC_NO_DEVICE,
                               "mlcc_device_open: Metal runs on Apple "
                               "platforms only; this runtime was built "
                               "without it");
#endif
  }
  return mlcc_last_error_set(MLCC_UNSUPPORTED,
                             "mlcc_device_open: device API %d is not one "
                             "this runtime supports (Vulkan is %d, CUDA %d, "
                             "Metal %d)",
                             (int)api, (int)MLCC_DEVICE_API_VULKAN,
                             (int)MLCC_DEVICE_API_CUDA,
                             (int)MLCC_DEVICE_API_METAL);
}

int mlccContainsIgnoringCase(const char *haystack, const char *needle) {
  size_t n = strlen(needle);
  for (; *haystack; ++haystack) {
    size_t i = 0;
    while (i < n && haystack[i] &&
           tolower((unsigned char)haystack[i]) ==
               tolower((unsigned char)needle[i]))
      ++i;
    if (i == n)
      return 1;
  }
  return n == 0;
}

void mlcc_device_close(mlcc_device *device) {
  if (device)
    device->Ops->close(device);
}

const char *mlcc_device_name(const mlcc_device *device) {
  return device ? device->Ops->name(device) : "";
}

uint64_t mlcc_device_offset_alignment(const mlcc_device *device) {
  return device ? device->Ops->offsetAlignment(device) : 0;
}

uint64_t mlcc_device_validation_messages(const mlcc_device *device) {
  return device ? device->Ops->validationMessages(device) : 0;
}

static mlcc_status nullArgument(const char *fn, const char *what) {
  return mlcc_last_error_set(MLCC_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
}

mlcc_status mlcc_device_buffer_create(mlcc_device *device, uint64_t bytes,
                                      mlcc_device_buffer **out) {
  static const char fn[] = "mlcc_device_buffer_create";
  if (!out)
    return nullArgument(fn, "out");
  *out = NULL;
  if (!device)
    return nullArgument(fn, "device");
  if (bytes == 0)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT, "%s: a buffer of 0 bytes",
                               fn);
  return device->Ops->bufferCreate(device, bytes, out);
}

void mlcc_device_buffer_destroy(mlcc_device *device,
                                mlcc_device_buffer *buffer) {
  if (device && buffer)
    device->Ops->bufferDestroy(device, buffer);
}

mlcc_status mlcc_device_kernel_create(mlcc_device *device,
                                      const mlcc_device_kernel_desc *desc,
                                      mlcc_device_kernel **out) {
  static const char fn[] = "mlcc_device_kernel_create";
  if (!out)
    return nullArgument(fn, "out");
  *out = NULL;
  if (!device || !desc)
    return nullArgument(fn, device ? "desc" : "device");
  return device->Ops->kernelCreate(device, desc, out);
}

void mlcc_device_kernel_destroy(mlcc_device *device,
                                mlcc_device_kernel *kernel) {
  if (device && kernel)
    device->Ops->kernelDestroy(device, kernel);
}

mlcc_status mlcc_device_launch(mlcc_device *device, mlcc_device_kernel *kernel,
                               const uint32_t groups[3], const uint32_t *params,
                               uint32_t num_params,
                               const mlcc_device_binding *bindings,
                               uint32_t num_bindings) {
  if (!device || !kernel)
    return nullArgument("mlcc_device_launch", device ? "kernel" : "device");
  return device->Ops->launch(device, kernel, groups, params, num_params,
                             bindings, num_bindings);
}

mlcc_status mlcc_device_write(mlcc_device *device, mlcc_device_buffer *buffer,
                              uint64_t offset, const void *src,
                              uint64_t bytes) {
  if (!device)
    return nullArgument("mlcc_device_write", "device");
  return device->Ops->write(device, buffer, offset, src, bytes);
}

mlcc_status mlcc_device_read(mlcc_device *device, mlcc_device_buffer *buffer,
                             uint64_t offset, void *dst, uint64_t bytes) {
  if (!device)
    return nullArgument("mlcc_device_read", "device");
  return device->Ops->read(device, buffer, offset, dst, bytes);
}

mlcc_status mlcc_device_wait(mlcc_device *device) {
  if (!device)
    return nullArgument("mlcc_device_wait", "device");
  return device->Ops->wait(device);
}

mlcc_status mlcc_device_set_stream(mlcc_device *device, void *stream) {
  static const char fn[] = "mlcc_device_set_stream";
  if (!device)
    return nullArgument(fn, "device");
  if (!device->Ops->setStream)
    return mlcc_last_error_set(MLCC_UNSUPPORTED,
                               "%s: the device '%s' has no streams (only "
                               "CUDA devices do)",
                               fn, device->Ops->name(device));
  return device->Ops->setStream(device, stream);
}
