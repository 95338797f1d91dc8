//===- model.h - What a compiled model object hands the runtime ---*- C -*-===//
//
// Every compiled model object holds one constant mlcc_model_desc: its
// inputs' and outputs' names, dtypes and shapes, its arena size and its
// entry function. The model's own API (mlcc_<name>_create/run/... in its
// generated header) is a set of one-line wrappers that pass that descriptor
// to the functions below, so the argument checks, the context and the arena
// handling live here, written once, in C, and tested once.
//
// Applications use the generated header; they do not call these directly,
// so the messages recorded here name the generated function ("mlcc_resnet_run:
// ctx is NULL"; run_pointers is "run_static") or the tensor ("input 'x':
// expected 4 dims, got 3").
// The layout of the structs is part of the ABI between the compiler and the
// runtime: the compiler writes them as constant data (lowering/Common), so a
// change here is a change of MLCC_MODEL_ABI_VERSION.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_MODEL_H
#define MLCC_MODEL_H

#include "mlcc/cpu.h"
#include "mlcc/device.h"
#include "mlcc/status.h"
#include "mlcc/tensor.h"
#include "mlcc/threadpool.h"

#include <stddef.h>
#include <stdint.h>

MLCC_EXTERN_C_BEGIN

/// The descriptor layout this runtime understands. A model compiled for
/// another version is rejected with MLCC_UNSUPPORTED, never misread.
#define MLCC_MODEL_ABI_VERSION 8

/// One input or output of a model. 32 bytes on 64-bit targets.
typedef struct mlcc_model_tensor_desc {
  const char *name;     ///< the ONNX name, for messages
  /// rank extents, >= 0, or -1 for a dim the model's variants give (see
  /// mlcc_model_variant) or, for an output with max_dims, a dim whose
  /// extent the run computes from the data; NULL when rank is 0
  const int64_t *dims;
  int32_t rank;
  int32_t dtype;        ///< an mlcc_dtype value
  /// For an output whose extents depend on the data (NonZero, Unique, ...):
  /// per dim, the most it can be (the static size where dims has one); the
  /// caller's buffer must hold that shape, and a run writes the actual
  /// extents into the caller's dims. NULL otherwise.
  const int64_t *max_dims;
} mlcc_model_tensor_desc;

/// The compiled code of a model: computes the outputs from the inputs using
/// `arena` (64-byte aligned, at least arena_bytes) for every intermediate.
/// `weights` is the data of the model's weights file (64-byte aligned,
/// weights_bytes) when it was compiled with `--weights external`, else NULL.
/// inputs[i] and outputs[i] point to dense buffers whose shapes the caller
/// has already checked against the descriptor. `pool` may be NULL. Returns
/// MLCC_OK, or a status for a data-dependent error (an index out of range)
/// after recording its message.
/// For a device model (mlcc_model_desc::device) the five arguments are
/// device addresses instead (see mlcc_device_queue_launch) and `pool` is
/// the run's device queue: the entry only computes addresses and calls the
/// queue functions below.
typedef int32_t (*mlcc_model_entry_fn)(void *arena, const void *weights,
                                       const void *const *inputs,
                                       void *const *outputs,
                                       mlcc_threadpool *pool);

/// The code of a model with dynamic dims for one assignment of them
/// (`mlcc compile --dim batch=1,8` gives two): the extents of every input,
/// then of every output (rank values each, in order), and what to run. 24
/// bytes.
typedef struct mlcc_model_variant {
  const int64_t *dims;
  uint64_t arena_bytes;
  mlcc_model_entry_fn entry;
} mlcc_model_variant;

