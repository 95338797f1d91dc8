//===- ModelPadded.c - Runs of a dim compiled as a range of lengths -------===//
//
// The compiler proved that positions past a run's length never reach the
// ones before it (but through ops it tells the length), and compiled a
// variant per bucket of lengths. A run of length n takes the smallest
// bucket b >= n. When b > n, each tensor with the dim is staged in the
// arena past the variant's own: the inputs' n positions copied in and the
// b - n after them zeroed (so the padding holds valid indices and finite
// values), the outputs computed there and their n positions copied out.
//
//===----------------------------------------------------------------------===//

#include "ModelPadded.h"
#include "LastError.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { StagingAlignment = 64 };

// Variant v's dims of tensor `index` (inputs, then outputs).
static const int64_t *variantDims(const mlcc_model_desc *desc, uint32_t v,
                                  uint32_t index) {
  const int64_t *dims = desc->variants[v].dims;
  for (uint32_t i = 0; i < index; ++i)
    dims += mlccTensorAt(desc, i)->rank;
  return dims;
}

// Variant v's bucket: its extent of the dim in the first tensor that has it.
static int64_t bucketOf(const mlcc_model_desc *desc, uint32_t v) {
  for (uint32_t i = 0; i < mlccNumTensors(desc); ++i)
    if (desc->padded->axes[i] >= 0)
      return variantDims(desc, v, i)[desc->padded->axes[i]];
  return -1;
}

static uint64_t alignUp(uint64_t x) {
  return (x + StagingAlignment - 1) / StagingAlignment * StagingAlignment;
}

// Bytes of tensor `index` at variant v's dims; false on overflow.
static bool stagedBytes(const mlcc_model_desc *desc, uint32_t v, uint32_t index,
                        uint64_t *bytes) {
  const mlcc_model_tensor_desc *t = mlccTensorAt(desc, index);
  const int64_t *dims = variantDims(desc, v, index);
  uint64_t n = mlcc_dtype_size((mlcc_dtype)t->dtype);
  for (int32_t d = 0; d < t->rank; ++d)
    if (dims[d] < 0 || __builtin_mul_overflow(n, (uint64_t)dims[d], &n))
      return false;
  *bytes = n;
  return true;
}

// The bytes of variant v's arena and staging buffers (mlcc/model.h), or 0
// when they overflow.
static uint64_t paddedArenaBytes(const mlcc_model_desc *desc, uint32_t v) {
  if (desc->variants[v].arena_bytes > UINT64_MAX - StagingAlignment)
    return 0;
  uint64_t end = alignUp(desc->variants[v].arena_bytes);
  for (uint32_t i = 0; i < mlccNumTensors(desc); ++i) {
    uint64_t bytes = 0;
    if (desc->padded->axes[i] < 0)
      continue;
    if (!stagedBytes(desc, v, i, &bytes) ||
        __builtin_add_overflow(end, alignUp(bytes), &end) ||
        end < StagingAlignment)
      return 0;
  }
  return end;
}

// A mask input (--trim-padding) runs items alone on their first
// positions: a batch range maps every tensor with the dim, as dim 1.
static mlcc_status checkMaskInput(const char *fn, const mlcc_model_desc *desc) {
  const mlcc_model_padded_dim *p = desc->padded;
  if (p->mask_input == -1)
    return MLCC_OK;
  if (p->mask_input < 0 || (uint32_t)p->mask_input >= desc->num_inputs ||
      p->axes[p->mask_input] < 0 || !desc->range || !desc->range->mapped)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: the model descriptor's mask input of "
                               "'%s' is malformed",
                               fn, p->name);
  for (uint32_t i = 0; i < mlccNumTensors(desc); ++i)
    if (p->axes[i] >= 0 && (p->axes[i] != 1 || !desc->range->mapped[i]))
      return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                                 "%s: '%s' of the model descriptor has '%s' "
                                 "in dim %d, not in dim 1 after the batch "
                                 "that its mask input needs",
                                 fn, mlccTensorAt(desc, i)->name, p->name,
                                 (int)p->axes[i]);
  return MLCC_OK;
}

