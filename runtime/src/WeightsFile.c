//===- WeightsFile.c - Reading a model's external weights -----------------===//

#include "WeightsFile.h"

#include "LastError.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

// The header is written by the compiler on x86-64: little-endian, and this
// struct's layout is the file's.
_Static_assert(sizeof(mlcc_weights_header) == 64,
               "the weights file header is 64 bytes");

enum { HeaderBytes = 64 };

// The header's fields against the descriptor; `size` is the whole image's.
static mlcc_status checkHeader(const char *fn, const char *what,
                               const mlcc_model_desc *desc,
                               const mlcc_weights_header *header,
                               unsigned long long size) {
  if (memcmp(header->magic, MLCC_WEIGHTS_MAGIC, sizeof(header->magic)) != 0 ||
      header->header_bytes != HeaderBytes)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: %s is not an mlcc weights file", fn, what);
  char owner[sizeof(header->model_name) + 1];
  memcpy(owner, header->model_name, sizeof(header->model_name));
  owner[sizeof(header->model_name)] = '\0';
  if (header->data_bytes != desc->weights_bytes ||
      header->fingerprint != desc->weights_fingerprint) {
    if (strncmp(owner, desc->name, sizeof(header->model_name)) != 0)
      return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                                 "%s: %s was made for model '%s', not '%s'",
                                 fn, what, owner, desc->name);
    return mlcc_last_error_set(
        MLCC_INVALID_ARGUMENT,
        "%s: %s comes from another compile of model '%s' (%llu data bytes, "
        "fingerprint %016llx; this object expects %llu, %016llx): use the "
        "file written with this object",
        fn, what, owner, (unsigned long long)header->data_bytes,
        (unsigned long long)header->fingerprint,
        (unsigned long long)desc->weights_bytes,
        (unsigned long long)desc->weights_fingerprint);
  }
  if (size - HeaderBytes != header->data_bytes)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: %s has %llu data bytes, its header says "
                               "%llu (truncated?)",
                               fn, what, size - HeaderBytes,
                               (unsigned long long)header->data_bytes);
  return MLCC_OK;
}

mlcc_status mlccWeightsCheckImage(const char *fn, const char *what,
                                  const mlcc_model_desc *desc,
                                  const void *image, size_t size) {
  if (size < HeaderBytes)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: %s has %zu bytes, less than its 64-byte "
                               "header",
                               fn, what, size);
  mlcc_weights_header header;
  memcpy(&header, image, sizeof(header));
  return checkHeader(fn, what, desc, &header, size);
}

// The size of an open file, or -1.
static long long fileSize(FILE *file) {
  if (fseek(file, 0, SEEK_END) != 0)
    return -1;
  long size = ftell(file);
  if (size < 0 || fseek(file, 0, SEEK_SET) != 0)
    return -1;
  return size;
}

mlcc_status mlccWeightsReadFile(const char *fn, const mlcc_model_desc *desc,
                                const char *path, mlcc_arena **out) {
  *out = NULL;
  char what[256];
  snprintf(what, sizeof(what), "weights file '%s'", path);
  FILE *file = fopen(path, "rb");
  if (!file)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT, "%s: cannot open %s: %s",
                               fn, what, strerror(errno));
  long long size = fileSize(file);
  mlcc_weights_header header;
  mlcc_status status = MLCC_OK;
  if (size < 0 || (unsigned long long)size > SIZE_MAX)
    status = mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                                 "%s: cannot tell the size of %s", fn, what);
  else if (size < HeaderBytes ||
           fread(&header, 1, HeaderBytes, file) != HeaderBytes)
    status = mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                                 "%s: %s is shorter than its 64-byte header",
                                 fn, what);
  else
    // The header first, so a wrong file fails before a large allocation.
    status = checkHeader(fn, what, desc, &header, (unsigned long long)size);
  mlcc_arena *buffer = NULL;
  if (status == MLCC_OK)
    status = mlcc_arena_create((size_t)size, &buffer);
  if (status == MLCC_OK) {
    memcpy(mlcc_arena_data(buffer), &header, HeaderBytes);
    size_t dataBytes = (size_t)size - HeaderBytes;
    if (fread((char *)mlcc_arena_data(buffer) + HeaderBytes, 1, dataBytes,
              file) != dataBytes) {
      status = mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                                   "%s: cannot read %s", fn, what);
      mlcc_arena_destroy(buffer);
      buffer = NULL;
    }
  }
  fclose(file);
  *out = buffer;
  return status;
}
