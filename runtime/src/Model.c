//===- Model.c - Checking and running compiled models ---------------------===//
//
// The runtime half of every generated model API. A model object holds a
// constant mlcc_model_desc; its mlcc_<name>_* functions forward here, so the
// argument checks that protect the generated code from a caller's mistake
// are written (and tested) once.
//
// Messages name the function the application called (mlcc_resnet_run), not
// the mlcc_model_* one it never sees, once the descriptor is known to be of
// this ABI version; before that they say mlcc_model_<verb>.
//
//===----------------------------------------------------------------------===//

#include "mlcc/model.h"
#include "DeviceModel.h"
#include "LastError.h"
#include "ModelPadded.h"
#include "ModelRange.h"
#include "WeightsFile.h"
#include "mlcc/arena.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mlcc_model_context {
  const mlcc_model_desc *Desc; // the descriptor it was created for
  mlcc_threadpool *Pool;       // borrowed; may be NULL
  mlcc_arena *Arena;           // owned; desc->arena_bytes (NULL on a device)
  mlccDeviceModel *Device;     // owned; for a device model, else NULL
  const void *Weights;         // the weights file's data, or NULL
  mlcc_arena *WeightsImage;    // owned copy of the file, or NULL (borrowed)
  // Set while a run is in the context. A run owns the arena (and a device
  // context its queue), so a second thread that finds it set is refused
  // rather than let the two overwrite each other's intermediates.
  atomic_bool Running;
};

// Pointer arrays up to this many entries live on the stack; a model with
// more inputs (or outputs) pays one malloc per run.
enum { InlinePointers = 16 };

// Room for "mlcc_<name>_run_with_arena" and for "output '<name>'"; longer
// names are cut, which only shortens a message.
enum { LabelCapacity = 160 };

// "mlcc_resnet_run" when desc names a model of this ABI version, else
// "mlcc_model_run": the name field of another version may not be a name.
static const char *functionName(char *buf, const mlcc_model_desc *desc,
                                const char *verb) {
  if (desc && desc->abi_version == MLCC_MODEL_ABI_VERSION && desc->name)
    snprintf(buf, LabelCapacity, "mlcc_%s_%s", desc->name, verb);
  else
    snprintf(buf, LabelCapacity, "mlcc_model_%s", verb);
  return buf;
}

// The element count of a tensor descriptor whose dims were checked.
static int64_t numElements(const mlcc_model_tensor_desc *t) {
  int64_t count = 1;
  for (int32_t i = 0; i < t->rank; ++i)
    count *= t->dims[i];
  return count;
}

// One input or output descriptor written by the compiler. A failure here is
// a bug in mlcc or a corrupt object, never the application's mistake, but it
// is still a status: the runtime does not trust data it did not write.
// `dynamic`: -1 dims are allowed (a model with variants).
static mlcc_status checkTensorDesc(const char *fn, const char *kind,
                                   uint32_t index,
                                   const mlcc_model_tensor_desc *t,
                                   bool dynamic) {
  if (!t->name)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: %s %u of the model descriptor has no name",
                               fn, kind, index);
  if (t->rank < 0)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: %s %u ('%s') has a negative rank (%d)", fn,
                               kind, index, t->name, (int)t->rank);
  if (t->rank > 0 && !t->dims)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: %s %u ('%s') has rank %d but no dims", fn,
                               kind, index, t->name, (int)t->rank);
  // -1 ("given at run time") only where variants give the dims (the code
  // is compiled for each shape it runs) or, in an output, where max_dims
  // bounds what the run computes.
  if (t->max_dims && strcmp(kind, "output") != 0)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: %s %u ('%s') has max_dims", fn, kind, index,
                               t->name);
  for (int32_t i = 0; i < t->rank; ++i) {
    if (t->max_dims && t->max_dims[i] < 0)
      return mlcc_last_error_set(
          MLCC_INVALID_ARGUMENT,
          "%s: %s %u ('%s') has a negative max_dims %d (%lld)", fn, kind, index,
          t->name, (int)i, (long long)t->max_dims[i]);
    bool bounded = t->max_dims && t->dims[i] == -1;
    if (t->dims[i] < (dynamic || bounded ? -1 : 0))
      return mlcc_last_error_set(
          MLCC_INVALID_ARGUMENT,
          "%s: %s %u ('%s') has a negative dim %d (%lld)", fn, kind, index,
          t->name, (int)i, (long long)t->dims[i]);
  }
  size_t elementSize = mlcc_dtype_size((mlcc_dtype)t->dtype);
  if (elementSize == 0)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: %s %u ('%s') has an unknown dtype %d", fn,
                               kind, index, t->name, (int)t->dtype);
  // Run-time checks multiply these dims; prove once that they cannot
  // overflow, so numElements needs no checks of its own.
  uint64_t bytes = elementSize;
  for (int32_t i = 0; i < t->rank; ++i) {
    if (t->dims[i] < 0)
      continue;
    uint64_t dim = (uint64_t)t->dims[i];
    if (dim != 0 && bytes > (uint64_t)INT64_MAX / dim)
      return mlcc_last_error_set(MLCC_OUT_OF_RANGE,
                                 "%s: the byte size of %s %u ('%s') overflows",
                                 fn, kind, index, t->name);
    bytes *= dim;
  }
  if (bytes > SIZE_MAX)
    return mlcc_last_error_set(MLCC_OUT_OF_RANGE,
                               "%s: %s %u ('%s') does not fit in memory", fn,
                               kind, index, t->name);
  return MLCC_OK;
}

