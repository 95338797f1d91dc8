//===- LastError.h - Recording what went wrong --------------------*- C -*-===//
//
// Not a public header. The runtime and generated model code record the
// message behind a failing status here; applications read it with
// mlcc_last_error_message(). The setter is exported from the shared library
// because generated code in a model object calls it; applications should not.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_RUNTIME_SRC_LASTERROR_H
#define MLCC_RUNTIME_SRC_LASTERROR_H

#include "mlcc/status.h"

#include <stdarg.h>

MLCC_EXTERN_C_BEGIN

#if defined(__GNUC__) || defined(__clang__)
#define MLCC_PRINTF_FORMAT(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define MLCC_PRINTF_FORMAT(fmt, args)
#endif

/// The longest message kept, terminator included; longer ones are cut.
#define MLCC_LAST_ERROR_CAPACITY 512

/// Formats a message (printf-style) into the calling thread's last-error
/// buffer and returns `status`, so a failing path reads
/// `return mlcc_last_error_set(MLCC_SHAPE_MISMATCH, "...", ...);`.
/// Generated code passes text it does not control through "%s".
MLCC_API mlcc_status mlcc_last_error_set(mlcc_status status, const char *format,
                                         ...) MLCC_PRINTF_FORMAT(2, 3);

/// The va_list form of mlcc_last_error_set.
MLCC_API mlcc_status mlcc_last_error_setv(mlcc_status status,
                                          const char *format, va_list args)
    MLCC_PRINTF_FORMAT(2, 0);

/// Empties the calling thread's message.
MLCC_API void mlcc_last_error_clear(void);

MLCC_EXTERN_C_END

#endif // MLCC_RUNTIME_SRC_LASTERROR_H
