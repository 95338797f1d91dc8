//===- Arena.c - 64-byte aligned buffers for activations and weights ------===//
//
// An arena of 2 MiB or more is its own mapping, 2 MiB aligned and advised
// to Linux as transparent huge pages (MADV_HUGEPAGE; THP's default mode is
// "madvise" on most distributions): a model's intermediates then sit in a
// few pages the TLB covers, and the physical layout of their bytes, which
// decides which ones share a cache set, no longer changes from process to
// process the way scattered 4 KiB pages do. Smaller arenas, and systems
// without it, use aligned_alloc.
//
//===----------------------------------------------------------------------===//

#ifndef _GNU_SOURCE
#define _GNU_SOURCE // MADV_HUGEPAGE
#endif

#include "mlcc/arena.h"
#include "LastError.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef __linux__
#include <sys/mman.h>
#endif

enum { HugePageBytes = 2 << 20 };

struct mlcc_arena {
  void *Data;
  size_t Size;
  bool Owned;         // allocated by mlcc_arena_create, freed with the handle
  size_t MappedBytes; // of an owned mapping (hugePageData); 0: malloc'd
};

// `bytes` (a multiple of 64) in a mapping of whole 2 MiB pages, 2 MiB
// aligned, advised as huge pages; NULL where that is not available.
static void *hugePageData(size_t bytes, size_t *mapped) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes < HugePageBytes || bytes > SIZE_MAX - 2 * (size_t)HugePageBytes)
    return NULL;
  size_t size = (bytes + HugePageBytes - 1) / HugePageBytes * HugePageBytes;
  size_t length = size + HugePageBytes; // room to align the start
  char *p = mmap(NULL, length, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return NULL;
  size_t head = (HugePageBytes - (uintptr_t)p % HugePageBytes) % HugePageBytes;
  if (head)
    munmap(p, head);
  if (length - head - size)
    munmap(p + head + size, length - head - size);
  // Advice only: without THP the mapping still works, in small pages.
  (void)madvise(p + head, size, MADV_HUGEPAGE);
  *mapped = size;
  return p + head;
#else
  (void)bytes;
  (void)mapped;
  return NULL;
#endif
}

static void releaseData(void *data, size_t mapped) {
#ifdef __linux__
  if (mapped) {
    munmap(data, mapped);
    return;
  }
#endif
  free(data);
}

static mlcc_status newHandle(void *data, size_t size, bool owned,
                             mlcc_arena **out_arena) {
  mlcc_arena *arena = malloc(sizeof(mlcc_arena));
  if (!arena)
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "arena: cannot allocate the handle");
  arena->Data = data;
  arena->Size = size;
  arena->Owned = owned;
  arena->MappedBytes = 0;
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
  size_t mapped = 0;
  void *data = hugePageData(rounded, &mapped);
  if (!data)
    data = aligned_alloc(MLCC_ARENA_ALIGNMENT, rounded);
  if (!data)
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "mlcc_arena_create: cannot allocate %zu bytes",
                               size);
  mlcc_status status = newHandle(data, size, true, out_arena);
  if (status != MLCC_OK) {
    releaseData(data, mapped);
    return status;
  }
  (*out_arena)->MappedBytes = mapped;
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
    releaseData(arena->Data, arena->MappedBytes);
  free(arena);
}

void *mlcc_arena_data(const mlcc_arena *arena) {
  return arena ? arena->Data : NULL;
}

size_t mlcc_arena_size(const mlcc_arena *arena) {
  return arena ? arena->Size : 0;
}