// Variant v's dims: static, a valid size, and those of the descriptor where
// it has them.
static mlcc_status checkVariant(const char *fn, const mlcc_model_desc *desc,
                                uint32_t v) {
  const mlcc_model_variant *variant = &desc->variants[v];
  if (!variant->entry || variant->arena_bytes > desc->arena_bytes)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: variant %u of the model descriptor has no "
                               "entry or too large an arena",
                               fn, (unsigned)v);
  // Never NULL, even when every rank is 0: the run functions step through
  // it tensor by tensor.
  const int64_t *dims = variant->dims;
  if (!dims)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: variant %u of the model descriptor has "
                               "no dims",
                               fn, (unsigned)v);
  for (uint32_t i = 0; i < desc->num_inputs + desc->num_outputs; ++i) {
    mlcc_model_tensor_desc t = *mlccTensorAt(desc, i);
    for (int32_t d = 0; d < t.rank; ++d)
      if (t.dims[d] >= 0 && t.dims[d] != dims[d])
        return mlcc_last_error_set(
            MLCC_INVALID_ARGUMENT,
            "%s: variant %u of the model descriptor gives '%s' dim %d = %lld, "
            "the model says %lld",
            fn, (unsigned)v, t.name, (int)d, (long long)dims[d],
            (long long)t.dims[d]);
    t.dims = dims;
    mlcc_status status = checkTensorDesc(
        fn, i < desc->num_inputs ? "input" : "output", i, &t, false);
    if (status != MLCC_OK)
      return status;
    dims += t.rank;
  }
  return MLCC_OK;
}

