//===- PaddedTest.cpp - Models compiled for a range of lengths ------------===//
//
// The hand-written model "shift" (y = x + the run's length, x and y of shape
// [2, seq]) as `mlcc compile --dim seq=1..10,4` would give it: variants for
// buckets of 4 and 10 positions, each reading the run's length from its
// arena's last 8 bytes. A length below a bucket runs padded in the arena
// (zeros past the length, in each of the two rows), the outputs' positions
// copied out; a length outside the range, or outputs of another length, is
// an error naming the tensor and the dim; a malformed descriptor is refused.
//
//===----------------------------------------------------------------------===//

#include "mlcc/runtime.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

/// What each entry call saw: its bucket, the length in its arena, the
/// input it got and whether the padding it got was zeros.
struct Call {
  int bucket;
  int64_t length;
  const void *input;
  bool zeroPadding;
};
std::vector<Call> calls;

constexpr uint64_t kArena4 = 64, kArena10 = 128;

template <int Bucket, uint64_t ArenaBytes>
int32_t shiftEntry(void *arena, const void *, const void *const *inputs,
                   void *const *outputs, mlcc_threadpool *) {
  int64_t length = 0;
  std::memcpy(&length, static_cast<char *>(arena) + ArenaBytes - 8, 8);
  const float *x = static_cast<const float *>(inputs[0]);
  float *y = static_cast<float *>(outputs[0]);
  bool zeros = true;
  for (int row = 0; row < 2; ++row)
    for (int i = 0; i < Bucket; ++i) {
      float v = x[row * Bucket + i];
      zeros &= i < length || v == 0.0f;
      y[row * Bucket + i] = v + static_cast<float>(length);
    }
  calls.push_back({Bucket, length, inputs[0], zeros});
  return MLCC_OK;
}

const int64_t kDynamic[] = {2, -1};
const mlcc_model_tensor_desc kInputs[] = {{"x", kDynamic, 2, MLCC_DTYPE_F32}};
const mlcc_model_tensor_desc kOutputs[] = {{"y", kDynamic, 2, MLCC_DTYPE_F32}};
const int64_t kSeq4[] = {2, 4, 2, 4};
const int64_t kSeq10[] = {2, 10, 2, 10};
const mlcc_model_variant kVariants[] = {
    {kSeq4, kArena4, shiftEntry<4, kArena4>},
    {kSeq10, kArena10, shiftEntry<10, kArena10>}};
const int8_t kAxes[] = {1, 1};
const mlcc_model_padded_dim kPadded = {"seq", 1, 10, kAxes, -1};

// The arena: the largest variant's, then its staging buffers (x and y at
// [2, 10] f32, 80 bytes each, 64-byte aligned: 128 each).
constexpr uint64_t kArenaBytes = kArena10 + 128 + 128;

mlcc_model_desc shiftDesc() {
  mlcc_model_desc d{};
  d.abi_version = MLCC_MODEL_ABI_VERSION;
  d.num_inputs = 1;
  d.num_outputs = 1;
  d.num_variants = 2;
  d.name = "shift";
  d.inputs = kInputs;
  d.outputs = kOutputs;
  d.arena_bytes = kArenaBytes;
  d.variants = kVariants;
  d.padded = &kPadded;
  return d;
}

const mlcc_model_desc kShift = shiftDesc();

struct Shift {
  std::vector<float> x, y;
  int64_t xDims[2], yDims[2];
  mlcc_tensor in, out;
  Shift(int64_t length, int64_t outLength)
      : x(2 * length),
        y(2 * outLength, -1), xDims{2, length}, yDims{2, outLength},
        in{x.data(), xDims, 2, MLCC_DTYPE_F32}, out{y.data(), yDims, 2,
                                                    MLCC_DTYPE_F32} {
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>(i + 1);
  }
};

std::string lastError() { return mlcc_last_error_message(); }

} // namespace

TEST_CASE("a length runs in the smallest bucket that holds it, padded",
          "[runtime][padded]") {
  mlcc_model_context *ctx = nullptr;
  REQUIRE(mlcc_model_create(&kShift, nullptr, &ctx) == MLCC_OK);
  for (int64_t length : {3, 4, 1, 9, 10}) {
    CAPTURE(length);
    calls.clear();
    Shift s(length, length);
    REQUIRE(mlcc_model_run(&kShift, ctx, &s.in, &s.out) == MLCC_OK);
    REQUIRE(calls.size() == 1);
    int bucket = length <= 4 ? 4 : 10;
    CHECK(calls[0].bucket == bucket);
    CHECK(calls[0].length == length);
    CHECK(calls[0].zeroPadding);
    // The caller's input itself at a bucket's length; a staged copy below.
    CHECK((calls[0].input == s.x.data()) == (length == bucket));
    for (size_t i = 0; i < s.y.size(); ++i)
      CHECK(s.y[i] == s.x[i] + static_cast<float>(length));
  }
  mlcc_model_destroy(ctx);
}

