// Reads the kernels of a --target metal object the way the Metal device
// layer does (runtime/src/MetalKernelCode.c), here on Linux:
//   kernel_code_check CONST_SECTION MSL_FILE
// CONST_SECTION is the object's __TEXT,__const (llvm-objcopy
// --dump-section), MSL_FILE what --emit device-asm prints for the same
// model. Every kernel header in the section must read as valid, and each
// source must be exactly one kernel of MSL_FILE; then damaged copies of
// the first kernel (bad magic, cut short, source without its NUL) must be
// refused with MLCC_INVALID_ARGUMENT and a message.

#include "MetalKernelCode.h"
#include "mlcc/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *readFile(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  // 8-byte aligned, as the object's data is, and NUL-terminated.
  char *data = aligned_alloc(8, ((size_t)n + 8) / 8 * 8);
  if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  if (data)
    data[n] = 0;
  *size = (size_t)n;
  return data;
}

// Whether `source` is the text of one "// kernel NAME" section of `msl`.
static int isKernelOf(const char *msl, const char *source) {
  size_t n = strlen(source);
  for (const char *at = strstr(msl, "// kernel "); at;
       at = strstr(at + 1, "// kernel ")) {
    const char *text = strchr(at, '\n');
    if (!text)
      return 0;
    ++text;
    const char *next = strstr(text, "// kernel ");
    size_t length = next ? (size_t)(next - text) : strlen(text);
    if (length == n && memcmp(text, source, n) == 0)
      return 1;
  }
  return 0;
}

static int expectRefused(const char *what, const mlcc_device_kernel_desc *desc,
                         const char *message) {
  mlccMetalKernelParts parts;
  mlcc_status status = mlccMetalReadKernel(desc, &parts);
  if (status == MLCC_INVALID_ARGUMENT &&
      strstr(mlcc_last_error_message(), message))
    return 0;
  printf("FAIL: %s: status %d, message '%s'\n", what, (int)status,
         mlcc_last_error_message());
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: kernel_code_check CONST_SECTION MSL_FILE\n");
    return 2;
  }
  size_t sectionBytes = 0, mslBytes = 0;
  char *section = readFile(argv[1], &sectionBytes);
  char *msl = readFile(argv[2], &mslBytes);
  if (!section || !msl) {
    fprintf(stderr, "kernel_code_check: cannot read %s or %s\n", argv[1],
            argv[2]);
    return 2;
  }
  int kernels = 0, failures = 0, first = -1;
  for (size_t at = 0; at + 8 <= sectionBytes; at += 8) {
    if (memcmp(section + at, MLCC_METAL_KERNEL_MAGIC, 8) != 0)
      continue;
    mlcc_device_kernel_desc desc = {
        "kernel", section + at, sectionBytes - at, 0, {1, 1, 1}};
    mlccMetalKernelParts parts;
    if (mlccMetalReadKernel(&desc, &parts) != MLCC_OK) {
      printf("FAIL: the kernel at %zu: %s\n", at, mlcc_last_error_message());
      ++failures;
    } else if (!isKernelOf(msl, parts.source)) {
      printf("FAIL: the kernel at %zu is none of %s's\n", at, argv[2]);
      ++failures;
    } else if (parts.mslVersion != 20300) {
      printf("FAIL: the kernel at %zu says MSL %u\n", at, parts.mslVersion);
      ++failures;
    }
    if (first < 0)
      first = (int)at;
    ++kernels;
  }
  int expected = 0;
  for (const char *at = strstr(msl, "// kernel "); at;
       at = strstr(at + 1, "// kernel "))
    ++expected;
  if (kernels != expected || kernels == 0) {
    printf("FAIL: %d kernel headers in the object, %d kernels in %s\n", kernels,
           expected, argv[2]);
    return 1;
  }

  // The first kernel, damaged.
  mlcc_metal_kernel_header header;
  memcpy(&header, section + first, sizeof(header));
  size_t bytes = header.source_offset + header.source_bytes;
  char *copy = aligned_alloc(8, (bytes + 7) / 8 * 8);
  memcpy(copy, section + first, bytes);
  mlcc_device_kernel_desc desc = {"k", copy, bytes, 0, {1, 1, 1}};
  desc.code_bytes = sizeof(header) - 1;
  failures += expectRefused("short", &desc, "is no Metal kernel");
  desc.code_bytes = bytes - 1;
  failures += expectRefused("cut", &desc, "outside its");
  desc.code_bytes = bytes;
  copy[bytes - 1] = 'x';
  failures += expectRefused("no NUL", &desc, "outside its");
  copy[bytes - 1] = 0;
  copy[0] = 'X';
  failures += expectRefused("magic", &desc, "not a Metal kernel");
  free(copy);
  free(section);
  free(msl);
  if (failures)
    return 1;
  printf("kernel_code_check: %d kernels read as the device layer reads them, "
         "each the MSL --emit device-asm prints; damaged ones refused\n",
         kernels);
  return 0;
}