// Everything the run functions rely on: a descriptor this runtime can read,
// with arrays that match their counts.
static mlcc_status checkDesc(const mlcc_model_desc *desc, const char *verb) {
  char fn[LabelCapacity];
  functionName(fn, NULL, verb);
  if (!desc)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: the model descriptor is NULL", fn);
  // Checked before any other field: another version may lay them out
  // differently.
  if (desc->abi_version != MLCC_MODEL_ABI_VERSION)
    return mlcc_last_error_set(
        MLCC_UNSUPPORTED,
        "%s: the model was compiled for model ABI version %u, but this "
        "runtime supports version %d; rebuild the model with a matching mlcc",
        fn, (unsigned)desc->abi_version, MLCC_MODEL_ABI_VERSION);
  if (!desc->name)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: the model descriptor has no name", fn);
  functionName(fn, desc, verb);
  if (desc->weights_bytes == 0 && desc->weights_fingerprint != 0)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: the model descriptor has a weights "
                               "fingerprint but no weights file",
                               fn);
  if (desc->num_variants == 0 && !desc->entry)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: the model descriptor has no entry function",
                               fn);
  if (desc->device && desc->num_variants > 0)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: a device model has no variants", fn);
  if (desc->num_variants > 0 && !desc->variants)
    return mlcc_last_error_set(
        MLCC_INVALID_ARGUMENT,
        "%s: the model descriptor has %u variants but no variant array", fn,
        (unsigned)desc->num_variants);
  if (desc->num_inputs > 0 && !desc->inputs)
    return mlcc_last_error_set(
        MLCC_INVALID_ARGUMENT,
        "%s: the model descriptor has %u inputs but no input array", fn,
        (unsigned)desc->num_inputs);
  if (desc->num_outputs > 0 && !desc->outputs)
    return mlcc_last_error_set(
        MLCC_INVALID_ARGUMENT,
        "%s: the model descriptor has %u outputs but no output array", fn,
        (unsigned)desc->num_outputs);
  bool dynamic = desc->num_variants > 0;
  for (uint32_t i = 0; i < desc->num_inputs; ++i) {
    mlcc_status status =
        checkTensorDesc(fn, "input", i, &desc->inputs[i], dynamic);
    if (status != MLCC_OK)
      return status;
  }
  for (uint32_t i = 0; i < desc->num_outputs; ++i) {
    mlcc_status status =
        checkTensorDesc(fn, "output", i, &desc->outputs[i], dynamic);
    if (status != MLCC_OK)
      return status;
  }
  // Where a CPU model's entry leaves the extents of its bounded outputs:
  // aligned int64s inside the arena, as the compiler places them.
  uint64_t outputRanks = 0;
  bool bounded = false;
  for (uint32_t i = 0; i < desc->num_outputs; ++i) {
    outputRanks += (uint64_t)desc->outputs[i].rank;
    bounded |= desc->outputs[i].max_dims != NULL;
  }
  if (bounded && !desc->device &&
      (desc->output_dims_offset % sizeof(int64_t) != 0 ||
       desc->output_dims_offset > desc->arena_bytes ||
       outputRanks >
           (desc->arena_bytes - desc->output_dims_offset) / sizeof(int64_t)))
    return mlcc_last_error_set(
        MLCC_INVALID_ARGUMENT,
        "%s: the model descriptor's output dims (offset %llu) are not "
        "aligned inside its arena of %llu bytes",
        fn, (unsigned long long)desc->output_dims_offset,
        (unsigned long long)desc->arena_bytes);
  for (uint32_t v = 0; v < desc->num_variants; ++v) {
    mlcc_status status = checkVariant(fn, desc, v);
    if (status != MLCC_OK)
      return status;
  }
  if (desc->range && desc->device)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: a device model has no range", fn);
  if (desc->padded && desc->device)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: a device model has no range of lengths",
                               fn);
  mlcc_status status = desc->range ? mlccRangeCheckDesc(fn, desc) : MLCC_OK;
  if (status == MLCC_OK && desc->padded)
    status = mlccPaddedCheckDesc(fn, desc);
  return status;
}

// The model's code runs only on a CPU with the features it was compiled
// for; without them its first instruction of a newer set is a SIGILL.
static mlcc_status checkCpu(const char *fn, const mlcc_model_desc *desc) {
  mlcc_status status = mlcc_cpu_require(desc->cpu_features, fn);
  if (status == MLCC_UNSUPPORTED_CPU && desc->cpu_name)
    return mlcc_last_error_set(
        status,
        "%s (mlcc compile --cpu %s); compile the model for this machine "
        "(--cpu native, or x86-64-v4 for any AVX-512 CPU)",
        mlcc_last_error_message(), desc->cpu_name);
  return status;
}

// What the three create functions share: `weightsImage` (owned, may be
// NULL) is freed on failure; `weights` is the data the entry reads.
static mlcc_status createContext(const char *fn, const mlcc_model_desc *desc,
                                 mlcc_threadpool *pool, const void *weights,
                                 mlcc_arena *weightsImage,
                                 mlcc_model_context **out) {
  mlcc_model_context *ctx = NULL;
  mlcc_status status = MLCC_OK;
  if (desc->arena_bytes > SIZE_MAX)
    status = mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                                 "%s: an arena of %llu bytes does not fit in "
                                 "memory",
                                 fn, (unsigned long long)desc->arena_bytes);
  else if (!(ctx = malloc(sizeof(mlcc_model_context))))
    status = mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                                 "%s: cannot allocate the context", fn);
  if (status == MLCC_OK) {
    ctx->Desc = desc;
    ctx->Pool = pool;
    ctx->Weights = weights;
    ctx->WeightsImage = weightsImage;
    ctx->Arena = NULL;
    ctx->Device = NULL;
    atomic_init(&ctx->Running, false);
    if (desc->device) {
      // The arena and the weights live on the device.
      status = mlccDeviceModelCreate(fn, desc, weights, &ctx->Device);
      mlcc_arena_destroy(weightsImage);
      ctx->WeightsImage = NULL;
      ctx->Weights = NULL;
      if (status != MLCC_OK) {
        free(ctx);
        return status;
      }
      *out = ctx;
      return MLCC_OK;
    }
    status = mlcc_arena_create((size_t)desc->arena_bytes, &ctx->Arena);
    if (status != MLCC_OK) {
      free(ctx);
      // Keep the arena's reason, but say which call it belongs to.
      return mlcc_last_error_set(status, "%s: %s", fn,
                                 mlcc_last_error_message());
    }
    *out = ctx;
    return MLCC_OK;
  }
  mlcc_arena_destroy(weightsImage);
  return status;
}

