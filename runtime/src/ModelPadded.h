//===- ModelPadded.h - Runs of a dim compiled as a range of lengths -*- C -*-=//
//
// Not a public header. A model compiled with `--dim seq=1..512` has a
// variant per bucket of lengths (mlcc_model_padded_dim in mlcc/model.h):
// Model.c hands such a run here, which checks the length against the range,
// chooses the bucket, pads the inputs into it and copies the outputs out.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_RUNTIME_SRC_MODELPADDED_H
#define MLCC_RUNTIME_SRC_MODELPADDED_H

#include "ModelRange.h"

MLCC_EXTERN_C_BEGIN

/// Checks desc->padded (not NULL) against the descriptor: a valid range,
/// axes whose dims are dynamic, every variant's bucket in the range and its
/// staging buffers inside desc->arena_bytes.
mlcc_status mlccPaddedCheckDesc(const char *fn, const mlcc_model_desc *desc);

/// The variant of the smallest bucket that holds the length of `inputs`
/// and has their other dims, or NULL (also for inputs of no valid length).
const mlcc_model_variant *mlccPaddedVariant(const mlcc_model_desc *desc,
                                            const mlcc_tensor *inputs);

/// Checks the length of `inputs` and `outputs` (non-NULL arrays), writes it
/// into `arena` for the chosen variant, and runs it through `run`: on the
/// caller's tensors when the length is that variant's bucket, else on
/// staging buffers in `arena` that the inputs are padded into and the
/// outputs are copied from.
mlcc_status mlccPaddedRun(const char *fn, const mlcc_model_desc *desc,
                          void *arena, const mlcc_tensor *inputs,
                          mlcc_tensor *outputs, mlccRangeChunkFn run,
                          void *state);

MLCC_EXTERN_C_END

#endif // MLCC_RUNTIME_SRC_MODELPADDED_H