TEST_CASE("a length outside the range, outputs of another or no data are "
          "refused",
          "[runtime][padded]") {
  mlcc_model_context *ctx = nullptr;
  REQUIRE(mlcc_model_create(&kShift, nullptr, &ctx) == MLCC_OK);
  calls.clear();
  Shift tooLong(11, 11);
  CHECK(mlcc_model_run(&kShift, ctx, &tooLong.in, &tooLong.out) ==
        MLCC_SHAPE_MISMATCH);
  CHECK(lastError() == "mlcc_shift_run: input 'x' dim 1 ('seq') is 11; the "
                       "model was compiled for seq 1..10");
  Shift empty(0, 0);
  CHECK(mlcc_model_run(&kShift, ctx, &empty.in, &empty.out) ==
        MLCC_SHAPE_MISMATCH);
  Shift other(3, 4);
  CHECK(mlcc_model_run(&kShift, ctx, &other.in, &other.out) ==
        MLCC_SHAPE_MISMATCH);
  CHECK(lastError().find("output 'y'") != std::string::npos);
  // Checked before anything is copied into the bucket.
  Shift noData(3, 3);
  noData.in.data = nullptr;
  CHECK(mlcc_model_run(&kShift, ctx, &noData.in, &noData.out) ==
        MLCC_INVALID_ARGUMENT);
  CHECK(lastError().find("input 'x'") != std::string::npos);
  CHECK(calls.empty());
  mlcc_model_destroy(ctx);
}

TEST_CASE("a malformed range of lengths is refused", "[runtime][padded]") {
  mlcc_model_context *ctx = nullptr;
  auto refused = [&](const mlcc_model_desc &d) {
    ctx = nullptr;
    return mlcc_model_create(&d, nullptr, &ctx) == MLCC_INVALID_ARGUMENT &&
           ctx == nullptr;
  };
  mlcc_model_desc small = kShift;
  small.arena_bytes = kArenaBytes - 1; // no room for the staging buffers
  CHECK(refused(small));
  CHECK(lastError().find("does not fit") != std::string::npos);

  const int8_t noAxes[] = {-1, -1};
  mlcc_model_padded_dim none = kPadded;
  none.axes = noAxes;
  mlcc_model_desc d = kShift;
  d.padded = &none;
  CHECK(refused(d));

  const int8_t staticAxis[] = {0, 1}; // x's dim 0 is 2, not dynamic
  mlcc_model_padded_dim fixed = kPadded;
  fixed.axes = staticAxis;
  d.padded = &fixed;
  CHECK(refused(d));
  CHECK(lastError().find("not dynamic") != std::string::npos);

  mlcc_model_padded_dim shortRange = kPadded;
  shortRange.max = 8; // the bucket of 10 is past it
  d.padded = &shortRange;
  CHECK(refused(d));

  const int64_t mixed[] = {2, 4, 2, 10};
  const mlcc_model_variant mixedVariants[] = {
      {mixed, kArena4, shiftEntry<4, kArena4>},
      {kSeq10, kArena10, shiftEntry<10, kArena10>}};
  d = kShift;
  d.variants = mixedVariants;
  CHECK(refused(d));
  CHECK(lastError().find("different lengths") != std::string::npos);
}