/// A dim the model maps over, compiled as a range of extents (`mlcc compile
/// --dim batch=1..64`): dim 0 of each mapped input and output. The model's
/// items along it are independent (the compiler proved it), so a run whose
/// extent no variant has exactly runs the variants on consecutive chunks of
/// the items, the largest chunk that fits first, each variant's dim 0 being
/// its chunk. 32 bytes.
typedef struct mlcc_model_range {
  const char *name; ///< the dim's name ("batch"), for messages
  int64_t min;      ///< the extents a run may give it, min <= max
  int64_t max;
  /// num_inputs then num_outputs flags: 1 where dim 0 is this dim.
  const uint8_t *mapped;
} mlcc_model_range;

/// A dim compiled as a range of lengths (`mlcc compile --dim seq=1..512`):
/// each variant was compiled for one length (a bucket: 16, 32, ..., the
/// range's max) and runs any length up to it. The compiler proved that the
/// positions past a run's length never reach those before it, except
/// through the ops that are told the length. A run takes the variant of the
/// smallest bucket that holds its length; when that is not the length
/// itself, the runtime copies the tensors that have the dim into the arena
/// past the variant's own (padded with zeros to the bucket: staging
/// buffers, each 64-byte aligned, inputs then outputs) and the outputs'
/// valid part back out. The entry reads the length, an int64_t, from the
/// last 8 bytes of its variant's arena. With mask_input (`mlcc compile
/// --trim-padding NAME`), each item of a call runs at the length its mask
/// gives (up to its last nonzero, when no nonzero follows a zero) and the
/// outputs' positions past it are zeros; every tensor with the dim has it
/// as dim 1. 40 bytes.
typedef struct mlcc_model_padded_dim {
  const char *name; ///< the dim's name ("seq"), for messages
  int64_t min;      ///< the lengths a run may give it, min <= max
  int64_t max;
  /// num_inputs then num_outputs entries: the axis of this dim in the
  /// tensor, or -1 where it has none.
  const int8_t *axes;
  /// The input whose zeros mark each item's padding, or -1.
  int32_t mask_input;
} mlcc_model_padded_dim;

/// A device model's kernels and weights (`mlcc compile --target vulkan` or
/// `--target cuda`).
/// 32 bytes.
typedef struct mlcc_device_program {
  uint32_t api; ///< an mlcc_device_api value
  uint32_t num_kernels;
  const mlcc_device_kernel_desc *kernels;
  /// weights_bytes of data uploaded once at create time; NULL for a model
  /// with a weights file, whose data is uploaded instead.
  const void *weights;
  uint64_t weights_bytes;
} mlcc_device_program;

/// A compiled model, as its object file defines it. 128 bytes.
/// With num_variants == 0 every dim is static and `entry` runs the model.
/// Otherwise `entry` is NULL, the tensors' dynamic dims are -1, and a run
/// takes the first variant whose input dims are the caller's; arena_bytes
/// is the largest variant's.
typedef struct mlcc_model_desc {
  uint32_t abi_version; ///< MLCC_MODEL_ABI_VERSION
  uint32_t num_inputs;
  uint32_t num_outputs;
  uint32_t num_variants;
  const char *name;     ///< the model's C identifier
  const mlcc_model_tensor_desc *inputs;
  const mlcc_model_tensor_desc *outputs;
  uint64_t arena_bytes;
  mlcc_model_entry_fn entry;
  /// 0 when the weights are inside the object; else the data bytes of the
  /// weights file written next to it (`mlcc compile --weights external`).
  uint64_t weights_bytes;
  /// The fingerprint that file's header must carry: a file of another
  /// model, or of another compile of this one, is refused.
  uint64_t weights_fingerprint;
  const mlcc_model_variant *variants; ///< num_variants of them, or NULL
  /// With outputs that have max_dims: where in the arena the entry leaves
  /// every output's dims after a run (int64_t each, outputs in order).
  uint64_t output_dims_offset;
  /// NULL for a CPU model. Else the model runs on a device: mlcc_model_create
  /// opens one (mlcc_device_open with no selector: the MLCC_DEVICE
  /// environment variable chooses), makes the kernels' pipelines, uploads
  /// the weights, and keeps the arena, inputs and outputs in device
  /// buffers; each run copies the inputs in and the outputs out.
  const mlcc_device_program *device;
  /// The x86 features (MLCC_CPU_* bits, cpu.h) the object's code uses:
  /// every create and run_with_arena checks that this CPU has them
  /// (MLCC_UNSUPPORTED_CPU otherwise). 0 for a model that needs nothing
  /// beyond x86-64 (or is for another architecture).
  uint64_t cpu_features;
  /// The `mlcc compile --cpu` it was compiled for, for messages; may be NULL.
  const char *cpu_name;
  /// A dim compiled as a range, with num_variants > 0; NULL otherwise.
  const mlcc_model_range *range;
  /// A dim compiled as a range of lengths, with num_variants > 0; NULL
  /// otherwise. With a range too, each chunk of the batch is padded.
  const mlcc_model_padded_dim *padded;
} mlcc_model_desc;