// The checks every create starts with; `external` says whether the caller
// brings a weights file.
static mlcc_status checkCreate(char *fn, const mlcc_model_desc *desc,
                               mlcc_model_context **out, const char *verb,
                               bool external) {
  if (!out)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT, "%s: out is NULL",
                               functionName(fn, desc, verb));
  *out = NULL;
  mlcc_status status = checkDesc(desc, verb);
  if (status != MLCC_OK)
    return status;
  functionName(fn, desc, verb);
  status = checkCpu(fn, desc);
  if (status != MLCC_OK)
    return status;
  if (external && desc->weights_bytes == 0)
    return mlcc_last_error_set(
        MLCC_INVALID_ARGUMENT,
        "%s: model '%s' has its weights inside its object; it takes no "
        "weights file",
        fn, desc->name);
  if (!external && desc->weights_bytes != 0)
    return mlcc_last_error_set(
        MLCC_INVALID_ARGUMENT,
        "%s: model '%s' was compiled with --weights external; create it "
        "from its weights file",
        fn, desc->name);
  return MLCC_OK;
}

mlcc_status mlcc_model_create(const mlcc_model_desc *desc,
                              mlcc_threadpool *pool, mlcc_model_context **out) {
  char fn[LabelCapacity];
  mlcc_status status = checkCreate(fn, desc, out, "create", false);
  if (status != MLCC_OK)
    return status;
  return createContext(fn, desc, pool, NULL, NULL, out);
}

mlcc_status mlcc_model_create_from_file(const mlcc_model_desc *desc,
                                        const char *weights_path,
                                        mlcc_threadpool *pool,
                                        mlcc_model_context **out) {
  // The generated mlcc_<name>_create takes the path.
  char fn[LabelCapacity];
  mlcc_status status = checkCreate(fn, desc, out, "create", true);
  if (status != MLCC_OK)
    return status;
  if (!weights_path)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: weights_path is NULL", fn);
  mlcc_arena *image = NULL;
  status = mlccWeightsReadFile(fn, desc, weights_path, &image);
  if (status != MLCC_OK)
    return status;
  const char *data = (const char *)mlcc_arena_data(image);
  return createContext(fn, desc, pool, data + sizeof(mlcc_weights_header),
                       image, out);
}

mlcc_status mlcc_model_create_from_memory(const mlcc_model_desc *desc,
                                          const void *image, size_t image_size,
                                          mlcc_threadpool *pool,
                                          mlcc_model_context **out) {
  char fn[LabelCapacity];
  mlcc_status status = checkCreate(fn, desc, out, "create_from_memory", true);
  if (status != MLCC_OK)
    return status;
  if (!image)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT, "%s: image is NULL", fn);
  if ((uintptr_t)image % MLCC_ARENA_ALIGNMENT != 0)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: image %p is not %d-byte aligned", fn,
                               image, MLCC_ARENA_ALIGNMENT);
  status = mlccWeightsCheckImage(fn, "the weights image", desc, image,
                                 image_size);
  if (status != MLCC_OK)
    return status;
  return createContext(fn, desc, pool,
                       (const char *)image + sizeof(mlcc_weights_header), NULL,
                       out);
}

void mlcc_model_destroy(mlcc_model_context *ctx) {
  if (!ctx)
    return;
  mlccDeviceModelDestroy(ctx->Device);
  mlcc_arena_destroy(ctx->Arena);
  mlcc_arena_destroy(ctx->WeightsImage);
  free(ctx);
}

mlcc_device *mlcc_model_device(mlcc_model_context *ctx) {
  return ctx && ctx->Device ? mlccDeviceModelDevice(ctx->Device) : NULL;
}

// The checks shared by the two context runs: a context made for this model.
static mlcc_status checkContext(const mlcc_model_desc *desc,
                                const mlcc_model_context *ctx,
                                const char *verb) {
  char fn[LabelCapacity];
  functionName(fn, desc, verb);
  if (!desc)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: the model descriptor is NULL", fn);
  if (!ctx)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
  // The context was checked against its own descriptor at creation; only a
  // context of another model (or a cast) can get here with a different one.
  if (ctx->Desc != desc)
    return mlcc_last_error_set(
        MLCC_INVALID_ARGUMENT,
        "%s: the context was created for another model ('%s')", fn,
        ctx->Desc && ctx->Desc->name ? ctx->Desc->name : "?");
  return MLCC_OK;
}

