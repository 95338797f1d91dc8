//===- Arena.c - 64-byte aligned buffers for activations and weights ------===//

#include "mlcc/arena.h"
#include "LastError.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

struct mlcc_arena {
  void *Data;
  size_t Size;
  bool Owned; // allocated by mlcc_arena_create, freed with the handle
};

static mlcc_status newHandle(void *data, size_t size, bool owned,
                             mlcc_arena **out_arena) {
  mlcc_arena *arena = malloc(sizeof(mlcc_arena));
  if (!arena)
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "arena: cannot allocate the handle");
  arena->Data = data;
  arena->Size = size;
  arena->Owned = owned;
  *out_arena = arena;
  return MLCC_OK;
}

mlcc_status mlcc_arena_create(size_t size, mlcc_arena **out_arena) {
  if (!out_arena)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "mlcc_arena_create: out_arena is NULL");
  *out_arena = NULL;
  // aligned_alloc wants a multiple of the alignment; size 0 still gets one
  // line, so that the data pointer of any created arena is valid.
  if (size > SIZE_MAX - MLCC_ARENA_ALIGNMENT)
    return mlcc_last_error_set(
        MLCC_OUT_OF_MEMORY, "mlcc_arena_create: %zu bytes is too large", size);
  size_t rounded = size == 0 ? MLCC_ARENA_ALIGNMENT
                             : (size + MLCC_ARENA_ALIGNMENT - 1) /
                                   MLCC_ARENA_ALIGNMENT * MLCC_ARENA_ALIGNMENT;
  void *data = aligned_alloc(MLCC_ARENA_ALIGNMENT, rounded);
  if (!data)
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "mlcc_arena_create: cannot allocate %zu bytes",
                               size);
  mlcc_status status = newHandle(data, size, true, out_arena);
  if (status != MLCC_OK)
    free(data);
  return status;
}

mlcc_status mlcc_arena_wrap(void *memory, size_t size, size_t required_size,
                            mlcc_arena **out_arena) {
  if (!out_arena)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "mlcc_arena_wrap: out_arena is NULL");
  *out_arena = NULL;
  if (!memory && size != 0)
    return mlcc_last_error_set(
        MLCC_INVALID_ARGUMENT,
        "mlcc_arena_wrap: memory is NULL but size is %zu", size);
  if ((uintptr_t)memory % MLCC_ARENA_ALIGNMENT != 0)
    return mlcc_last_error_set(
        MLCC_INVALID_ARGUMENT,
        "mlcc_arena_wrap: memory %p is not %d-byte aligned (offset %zu)",
        memory, MLCC_ARENA_ALIGNMENT,
        (size_t)((uintptr_t)memory % MLCC_ARENA_ALIGNMENT));
  if (size < required_size)
    return mlcc_last_error_set(
        MLCC_OUT_OF_RANGE,
        "mlcc_arena_wrap: arena too small: %zu bytes given, %zu required", size,
        required_size);
  return newHandle(memory, size, false, out_arena);
}

void mlcc_arena_destroy(mlcc_arena *arena) {
  if (!arena)
    return;
  if (arena->Owned)
    free(arena->Data);
  free(arena);
}

void *mlcc_arena_data(const mlcc_arena *arena) {
  return arena ? arena->Data : NULL;
}

size_t mlcc_arena_size(const mlcc_arena *arena) {
  return arena ? arena->Size : 0;
}
