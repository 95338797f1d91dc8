//===- ModelRange.h - Runs over a dim compiled as a range ---------*- C -*-===//
//
// Not a public header. A model compiled with `--dim batch=1..64` maps over
// that dim (mlcc_model_range in mlcc/model.h): Model.c hands such a run
// here, which checks the extent against the range and runs the variants on
// chunks of the items.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_RUNTIME_SRC_MODELRANGE_H
#define MLCC_RUNTIME_SRC_MODELRANGE_H

#include "mlcc/model.h"

MLCC_EXTERN_C_BEGIN

/// The tensor `index` of the inputs-then-outputs order, as the ranges'
/// per-tensor arrays and the variants' dims number them.
static inline const mlcc_model_tensor_desc *
mlccTensorAt(const mlcc_model_desc *desc, uint32_t index) {
  return index < desc->num_inputs ? &desc->inputs[index]
                                  : &desc->outputs[index - desc->num_inputs];
}

static inline uint32_t mlccNumTensors(const mlcc_model_desc *desc) {
  return desc->num_inputs + desc->num_outputs;
}

/// Checks desc->range (not NULL) against the descriptor: a valid range,
/// mapped tensors whose dim 0 is dynamic, and a variant of chunk 1.
mlcc_status mlccRangeCheckDesc(const char *fn, const mlcc_model_desc *desc);

/// The first variant whose input dims are those of `inputs` (any ranks and
/// dims: one that is not the descriptor's matches nothing), or NULL.
const mlcc_model_variant *mlccMatchingVariant(const mlcc_model_desc *desc,
                                              const mlcc_tensor *inputs);

/// Runs the model on inputs and outputs that the variants' dims and checks
/// apply to (one chunk, or the caller's own tensors).
typedef mlcc_status (*mlccRangeChunkFn)(void *state, const mlcc_tensor *inputs,
                                        mlcc_tensor *outputs);

/// Checks the range dim of `inputs` and `outputs` (non-NULL arrays) and
/// runs: the caller's tensors at once when a variant has their dims, else
/// views of consecutive chunks of the items, each through `run`.
mlcc_status mlccRangeRun(const char *fn, const mlcc_model_desc *desc,
                         const mlcc_tensor *inputs, mlcc_tensor *outputs,
                         mlccRangeChunkFn run, void *state);

MLCC_EXTERN_C_END

#endif // MLCC_RUNTIME_SRC_MODELRANGE_H