// Claims `ctx` for one run: a caller's mistake (one context shared by two
// threads) is an error status, never a race on the arena.
static mlcc_status claimContext(const mlcc_model_desc *desc,
                                mlcc_model_context *ctx, const char *verb) {
  if (!atomic_exchange_explicit(&ctx->Running, true, memory_order_acquire))
    return MLCC_OK;
  char fn[LabelCapacity];
  return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                             "%s: the context is running a call on another "
                             "thread; a context runs one call at a time "
                             "(create one per thread)",
                             functionName(fn, desc, verb));
}

static void releaseContext(mlcc_model_context *ctx) {
  atomic_store_explicit(&ctx->Running, false, memory_order_release);
}

// The data pointers handed to the entry function: on the stack for small
// models, else on the heap.
typedef struct Pointers {
  const void **Inputs;
  void **Outputs;
  const void *InlineInputs[InlinePointers];
  void *InlineOutputs[InlinePointers];
} Pointers;

static mlcc_status pointersInit(Pointers *p, const mlcc_model_desc *desc,
                                const char *fn) {
  p->Inputs = p->InlineInputs;
  p->Outputs = p->InlineOutputs;
  if (desc->num_inputs > InlinePointers)
    p->Inputs = malloc(desc->num_inputs * sizeof(const void *));
  if (desc->num_outputs > InlinePointers)
    p->Outputs = malloc(desc->num_outputs * sizeof(void *));
  if (!p->Inputs || !p->Outputs)
    return mlcc_last_error_set(
        MLCC_OUT_OF_MEMORY, "%s: cannot allocate %u + %u tensor pointers", fn,
        (unsigned)desc->num_inputs, (unsigned)desc->num_outputs);
  return MLCC_OK;
}

static void pointersFree(Pointers *p) {
  if (p->Inputs != p->InlineInputs)
    free((void *)p->Inputs);
  if (p->Outputs != p->InlineOutputs)
    free(p->Outputs);
}

// Checks each tensor against the descriptor and calls the entry on their
// data: what mlcc_model_run and mlcc_model_run_with_arena share.
// Appends "[d0, d1]" to buf (of `size`, holding `used` chars).
static size_t appendShape(char *buf, size_t size, size_t used, int32_t rank,
                          const int64_t *dims) {
  for (int32_t i = 0; i <= rank && used + 1 < size; ++i) {
    int n = i == rank ? snprintf(buf + used, size - used, "]")
                      : snprintf(buf + used, size - used, "%s%lld",
                                 i == 0 ? "[" : ", ", (long long)dims[i]);
    used += n > 0 ? (size_t)n : 0;
  }
  if (rank == 0 && used + 3 < size)
    used += (size_t)snprintf(buf + used, size - used, "[]");
  return used < size ? used : size - 1;
}

// The variant whose input dims are the inputs' (checked against the
// descriptor already); NULL with the status recorded when none is.
static const mlcc_model_variant *selectVariant(const char *fn,
                                               const mlcc_model_desc *desc,
                                               const mlcc_tensor *inputs) {
  const mlcc_model_variant *variant = mlccMatchingVariant(desc, inputs);
  if (variant)
    return variant;
  // "input 'ids' is [3, 128]; compiled for [1, 128], [8, 128]": the first
  // input whose dims choose among the variants.
  uint32_t shown = 0;
  for (uint32_t i = 0; i < desc->num_inputs; ++i)
    for (int32_t d = 0; d < desc->inputs[i].rank; ++d)
      if (desc->inputs[i].dims[d] < 0 && shown == 0)
        shown = i;
  char list[LabelCapacity * 2];
  size_t used = appendShape(list, sizeof(list), 0, inputs[shown].rank,
                            inputs[shown].dims);
  used += (size_t)snprintf(list + used, sizeof(list) - used,
                           "; compiled for ");
  for (uint32_t v = 0; v < desc->num_variants && used + 1 < sizeof(list);
       ++v) {
    const int64_t *dims = desc->variants[v].dims;
    for (uint32_t i = 0; i < shown; ++i)
      dims += desc->inputs[i].rank;
    if (v > 0)
      used += (size_t)snprintf(list + used, sizeof(list) - used, ", ");
    if (used + 1 < sizeof(list))
      used = appendShape(list, sizeof(list), used, inputs[shown].rank, dims);
  }
  mlcc_last_error_set(MLCC_SHAPE_MISMATCH,
                      "%s: the model was not compiled for these input "
                      "shapes: input '%s' is %s",
                      fn, desc->inputs[shown].name, list);
  return NULL;
}