/// The header of a weights file (`mlcc compile --weights external`): 64
/// bytes, then weights_bytes of data, so data that is 64-byte aligned in
/// memory is read in place. Integers are little-endian.
#define MLCC_WEIGHTS_MAGIC "MLCCWGT1"
typedef struct mlcc_weights_header {
  char magic[8];                ///< MLCC_WEIGHTS_MAGIC, no NUL
  uint32_t header_bytes;        ///< 64
  uint32_t reserved;            ///< 0
  uint64_t data_bytes;          ///< = the descriptor's weights_bytes
  uint64_t fingerprint;         ///< = the descriptor's weights_fingerprint
  char model_name[32];          ///< for messages; NUL-padded, may be cut
} mlcc_weights_header;

/// An instance of a model: its arena and the pool it runs on.
typedef struct mlcc_model_context mlcc_model_context;

/// Checks `desc` (version, counts, tensor descriptors) and makes a context
/// with a runtime-allocated arena of desc->arena_bytes. `pool` may be NULL
/// (single-threaded); it is borrowed. *out is NULL on failure. A model whose
/// weights are in a separate file needs mlcc_model_create_from_file.
MLCC_API mlcc_status mlcc_model_create(const mlcc_model_desc *desc,
                                       mlcc_threadpool *pool,
                                       mlcc_model_context **out);

/// As mlcc_model_create for a model compiled with `--weights external`:
/// reads the weights file at `weights_path` (checking its header against
/// the descriptor: "weights file 'w.bin': made for model 'bert', not
/// 'resnet'") into memory the context owns.
MLCC_API mlcc_status mlcc_model_create_from_file(const mlcc_model_desc *desc,
                                                 const char *weights_path,
                                                 mlcc_threadpool *pool,
                                                 mlcc_model_context **out);

/// As mlcc_model_create_from_file with the file's whole image (header and
/// data) already in memory, e.g. mapped or linked in: `image` must be
/// 64-byte aligned and stay valid and unchanged while the context lives.
MLCC_API mlcc_status mlcc_model_create_from_memory(
    const mlcc_model_desc *desc, const void *image, size_t image_size,
    mlcc_threadpool *pool, mlcc_model_context **out);

/// Frees a context made by mlcc_model_create. NULL is a no-op.
MLCC_API void mlcc_model_destroy(mlcc_model_context *ctx);

/// The device a device model's context runs on (to name it, or to give a
/// CUDA model the application's stream with mlcc_device_set_stream); NULL
/// for a CPU model or a NULL context. It belongs to the context.
MLCC_API mlcc_device *mlcc_model_device(mlcc_model_context *ctx);

