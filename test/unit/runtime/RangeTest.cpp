//===- RangeTest.cpp - Models compiled for a range of a dim ---------------===//
//
// The hand-written model "rows" (y = x + 1, x of shape [batch, 3]) as
// `mlcc compile --dim batch=1..10,4` would give it: variants for chunks of
// 4 items and of 1, and a range that maps x and y over the batch. A batch
// no variant has runs in chunks, the largest first; one outside the range,
// or outputs whose batch is not the inputs', is an error naming the tensor
// and the dim.
//
//===----------------------------------------------------------------------===//

#include "mlcc/runtime.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace {

std::vector<int> chunks; // the batch of each entry call, in order

template <int Batch>
int32_t rowsEntry(void *, const void *, const void *const *inputs,
                  void *const *outputs, mlcc_threadpool *) {
  chunks.push_back(Batch);
  const float *x = static_cast<const float *>(inputs[0]);
  float *y = static_cast<float *>(outputs[0]);
  for (int i = 0; i < Batch * 3; ++i)
    y[i] = x[i] + 1;
  return MLCC_OK;
}

const int64_t kDynamic[] = {-1, 3};
const mlcc_model_tensor_desc kInputs[] = {{"x", kDynamic, 2, MLCC_DTYPE_F32}};
const mlcc_model_tensor_desc kOutputs[] = {{"y", kDynamic, 2, MLCC_DTYPE_F32}};
const int64_t kBatch4[] = {4, 3, 4, 3};
const int64_t kBatch1[] = {1, 3, 1, 3};
const mlcc_model_variant kVariants[] = {{kBatch4, 128, rowsEntry<4>},
                                        {kBatch1, 64, rowsEntry<1>}};
const uint8_t kMapped[] = {1, 1};
const mlcc_model_range kRange = {"batch", 1, 10, kMapped};

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
  d.range = &kRange;
  return d;
}

const mlcc_model_desc kRows = rowsDesc();

struct Rows {
  std::vector<float> x, y;
  int64_t xDims[2], yDims[2];
  mlcc_tensor in, out;
  Rows(int64_t batch, int64_t outBatch)
      : x(batch * 3), y(outBatch * 3, -1), xDims{batch, 3}, yDims{outBatch, 3},
        in{x.data(), xDims, 2, MLCC_DTYPE_F32}, out{y.data(), yDims, 2,
                                                    MLCC_DTYPE_F32} {
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>(i);
  }
};

std::string lastError() { return mlcc_last_error_message(); }

} // namespace

TEST_CASE("a batch in the range runs as chunks of the variants",
          "[runtime][range]") {
  mlcc_model_context *ctx = nullptr;
  REQUIRE(mlcc_model_create(&kRows, nullptr, &ctx) == MLCC_OK);
  struct Case {
    int batch;
    std::vector<int> calls;
  };
  for (const Case &c : {Case{4, {4}}, Case{1, {1}}, Case{7, {4, 1, 1, 1}},
                        Case{10, {4, 4, 1, 1}}, Case{3, {1, 1, 1}}}) {
    Rows r(c.batch, c.batch);
    chunks.clear();
    REQUIRE(mlcc_model_run(&kRows, ctx, &r.in, &r.out) == MLCC_OK);
    CHECK(chunks == c.calls);
    for (size_t i = 0; i < r.x.size(); ++i)
      CHECK(r.y[i] == r.x[i] + 1);
    // The caller's dims are its own: the views the chunks ran on were not.
    CHECK(r.xDims[0] == c.batch);
  }

  chunks.clear();
  Rows large(11, 11);
  CHECK(mlcc_model_run(&kRows, ctx, &large.in, &large.out) ==
        MLCC_SHAPE_MISMATCH);
  CHECK(lastError() == "mlcc_rows_run: input 'x' dim 0 ('batch') is 11; the "
                       "model was compiled for batch 1..10");
  Rows none(0, 0);
  CHECK(mlcc_model_run(&kRows, ctx, &none.in, &none.out) ==
        MLCC_SHAPE_MISMATCH);
  Rows wrongOut(7, 6);
  CHECK(mlcc_model_run(&kRows, ctx, &wrongOut.in, &wrongOut.out) ==
        MLCC_SHAPE_MISMATCH);
  CHECK(lastError() == "mlcc_rows_run: output 'y' dim 0 ('batch') is 6, but "
                       "input 'x' gives it 7");
  CHECK(chunks.empty());
  mlcc_model_destroy(ctx);
}