// An output whose extents the run computes: its dtype and rank as usual,
// and each dim at least max_dims (the caller's buffer holds the bound).
static mlcc_status checkBoundedOutput(const mlcc_tensor *t,
                                      const mlcc_model_tensor_desc *d,
                                      const char *label) {
  mlcc_status status =
      mlcc_tensor_check(t, (mlcc_dtype)d->dtype, d->rank, NULL, label);
  if (status != MLCC_OK)
    return status;
  for (int32_t i = 0; i < d->rank; ++i)
    if (t->dims[i] < d->max_dims[i])
      return mlcc_last_error_set(
          MLCC_SHAPE_MISMATCH,
          "%s: dim %d is %lld, but its extent comes from the data and may "
          "be up to %lld: give a buffer of that size",
          label, (int)i, (long long)t->dims[i], (long long)d->max_dims[i]);
  return MLCC_OK;
}

// Every output's dims (as the entry leaves them) into the bounded ones.
static void setOutputDims(const mlcc_model_desc *desc, const int64_t *dims,
                          mlcc_tensor *outputs) {
  for (uint32_t i = 0; i < desc->num_outputs; ++i) {
    const mlcc_model_tensor_desc *t = &desc->outputs[i];
    for (int32_t d = 0; d < t->rank; ++d)
      if (t->max_dims)
        outputs[i].dims[d] = dims[d];
    dims += t->rank;
  }
}

void mlcc_model_output_dims(const mlcc_model_desc *desc, const void *arena,
                            mlcc_tensor *outputs) {
  setOutputDims(
      desc, (const int64_t *)((const char *)arena + desc->output_dims_offset),
      outputs);
}

// Checks each tensor against the descriptor (and the variant its inputs
// choose) and calls the entry on their data: one run of a model, or one
// chunk of a run over a range.
static mlcc_status checkAndRunShapes(const char *fn,
                                     const mlcc_model_desc *desc, void *arena,
                                     const void *weights, mlcc_threadpool *pool,
                                     mlccDeviceModel *device,
                                     const mlcc_tensor *inputs,
                                     mlcc_tensor *outputs) {
  // Every check passes before the model touches any data.
  char label[LabelCapacity];
  for (uint32_t i = 0; i < desc->num_inputs; ++i) {
    const mlcc_model_tensor_desc *t = &desc->inputs[i];
    snprintf(label, sizeof(label), "input '%s'", t->name);
    mlcc_status status = mlcc_tensor_check(&inputs[i], (mlcc_dtype)t->dtype,
                                           t->rank, t->dims, label);
    if (status != MLCC_OK)
      return status;
  }
  mlcc_model_entry_fn entry = desc->entry;
  const int64_t *outputDims = NULL; // the variant's, after the inputs'
  if (desc->num_variants > 0) {
    const mlcc_model_variant *variant = selectVariant(fn, desc, inputs);
    if (!variant)
      return MLCC_SHAPE_MISMATCH;
    entry = variant->entry;
    outputDims = variant->dims;
    for (uint32_t i = 0; i < desc->num_inputs; ++i)
      outputDims += desc->inputs[i].rank;
  }
  bool runTimeExtents = false;
  for (uint32_t i = 0; i < desc->num_outputs; ++i) {
    const mlcc_model_tensor_desc *t = &desc->outputs[i];
    snprintf(label, sizeof(label), "output '%s'", t->name);
    mlcc_status status =
        t->max_dims
            ? checkBoundedOutput(&outputs[i], t, label)
            : mlcc_tensor_check(&outputs[i], (mlcc_dtype)t->dtype, t->rank,
                                outputDims ? outputDims : t->dims, label);
    if (status != MLCC_OK)
      return status;
    runTimeExtents |= t->max_dims != NULL;
    if (outputDims)
      outputDims += t->rank;
  }
  Pointers p;
  mlcc_status status = pointersInit(&p, desc, fn);
  if (status == MLCC_OK) {
    for (uint32_t i = 0; i < desc->num_inputs; ++i)
      p.Inputs[i] = inputs[i].data;
    for (uint32_t i = 0; i < desc->num_outputs; ++i)
      p.Outputs[i] = outputs[i].data;
    if (device) {
      int64_t *dims = NULL;
      if (runTimeExtents) {
        size_t count = 0;
        for (uint32_t i = 0; i < desc->num_outputs; ++i)
          count += (size_t)desc->outputs[i].rank;
        dims = malloc((count + 1) * sizeof(int64_t));
      }
      status =
          runTimeExtents && !dims
              ? mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                                    "%s: cannot allocate output dims", fn)
              : mlccDeviceModelRun(device, entry, p.Inputs, p.Outputs, dims);
      if (status == MLCC_OK && dims)
        setOutputDims(desc, dims, outputs);
      free(dims);
      runTimeExtents = false;
    } else {
      status = (mlcc_status)entry(arena, weights, p.Inputs, p.Outputs, pool);
    }
  }
  pointersFree(&p);
  if (status == MLCC_OK && runTimeExtents)
    mlcc_model_output_dims(desc, arena, outputs);
  return status;
}