/// Checks every input and output descriptor against `desc` (dtype, rank,
/// dims, data pointers; "input 'x': expected 4 dims, got 3") and runs the
/// model in the context's arena. With dynamic dims the inputs' choose the
/// variant, and the outputs must have that variant's dims. An output
/// whose descriptor has max_dims is given with dims of at least those (the
/// capacity of its buffer); on success its dims hold the actual extents
/// and its data the dense tensor of that shape. `ctx` must come from
/// mlcc_model_create with the same `desc` (MLCC_INVALID_ARGUMENT
/// otherwise).
///
/// Threads: contexts are independent, so several threads may run one model
/// at once, each in its own context (they may share one pool). A context
/// runs one call at a time: a call on a context that is running on another
/// thread returns MLCC_INVALID_ARGUMENT at once, without waiting (the same
/// for mlcc_model_run_pointers). Destroying a context while it runs is not
/// detected.
MLCC_API mlcc_status mlcc_model_run(const mlcc_model_desc *desc,
                                    mlcc_model_context *ctx,
                                    const mlcc_tensor *inputs,
                                    mlcc_tensor *outputs);

/// As mlcc_model_run with raw data pointers whose shapes are the
/// descriptor's: only NULLs are checked (a NULL pointer is allowed for a
/// tensor with no elements). Only for models without dynamic dims and
/// without outputs whose extents depend on the data (MLCC_UNSUPPORTED
/// otherwise: there would be no dims to say them).
MLCC_API mlcc_status mlcc_model_run_pointers(const mlcc_model_desc *desc,
                                             mlcc_model_context *ctx,
                                             const void *const *inputs,
                                             void *const *outputs);

/// As mlcc_model_run without a context, single-threaded, in caller memory:
/// `arena` must be 64-byte aligned and arena_size >= desc->arena_bytes
/// (MLCC_INVALID_ARGUMENT / MLCC_OUT_OF_RANGE otherwise). Only for models
/// whose weights are inside the object (MLCC_UNSUPPORTED otherwise).
MLCC_API mlcc_status mlcc_model_run_with_arena(const mlcc_model_desc *desc,
                                               void *arena, size_t arena_size,
                                               const mlcc_tensor *inputs,
                                               mlcc_tensor *outputs);

/// After a successful run of `desc`'s entry in `arena` (what mlcc_model_run
/// does; for callers of the entry itself): writes the actual extents of
/// every output with max_dims into outputs[i].dims.
MLCC_API void mlcc_model_output_dims(const mlcc_model_desc *desc,
                                     const void *arena, mlcc_tensor *outputs);

/// Records a data-dependent failure from inside generated code ("node 'g'
/// (Gather): index 7 out of range [-5, 5)") and returns `status`.
/// `message` is copied; it is used as text, not as a format (NULL records
/// "(no message)"). MLCC_OK is not a failure: it is recorded and returned as
/// MLCC_INTERNAL, so a run never reports success with unfinished outputs.
MLCC_API int32_t mlcc_model_fail(int32_t status, const char *message);

/// Called by a device model's entry: records a launch of kernel `kernel`
/// of the program with groups_x x groups_y x groups_z workgroups, buffers
/// at `addresses` (bindings 1..num_addresses) and `params` at binding 0.
/// An address is a device address: region r (0 the arena, 1 the weights,
/// then each input, then each output) at byte `offset` is
/// ((r + 1) << 40) + offset. A failure is kept in the queue (later calls do
/// nothing) and is the run's status.
MLCC_API void mlcc_device_queue_launch(void *queue, int32_t kernel,
                                       int32_t groups_x, int32_t groups_y,
                                       int32_t groups_z,
                                       const uint64_t *addresses,
                                       int32_t num_addresses,
                                       const uint32_t *params,
                                       int32_t num_params);

/// Called by a device model's entry where host code needs a value the
/// device computed (a loop's condition): runs what was launched so far and
/// copies `bytes` at device address `address` to `dst` (zeros after a
/// failure).
MLCC_API void mlcc_device_queue_read(void *queue, uint64_t address, void *dst,
                                     uint64_t bytes);

MLCC_EXTERN_C_END

#endif // MLCC_MODEL_H
