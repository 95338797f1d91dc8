//===- status.h - Status codes and the last error message ---------*- C -*-===//
//
// Every runtime call that can fail returns an mlcc_status, and nothing in the
// runtime or in generated model code aborts on a caller's mistake. A failing
// call also records a sentence saying what went wrong (for example
// "input 'x': expected 4 dims, got 3") in a per-thread buffer that
// mlcc_last_error_message() returns.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_STATUS_H
#define MLCC_STATUS_H

#include "mlcc/api.h"

MLCC_EXTERN_C_BEGIN

/// Result of a runtime or model call. The values are part of the ABI: new
/// codes are only ever appended.
typedef enum mlcc_status {
  MLCC_OK = 0,
  /// A NULL pointer, a negative count, a misaligned buffer or another
  /// malformed argument.
  MLCC_INVALID_ARGUMENT = 1,
  /// An allocation failed.
  MLCC_OUT_OF_MEMORY = 2,
  /// A tensor's rank or dimensions differ from what the model accepts.
  MLCC_SHAPE_MISMATCH = 3,
  /// A tensor's element type differs from what the model accepts.
  MLCC_TYPE_MISMATCH = 4,
  /// A size or index outside the allowed range (a buffer too small, a size
  /// that overflows, an index past the end).
  MLCC_OUT_OF_RANGE = 5,
  /// The request is valid but this build or machine cannot serve it.
  MLCC_UNSUPPORTED = 6,
  /// A failure of the system (thread creation) or a bug in mlcc.
  MLCC_INTERNAL = 7,
  /// A device model found no device to run on: no GPU API loader or
  /// driver, or no device matching the selection.
  MLCC_NO_DEVICE = 8,
  /// The model was compiled for instructions this CPU lacks (`mlcc
  /// compile --cpu`); the message names them.
  MLCC_UNSUPPORTED_CPU = 9,
} mlcc_status;

/// A short, static, lower-case name of `status` ("shape mismatch"); unknown
/// values give "unknown status". Never NULL; thread-safe.
MLCC_API const char *mlcc_status_string(mlcc_status status);

/// The message recorded by the most recent failing mlcc call on the calling
/// thread, or "" when none has failed yet. Successful calls leave it as it is
/// (like errno), so read it only right after a call returned an error.
/// The string belongs to the runtime and stays valid until the next mlcc call
/// on the same thread. Each thread has its own message.
MLCC_API const char *mlcc_last_error_message(void);

MLCC_EXTERN_C_END

#endif // MLCC_STATUS_H