// What checkAndRunShapes needs besides the tensors, for mlccRangeRun.
typedef struct RunState {
  const char *Fn;
  const mlcc_model_desc *Desc;
  void *Arena;
  const void *Weights;
  mlcc_threadpool *Pool;
  mlccDeviceModel *Device;
} RunState;

static mlcc_status runShapes(void *state, const mlcc_tensor *inputs,
                             mlcc_tensor *outputs) {
  const RunState *s = state;
  return checkAndRunShapes(s->Fn, s->Desc, s->Arena, s->Weights, s->Pool,
                           s->Device, inputs, outputs);
}

// One run, or one chunk of a run over a range of a batch: padded to its
// bucket for a range of lengths.
static mlcc_status runChunk(void *state, const mlcc_tensor *inputs,
                            mlcc_tensor *outputs) {
  const RunState *s = state;
  if (s->Desc->padded)
    return mlccPaddedRun(s->Fn, s->Desc, s->Arena, inputs, outputs, runShapes,
                         state);
  return runShapes(state, inputs, outputs);
}

// The input and output arrays may be NULL only for a model without any.
static mlcc_status checkArrays(const char *fn, const mlcc_model_desc *desc,
                               const void *inputs, const void *outputs) {
  if (desc->num_inputs > 0 && !inputs)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: inputs is NULL (the model has %u)", fn,
                               (unsigned)desc->num_inputs);
  if (desc->num_outputs > 0 && !outputs)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: outputs is NULL (the model has %u)", fn,
                               (unsigned)desc->num_outputs);
  return MLCC_OK;
}

// What mlcc_model_run and mlcc_model_run_with_arena share.
static mlcc_status checkAndRun(const mlcc_model_desc *desc, void *arena,
                               const void *weights, mlcc_threadpool *pool,
                               mlccDeviceModel *device,
                               const mlcc_tensor *inputs, mlcc_tensor *outputs,
                               const char *verb) {
  char fn[LabelCapacity];
  functionName(fn, desc, verb);
  mlcc_status status = checkArrays(fn, desc, inputs, outputs);
  if (status != MLCC_OK)
    return status;
  RunState state = {fn, desc, arena, weights, pool, device};
  if (desc->range)
    return mlccRangeRun(fn, desc, inputs, outputs, runChunk, &state);
  return runChunk(&state, inputs, outputs);
}

mlcc_status mlcc_model_run(const mlcc_model_desc *desc, mlcc_model_context *ctx,
                           const mlcc_tensor *inputs, mlcc_tensor *outputs) {
  mlcc_status status = checkContext(desc, ctx, "run");
  if (status == MLCC_OK)
    status = claimContext(desc, ctx, "run");
  if (status != MLCC_OK)
    return status;
  status =
      checkAndRun(desc, ctx->Arena ? mlcc_arena_data(ctx->Arena) : NULL,
                  ctx->Weights, ctx->Pool, ctx->Device, inputs, outputs, "run");
  releaseContext(ctx);
  return status;
}

// Only NULLs can be checked here: the shapes are the descriptor's by
// contract. A NULL is fine for a tensor with no elements, as for
// mlcc_tensor_check.
static mlcc_status checkPointer(const char *fn, const char *kind,
                                const mlcc_model_tensor_desc *t,
                                const void *data) {
  int64_t count = numElements(t);
  if (!data && count > 0)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: %s '%s': data is NULL for %lld elements",
                               fn, kind, t->name, (long long)count);
  return MLCC_OK;
}

