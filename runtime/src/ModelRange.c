//===- ModelRange.c - Runs over a dim compiled as a range -----------------===//
//
// The compiler proved the model's items along the range dim independent,
// and compiled a variant per chunk size (1, and any --dim value given with
// the range). A run of extent n whose dims a variant has runs it; any other
// runs the largest chunk that fits, again and again, on views of the
// caller's tensors moved by the chunk's items. The arena is the largest
// variant's, so no extent costs more memory than its chunks.
//
//===----------------------------------------------------------------------===//

#include "ModelRange.h"
#include "LastError.h"
#include "ModelPadded.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

// Variant v's extent of the range dim: dim 0 of its first mapped tensor.
static int64_t chunkOf(const mlcc_model_desc *desc, uint32_t v) {
  const int64_t *dims = desc->variants[v].dims;
  for (uint32_t i = 0; i < mlccNumTensors(desc); ++i) {
    if (desc->range->mapped[i])
      return dims[0];
    dims += mlccTensorAt(desc, i)->rank;
  }
  return -1;
}

mlcc_status mlccRangeCheckDesc(const char *fn, const mlcc_model_desc *desc) {
  const mlcc_model_range *r = desc->range;
  if (!r->name || !r->mapped || r->min < 1 || r->max < r->min ||
      desc->num_variants == 0)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: the model descriptor has a malformed "
                               "range",
                               fn);
  bool anyMapped = false;
  for (uint32_t i = 0; i < mlccNumTensors(desc); ++i) {
    const mlcc_model_tensor_desc *t = mlccTensorAt(desc, i);
    if (!r->mapped[i])
      continue;
    anyMapped = true;
    if (t->rank < 1 || t->dims[0] != -1 || t->max_dims)
      return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                                 "%s: '%s' of the model descriptor is mapped "
                                 "over '%s' but its dim 0 is not dynamic",
                                 fn, t->name, r->name);
  }
  if (!anyMapped)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: the model descriptor's range '%s' maps "
                               "no tensor",
                               fn, r->name);
  // Every variant's mapped tensors agree on its chunk; one of them is 1, so
  // any extent can be run.
  bool unit = false;
  for (uint32_t v = 0; v < desc->num_variants; ++v) {
    int64_t chunk = chunkOf(desc, v);
    const int64_t *dims = desc->variants[v].dims;
    for (uint32_t i = 0; i < mlccNumTensors(desc); ++i) {
      if (r->mapped[i] && dims[0] != chunk)
        return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                                   "%s: variant %u of the model descriptor "
                                   "gives '%s' different extents",
                                   fn, (unsigned)v, r->name);
      dims += mlccTensorAt(desc, i)->rank;
    }
    unit |= chunk == 1;
  }
  if (!unit)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: the model descriptor's range '%s' has no "
                               "variant for one item",
                               fn, r->name);
  return MLCC_OK;
}

// The extent the run gives the range dim: that of every mapped input, in
// the range; its outputs' dim 0 must be the same.
static mlcc_status runExtent(const char *fn, const mlcc_model_desc *desc,
                             const mlcc_tensor *inputs,
                             const mlcc_tensor *outputs, int64_t *extent) {
  const mlcc_model_range *r = desc->range;
  const char *from = NULL;
  for (uint32_t i = 0; i < mlccNumTensors(desc); ++i) {
    if (!r->mapped[i])
      continue;
    bool input = i < desc->num_inputs;
    const mlcc_model_tensor_desc *t = mlccTensorAt(desc, i);
    const mlcc_tensor *given =
        input ? &inputs[i] : &outputs[i - desc->num_inputs];
    const char *kind = input ? "input" : "output";
    if (given->rank != t->rank || !given->dims)
      return mlcc_last_error_set(MLCC_SHAPE_MISMATCH,
                                 "%s: %s '%s': expected %d dims, got %d", fn,
                                 kind, t->name, (int)t->rank, (int)given->rank);
    int64_t n = given->dims[0];
    if (!from) {
      if (n < r->min || n > r->max)
        return mlcc_last_error_set(
            MLCC_SHAPE_MISMATCH,
            "%s: %s '%s' dim 0 ('%s') is %lld; the model was compiled for "
            "%s %lld..%lld",
            fn, kind, t->name, r->name, (long long)n, r->name,
            (long long)r->min, (long long)r->max);
      *extent = n;
      from = t->name;
    } else if (n != *extent) {
      return mlcc_last_error_set(
          MLCC_SHAPE_MISMATCH,
          "%s: %s '%s' dim 0 ('%s') is %lld, but input '%s' gives it %lld", fn,
          kind, t->name, r->name, (long long)n, from, (long long)*extent);
    }
  }
  return MLCC_OK;
}

