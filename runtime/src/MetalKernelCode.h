//===- MetalKernelCode.h - The parts of a Metal kernel's code -----*- C -*-===//
//
// Not a public header. Reads mlcc_device_kernel_desc::code as the metal
// target writes it (mlcc/device.h, mlcc_metal_kernel_header): plain C, so
// that the tests check it on Linux against the compiler's objects, and the
// Metal device layer (runtime/metal) uses the same checks on a Mac.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_RUNTIME_SRC_METALKERNELCODE_H
#define MLCC_RUNTIME_SRC_METALKERNELCODE_H

#include "mlcc/device.h"

typedef struct mlccMetalKernelParts {
  const char *source;      ///< the MSL, NUL-terminated
  const uint8_t *metallib; ///< NULL when the compiler made none
  uint64_t metallibBytes;
  uint32_t mslVersion; ///< 20300 for MSL 2.3
} mlccMetalKernelParts;

/// The parts of `desc`'s code, each checked to lie inside its code_bytes
/// (the source ending in its NUL); MLCC_INVALID_ARGUMENT with a message
/// naming the kernel otherwise.
mlcc_status mlccMetalReadKernel(const mlcc_device_kernel_desc *desc,
                                mlccMetalKernelParts *out);

#endif // MLCC_RUNTIME_SRC_METALKERNELCODE_H