TEST_CASE("a malformed range is refused", "[runtime][range]") {
  mlcc_model_desc d = rowsDesc();
  mlcc_model_context *ctx = nullptr;
  SECTION("no variant for one item") {
    d.num_variants = 1;
    CHECK(mlcc_model_create(&d, nullptr, &ctx) == MLCC_INVALID_ARGUMENT);
    CHECK(lastError() == "mlcc_rows_create: the model descriptor's range "
                         "'batch' has no variant for one item");
  }
  SECTION("min above max") {
    const mlcc_model_range range = {"batch", 5, 4, kMapped};
    d.range = &range;
    CHECK(mlcc_model_create(&d, nullptr, &ctx) == MLCC_INVALID_ARGUMENT);
  }
  SECTION("a mapped tensor with a static dim 0") {
    const int64_t fixed[] = {4, 3};
    const mlcc_model_tensor_desc outputs[] = {{"y", fixed, 2, MLCC_DTYPE_F32}};
    d.outputs = outputs;
    const int64_t dims4[] = {4, 3, 4, 3};
    const mlcc_model_variant variants[] = {{dims4, 64, rowsEntry<4>}};
    d.variants = variants;
    d.num_variants = 1;
    CHECK(mlcc_model_create(&d, nullptr, &ctx) == MLCC_INVALID_ARGUMENT);
  }
  CHECK(ctx == nullptr);
}

namespace {

// x [batch, 3] mapped, s [2] not: y = x + s[0].
template <int Batch>
int32_t shiftEntry(void *, const void *, const void *const *inputs,
                   void *const *outputs, mlcc_threadpool *) {
  const float *x = static_cast<const float *>(inputs[0]);
  const float *s = static_cast<const float *>(inputs[1]);
  float *y = static_cast<float *>(outputs[0]);
  for (int i = 0; i < Batch * 3; ++i)
    y[i] = x[i] + s[0];
  return MLCC_OK;
}

const int64_t kPair[] = {2};
const mlcc_model_tensor_desc kShiftInputs[] = {
    {"x", kDynamic, 2, MLCC_DTYPE_F32}, {"s", kPair, 1, MLCC_DTYPE_F32}};
const int64_t kShift1[] = {1, 3, 2, 1, 3};
const int64_t kShift4[] = {4, 3, 2, 4, 3};
const mlcc_model_variant kShiftVariants[] = {{kShift4, 64, shiftEntry<4>},
                                             {kShift1, 64, shiftEntry<1>}};
const uint8_t kShiftMapped[] = {1, 0, 1};
const mlcc_model_range kShiftRange = {"batch", 1, 10, kShiftMapped};

mlcc_model_desc shiftDesc() {
  mlcc_model_desc d = rowsDesc();
  d.name = "shift";
  d.num_inputs = 2;
  d.inputs = kShiftInputs;
  d.variants = kShiftVariants;
  d.range = &kShiftRange;
  return d;
}

} // namespace

TEST_CASE(
    "an input the range does not map is an error with missing or other dims",
    "[runtime][range]") {
  const mlcc_model_desc desc = shiftDesc();
  mlcc_model_context *ctx = nullptr;
  REQUIRE(mlcc_model_create(&desc, nullptr, &ctx) == MLCC_OK);
  Rows r(6, 6);
  float s[2] = {10, 0};
  int64_t sDims[1] = {2};
  mlcc_tensor in[2] = {r.in, {s, sDims, 1, MLCC_DTYPE_F32}};
  REQUIRE(mlcc_model_run(&desc, ctx, in, &r.out) == MLCC_OK);
  for (size_t i = 0; i < r.x.size(); ++i)
    CHECK(r.y[i] == r.x[i] + 10);
  // Dims missing, or of another rank: an error status, never a read of
  // them as the descriptor's.
  in[1].dims = nullptr;
  CHECK(mlcc_model_run(&desc, ctx, in, &r.out) != MLCC_OK);
  int64_t three[3] = {2, 1, 1};
  in[1].dims = three;
  in[1].rank = 3;
  CHECK(mlcc_model_run(&desc, ctx, in, &r.out) == MLCC_SHAPE_MISMATCH);
  CHECK(lastError().find("input 's'") != std::string::npos);
  mlcc_model_destroy(ctx);
}