const mlcc_model_variant *mlccMatchingVariant(const mlcc_model_desc *desc,
                                              const mlcc_tensor *inputs) {
  for (uint32_t v = 0; v < desc->num_variants; ++v) {
    const int64_t *dims = desc->variants[v].dims;
    bool same = true;
    for (uint32_t i = 0; i < desc->num_inputs && same; ++i) {
      int32_t rank = desc->inputs[i].rank;
      same = inputs[i].rank == rank && (rank == 0 || inputs[i].dims);
      for (int32_t d = 0; d < rank && same; ++d)
        same = inputs[i].dims[d] == dims[d];
      dims += rank;
    }
    if (same)
      return &desc->variants[v];
  }
  return NULL;
}

// Whether a variant runs `inputs`: has their dims, or with a range of
// lengths too, holds their length (padded then).
static bool runnable(const mlcc_model_desc *desc, const mlcc_tensor *inputs) {
  return mlccMatchingVariant(desc, inputs) ||
         (desc->padded && mlccPaddedVariant(desc, inputs));
}

// Views of the caller's tensors, with their own dims arrays.
typedef struct Views {
  mlcc_tensor *Tensors; // inputs, then outputs
  int64_t *Dims;
  size_t *ItemBytes; // per tensor; 0 where not mapped
} Views;

static mlcc_status viewsInit(Views *w, const char *fn,
                             const mlcc_model_desc *desc,
                             const mlcc_tensor *inputs,
                             const mlcc_tensor *outputs, int64_t extent) {
  uint32_t n = mlccNumTensors(desc);
  size_t dims = 0;
  for (uint32_t i = 0; i < n; ++i)
    dims += (size_t)mlccTensorAt(desc, i)->rank;
  w->Tensors = malloc((n + 1) * sizeof(mlcc_tensor));
  w->Dims = malloc((dims + 1) * sizeof(int64_t));
  w->ItemBytes = malloc((n + 1) * sizeof(size_t));
  if (!w->Tensors || !w->Dims || !w->ItemBytes)
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "%s: cannot allocate the chunks' views", fn);
  int64_t *next = w->Dims;
  for (uint32_t i = 0; i < n; ++i) {
    const mlcc_tensor *given =
        i < desc->num_inputs ? &inputs[i] : &outputs[i - desc->num_inputs];
    mlcc_tensor *view = &w->Tensors[i];
    *view = *given;
    w->ItemBytes[i] = 0;
    if (!desc->range->mapped[i])
      continue;
    // The rank was checked with the extent; the inner checks see the rest.
    memcpy(next, given->dims, (size_t)given->rank * sizeof(int64_t));
    view->dims = next;
    next += given->rank;
    size_t bytes = 0;
    mlcc_status status = mlcc_tensor_byte_size(given, &bytes);
    if (status != MLCC_OK)
      return status;
    w->ItemBytes[i] = bytes / (size_t)extent;
  }
  return MLCC_OK;
}

static void viewsFree(Views *w) {
  free(w->Tensors);
  free(w->Dims);
  free(w->ItemBytes);
}

