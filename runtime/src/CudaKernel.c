//===- CudaKernel.c - A CUDA module from a kernel's bundle ----------------===//
//
// The compiler writes each kernel as a bundle (mlcc/device.h,
// mlcc_cuda_bundle_header) of cubins and PTX for the architectures it was
// compiled for. A cubin runs on its architecture and later minor versions
// of the same major one; PTX is compiled by the driver for any later
// architecture. So the device takes the newest matching cubin, else the
// newest PTX not above it; with neither, the model cannot run here, and
// the message names the device's architecture and the compiled ones.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"
#include "LastError.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mlcc_status badBundle(const mlcc_device_kernel_desc *desc,
                             const char *what) {
  return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                             "mlcc_device_kernel_create: kernel '%s': %s",
                             desc->name ? desc->name : "", what);
}

// The bundle's image table, checked against its size.
static mlcc_status readBundle(const mlcc_device_kernel_desc *desc,
                              const mlcc_cuda_image **images, uint32_t *count) {
  if (!desc->name || !desc->code)
    return badBundle(desc, "no name or no code");
  mlcc_cuda_bundle_header header;
  if (desc->code_bytes < sizeof(header))
    return badBundle(desc, "the code is not a CUDA bundle");
  memcpy(&header, desc->code, sizeof(header));
  if (memcmp(header.magic, MLCC_CUDA_BUNDLE_MAGIC, sizeof(header.magic)) != 0)
    return badBundle(desc, "the code is not a CUDA bundle (compiled for "
                           "another target?)");
  uint64_t tableEnd =
      sizeof(header) + (uint64_t)header.num_images * sizeof(mlcc_cuda_image);
  if (header.num_images == 0 || tableEnd > desc->code_bytes)
    return badBundle(desc, "the bundle's image table is cut short");
  *images =
      (const mlcc_cuda_image *)((const char *)desc->code + sizeof(header));
  for (uint32_t i = 0; i < header.num_images; ++i) {
    const mlcc_cuda_image *image = &(*images)[i];
    if (image->offset > desc->code_bytes ||
        image->bytes > desc->code_bytes - image->offset || image->bytes == 0)
      return badBundle(desc, "an image lies outside the bundle");
    if (image->kind == MLCC_CUDA_IMAGE_PTX &&
        ((const char *)desc->code)[image->offset + image->bytes - 1] != '\0')
      return badBundle(desc, "a PTX image has no terminating NUL");
  }
  *count = header.num_images;
  return MLCC_OK;
}

static const mlcc_cuda_image *pickImage(const mlcc_cuda_image *images,
                                        uint32_t count, int arch) {
  const mlcc_cuda_image *best = NULL;
  for (uint32_t i = 0; i < count; ++i) {
    const mlcc_cuda_image *c = &images[i];
    int a = (int)c->arch;
    bool fits = c->kind == MLCC_CUDA_IMAGE_CUBIN
                    ? a / 10 == arch / 10 && a <= arch
                    : c->kind == MLCC_CUDA_IMAGE_PTX && a <= arch;
    if (!fits)
      continue;
    // A cubin beats any PTX; among the same kind the newer wins.
    if (!best ||
        (c->kind == MLCC_CUDA_IMAGE_CUBIN &&
         best->kind != MLCC_CUDA_IMAGE_CUBIN) ||
        (c->kind == best->kind && a > (int)best->arch))
      best = c;
  }
  return best;
}

static mlcc_status noImage(const mlccCudaDevice *device,
                           const mlcc_device_kernel_desc *desc,
                           const mlcc_cuda_image *images, uint32_t count) {
  char compiled[256] = "";
  size_t used = 0;
  for (uint32_t i = 0; i < count && used < sizeof(compiled); ++i) {
    bool listed = false;
    for (uint32_t j = 0; j < i; ++j)
      listed |= images[j].arch == images[i].arch;
    if (!listed)
      used +=
          (size_t)snprintf(compiled + used, sizeof(compiled) - used, "%ssm_%u",
                           used ? ", " : "", (unsigned)images[i].arch);
  }
  return mlcc_last_error_set(MLCC_NO_DEVICE,
                             "mlcc_device_kernel_create: the CUDA device "
                             "'%s' is sm_%d, and kernel '%s' was compiled "
                             "for %s only (mlcc compile --gpu-arch sm_%d)",
                             device->Name, device->Arch, desc->name, compiled,
                             device->Arch);
}