namespace {

// "shift" over a batch range too, with x its own mask (--trim-padding x):
// chunks of one item, in buckets of 4 and 10.
template <int Bucket, uint64_t ArenaBytes>
int32_t itemEntry(void *arena, const void *, const void *const *inputs,
                  void *const *outputs, mlcc_threadpool *) {
  int64_t length = 0;
  std::memcpy(&length, static_cast<char *>(arena) + ArenaBytes - 8, 8);
  const float *x = static_cast<const float *>(inputs[0]);
  float *y = static_cast<float *>(outputs[0]);
  for (int i = 0; i < Bucket; ++i)
    y[i] = x[i] + static_cast<float>(length);
  calls.push_back({Bucket, length, inputs[0], true});
  return MLCC_OK;
}

const int64_t kBoth[] = {-1, -1};
const mlcc_model_tensor_desc kMaskIn[] = {{"x", kBoth, 2, MLCC_DTYPE_F32}};
const mlcc_model_tensor_desc kMaskOut[] = {{"y", kBoth, 2, MLCC_DTYPE_F32}};
const int64_t kItem4[] = {1, 4, 1, 4};
const int64_t kItem10[] = {1, 10, 1, 10};
const mlcc_model_variant kItemVariants[] = {
    {kItem4, kArena4, itemEntry<4, kArena4>},
    {kItem10, kArena10, itemEntry<10, kArena10>}};
const uint8_t kBatchMapped[] = {1, 1};
const mlcc_model_range kBatch = {"batch", 1, 4, kBatchMapped};
const mlcc_model_padded_dim kTrimmed = {"seq", 1, 10, kAxes, 0};

mlcc_model_desc trimmedDesc() {
  mlcc_model_desc d = shiftDesc();
  d.inputs = kMaskIn;
  d.outputs = kMaskOut;
  d.variants = kItemVariants;
  d.range = &kBatch;
  d.padded = &kTrimmed;
  // Staging for one item: x and y at [1, 10] f32, 64-byte aligned.
  d.arena_bytes = kArena10 + 64 + 64;
  return d;
}

const mlcc_model_desc kTrimmedShift = trimmedDesc();

} // namespace

TEST_CASE("each item runs at its mask's length (--trim-padding)",
          "[runtime][padded]") {
  mlcc_model_context *ctx = nullptr;
  REQUIRE(mlcc_model_create(&kTrimmedShift, nullptr, &ctx) == MLCC_OK);
  // Three items of 6 positions: tokens up to 3, all 6, and one after a
  // hole (not trimmed).
  std::vector<float> x = {1, 2, 3, 0, 0, 0, 1, 2, 3, 4, 5, 6, 1, 0, 3, 0, 0, 0};
  std::vector<float> y(x.size(), -1);
  int64_t dims[2] = {3, 6};
  mlcc_tensor in{x.data(), dims, 2, MLCC_DTYPE_F32};
  mlcc_tensor out{y.data(), dims, 2, MLCC_DTYPE_F32};
  calls.clear();
  REQUIRE(mlcc_model_run(&kTrimmedShift, ctx, &in, &out) == MLCC_OK);
  REQUIRE(calls.size() == 3);
  CHECK(calls[0].bucket == 4);
  CHECK(calls[0].length == 3);
  CHECK(calls[0].input != x.data()); // 3 of 4 positions: staged, padded
  CHECK(calls[1].length == 6);
  CHECK(calls[2].length == 6);
  const std::vector<float> want = {4,  5,  6,  0, 0, 0, 7, 8, 9,
                                   10, 11, 12, 7, 6, 9, 6, 6, 6};
  CHECK(y == want);

  // No item shorter than the run: the items as any range runs them.
  std::vector<float> full = {1, 1, 1, 1, 1, 1};
  std::vector<float> y2(full.size(), -1);
  int64_t dims2[2] = {2, 3};
  mlcc_tensor in2{full.data(), dims2, 2, MLCC_DTYPE_F32};
  mlcc_tensor out2{y2.data(), dims2, 2, MLCC_DTYPE_F32};
  calls.clear();
  REQUIRE(mlcc_model_run(&kTrimmedShift, ctx, &in2, &out2) == MLCC_OK);
  CHECK(calls.size() == 2);
  CHECK(y2 == std::vector<float>(6, 4));

  // Outputs of another length: the run's error, nothing trimmed or zeroed.
  int64_t shortDims[2] = {3, 5};
  mlcc_tensor shortOut{y.data(), shortDims, 2, MLCC_DTYPE_F32};
  CHECK(mlcc_model_run(&kTrimmedShift, ctx, &in, &shortOut) ==
        MLCC_SHAPE_MISMATCH);
  mlcc_model_destroy(ctx);
}

TEST_CASE("a malformed mask input is refused", "[runtime][padded]") {
  mlcc_model_context *ctx = nullptr;
  mlcc_model_padded_dim bad = kTrimmed;
  mlcc_model_desc d = kTrimmedShift;
  d.padded = &bad;
  for (int32_t mask : {1, -2}) {
    bad.mask_input = mask;
    CHECK(mlcc_model_create(&d, nullptr, &ctx) == MLCC_INVALID_ARGUMENT);
    CHECK(std::string(mlcc_last_error_message()).find("mask input") !=
          std::string::npos);
  }
  bad.mask_input = 0;
  d.range = nullptr; // items run alone only over a batch range
  CHECK(mlcc_model_create(&d, nullptr, &ctx) == MLCC_INVALID_ARGUMENT);
}
