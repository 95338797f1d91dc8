//===- api.h - Linkage macros of the mlcc runtime C API -----------*- C -*-===//
//
// Every public header includes this one. The runtime is built with
// -fvisibility=hidden, so only what is marked MLCC_API leaves the shared
// library; the declarations stay plain C for both C and C++ callers.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_API_H
#define MLCC_API_H

#if defined(__GNUC__) || defined(__clang__)
#define MLCC_API __attribute__((visibility("default")))
#else
#define MLCC_API
#endif

#ifdef __cplusplus
#define MLCC_EXTERN_C_BEGIN extern "C" {
#define MLCC_EXTERN_C_END }
#else
#define MLCC_EXTERN_C_BEGIN
#define MLCC_EXTERN_C_END
#endif

#endif // MLCC_API_H