// Views of items [first, first + chunk).
static void viewsMove(Views *w, const mlcc_model_desc *desc,
                      const mlcc_tensor *inputs, const mlcc_tensor *outputs,
                      int64_t first, int64_t chunk) {
  for (uint32_t i = 0; i < mlccNumTensors(desc); ++i) {
    if (!desc->range->mapped[i])
      continue;
    const mlcc_tensor *given =
        i < desc->num_inputs ? &inputs[i] : &outputs[i - desc->num_inputs];
    w->Tensors[i].dims[0] = chunk;
    w->Tensors[i].data =
        given->data ? (char *)given->data + (size_t)first * w->ItemBytes[i]
                    : NULL;
  }
}

// Whether the elements of one position of a mask mark a token: any that
// is not zero (-0.0 is zero).
static bool maskHoldsToken(const char *at, size_t elements, mlcc_dtype dtype) {
  size_t size = mlcc_dtype_size(dtype);
  for (size_t e = 0; e < elements; ++e, at += size) {
    uint64_t bits = 0;
    memcpy(&bits, at, size < sizeof(bits) ? size : sizeof(bits));
    if (dtype == MLCC_DTYPE_F32)
      bits &= 0x7fffffffu;
    else if (dtype == MLCC_DTYPE_F64)
      bits &= 0x7fffffffffffffffu;
    else if (dtype == MLCC_DTYPE_F16 || dtype == MLCC_DTYPE_BF16)
      bits &= 0x7fffu;
    if (bits)
      return true;
  }
  return false;
}

// The length item `item` of the mask gives: one past its last token when
// no token follows padding (the mask pads on the right), else the run's;
// at least the range's min.
static int64_t maskedLength(const mlcc_model_desc *desc,
                            const mlcc_tensor *mask, int64_t item) {
  int64_t length = mask->dims[1];
  size_t inner = 1;
  for (int32_t d = 2; d < mask->rank; ++d)
    inner *= (size_t)mask->dims[d];
  size_t positionBytes = inner * mlcc_dtype_size(mask->dtype);
  if (length == 0 || positionBytes == 0) // no tokens; its data may be NULL
    return desc->padded->min;
  const char *at =
      (const char *)mask->data + (size_t)item * (size_t)length * positionBytes;
  int64_t end = 0;
  bool padding = false;
  for (int64_t p = 0; p < length; ++p, at += positionBytes) {
    if (!maskHoldsToken(at, inner, mask->dtype)) {
      padding = true;
    } else if (padding) {
      return length;
    } else {
      end = p + 1;
    }
  }
  return end < desc->padded->min ? desc->padded->min : end;
}

// Whether the mask can be read, and every tensor with the dim has the
// run's length there; the run that follows otherwise says what is wrong.
static bool trimmable(const mlcc_model_desc *desc, const mlcc_tensor *inputs,
                      const mlcc_tensor *outputs, int64_t extent) {
  const mlcc_model_padded_dim *p = desc->padded;
  const mlcc_model_tensor_desc *t = &desc->inputs[p->mask_input];
  const mlcc_tensor *mask = &inputs[p->mask_input];
  if (mask->rank != t->rank || !mask->dims)
    return false;
  int64_t length = mask->dims[1];
  if (length < p->min || length > p->max)
    return false;
  int64_t dims[64];
  if (t->rank > 64)
    return false;
  for (int32_t d = 0; d < t->rank; ++d)
    dims[d] = d == 0 ? extent : d == 1 ? length : t->dims[d];
  for (int32_t d = 2; d < t->rank; ++d)
    if (dims[d] < 0)
      return false;
  if (mlcc_tensor_check(mask, (mlcc_dtype)t->dtype, t->rank, dims, "mask") !=
      MLCC_OK)
    return false;
  for (uint32_t i = 0; i < mlccNumTensors(desc); ++i) {
    const mlcc_tensor *given =
        i < desc->num_inputs ? &inputs[i] : &outputs[i - desc->num_inputs];
    if (p->axes[i] >= 0 && (given->rank != mlccTensorAt(desc, i)->rank ||
                            !given->dims || given->dims[1] != length))
      return false;
  }
  return true;
}

