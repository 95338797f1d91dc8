//===- VariantsTest.cpp - Models compiled for several shapes --------------===//
//
// A hand-written model "rows" (y = x + 1, x of shape [batch, 3]) compiled,
// as `mlcc compile --dim batch=1,4` would, into two variants whose entries
// know their batch: the caller's input dims choose the variant, outputs
// must have that variant's dims, and a batch nobody compiled is an error
// that lists the compiled shapes.
//
//===----------------------------------------------------------------------===//

#include "mlcc/runtime.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

int lastBatch = 0;

template <int Batch>
int32_t rowsEntry(void *arena, const void *weights, const void *const *inputs,
                  void *const *outputs, mlcc_threadpool *pool) {
  (void)arena;
  (void)weights;
  (void)pool;
  lastBatch = Batch;
  const float *x = static_cast<const float *>(inputs[0]);
  float *y = static_cast<float *>(outputs[0]);
  for (int i = 0; i < Batch * 3; ++i)
    y[i] = x[i] + 1;
  return MLCC_OK;
}

const int64_t kDynamic[] = {-1, 3};
const mlcc_model_tensor_desc kInputs[] = {{"x", kDynamic, 2, MLCC_DTYPE_F32}};
const mlcc_model_tensor_desc kOutputs[] = {{"y", kDynamic, 2, MLCC_DTYPE_F32}};
// Input dims, then output dims.
const int64_t kBatch1[] = {1, 3, 1, 3};
const int64_t kBatch4[] = {4, 3, 4, 3};
const mlcc_model_variant kVariants[] = {{kBatch1, 64, rowsEntry<1>},
                                        {kBatch4, 128, rowsEntry<4>}};

mlcc_model_desc rowsDesc() {
  mlcc_model_desc d{};
  d.abi_version = MLCC_MODEL_ABI_VERSION;
  d.num_inputs = 1;
  d.num_outputs = 1;
  d.num_variants = 2;
  d.name = "rows";
  d.inputs = kInputs;
  d.outputs = kOutputs;
  d.arena_bytes = 128;
  d.variants = kVariants;
  return d;
}

const mlcc_model_desc kRows = rowsDesc();

struct Rows {
  float x[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  float y[12] = {};
  int64_t xDims[2], yDims[2];
  mlcc_tensor in, out;
  Rows(int64_t batch, int64_t outBatch)
      : xDims{batch, 3}, yDims{outBatch, 3}, in{x, xDims, 2, MLCC_DTYPE_F32},
        out{y, yDims, 2, MLCC_DTYPE_F32} {}
};

std::string lastError() { return mlcc_last_error_message(); }

} // namespace

TEST_CASE("the input dims choose the variant", "[runtime][variants]") {
  mlcc_model_context *ctx = nullptr;
  REQUIRE(mlcc_model_create(&kRows, nullptr, &ctx) == MLCC_OK);
  for (int batch : {1, 4, 1}) {
    Rows r(batch, batch);
    lastBatch = 0;
    REQUIRE(mlcc_model_run(&kRows, ctx, &r.in, &r.out) == MLCC_OK);
    CHECK(lastBatch == batch);
    for (int i = 0; i < batch * 3; ++i)
      CHECK(r.y[i] == r.x[i] + 1);
  }

  Rows two(2, 2);
  lastBatch = 0;
  CHECK(mlcc_model_run(&kRows, ctx, &two.in, &two.out) == MLCC_SHAPE_MISMATCH);
  CHECK(lastError() == "mlcc_rows_run: the model was not compiled for these "
                       "input shapes: input 'x' is [2, 3]; compiled for "
                       "[1, 3], [4, 3]");
  // The outputs have the chosen variant's dims.
  Rows wrongOut(4, 1);
  CHECK(mlcc_model_run(&kRows, ctx, &wrongOut.in, &wrongOut.out) ==
        MLCC_SHAPE_MISMATCH);
  CHECK(lastError().rfind("output 'y': dim 0 is 1, expected 4", 0) == 0);
  CHECK(lastBatch == 0);

  // run_static has no dims to choose with.
  const void *in[] = {two.x};
  void *out[] = {two.y};
  CHECK(mlcc_model_run_pointers(&kRows, ctx, in, out) == MLCC_UNSUPPORTED);
  mlcc_model_destroy(ctx);

  // In caller memory the largest variant's arena is needed.
  void *arena = std::aligned_alloc(64, 128);
  Rows four(4, 4);
  CHECK(mlcc_model_run_with_arena(&kRows, arena, 64, &four.in, &four.out) ==
        MLCC_OUT_OF_RANGE);
  CHECK(mlcc_model_run_with_arena(&kRows, arena, 128, &four.in, &four.out) ==
        MLCC_OK);
  CHECK(lastBatch == 4);
  std::free(arena);
}

TEST_CASE("variants that contradict their descriptor are refused",
          "[runtime][variants]") {
  mlcc_model_desc d = rowsDesc();
  mlcc_model_context *ctx = nullptr;
  SECTION("a static dim changed") {
    const int64_t wrong[] = {2, 5, 2, 3};
    const mlcc_model_variant variants[] = {{wrong, 64, rowsEntry<1>}};
    d.num_variants = 1;
    d.variants = variants;
    CHECK(mlcc_model_create(&d, nullptr, &ctx) == MLCC_INVALID_ARGUMENT);
    CHECK(lastError() == "mlcc_rows_create: variant 0 of the model "
                         "descriptor gives 'x' dim 1 = 5, the model says 3");
  }
  SECTION("an arena larger than the descriptor's") {
    d.arena_bytes = 64;
    CHECK(mlcc_model_create(&d, nullptr, &ctx) == MLCC_INVALID_ARGUMENT);
  }
  SECTION("a dynamic dim in a variant") {
    const int64_t dynamic[] = {-1, 3, 1, 3};
    const mlcc_model_variant variants[] = {{dynamic, 64, rowsEntry<1>}};
    d.num_variants = 1;
    d.variants = variants;
    CHECK(mlcc_model_create(&d, nullptr, &ctx) == MLCC_INVALID_ARGUMENT);
  }
  SECTION("dynamic dims without variants") {
    d.num_variants = 0;
    d.variants = nullptr;
    d.entry = rowsEntry<1>;
    CHECK(mlcc_model_create(&d, nullptr, &ctx) == MLCC_INVALID_ARGUMENT);
    CHECK(lastError() ==
          "mlcc_rows_create: input 0 ('x') has a negative dim 0 (-1)");
  }
  CHECK(ctx == nullptr);
}
