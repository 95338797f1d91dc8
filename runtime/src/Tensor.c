//===- Tensor.c - Tensor descriptors and their checks ---------------------===//

#include "mlcc/tensor.h"
#include "LastError.h"

#include <stdio.h>

size_t mlcc_dtype_size(mlcc_dtype dtype) {
  switch (dtype) {
  case MLCC_DTYPE_F64:
  case MLCC_DTYPE_I64:
  case MLCC_DTYPE_U64:
    return 8;
  case MLCC_DTYPE_F32:
  case MLCC_DTYPE_I32:
  case MLCC_DTYPE_U32:
    return 4;
  case MLCC_DTYPE_F16:
  case MLCC_DTYPE_BF16:
  case MLCC_DTYPE_I16:
  case MLCC_DTYPE_U16:
    return 2;
  case MLCC_DTYPE_I8:
  case MLCC_DTYPE_U8:
  case MLCC_DTYPE_BOOL:
    return 1;
  case MLCC_DTYPE_UNDEFINED:
    return 0;
  }
  return 0;
}

const char *mlcc_dtype_string(mlcc_dtype dtype) {
  switch (dtype) {
  case MLCC_DTYPE_F32:
    return "f32";
  case MLCC_DTYPE_F64:
    return "f64";
  case MLCC_DTYPE_F16:
    return "f16";
  case MLCC_DTYPE_BF16:
    return "bf16";
  case MLCC_DTYPE_I8:
    return "i8";
  case MLCC_DTYPE_U8:
    return "u8";
  case MLCC_DTYPE_I16:
    return "i16";
  case MLCC_DTYPE_U16:
    return "u16";
  case MLCC_DTYPE_I32:
    return "i32";
  case MLCC_DTYPE_U32:
    return "u32";
  case MLCC_DTYPE_I64:
    return "i64";
  case MLCC_DTYPE_U64:
    return "u64";
  case MLCC_DTYPE_BOOL:
    return "bool";
  case MLCC_DTYPE_UNDEFINED:
    break;
  }
  return "undefined";
}

// Writes "[1, 3, ?, 224]" (negative extents as "?") into buf, cut short with
// "..." when it does not fit: the message buffer is finite anyway.
static const char *formatShape(char *buf, size_t capacity, int32_t rank,
                               const int64_t *dims) {
  size_t used = 0;
  buf[0] = '\0';
  for (int32_t i = 0; i <= rank; ++i) {
    const char *sep = i == 0 ? "[" : ", ";
    int written;
    if (i == rank)
      written = snprintf(buf + used, capacity - used, "]");
    else if (dims[i] < 0)
      written = snprintf(buf + used, capacity - used, "%s?", sep);
    else
      written = snprintf(buf + used, capacity - used, "%s%lld", sep,
                         (long long)dims[i]);
    if (written < 0 || (size_t)written >= capacity - used) {
      snprintf(buf + (capacity > 4 ? capacity - 4 : 0), 4, "...");
      break;
    }
    used += (size_t)written;
  }
  return buf;
}

// Element and byte counts, without a message: false when one overflows.
static int countBytes(int32_t rank, const int64_t *dims, size_t elementSize,
                      int64_t *outCount, size_t *outBytes) {
  uint64_t count = 1;
  for (int32_t i = 0; i < rank; ++i) {
    uint64_t dim = (uint64_t)dims[i];
    if (dim != 0 && count > (uint64_t)INT64_MAX / dim)
      return 0;
    count *= dim;
  }
  if (elementSize != 0 && count > SIZE_MAX / elementSize)
    return 0;
  *outCount = (int64_t)count;
  *outBytes = (size_t)count * elementSize;
  return 1;
}

// The checks shared by the three tensor functions: a descriptor whose dims
// can be read and are not negative.
static mlcc_status checkDescriptor(const mlcc_tensor *t, const char *name) {
  if (!t)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: tensor descriptor is NULL", name);
  if (t->rank < 0)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: rank is negative (%d)", name, (int)t->rank);
  if (t->rank > 0 && !t->dims)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: dims is NULL for rank %d", name,
                               (int)t->rank);
  for (int32_t i = 0; i < t->rank; ++i)
    if (t->dims[i] < 0)
      return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                                 "%s: dim %d is negative (%lld)", name, (int)i,
                                 (long long)t->dims[i]);
  return MLCC_OK;
}

mlcc_status mlcc_tensor_check(const mlcc_tensor *t, mlcc_dtype dtype,
                              int32_t rank, const int64_t *expected_dims,
                              const char *name) {
  if (!name)
    name = "tensor";
  if (!t)
    return checkDescriptor(t, name);
  if (t->dtype != dtype)
    return mlcc_last_error_set(
        MLCC_TYPE_MISMATCH, "%s: expected %s elements, got %s", name,
        mlcc_dtype_string(dtype), mlcc_dtype_string(t->dtype));
  if (t->rank != rank)
    return mlcc_last_error_set(MLCC_SHAPE_MISMATCH,
                               "%s: expected %d dims, got %d", name, (int)rank,
                               (int)t->rank);
  mlcc_status status = checkDescriptor(t, name);
  if (status != MLCC_OK)
    return status;

  for (int32_t i = 0; expected_dims && i < rank; ++i) {
    if (expected_dims[i] < 0 || expected_dims[i] == t->dims[i])
      continue;
    char got[160], expected[160];
    return mlcc_last_error_set(
        MLCC_SHAPE_MISMATCH,
        "%s: dim %d is %lld, expected %lld (shape %s, expected %s)", name,
        (int)i, (long long)t->dims[i], (long long)expected_dims[i],
        formatShape(got, sizeof(got), rank, t->dims),
        formatShape(expected, sizeof(expected), rank, expected_dims));
  }

  int64_t count;
  size_t bytes;
  if (!countBytes(rank, t->dims, mlcc_dtype_size(dtype), &count, &bytes)) {
    char shape[160];
    return mlcc_last_error_set(
        MLCC_OUT_OF_RANGE,
        "%s: the byte size of a %s tensor of shape %s overflows", name,
        mlcc_dtype_string(dtype),
        formatShape(shape, sizeof(shape), rank, t->dims));
  }
  if (!t->data && count > 0)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: data is NULL for %lld elements", name,
                               (long long)count);
  return MLCC_OK;
}

mlcc_status mlcc_tensor_num_elements(const mlcc_tensor *t, int64_t *out_count) {
  if (!out_count)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "mlcc_tensor_num_elements: out_count is NULL");
  mlcc_status status = checkDescriptor(t, "mlcc_tensor_num_elements");
  if (status != MLCC_OK)
    return status;
  size_t bytes;
  if (!countBytes(t->rank, t->dims, 0, out_count, &bytes))
    return mlcc_last_error_set(MLCC_OUT_OF_RANGE,
                               "mlcc_tensor_num_elements: the count overflows");
  return MLCC_OK;
}

mlcc_status mlcc_tensor_byte_size(const mlcc_tensor *t, size_t *out_size) {
  if (!out_size)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "mlcc_tensor_byte_size: out_size is NULL");
  mlcc_status status = checkDescriptor(t, "mlcc_tensor_byte_size");
  if (status != MLCC_OK)
    return status;
  size_t elementSize = mlcc_dtype_size(t->dtype);
  if (elementSize == 0)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "mlcc_tensor_byte_size: unknown dtype %d",
                               (int)t->dtype);
  int64_t count;
  if (!countBytes(t->rank, t->dims, elementSize, &count, out_size))
    return mlcc_last_error_set(MLCC_OUT_OF_RANGE,
                               "mlcc_tensor_byte_size: the size overflows");
  return MLCC_OK;
}
