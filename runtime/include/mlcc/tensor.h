//===- tensor.h - Tensor descriptors and their checks -------------*- C -*-===//
//
// How an application hands a tensor to a model whose shape is known only at
// run time: a dense, row-major buffer with its element type and dims. Generated
// code checks each one against what the model accepts before touching data,
// so a wrong shape is a status and a message, never a crash.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_TENSOR_H
#define MLCC_TENSOR_H

#include "mlcc/status.h"

#include <stddef.h>
#include <stdint.h>

MLCC_EXTERN_C_BEGIN

/// Element types. The values are part of the ABI (and follow the order of the
/// compiler's mlcc::ref::DType); new ones are only appended.
typedef enum mlcc_dtype {
  MLCC_DTYPE_UNDEFINED = 0,
  MLCC_DTYPE_F32 = 1,
  MLCC_DTYPE_F64 = 2,
  MLCC_DTYPE_F16 = 3,
  MLCC_DTYPE_BF16 = 4,
  MLCC_DTYPE_I8 = 5,
  MLCC_DTYPE_U8 = 6,
  MLCC_DTYPE_I16 = 7,
  MLCC_DTYPE_U16 = 8,
  MLCC_DTYPE_I32 = 9,
  MLCC_DTYPE_U32 = 10,
  MLCC_DTYPE_I64 = 11,
  MLCC_DTYPE_U64 = 12,
  MLCC_DTYPE_BOOL = 13, ///< one byte per element, 0 or 1
} mlcc_dtype;

/// A tensor descriptor. It owns nothing: data and dims belong to whoever
/// filled it in and must outlive the call it is passed to. Nothing in the
/// runtime or a model writes through the pointers of an input.
/// The layout is fixed (generated code reads it by offset): 24 bytes on
/// 64-bit targets.
typedef struct mlcc_tensor {
  void *data;    ///< dense row-major elements; NULL only if there are none
  int64_t *dims; ///< rank extents, each >= 0; NULL only when rank is 0
  int32_t rank;  ///< number of dims; 0 is a scalar
  mlcc_dtype dtype;
} mlcc_tensor;

/// Bytes per element of `dtype`; 0 for MLCC_DTYPE_UNDEFINED or an unknown
/// value.
MLCC_API size_t mlcc_dtype_size(mlcc_dtype dtype);

/// The short name of `dtype` ("f32", "bool"); "undefined" for unknown
/// values. Static storage, never NULL.
MLCC_API const char *mlcc_dtype_string(mlcc_dtype dtype);

/// Checks `t` against what a model accepts: element type `dtype`, `rank`
/// dims and, when `expected_dims` is not NULL, expected_dims[i] for each dim
/// i whose expected value is not negative (-1 means any extent). Also checks
/// that the dims are not negative, that the byte size fits in size_t and
/// that data is not NULL when there are elements.
/// `name` labels the message, e.g. "input 'x'" gives
/// "input 'x': expected 4 dims, got 3"; NULL labels it "tensor".
/// Returns MLCC_INVALID_ARGUMENT (NULL tensor, dims or data, a negative
/// dim), MLCC_TYPE_MISMATCH, MLCC_SHAPE_MISMATCH or MLCC_OUT_OF_RANGE (size
/// overflow), and records the message.
MLCC_API mlcc_status mlcc_tensor_check(const mlcc_tensor *t, mlcc_dtype dtype,
                                       int32_t rank,
                                       const int64_t *expected_dims,
                                       const char *name);

/// The number of elements of `t` (1 for a scalar) in *out_count.
/// MLCC_INVALID_ARGUMENT for a malformed descriptor, MLCC_OUT_OF_RANGE when
/// the count overflows int64_t.
MLCC_API mlcc_status mlcc_tensor_num_elements(const mlcc_tensor *t,
                                              int64_t *out_count);

/// The size of `t`'s data in bytes in *out_size. Errors as for
/// mlcc_tensor_num_elements, and MLCC_INVALID_ARGUMENT for an unknown dtype.
MLCC_API mlcc_status mlcc_tensor_byte_size(const mlcc_tensor *t,
                                           size_t *out_size);

MLCC_EXTERN_C_END

#endif // MLCC_TENSOR_H