// Loads `image`; a JIT failure carries the driver's log.
static mlcc_status loadModule(mlccCudaDevice *device,
                              const mlcc_device_kernel_desc *desc,
                              const mlcc_cuda_image *image,
                              mlccCudaKernel *kernel, const char *fn) {
  char log[1024] = "";
  int options[2] = {CU_JIT_ERROR_LOG_BUFFER,
                    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[2] = {log, (void *)(uintptr_t)sizeof(log)};
  CUresult r = device->Cuda.cuModuleLoadDataEx(
      &kernel->Module, (const char *)desc->code + image->offset, 2, options,
      values);
  if (r != CUDA_SUCCESS) {
    kernel->Module = NULL;
    mlcc_status failed = mlccCudaFailed(device, r, fn, "cuModuleLoadDataEx");
    return mlcc_last_error_set(
        failed, "%s (kernel '%s', %s for sm_%u)%s%s", mlcc_last_error_message(),
        desc->name, image->kind == MLCC_CUDA_IMAGE_PTX ? "PTX" : "cubin",
        (unsigned)image->arch, log[0] ? ": " : "", log);
  }
  r = device->Cuda.cuModuleGetFunction(&kernel->Function, kernel->Module,
                                       desc->name);
  if (r != CUDA_SUCCESS)
    return mlccCudaFailed(device, r, fn, "cuModuleGetFunction");
  return MLCC_OK;
}

mlcc_status mlccCudaKernelCreate(mlccCudaDevice *device,
                                 const mlcc_device_kernel_desc *desc,
                                 mlccCudaKernel **out) {
  static const char fn[] = "mlcc_device_kernel_create";
  const mlcc_cuda_image *images = NULL;
  uint32_t count = 0;
  mlcc_status status = readBundle(desc, &images, &count);
  if (status != MLCC_OK)
    return status;
  uint64_t threads = (uint64_t)desc->workgroup_size[0] *
                     desc->workgroup_size[1] * desc->workgroup_size[2];
  if (threads == 0 || threads > 1024)
    return badBundle(desc, "its block size is not 1 to 1024 threads");
  const mlcc_cuda_image *image = pickImage(images, count, device->Arch);
  if (!image)
    return noImage(device, desc, images, count);

  mlccCudaKernel *kernel = calloc(1, sizeof(*kernel));
  size_t nameBytes = strlen(desc->name) + 1;
  char *name = malloc(nameBytes);
  if (!kernel || !name) {
    free(kernel);
    free(name);
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "%s: cannot allocate the kernel handle", fn);
  }
  memcpy(name, desc->name, nameBytes);
  kernel->Device = device;
  kernel->Name = name;
  kernel->NumBuffers = desc->num_buffers;
  memcpy(kernel->Block, desc->workgroup_size, sizeof(kernel->Block));
  kernel->Next = device->Kernels;
  if (device->Kernels)
    device->Kernels->Prev = kernel;
  device->Kernels = kernel;
  if ((status = mlccCudaEnter(device, fn)) == MLCC_OK) {
    status = loadModule(device, desc, image, kernel, fn);
    mlccCudaLeave(device);
  }
  if (status != MLCC_OK) {
    mlccCudaKernelDestroy(device, kernel);
    return status;
  }
  *out = kernel;
  return MLCC_OK;
}

void mlccCudaKernelDestroy(mlccCudaDevice *device, mlccCudaKernel *kernel) {
  if (kernel->Module)
    device->Cuda.cuModuleUnload(kernel->Module);
  if (kernel->Prev)
    kernel->Prev->Next = kernel->Next;
  else
    device->Kernels = kernel->Next;
  if (kernel->Next)
    kernel->Next->Prev = kernel->Prev;
  free(kernel->Name);
  free(kernel);
}