// --trim-padding: each item runs alone at the length its mask gives, and
// the outputs' positions past it are zeros. *done is false, with nothing
// run, when no item is shorter than the run.
static mlcc_status runTrimmed(const char *fn, const mlcc_model_desc *desc,
                              const mlcc_tensor *inputs, mlcc_tensor *outputs,
                              int64_t extent, mlccRangeChunkFn run, void *state,
                              bool *done) {
  *done = false;
  const mlcc_model_padded_dim *p = desc->padded;
  if (!trimmable(desc, inputs, outputs, extent))
    return MLCC_OK;
  const mlcc_tensor *mask = &inputs[p->mask_input];
  int64_t length = mask->dims[1];
  int64_t *lengths = malloc((size_t)extent * sizeof(int64_t));
  if (!lengths)
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "%s: cannot allocate the items' lengths", fn);
  bool shorter = false;
  for (int64_t b = 0; b < extent; ++b) {
    lengths[b] = maskedLength(desc, mask, b);
    shorter |= lengths[b] < length;
  }
  mlcc_status status = MLCC_OK;
  if (shorter) {
    *done = true;
    Views w;
    status = viewsInit(&w, fn, desc, inputs, outputs, extent);
    for (int64_t b = 0; status == MLCC_OK && b < extent; ++b) {
      viewsMove(&w, desc, inputs, outputs, b, 1);
      for (uint32_t i = 0; i < mlccNumTensors(desc); ++i)
        if (p->axes[i] >= 0)
          w.Tensors[i].dims[1] = lengths[b];
      status = run(state, w.Tensors, w.Tensors + desc->num_inputs);
      for (uint32_t i = desc->num_inputs;
           status == MLCC_OK && i < mlccNumTensors(desc); ++i) {
        size_t positionBytes = w.ItemBytes[i] / (size_t)length;
        if (p->axes[i] >= 0 && positionBytes > 0)
          memset((char *)w.Tensors[i].data + (size_t)lengths[b] * positionBytes,
                 0, (size_t)(length - lengths[b]) * positionBytes);
      }
    }
    viewsFree(&w);
  }
  free(lengths);
  return status;
}

mlcc_status mlccRangeRun(const char *fn, const mlcc_model_desc *desc,
                         const mlcc_tensor *inputs, mlcc_tensor *outputs,
                         mlccRangeChunkFn run, void *state) {
  int64_t extent = 0;
  mlcc_status status = runExtent(fn, desc, inputs, outputs, &extent);
  if (status != MLCC_OK)
    return status;
  if (desc->padded && desc->padded->mask_input >= 0) {
    bool done = false;
    status = runTrimmed(fn, desc, inputs, outputs, extent, run, state, &done);
    if (done || status != MLCC_OK)
      return status;
  }
  if (runnable(desc, inputs))
    return run(state, inputs, outputs);
  Views w;
  status = viewsInit(&w, fn, desc, inputs, outputs, extent);
  for (int64_t first = 0; status == MLCC_OK && first < extent;) {
    // The largest chunk that fits and that a variant has for the other
    // dims; chunk 1 always does, or no chunk does (the first run says why).
    int64_t chunk = 1;
    for (uint32_t v = 0; v < desc->num_variants; ++v) {
      int64_t c = chunkOf(desc, v);
      if (c <= chunk || c > extent - first)
        continue;
      viewsMove(&w, desc, inputs, outputs, first, c);
      if (runnable(desc, w.Tensors))
        chunk = c;
    }
    viewsMove(&w, desc, inputs, outputs, first, chunk);
    status = run(state, w.Tensors, w.Tensors + desc->num_inputs);
    first += chunk;
  }
  viewsFree(&w);
  return status;
}