mlcc_status mlccPaddedCheckDesc(const char *fn, const mlcc_model_desc *desc) {
  const mlcc_model_padded_dim *p = desc->padded;
  if (!p->name || !p->axes || p->min < 1 || p->max < p->min ||
      desc->num_variants == 0)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: the model descriptor has a malformed "
                               "range of lengths",
                               fn);
  bool any = false;
  for (uint32_t i = 0; i < mlccNumTensors(desc); ++i) {
    const mlcc_model_tensor_desc *t = mlccTensorAt(desc, i);
    int8_t axis = p->axes[i];
    if (axis < 0)
      continue;
    any = true;
    if (axis >= t->rank || t->dims[axis] != -1 || t->max_dims)
      return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                                 "%s: '%s' of the model descriptor has '%s' "
                                 "in dim %d, which is not dynamic",
                                 fn, t->name, p->name, (int)axis);
  }
  if (!any)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: the model descriptor's range of lengths "
                               "'%s' is in no tensor",
                               fn, p->name);
  bool top = false;
  for (uint32_t v = 0; v < desc->num_variants; ++v) {
    int64_t bucket = bucketOf(desc, v);
    for (uint32_t i = 0; i < mlccNumTensors(desc); ++i)
      if (p->axes[i] >= 0 && variantDims(desc, v, i)[p->axes[i]] != bucket)
        return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                                   "%s: variant %u of the model descriptor "
                                   "gives '%s' different lengths",
                                   fn, (unsigned)v, p->name);
    uint64_t bytes = paddedArenaBytes(desc, v);
    if (bucket < p->min || bucket > p->max ||
        desc->variants[v].arena_bytes < sizeof(int64_t) || bytes == 0 ||
        bytes > desc->arena_bytes)
      return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                                 "%s: variant %u of the model descriptor has "
                                 "a bucket or arena that does not fit its "
                                 "range of lengths",
                                 fn, (unsigned)v);
    top |= bucket == p->max;
  }
  if (!top)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: no variant of the model descriptor holds "
                               "the longest '%s'",
                               fn, p->name);
  return checkMaskInput(fn, desc);
}

// The run's length: that of every input with the dim, in the range.
static mlcc_status runLength(const char *fn, const mlcc_model_desc *desc,
                             const mlcc_tensor *inputs, int64_t *length) {
  const mlcc_model_padded_dim *p = desc->padded;
  const char *from = NULL;
  for (uint32_t i = 0; i < desc->num_inputs; ++i) {
    const mlcc_model_tensor_desc *t = &desc->inputs[i];
    int8_t axis = p->axes[i];
    if (axis < 0)
      continue;
    if (inputs[i].rank != t->rank || !inputs[i].dims)
      return mlcc_last_error_set(MLCC_SHAPE_MISMATCH,
                                 "%s: input '%s': expected %d dims, got %d", fn,
                                 t->name, (int)t->rank, (int)inputs[i].rank);
    int64_t n = inputs[i].dims[axis];
    if (!from) {
      if (n < p->min || n > p->max)
        return mlcc_last_error_set(
            MLCC_SHAPE_MISMATCH,
            "%s: input '%s' dim %d ('%s') is %lld; the model was compiled "
            "for %s %lld..%lld",
            fn, t->name, (int)axis, p->name, (long long)n, p->name,
            (long long)p->min, (long long)p->max);
      *length = n;
      from = t->name;
    } else if (n != *length) {
      return mlcc_last_error_set(
          MLCC_SHAPE_MISMATCH,
          "%s: input '%s' dim %d ('%s') is %lld, but input '%s' gives it "
          "%lld",
          fn, t->name, (int)axis, p->name, (long long)n, from,
          (long long)*length);
    }
  }
  if (!from)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: no input of the model has '%s'", fn,
                               p->name);
  return MLCC_OK;
}

// The variant of the smallest bucket >= length whose other input dims are
// the inputs'; -1 when none is.
static int64_t chooseVariant(const mlcc_model_desc *desc,
                             const mlcc_tensor *inputs, int64_t length) {
  int64_t best = -1;
  for (uint32_t v = 0; v < desc->num_variants; ++v) {
    int64_t bucket = bucketOf(desc, v);
    if (bucket < length || (best >= 0 && bucket >= bucketOf(desc, best)))
      continue;
    bool same = true;
    for (uint32_t i = 0; i < desc->num_inputs && same; ++i) {
      const int64_t *dims = variantDims(desc, v, i);
      int32_t rank = desc->inputs[i].rank;
      same = inputs[i].rank == rank && (rank == 0 || inputs[i].dims);
      for (int32_t d = 0; d < rank && same; ++d)
        same = d == desc->padded->axes[i] || inputs[i].dims[d] == dims[d];
    }
    if (same)
      best = v;
  }
  return best;
}

// Copies `length` of `from`'s `fromExtent` positions along `axis` into the
// first `length` of `to`'s `toExtent`, zeroing `to`'s others; `dims` are
// the dims around the axis, `elemBytes` an element's.
static void copyAlong(char *to, const char *from, const int64_t *dims,
                      int32_t rank, int32_t axis, size_t elemBytes,
                      int64_t fromExtent, int64_t toExtent, int64_t length) {
  size_t outer = 1, inner = elemBytes;
  for (int32_t d = 0; d < axis; ++d)
    outer *= (size_t)dims[d];
  for (int32_t d = axis + 1; d < rank; ++d)
    inner *= (size_t)dims[d];
  if (inner == 0) // no elements: the data may be NULL
    return;
  for (size_t o = 0; o < outer; ++o) {
    char *dst = to + o * (size_t)toExtent * inner;
    memcpy(dst, from + o * (size_t)fromExtent * inner, (size_t)length * inner);
    if (toExtent > length)
      memset(dst + (size_t)length * inner, 0,
             (size_t)(toExtent - length) * inner);
  }
}

