//===- c_api_smoke.c - The runtime headers are valid C11 ------------------===//
//
// Built with -std=c11 -Wall -Wextra -pedantic -Werror: proves the public
// headers compile as strict C and that every function links (against the
// static and the shared library). Exits 0 when each call behaves.
//
//===----------------------------------------------------------------------===//

#include <mlcc/runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void addOne(void *ctx, int64_t begin, int64_t end) {
  int *values = ctx;
  for (int64_t i = begin; i < end; ++i)
    values[i] += 1;
}

// A model as the compiler lays one out: y = 2 * x through the arena, and a
// data-dependent failure for a negative x[0].
static int32_t twiceEntry(void *arena, const void *weights,
                          const void *const *inputs, void *const *outputs,
                          mlcc_threadpool *pool) {
  (void)weights;
  (void)pool;
  const float *x = inputs[0];
  float *scratch = arena;
  float *y = outputs[0];
  if (x[0] < 0)
    return mlcc_model_fail(MLCC_OUT_OF_RANGE, "node 'g': index out of range");
  for (int i = 0; i < 6; ++i)
    scratch[i] = 2 * x[i];
  for (int i = 0; i < 6; ++i)
    y[i] = scratch[i];
  return MLCC_OK;
}

static const int64_t twiceDims[2] = {2, 3};
static const mlcc_model_tensor_desc twiceInputs[1] = {
    {"x", twiceDims, 2, MLCC_DTYPE_F32, NULL}};
static const mlcc_model_tensor_desc twiceOutputs[1] = {
    {"y", twiceDims, 2, MLCC_DTYPE_F32, NULL}};
static const mlcc_model_desc twiceModel = {
    .abi_version = MLCC_MODEL_ABI_VERSION,
    .num_inputs = 1,
    .num_outputs = 1,
    .name = "twice",
    .inputs = twiceInputs,
    .outputs = twiceOutputs,
    .arena_bytes = 6 * sizeof(float),
    .entry = twiceEntry,
};

#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: failed: %s (last error: %s)\n", __FILE__,        \
              __LINE__, #cond, mlcc_last_error_message());                     \
      return 1;                                                                \
    }                                                                          \
  } while (0)

int main(void) {
  EXPECT(strcmp(mlcc_status_string(MLCC_SHAPE_MISMATCH), "shape mismatch") ==
         0);

  mlcc_threadpool *pool = NULL;
  EXPECT(mlcc_threadpool_create(2, &pool) == MLCC_OK);
  EXPECT(mlcc_threadpool_num_threads(pool) == 2);
  int values[100] = {0};
  EXPECT(mlcc_threadpool_parallel_for(pool, 100, addOne, values) == MLCC_OK);
  for (int i = 0; i < 100; ++i)
    EXPECT(values[i] == 1);
  mlcc_threadpool_destroy(pool);

  mlcc_arena *arena = NULL;
  EXPECT(mlcc_arena_create(1000, &arena) == MLCC_OK);
  EXPECT(mlcc_arena_size(arena) == 1000);
  char *base = mlcc_arena_data(arena);
  EXPECT((uintptr_t)base % MLCC_ARENA_ALIGNMENT == 0);
  mlcc_arena *wrapped = NULL;
  EXPECT(mlcc_arena_wrap(base + 1, 512, 512, &wrapped) ==
         MLCC_INVALID_ARGUMENT);
  EXPECT(strstr(mlcc_last_error_message(), "not 64-byte aligned") != NULL);
  EXPECT(mlcc_arena_wrap(base, 1000, 512, &wrapped) == MLCC_OK);
  mlcc_arena_destroy(wrapped);
  mlcc_arena_destroy(arena);

  float data[6] = {0};
  int64_t dims[2] = {2, 3};
  mlcc_tensor t = {data, dims, 2, MLCC_DTYPE_F32};
  const int64_t expected[2] = {-1, 4};
  EXPECT(mlcc_tensor_check(&t, MLCC_DTYPE_F32, 2, expected, "input 'x'") ==
         MLCC_SHAPE_MISMATCH);
  EXPECT(strcmp(mlcc_last_error_message(),
                "input 'x': dim 1 is 3, expected 4 (shape [2, 3], expected "
                "[?, 4])") == 0);
  int64_t count = 0;
  size_t bytes = 0;
  EXPECT(mlcc_tensor_num_elements(&t, &count) == MLCC_OK && count == 6);
  EXPECT(mlcc_tensor_byte_size(&t, &bytes) == MLCC_OK && bytes == 24);
  EXPECT(mlcc_dtype_size(MLCC_DTYPE_BF16) == 2);
  EXPECT(strcmp(mlcc_dtype_string(MLCC_DTYPE_BOOL), "bool") == 0);

  mlcc_model_context *ctx = NULL;
  EXPECT(mlcc_model_create(&twiceModel, NULL, &ctx) == MLCC_OK);
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {0};
  mlcc_tensor in = {x, dims, 2, MLCC_DTYPE_F32};
  mlcc_tensor out = {y, dims, 2, MLCC_DTYPE_F32};
  EXPECT(mlcc_model_run(&twiceModel, ctx, &in, &out) == MLCC_OK);
  EXPECT(y[0] == 2 && y[5] == 12);
  const void *inPtrs[1] = {x};
  void *outPtrs[1] = {y};
  x[0] = -1;
  EXPECT(mlcc_model_run_pointers(&twiceModel, ctx, inPtrs, outPtrs) ==
         MLCC_OUT_OF_RANGE);
  EXPECT(strcmp(mlcc_last_error_message(), "node 'g': index out of range") ==
         0);
  in.dtype = MLCC_DTYPE_I32;
  EXPECT(mlcc_model_run(&twiceModel, ctx, &in, &out) == MLCC_TYPE_MISMATCH);
  EXPECT(strcmp(mlcc_last_error_message(),
                "input 'x': expected f32 elements, got i32") == 0);
  mlcc_model_destroy(ctx);
  in.dtype = MLCC_DTYPE_F32;
  x[0] = 3;
  _Alignas(64) char memory[64];
  EXPECT(mlcc_model_run_with_arena(&twiceModel, memory, sizeof(memory), &in,
                                   &out) == MLCC_OK);
  EXPECT(y[0] == 6);
  return 0;
}
