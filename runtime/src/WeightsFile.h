//===- WeightsFile.h - Reading a model's external weights -------*- C -*-===//
//
// A model compiled with `--weights external` keeps its weights in a file
// (mlcc_weights_header, then the data). These check such a file, or its
// image in memory, against the model's descriptor, so a file of another
// model or of an older compile is refused with a message, never run.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_RUNTIME_WEIGHTSFILE_H
#define MLCC_RUNTIME_WEIGHTSFILE_H

#include "mlcc/arena.h"
#include "mlcc/model.h"

#include <stddef.h>

/// Checks `image` (header then data, `size` bytes) against `desc`; `fn` and
/// `what` ("weights file 'w.bin'") start every message.
mlcc_status mlccWeightsCheckImage(const char *fn, const char *what,
                                  const mlcc_model_desc *desc,
                                  const void *image, size_t size);

/// Reads the file at `path` into a new 64-byte aligned buffer (*out) and
/// checks it like mlccWeightsCheckImage. *out is NULL on failure.
mlcc_status mlccWeightsReadFile(const char *fn, const mlcc_model_desc *desc,
                                const char *path, mlcc_arena **out);

#endif // MLCC_RUNTIME_WEIGHTSFILE_H