const mlcc_model_variant *mlccPaddedVariant(const mlcc_model_desc *desc,
                                            const mlcc_tensor *inputs) {
  int64_t length = -1;
  for (uint32_t i = 0; i < desc->num_inputs && length < 0; ++i) {
    int8_t axis = desc->padded->axes[i];
    if (axis >= 0 && inputs[i].rank == desc->inputs[i].rank && inputs[i].dims)
      length = inputs[i].dims[axis];
  }
  if (length < desc->padded->min || length > desc->padded->max)
    return NULL;
  int64_t v = chooseVariant(desc, inputs, length);
  return v < 0 ? NULL : &desc->variants[v];
}

mlcc_status mlccPaddedRun(const char *fn, const mlcc_model_desc *desc,
                          void *arena, const mlcc_tensor *inputs,
                          mlcc_tensor *outputs, mlccRangeChunkFn run,
                          void *state) {
  const mlcc_model_padded_dim *p = desc->padded;
  int64_t length = 0;
  mlcc_status status = runLength(fn, desc, inputs, &length);
  if (status != MLCC_OK)
    return status;
  int64_t v = chooseVariant(desc, inputs, length);
  if (v < 0) // the variant check says what was compiled
    return run(state, inputs, outputs);
  const mlcc_model_variant *variant = &desc->variants[v];
  memcpy((char *)arena + variant->arena_bytes - sizeof(int64_t), &length,
         sizeof(int64_t));
  int64_t bucket = bucketOf(desc, (uint32_t)v);
  // Every caller's tensor with the dim, before any is copied: the variant's
  // dims, `length` there.
  uint32_t n = mlccNumTensors(desc);
  for (uint32_t i = 0; i < n; ++i) {
    const mlcc_model_tensor_desc *t = mlccTensorAt(desc, i);
    int8_t axis = p->axes[i];
    if (axis < 0)
      continue;
    int64_t dims[64];
    if (t->rank > 64)
      return mlcc_last_error_set(MLCC_UNSUPPORTED, "%s: '%s' has %d dims", fn,
                                 t->name, (int)t->rank);
    memcpy(dims, variantDims(desc, (uint32_t)v, i),
           (size_t)t->rank * sizeof(int64_t));
    dims[axis] = length;
    bool input = i < desc->num_inputs;
    char label[160];
    snprintf(label, sizeof(label), "%s: %s '%s'", fn,
             input ? "input" : "output", t->name);
    status =
        mlcc_tensor_check(input ? &inputs[i] : &outputs[i - desc->num_inputs],
                          (mlcc_dtype)t->dtype, t->rank, dims, label);
    if (status != MLCC_OK)
      return status;
  }
  if (bucket == length)
    return run(state, inputs, outputs);

  mlcc_tensor *staged = malloc((n + 1) * sizeof(mlcc_tensor));
  if (!staged)
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "%s: cannot allocate the staging views", fn);
  uint64_t offset = alignUp(variant->arena_bytes);
  for (uint32_t i = 0; i < n; ++i) {
    bool input = i < desc->num_inputs;
    staged[i] = input ? inputs[i] : outputs[i - desc->num_inputs];
    int8_t axis = p->axes[i];
    if (axis < 0)
      continue;
    const mlcc_model_tensor_desc *t = mlccTensorAt(desc, i);
    uint64_t bytes = 0;
    stagedBytes(desc, (uint32_t)v, i, &bytes); // checked with the descriptor
    // Read-only here: the entry and the checks only read a tensor's dims.
    staged[i].dims = (int64_t *)variantDims(desc, (uint32_t)v, i);
    staged[i].data = (char *)arena + offset;
    offset += alignUp(bytes);
    if (input)
      copyAlong(staged[i].data, inputs[i].data, inputs[i].dims, t->rank, axis,
                mlcc_dtype_size((mlcc_dtype)t->dtype), length, bucket, length);
  }
  status = run(state, staged, staged + desc->num_inputs);
  for (uint32_t o = 0; status == MLCC_OK && o < desc->num_outputs; ++o) {
    const mlcc_model_tensor_desc *t = &desc->outputs[o];
    int8_t axis = p->axes[desc->num_inputs + o];
    if (axis >= 0)
      copyAlong(outputs[o].data, staged[desc->num_inputs + o].data,
                outputs[o].dims, t->rank, axis,
                mlcc_dtype_size((mlcc_dtype)t->dtype), bucket, length, length);
  }
  free(staged);
  return status;
}
