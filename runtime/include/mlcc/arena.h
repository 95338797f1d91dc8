//===- arena.h - Aligned buffers for activations and weights ------*- C -*-===//
//
// Generated model code places every intermediate tensor at a fixed offset in
// one activation arena (its size is a constant in the model's header), and
// can read weights from a side file into an aligned buffer. Kernels use
// aligned 64-byte (AVX-512) loads, so each arena starts on a 64-byte boundary.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_ARENA_H
#define MLCC_ARENA_H

#include "mlcc/status.h"

#include <stddef.h>

MLCC_EXTERN_C_BEGIN

/// The alignment, in bytes, of every arena's data.
#define MLCC_ARENA_ALIGNMENT 64

/// An opaque handle to an arena: runtime-owned or caller-supplied memory.
/// An arena has no lock: one model run at a time may use it.
typedef struct mlcc_arena mlcc_arena;

/// Allocates an arena of at least `size` bytes, 64-byte aligned and not
/// initialised. Size 0 is allowed (the data pointer is still valid).
/// The caller owns *out_arena and frees it with mlcc_arena_destroy; on
/// failure *out_arena is NULL.
MLCC_API mlcc_status mlcc_arena_create(size_t size, mlcc_arena **out_arena);

/// Wraps `size` bytes of caller memory as an arena, after checking that
/// `memory` is 64-byte aligned (MLCC_INVALID_ARGUMENT otherwise; NULL is
/// allowed only when size is 0) and that size >= required_size, the bytes
/// the user of the arena needs (MLCC_OUT_OF_RANGE otherwise).
/// The memory stays the caller's and must outlive the arena; the caller
/// owns *out_arena (a small handle) and frees it with mlcc_arena_destroy.
MLCC_API mlcc_status mlcc_arena_wrap(void *memory, size_t size,
                                     size_t required_size,
                                     mlcc_arena **out_arena);

/// Frees the arena handle and, when the runtime allocated the memory, the
/// memory. NULL is a no-op.
MLCC_API void mlcc_arena_destroy(mlcc_arena *arena);

/// The 64-byte aligned start of the arena (NULL only for a wrapped NULL
/// buffer of size 0, or for a NULL arena).
MLCC_API void *mlcc_arena_data(const mlcc_arena *arena);

/// The size given to create or wrap, in bytes; 0 for a NULL arena.
MLCC_API size_t mlcc_arena_size(const mlcc_arena *arena);

MLCC_EXTERN_C_END

#endif // MLCC_ARENA_H