mlcc_status mlcc_model_run_pointers(const mlcc_model_desc *desc,
                                    mlcc_model_context *ctx,
                                    const void *const *inputs,
                                    void *const *outputs) {
  // The generated run_static is the function applications see.
  const char *verb = "run_static";
  mlcc_status status = checkContext(desc, ctx, verb);
  if (status != MLCC_OK)
    return status;
  char fn[LabelCapacity];
  functionName(fn, desc, verb);
  if (desc->num_variants > 0)
    return mlcc_last_error_set(MLCC_UNSUPPORTED,
                               "%s: model '%s' has dynamic dims; run it with "
                               "tensor descriptors",
                               fn, desc->name);
  for (uint32_t i = 0; i < desc->num_outputs; ++i)
    if (desc->outputs[i].max_dims)
      return mlcc_last_error_set(
          MLCC_UNSUPPORTED,
          "%s: output '%s' of model '%s' has extents that depend on the data; "
          "run it with tensor descriptors",
          fn, desc->outputs[i].name, desc->name);
  status = checkArrays(fn, desc, inputs, outputs);
  if (status != MLCC_OK)
    return status;
  for (uint32_t i = 0; i < desc->num_inputs; ++i) {
    status = checkPointer(fn, "input", &desc->inputs[i], inputs[i]);
    if (status != MLCC_OK)
      return status;
  }
  for (uint32_t i = 0; i < desc->num_outputs; ++i) {
    status = checkPointer(fn, "output", &desc->outputs[i], outputs[i]);
    if (status != MLCC_OK)
      return status;
  }
  status = claimContext(desc, ctx, verb);
  if (status != MLCC_OK)
    return status;
  status =
      ctx->Device
          ? mlccDeviceModelRun(ctx->Device, desc->entry, inputs, outputs, NULL)
          : (mlcc_status)desc->entry(mlcc_arena_data(ctx->Arena), ctx->Weights,
                                     inputs, outputs, ctx->Pool);
  releaseContext(ctx);
  return status;
}

mlcc_status mlcc_model_run_with_arena(const mlcc_model_desc *desc, void *arena,
                                      size_t arena_size,
                                      const mlcc_tensor *inputs,
                                      mlcc_tensor *outputs) {
  const char *verb = "run_with_arena";
  // No context vouches for the descriptor here, so it is checked each call
  // (a loop over a few tensors: negligible next to a model run).
  mlcc_status status = checkDesc(desc, verb);
  if (status != MLCC_OK)
    return status;
  char fn[LabelCapacity];
  functionName(fn, desc, verb);
  status = checkCpu(fn, desc);
  if (status != MLCC_OK)
    return status;
  if (desc->weights_bytes != 0)
    return mlcc_last_error_set(
        MLCC_UNSUPPORTED,
        "%s: model '%s' keeps its weights in a file (--weights external); "
        "run it through a context",
        fn, desc->name);
  if (desc->device)
    return mlcc_last_error_set(MLCC_UNSUPPORTED,
                               "%s: model '%s' runs on a device; run it "
                               "through a context",
                               fn, desc->name);
  if (!arena && arena_size != 0)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: arena is NULL but arena_size is %zu", fn,
                               arena_size);
  if ((uintptr_t)arena % MLCC_ARENA_ALIGNMENT != 0)
    return mlcc_last_error_set(
        MLCC_INVALID_ARGUMENT,
        "%s: arena %p is not %d-byte aligned (offset %zu)", fn, arena,
        MLCC_ARENA_ALIGNMENT,
        (size_t)((uintptr_t)arena % MLCC_ARENA_ALIGNMENT));
  if ((uint64_t)arena_size < desc->arena_bytes)
    return mlcc_last_error_set(
        MLCC_OUT_OF_RANGE,
        "%s: arena too small: %zu bytes given, %llu required", fn, arena_size,
        (unsigned long long)desc->arena_bytes);
  return checkAndRun(desc, arena, NULL, NULL, NULL, inputs, outputs, verb);
}

int32_t mlcc_model_fail(int32_t status, const char *message) {
  // A failure reported as MLCC_OK would hand the caller unfinished outputs
  // as if they were results: a bug in the generated code, reported as one.
  if (status == MLCC_OK) {
    mlcc_last_error_set(MLCC_INTERNAL,
                        "mlcc_model_fail called with MLCC_OK: %s",
                        message ? message : "(no message)");
    return MLCC_INTERNAL;
  }
  mlcc_last_error_set((mlcc_status)status, "%s",
                      message ? message : "(no message)");
  return status;
}
