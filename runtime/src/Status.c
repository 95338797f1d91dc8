//===- Status.c - Status names and the per-thread last error --------------===//

#include "LastError.h"

#include <stdio.h>
#include <string.h>

const char *mlcc_status_string(mlcc_status status) {
  switch (status) {
  case MLCC_OK:
    return "ok";
  case MLCC_INVALID_ARGUMENT:
    return "invalid argument";
  case MLCC_OUT_OF_MEMORY:
    return "out of memory";
  case MLCC_SHAPE_MISMATCH:
    return "shape mismatch";
  case MLCC_TYPE_MISMATCH:
    return "type mismatch";
  case MLCC_OUT_OF_RANGE:
    return "out of range";
  case MLCC_UNSUPPORTED:
    return "unsupported";
  case MLCC_INTERNAL:
    return "internal error";
  case MLCC_NO_DEVICE:
    return "no device";
  case MLCC_UNSUPPORTED_CPU:
    return "unsupported cpu";
  }
  // Callers may pass any int (a newer model, a cast): not a bug to trap on.
  return "unknown status";
}

// One buffer per thread: threads running different models must not see each
// other's failures, and a fixed buffer can always be written (no allocation
// on the error path, which may itself be an out-of-memory report).
static _Thread_local char LastError[MLCC_LAST_ERROR_CAPACITY];

const char *mlcc_last_error_message(void) { return LastError; }

mlcc_status mlcc_last_error_setv(mlcc_status status, const char *format,
                                 va_list args) {
  if (!format)
    format = "(no message)";
  // Through a copy: the arguments may include the current message, as in
  // "while running node 'conv1': %s".
  char message[MLCC_LAST_ERROR_CAPACITY];
  if (vsnprintf(message, sizeof(message), format, args) < 0)
    message[0] = '\0';
  memcpy(LastError, message, sizeof(message));
  return status;
}

mlcc_status mlcc_last_error_set(mlcc_status status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  mlcc_last_error_setv(status, format, args);
  va_end(args);
  return status;
}

void mlcc_last_error_clear(void) { LastError[0] = '\0'; }
