//===- MetalKernelCode.c - The parts of a Metal kernel's code -------------===//

#include "MetalKernelCode.h"
#include "LastError.h"

#include <string.h>

mlcc_status mlccMetalReadKernel(const mlcc_device_kernel_desc *desc,
                                mlccMetalKernelParts *out) {
  static const char fn[] = "mlcc_device_kernel_create";
  mlcc_metal_kernel_header header;
  const uint8_t *code = desc->code;
  uint64_t size = desc->code_bytes;
  if (!code || size < sizeof(header))
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: kernel %s: %llu bytes is no Metal kernel",
                               fn, desc->name, (unsigned long long)size);
  memcpy(&header, code, sizeof(header));
  if (memcmp(header.magic, MLCC_METAL_KERNEL_MAGIC, sizeof(header.magic)))
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: kernel %s: not a Metal kernel (no %s "
                               "header)",
                               fn, desc->name, MLCC_METAL_KERNEL_MAGIC);
  int inside = header.source_offset <= size &&
               header.source_bytes <= size - header.source_offset &&
               header.metallib_offset <= size &&
               header.metallib_bytes <= size - header.metallib_offset;
  if (!inside || header.source_bytes == 0 ||
      code[header.source_offset + header.source_bytes - 1] != 0)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: kernel %s: its source or metallib lies "
                               "outside its %llu bytes",
                               fn, desc->name, (unsigned long long)size);
  out->source = (const char *)code + header.source_offset;
  out->metallib = header.metallib_bytes ? code + header.metallib_offset : NULL;
  out->metallibBytes = header.metallib_bytes;
  out->mslVersion = header.msl_version;
  return MLCC_OK;
}
