//===- runtime.h - The mlcc runtime C API, all of it --------------*- C -*-===//
//
// What an application (and every generated model header) includes. The
// runtime is a small C11 library: status codes with messages, a thread pool
// for parallel loops, aligned arenas, tensor descriptors and the checked
// entry points that generated model code forwards to (model.h).
//
// Conventions: opaque types, functions named mlcc_<noun>_<verb>, an
// mlcc_status result, out parameters last. Each declaration says who owns
// what and whether it may be called from several threads.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_RUNTIME_H
#define MLCC_RUNTIME_H

#include "mlcc/arena.h"
#include "mlcc/cpu.h"
#include "mlcc/model.h"
#include "mlcc/status.h"
#include "mlcc/tensor.h"
#include "mlcc/threadpool.h"

#endif // MLCC_RUNTIME_H
