//===- ModelTest.cpp - The model descriptor API: checks, contexts, runs ---===//
//
// Hand-written descriptors stand in for what the compiler emits: a model
// "twice" (y = 2 * x through the arena) whose entry records what it was
// given, so each test can say both what the runtime returned and whether the
// compiled code was reached. An x[0] of kHoldValue holds the entry until
// the test lets it go, to catch a context in the middle of a run.
//
//===----------------------------------------------------------------------===//

#include "mlcc/runtime.h"

// Not public: to plant a stale message that a failing run must replace.
#include "LastError.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string lastError() { return mlcc_last_error_message(); }

/// What the last entry call saw.
struct EntryLog {
  int calls = 0;
  void *arena = nullptr;
  mlcc_threadpool *pool = nullptr;
  const void *const *inputs = nullptr;
  void *const *outputs = nullptr;
};
EntryLog entryLog;

constexpr int64_t kCount = 6;

/// A run with x[0] == kHoldValue sets `held` and waits for `letGo`.
constexpr float kHoldValue = 1000;
std::atomic<bool> held{false}, letGo{false};

/// y = 2 * x, staged through the arena so that a missing or too-small arena
/// shows up (under ASan, or as wrong values). A negative x[0] is a
/// data-dependent failure, reported the way generated code reports one.
int32_t twiceEntry(void *arena, const void *weights, const void *const *inputs,
                   void *const *outputs, mlcc_threadpool *pool) {
  (void)weights;
  ++entryLog.calls;
  entryLog.arena = arena;
  entryLog.pool = pool;
  entryLog.inputs = inputs;
  entryLog.outputs = outputs;
  const float *x = static_cast<const float *>(inputs[0]);
  if (x[0] == kHoldValue) {
    held = true;
    while (!letGo)
      std::this_thread::yield();
  }
  if (x[0] < 0)
    return mlcc_model_fail(MLCC_OUT_OF_RANGE,
                           "node 'g' (Gather): index -7 out of range [-5, 5)");
  float *scratch = static_cast<float *>(arena);
  for (int64_t i = 0; i < kCount; ++i)
    scratch[i] = 2 * x[i];
  float *y = static_cast<float *>(outputs[0]);
  std::memcpy(y, scratch, kCount * sizeof(float));
  return MLCC_OK;
}

const int64_t kDims[] = {2, 3};
const mlcc_model_tensor_desc kTwiceInputs[] = {{"x", kDims, 2, MLCC_DTYPE_F32}};
const mlcc_model_tensor_desc kTwiceOutputs[] = {
    {"y", kDims, 2, MLCC_DTYPE_F32}};

mlcc_model_desc twiceDesc() {
  mlcc_model_desc d{};
  d.abi_version = MLCC_MODEL_ABI_VERSION;
  d.num_inputs = 1;
  d.num_outputs = 1;
  d.name = "twice";
  d.inputs = kTwiceInputs;
  d.outputs = kTwiceOutputs;
  d.arena_bytes = kCount * sizeof(float);
  d.entry = twiceEntry;
  return d;
}

const mlcc_model_desc kTwice = twiceDesc();

/// A context of kTwice for one test.
struct Context {
  mlcc_model_context *ctx = nullptr;
  explicit Context(mlcc_threadpool *pool = nullptr,
                   const mlcc_model_desc *desc = &kTwice) {
    REQUIRE(mlcc_model_create(desc, pool, &ctx) == MLCC_OK);
    REQUIRE(ctx != nullptr);
  }
  ~Context() { mlcc_model_destroy(ctx); }
};

/// x, y and their descriptors for one run of kTwice.
struct TwiceTensors {
  float x[kCount] = {1, 2, 3, 4, 5, 6};
  float y[kCount] = {};
  int64_t xDims[2] = {2, 3};
  int64_t yDims[2] = {2, 3};
  mlcc_tensor in{x, xDims, 2, MLCC_DTYPE_F32};
  mlcc_tensor out{y, yDims, 2, MLCC_DTYPE_F32};

  bool doubled() const {
    for (int64_t i = 0; i < kCount; ++i)
      if (y[i] != 2 * x[i])
        return false;
    return true;
  }
};

/// 64-byte aligned memory for run_with_arena.
struct AlignedBuffer {
  void *data;
  explicit AlignedBuffer(size_t size) : data(std::aligned_alloc(64, size)) {
    REQUIRE(data != nullptr);
  }
  ~AlignedBuffer() { std::free(data); }
};

/// Creates a context for `desc`, expecting `status`, and checks that the
/// out parameter is NULL on failure.
mlcc_status createFails(const mlcc_model_desc &desc) {
  mlcc_model_context *ctx = reinterpret_cast<mlcc_model_context *>(&ctx);
  mlcc_status status = mlcc_model_create(&desc, nullptr, &ctx);
  CHECK(ctx == nullptr);
  mlcc_model_destroy(ctx);
  return status;
}

} // namespace

TEST_CASE("the model descriptor layout is fixed", "[runtime][model]") {
  // The compiler writes these structs as constant data, field by offset.
  CHECK(sizeof(mlcc_model_tensor_desc) == 32);
  CHECK(offsetof(mlcc_model_tensor_desc, name) == 0);
  CHECK(offsetof(mlcc_model_tensor_desc, dims) == 8);
  CHECK(offsetof(mlcc_model_tensor_desc, rank) == 16);
  CHECK(offsetof(mlcc_model_tensor_desc, dtype) == 20);
  CHECK(offsetof(mlcc_model_tensor_desc, max_dims) == 24);
  CHECK(sizeof(mlcc_model_desc) == 128);
  CHECK(offsetof(mlcc_model_desc, abi_version) == 0);
  CHECK(offsetof(mlcc_model_desc, num_inputs) == 4);
  CHECK(offsetof(mlcc_model_desc, num_outputs) == 8);
  CHECK(offsetof(mlcc_model_desc, num_variants) == 12);
  CHECK(offsetof(mlcc_model_desc, name) == 16);
  CHECK(offsetof(mlcc_model_desc, inputs) == 24);
  CHECK(offsetof(mlcc_model_desc, outputs) == 32);
  CHECK(offsetof(mlcc_model_desc, arena_bytes) == 40);
  CHECK(offsetof(mlcc_model_desc, entry) == 48);
  CHECK(offsetof(mlcc_model_desc, weights_bytes) == 56);
  CHECK(offsetof(mlcc_model_desc, weights_fingerprint) == 64);
  CHECK(offsetof(mlcc_model_desc, variants) == 72);
  CHECK(offsetof(mlcc_model_desc, output_dims_offset) == 80);
  CHECK(offsetof(mlcc_model_desc, device) == 88);
  CHECK(offsetof(mlcc_model_desc, cpu_features) == 96);
  CHECK(offsetof(mlcc_model_desc, cpu_name) == 104);
  CHECK(offsetof(mlcc_model_desc, range) == 112);
  CHECK(offsetof(mlcc_model_desc, padded) == 120);
  CHECK(sizeof(mlcc_model_padded_dim) == 40);
  CHECK(offsetof(mlcc_model_padded_dim, mask_input) == 32);
  CHECK(offsetof(mlcc_model_padded_dim, min) == 8);
  CHECK(offsetof(mlcc_model_padded_dim, max) == 16);
  CHECK(offsetof(mlcc_model_padded_dim, axes) == 24);
  CHECK(sizeof(mlcc_model_range) == 32);
  CHECK(offsetof(mlcc_model_range, min) == 8);
  CHECK(offsetof(mlcc_model_range, max) == 16);
  CHECK(offsetof(mlcc_model_range, mapped) == 24);
  CHECK(sizeof(mlcc_device_program) == 32);
  CHECK(offsetof(mlcc_device_program, kernels) == 8);
  CHECK(offsetof(mlcc_device_program, weights) == 16);
  CHECK(offsetof(mlcc_device_program, weights_bytes) == 24);
  CHECK(sizeof(mlcc_device_kernel_desc) == 40);
  CHECK(offsetof(mlcc_device_kernel_desc, code) == 8);
  CHECK(offsetof(mlcc_device_kernel_desc, code_bytes) == 16);
  CHECK(offsetof(mlcc_device_kernel_desc, num_buffers) == 24);
  CHECK(offsetof(mlcc_device_kernel_desc, workgroup_size) == 28);
  CHECK(sizeof(mlcc_model_variant) == 24);
  CHECK(offsetof(mlcc_model_variant, arena_bytes) == 8);
  CHECK(offsetof(mlcc_model_variant, entry) == 16);
  CHECK(MLCC_MODEL_ABI_VERSION == 8);
  // The weights file's header, as lowering/Common/CompileModel.cpp writes it.
  CHECK(sizeof(mlcc_weights_header) == 64);
  CHECK(offsetof(mlcc_weights_header, header_bytes) == 8);
  CHECK(offsetof(mlcc_weights_header, data_bytes) == 16);
  CHECK(offsetof(mlcc_weights_header, fingerprint) == 24);
  CHECK(offsetof(mlcc_weights_header, model_name) == 32);
}

TEST_CASE("a model runs in its context's arena", "[runtime][model]") {
  mlcc_threadpool *pool = nullptr;
  REQUIRE(mlcc_threadpool_create(2, &pool) == MLCC_OK);
  {
    Context c(pool);
    TwiceTensors t;
    entryLog = {};
    REQUIRE(mlcc_model_run(&kTwice, c.ctx, &t.in, &t.out) == MLCC_OK);
    CHECK(t.doubled());
    CHECK(entryLog.calls == 1);
    CHECK(entryLog.pool == pool);
    REQUIRE(entryLog.arena != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(entryLog.arena) % 64 == 0);
    void *firstArena = entryLog.arena;

    // Again, through the raw pointers: the same arena, the same pool.
    const void *inputs[] = {t.x};
    float y2[kCount] = {};
    void *outputs[] = {y2};
    REQUIRE(mlcc_model_run_pointers(&kTwice, c.ctx, inputs, outputs) ==
            MLCC_OK);
    CHECK(entryLog.calls == 2);
    CHECK(entryLog.arena == firstArena);
    CHECK(entryLog.pool == pool);
    CHECK(y2[5] == 12.0f);
  }
  mlcc_threadpool_destroy(pool);

  // Without a pool the entry gets NULL (single-threaded).
  Context c;
  TwiceTensors t;
  entryLog = {};
  REQUIRE(mlcc_model_run(&kTwice, c.ctx, &t.in, &t.out) == MLCC_OK);
  CHECK(entryLog.pool == nullptr);
  CHECK(t.doubled());
}

TEST_CASE("run_with_arena runs in caller memory", "[runtime][model]") {
  AlignedBuffer arena(64);
  TwiceTensors t;
  entryLog = {};
  REQUIRE(mlcc_model_run_with_arena(&kTwice, arena.data, kCount * sizeof(float),
                                    &t.in, &t.out) == MLCC_OK);
  CHECK(t.doubled());
  CHECK(entryLog.arena == arena.data);
  CHECK(entryLog.pool == nullptr);
  // More than needed is fine.
  REQUIRE(mlcc_model_run_with_arena(&kTwice, arena.data, 64, &t.in, &t.out) ==
          MLCC_OK);
}

TEST_CASE("create rejects a malformed descriptor", "[runtime][model]") {
  mlcc_model_desc d = twiceDesc();
  int64_t badDims[] = {2, -3};
  mlcc_model_tensor_desc bad[] = {{"x", kDims, 2, MLCC_DTYPE_F32}};
  d.inputs = bad;

  SECTION("NULL descriptor or out parameter") {
    mlcc_model_context *ctx = nullptr;
    CHECK(mlcc_model_create(nullptr, nullptr, &ctx) == MLCC_INVALID_ARGUMENT);
    CHECK(ctx == nullptr);
    CHECK(lastError() == "mlcc_model_create: the model descriptor is NULL");
    CHECK(mlcc_model_create(&kTwice, nullptr, nullptr) ==
          MLCC_INVALID_ARGUMENT);
    CHECK(lastError() == "mlcc_twice_create: out is NULL");
  }
  SECTION("another ABI version") {
    d.abi_version = 1;
    CHECK(createFails(d) == MLCC_UNSUPPORTED);
    CHECK(lastError() ==
          "mlcc_model_create: the model was compiled for model ABI version 1, "
          "but this runtime supports version 8; rebuild the model with a "
          "matching mlcc");
  }
  SECTION("no name") {
    d.name = nullptr;
    CHECK(createFails(d) == MLCC_INVALID_ARGUMENT);
    CHECK(lastError() == "mlcc_model_create: the model descriptor has no name");
  }
  SECTION("a weights fingerprint without a weights file") {
    d.weights_fingerprint = 1;
    CHECK(createFails(d) == MLCC_INVALID_ARGUMENT);
    CHECK(lastError() == "mlcc_twice_create: the model descriptor has a "
                         "weights fingerprint but no weights file");
  }
  SECTION("no entry function") {
    d.entry = nullptr;
    CHECK(createFails(d) == MLCC_INVALID_ARGUMENT);
    CHECK(lastError() ==
          "mlcc_twice_create: the model descriptor has no entry function");
  }
  SECTION("counts without arrays") {
    d.inputs = nullptr;
    CHECK(createFails(d) == MLCC_INVALID_ARGUMENT);
    CHECK(lastError() == "mlcc_twice_create: the model descriptor has 1 "
                         "inputs but no input array");
    d = twiceDesc();
    d.num_outputs = 3;
    d.outputs = nullptr;
    CHECK(createFails(d) == MLCC_INVALID_ARGUMENT);
    CHECK(lastError() == "mlcc_twice_create: the model descriptor has 3 "
                         "outputs but no output array");
  }
  SECTION("a tensor without a name") {
    bad[0].name = nullptr;
    CHECK(createFails(d) == MLCC_INVALID_ARGUMENT);
    CHECK(lastError() ==
          "mlcc_twice_create: input 0 of the model descriptor has no name");
  }
  SECTION("a negative rank") {
    bad[0].rank = -1;
    CHECK(createFails(d) == MLCC_INVALID_ARGUMENT);
    CHECK(lastError() ==
          "mlcc_twice_create: input 0 ('x') has a negative rank (-1)");
  }
  SECTION("a rank without dims") {
    bad[0].dims = nullptr;
    CHECK(createFails(d) == MLCC_INVALID_ARGUMENT);
    CHECK(lastError() == "mlcc_twice_create: input 0 ('x') has rank 2 but no "
                         "dims");
  }
  SECTION("a negative dim") {
    bad[0].dims = badDims;
    CHECK(createFails(d) == MLCC_INVALID_ARGUMENT);
    CHECK(lastError() ==
          "mlcc_twice_create: input 0 ('x') has a negative dim 1 (-3)");
  }
  SECTION("an unknown dtype, on an output") {
    d.inputs = kTwiceInputs;
    mlcc_model_tensor_desc out[] = {{"y", kDims, 2, 99}};
    d.outputs = out;
    CHECK(createFails(d) == MLCC_INVALID_ARGUMENT);
    CHECK(lastError() ==
          "mlcc_twice_create: output 0 ('y') has an unknown dtype 99");
    out[0].dtype = MLCC_DTYPE_UNDEFINED;
    CHECK(createFails(d) == MLCC_INVALID_ARGUMENT);
  }
  SECTION("a byte size that overflows") {
    int64_t huge[] = {int64_t(1) << 31, int64_t(1) << 31};
    bad[0].dims = huge;
    CHECK(createFails(d) == MLCC_OUT_OF_RANGE);
    CHECK(lastError() ==
          "mlcc_twice_create: the byte size of input 0 ('x') overflows");
  }
  SECTION("an arena too large to allocate") {
    d.arena_bytes = UINT64_MAX;
    CHECK(createFails(d) == MLCC_OUT_OF_MEMORY);
    CHECK(lastError().rfind("mlcc_twice_create: ", 0) == 0);
  }
}

TEST_CASE("run checks every tensor before the model runs", "[runtime][model]") {
  Context c;
  TwiceTensors t;
  entryLog = {};

  SECTION("wrong dtype") {
    t.in.dtype = MLCC_DTYPE_F64;
    CHECK(mlcc_model_run(&kTwice, c.ctx, &t.in, &t.out) == MLCC_TYPE_MISMATCH);
    CHECK(lastError() == "input 'x': expected f32 elements, got f64");
  }
  SECTION("wrong rank") {
    t.in.rank = 1;
    CHECK(mlcc_model_run(&kTwice, c.ctx, &t.in, &t.out) == MLCC_SHAPE_MISMATCH);
    CHECK(lastError() == "input 'x': expected 2 dims, got 1");
  }
  SECTION("wrong dim, on the output") {
    t.yDims[1] = 4;
    CHECK(mlcc_model_run(&kTwice, c.ctx, &t.in, &t.out) == MLCC_SHAPE_MISMATCH);
    CHECK(lastError() ==
          "output 'y': dim 1 is 4, expected 3 (shape [2, 4], expected [2, 3])");
  }
  SECTION("NULL data") {
    t.out.data = nullptr;
    CHECK(mlcc_model_run(&kTwice, c.ctx, &t.in, &t.out) ==
          MLCC_INVALID_ARGUMENT);
    CHECK(lastError() == "output 'y': data is NULL for 6 elements");
  }
  SECTION("NULL arrays") {
    CHECK(mlcc_model_run(&kTwice, c.ctx, nullptr, &t.out) ==
          MLCC_INVALID_ARGUMENT);
    CHECK(lastError() == "mlcc_twice_run: inputs is NULL (the model has 1)");
    CHECK(mlcc_model_run(&kTwice, c.ctx, &t.in, nullptr) ==
          MLCC_INVALID_ARGUMENT);
    CHECK(lastError() == "mlcc_twice_run: outputs is NULL (the model has 1)");
  }
  SECTION("NULL context or descriptor") {
    CHECK(mlcc_model_run(&kTwice, nullptr, &t.in, &t.out) ==
          MLCC_INVALID_ARGUMENT);
    CHECK(lastError() == "mlcc_twice_run: ctx is NULL");
    CHECK(mlcc_model_run(nullptr, c.ctx, &t.in, &t.out) ==
          MLCC_INVALID_ARGUMENT);
    CHECK(lastError() == "mlcc_model_run: the model descriptor is NULL");
  }
  SECTION("a context of another model") {
    mlcc_model_desc other = twiceDesc();
    other.name = "other";
    Context otherCtx(nullptr, &other);
    CHECK(mlcc_model_run(&kTwice, otherCtx.ctx, &t.in, &t.out) ==
          MLCC_INVALID_ARGUMENT);
    CHECK(lastError() ==
          "mlcc_twice_run: the context was created for another model "
          "('other')");
    // An identical copy is still another descriptor.
    CHECK(mlcc_model_run(&other, c.ctx, &t.in, &t.out) ==
          MLCC_INVALID_ARGUMENT);
  }
  CHECK(entryLog.calls == 0);
  // Nothing was written to the output.
  CHECK(t.y[0] == 0.0f);
}

TEST_CASE("run_pointers checks only NULLs", "[runtime][model]") {
  Context c;
  float x[kCount] = {1}, y[kCount] = {};
  const void *inputs[] = {x};
  void *outputs[] = {y};
  const void *nullInputs[] = {nullptr};
  void *nullOutputs[] = {nullptr};
  entryLog = {};
  CHECK(mlcc_model_run_pointers(&kTwice, c.ctx, nullInputs, outputs) ==
        MLCC_INVALID_ARGUMENT);
  CHECK(lastError() ==
        "mlcc_twice_run_static: input 'x': data is NULL for 6 elements");
  CHECK(mlcc_model_run_pointers(&kTwice, c.ctx, inputs, nullOutputs) ==
        MLCC_INVALID_ARGUMENT);
  CHECK(lastError() ==
        "mlcc_twice_run_static: output 'y': data is NULL for 6 elements");
  CHECK(mlcc_model_run_pointers(&kTwice, c.ctx, nullptr, outputs) ==
        MLCC_INVALID_ARGUMENT);
  CHECK(lastError() ==
        "mlcc_twice_run_static: inputs is NULL (the model has 1)");
  CHECK(mlcc_model_run_pointers(&kTwice, c.ctx, inputs, nullptr) ==
        MLCC_INVALID_ARGUMENT);
  CHECK(mlcc_model_run_pointers(&kTwice, nullptr, inputs, outputs) ==
        MLCC_INVALID_ARGUMENT);
  CHECK(lastError() == "mlcc_twice_run_static: ctx is NULL");
  CHECK(entryLog.calls == 0);
}

namespace {
/// Counts its calls; touches no data (its tensors are empty).
int32_t emptyEntry(void *, const void *, const void *const *inputs,
                   void *const *outputs,
                   mlcc_threadpool *) {
  ++entryLog.calls;
  entryLog.inputs = inputs;
  entryLog.outputs = outputs;
  return MLCC_OK;
}
} // namespace

TEST_CASE("tensors without elements may have NULL data", "[runtime][model]") {
  const int64_t emptyDims[] = {0, 3};
  const mlcc_model_tensor_desc in[] = {{"e", emptyDims, 2, MLCC_DTYPE_I64}};
  const mlcc_model_tensor_desc out[] = {{"s", nullptr, 0, MLCC_DTYPE_BOOL}};
  mlcc_model_desc d{};
  d.abi_version = MLCC_MODEL_ABI_VERSION;
  d.num_inputs = 1;
  d.num_outputs = 1;
  d.name = "empty";
  d.inputs = in;
  d.outputs = out;
  d.entry = emptyEntry; // arena_bytes 0: the context still gets an arena
  Context c(nullptr, &d);
  entryLog = {};

  int64_t dims[] = {0, 3};
  bool scalar = false;
  mlcc_tensor e{nullptr, dims, 2, MLCC_DTYPE_I64};
  mlcc_tensor s{&scalar, nullptr, 0, MLCC_DTYPE_BOOL};
  CHECK(mlcc_model_run(&d, c.ctx, &e, &s) == MLCC_OK);
  const void *inputs[] = {nullptr};
  void *outputs[] = {&scalar};
  CHECK(mlcc_model_run_pointers(&d, c.ctx, inputs, outputs) == MLCC_OK);
  // A scalar has one element: its data must be there.
  void *nullOutputs[] = {nullptr};
  CHECK(mlcc_model_run_pointers(&d, c.ctx, inputs, nullOutputs) ==
        MLCC_INVALID_ARGUMENT);
  CHECK(lastError() ==
        "mlcc_empty_run_static: output 's': data is NULL for 1 elements");
  // No arena is needed at all: NULL of size 0 is a valid one.
  CHECK(mlcc_model_run_with_arena(&d, nullptr, 0, &e, &s) == MLCC_OK);
  CHECK(entryLog.calls == 3);
}

namespace {
constexpr uint32_t kWide = 20; // more than fit in the runtime's stack arrays

/// out[o] = sum of in[i][0], for a model with kWide inputs and outputs.
int32_t sumEntry(void *, const void *, const void *const *inputs,
                 void *const *outputs,
                 mlcc_threadpool *) {
  ++entryLog.calls;
  float sum = 0;
  for (uint32_t i = 0; i < kWide; ++i)
    sum += *static_cast<const float *>(inputs[i]);
  for (uint32_t o = 0; o < kWide; ++o)
    *static_cast<float *>(outputs[o]) = sum + static_cast<float>(o);
  return MLCC_OK;
}
} // namespace

TEST_CASE("a model with many inputs and outputs", "[runtime][model]") {
  const int64_t one[] = {1};
  std::vector<std::string> names;
  for (uint32_t i = 0; i < kWide; ++i)
    names.push_back("t" + std::to_string(i));
  std::vector<mlcc_model_tensor_desc> tensors;
  for (uint32_t i = 0; i < kWide; ++i)
    tensors.push_back({names[i].c_str(), one, 1, MLCC_DTYPE_F32});
  mlcc_model_desc d{};
  d.abi_version = MLCC_MODEL_ABI_VERSION;
  d.num_inputs = kWide;
  d.num_outputs = kWide;
  d.name = "wide";
  d.inputs = tensors.data();
  d.outputs = tensors.data();
  d.arena_bytes = 64;
  d.entry = sumEntry;
  Context c(nullptr, &d);

  std::vector<float> x(kWide), y(kWide, -1.0f);
  std::vector<int64_t> dims(kWide, 1);
  std::vector<mlcc_tensor> in, out;
  for (uint32_t i = 0; i < kWide; ++i) {
    x[i] = static_cast<float>(i);
    in.push_back({&x[i], &dims[i], 1, MLCC_DTYPE_F32});
    out.push_back({&y[i], &dims[i], 1, MLCC_DTYPE_F32});
  }
  entryLog = {};
  REQUIRE(mlcc_model_run(&d, c.ctx, in.data(), out.data()) == MLCC_OK);
  CHECK(entryLog.calls == 1);
  // 0 + 1 + ... + 19 = 190, plus the output's index.
  for (uint32_t o = 0; o < kWide; ++o)
    CHECK(y[o] == 190.0f + static_cast<float>(o));

  // The last tensor is checked too, with its own name.
  in[kWide - 1].dtype = MLCC_DTYPE_I32;
  CHECK(mlcc_model_run(&d, c.ctx, in.data(), out.data()) == MLCC_TYPE_MISMATCH);
  CHECK(lastError() == "input 't19': expected f32 elements, got i32");
}

TEST_CASE("run_with_arena checks the arena", "[runtime][model]") {
  AlignedBuffer arena(128);
  TwiceTensors t;
  entryLog = {};
  char *base = static_cast<char *>(arena.data);

  CHECK(mlcc_model_run_with_arena(&kTwice, base + 4, 64, &t.in, &t.out) ==
        MLCC_INVALID_ARGUMENT);
  CHECK(lastError().rfind("mlcc_twice_run_with_arena: arena ", 0) == 0);
  CHECK(lastError().find("is not 64-byte aligned (offset 4)") !=
        std::string::npos);

  CHECK(mlcc_model_run_with_arena(&kTwice, base, 23, &t.in, &t.out) ==
        MLCC_OUT_OF_RANGE);
  CHECK(lastError() == "mlcc_twice_run_with_arena: arena too small: 23 bytes "
                       "given, 24 required");

  CHECK(mlcc_model_run_with_arena(&kTwice, nullptr, 0, &t.in, &t.out) ==
        MLCC_OUT_OF_RANGE);
  CHECK(mlcc_model_run_with_arena(&kTwice, nullptr, 64, &t.in, &t.out) ==
        MLCC_INVALID_ARGUMENT);
  CHECK(lastError() ==
        "mlcc_twice_run_with_arena: arena is NULL but arena_size is 64");

  // The descriptor is checked on every call: there is no context to trust.
  mlcc_model_desc d = twiceDesc();
  d.abi_version = 0;
  CHECK(mlcc_model_run_with_arena(&d, base, 64, &t.in, &t.out) ==
        MLCC_UNSUPPORTED);
  CHECK(lastError().rfind("mlcc_model_run_with_arena: the model was compiled "
                          "for model ABI version 0",
                          0) == 0);
  CHECK(mlcc_model_run_with_arena(nullptr, base, 64, &t.in, &t.out) ==
        MLCC_INVALID_ARGUMENT);

  // And so are the tensors.
  t.xDims[0] = 3;
  CHECK(mlcc_model_run_with_arena(&kTwice, base, 64, &t.in, &t.out) ==
        MLCC_SHAPE_MISMATCH);
  CHECK(lastError() ==
        "input 'x': dim 0 is 3, expected 2 (shape [3, 3], expected [2, 3])");
  CHECK(entryLog.calls == 0);
}

TEST_CASE("a failure inside the model passes through", "[runtime][model]") {
  Context c;
  TwiceTensors t;
  t.x[0] = -1;
  entryLog = {};
  CHECK(mlcc_model_run(&kTwice, c.ctx, &t.in, &t.out) == MLCC_OUT_OF_RANGE);
  CHECK(lastError() == "node 'g' (Gather): index -7 out of range [-5, 5)");
  CHECK(entryLog.calls == 1);

  const void *inputs[] = {t.x};
  void *outputs[] = {t.y};
  mlcc_last_error_set(MLCC_INTERNAL, "stale");
  CHECK(mlcc_model_run_pointers(&kTwice, c.ctx, inputs, outputs) ==
        MLCC_OUT_OF_RANGE);
  CHECK(lastError() == "node 'g' (Gather): index -7 out of range [-5, 5)");

  AlignedBuffer arena(64);
  mlcc_last_error_set(MLCC_INTERNAL, "stale");
  CHECK(mlcc_model_run_with_arena(&kTwice, arena.data, 64, &t.in, &t.out) ==
        MLCC_OUT_OF_RANGE);
  CHECK(lastError() == "node 'g' (Gather): index -7 out of range [-5, 5)");
}

TEST_CASE("a context runs one call at a time", "[runtime][model]") {
  Context shared, other;
  TwiceTensors first;
  first.x[0] = kHoldValue;
  held = false;
  letGo = false;
  mlcc_status firstStatus = MLCC_INTERNAL;
  std::thread runner([&] {
    firstStatus = mlcc_model_run(&kTwice, shared.ctx, &first.in, &first.out);
  });
  while (!held)
    std::this_thread::yield();

  // The first call is inside the entry: a second one on its context is
  // refused, through either run function, without entering the model.
  TwiceTensors second;
  int callsBefore = entryLog.calls;
  CHECK(mlcc_model_run(&kTwice, shared.ctx, &second.in, &second.out) ==
        MLCC_INVALID_ARGUMENT);
  CHECK(lastError() ==
        "mlcc_twice_run: the context is running a call on another thread; a "
        "context runs one call at a time (create one per thread)");
  const void *inputs[] = {second.x};
  void *outputs[] = {second.y};
  CHECK(mlcc_model_run_pointers(&kTwice, shared.ctx, inputs, outputs) ==
        MLCC_INVALID_ARGUMENT);
  CHECK(lastError().rfind("mlcc_twice_run_static: the context is running", 0) ==
        0);
  CHECK(entryLog.calls == callsBefore);
  // Another context of the same model runs meanwhile.
  CHECK(mlcc_model_run(&kTwice, other.ctx, &second.in, &second.out) == MLCC_OK);
  CHECK(second.doubled());

  letGo = true;
  runner.join();
  CHECK(firstStatus == MLCC_OK);
  CHECK(first.doubled());
  // Released after the run, and after a failed one too.
  second.y[0] = 0;
  CHECK(mlcc_model_run(&kTwice, shared.ctx, &second.in, &second.out) ==
        MLCC_OK);
  CHECK(second.doubled());
  TwiceTensors failing;
  failing.x[0] = -1;
  CHECK(mlcc_model_run(&kTwice, shared.ctx, &failing.in, &failing.out) ==
        MLCC_OUT_OF_RANGE);
  CHECK(mlcc_model_run_pointers(&kTwice, shared.ctx, inputs, outputs) ==
        MLCC_OK);
}

TEST_CASE("model_fail records text, not a format", "[runtime][model]") {
  CHECK(mlcc_model_fail(MLCC_SHAPE_MISMATCH, "node '%s%n' failed") ==
        MLCC_SHAPE_MISMATCH);
  CHECK(lastError() == "node '%s%n' failed");
  CHECK(mlcc_model_fail(MLCC_OUT_OF_RANGE, nullptr) == MLCC_OUT_OF_RANGE);
  CHECK(lastError() == "(no message)");
  // A status the runtime does not know passes through unchanged.
  CHECK(mlcc_model_fail(42, "newer") == 42);
  CHECK(lastError() == "newer");
  // MLCC_OK would report a failed run as a success.
  CHECK(mlcc_model_fail(MLCC_OK, "oops") == MLCC_INTERNAL);
  CHECK(lastError() == "mlcc_model_fail called with MLCC_OK: oops");
  // Long messages are cut, not overflowed.
  std::string longText(2000, 'm');
  CHECK(mlcc_model_fail(MLCC_INTERNAL, longText.c_str()) == MLCC_INTERNAL);
  CHECK(lastError().size() < 2000);
}

namespace {

// A model whose output has a run-time extent, as the compiler writes one:
// y = the positive elements of x (at most kCount), its extent left at
// output_dims_offset in the arena.
constexpr uint64_t kPositivesDimsOffset = 64;

int32_t positivesEntry(void *arena, const void *, const void *const *inputs,
                       void *const *outputs, mlcc_threadpool *) {
  const float *x = static_cast<const float *>(inputs[0]);
  float *y = static_cast<float *>(outputs[0]);
  int64_t n = 0;
  for (int64_t i = 0; i < kCount; ++i)
    if (x[i] > 0)
      y[n++] = x[i];
  int64_t *dims = reinterpret_cast<int64_t *>(static_cast<char *>(arena) +
                                              kPositivesDimsOffset);
  dims[0] = n;
  return MLCC_OK;
}

const int64_t kFlatDims[] = {kCount};
const int64_t kRunTimeDims[] = {-1};
const mlcc_model_tensor_desc kPositivesInputs[] = {
    {"x", kFlatDims, 1, MLCC_DTYPE_F32}};
const mlcc_model_tensor_desc kPositivesOutputs[] = {
    {"y", kRunTimeDims, 1, MLCC_DTYPE_F32, kFlatDims}};

mlcc_model_desc positivesDesc() {
  mlcc_model_desc d{};
  d.abi_version = MLCC_MODEL_ABI_VERSION;
  d.num_inputs = 1;
  d.num_outputs = 1;
  d.name = "positives";
  d.inputs = kPositivesInputs;
  d.outputs = kPositivesOutputs;
  d.arena_bytes = kPositivesDimsOffset + sizeof(int64_t);
  d.entry = positivesEntry;
  d.output_dims_offset = kPositivesDimsOffset;
  return d;
}

} // namespace

TEST_CASE("an output's run-time extent reaches the caller's dims",
          "[runtime][model]") {
  mlcc_model_desc d = positivesDesc();
  Context c(nullptr, &d);
  float x[kCount] = {1, -2, 3, -4, 5, 0};
  float y[kCount] = {};
  int64_t xDims[1] = {kCount};
  mlcc_tensor in{x, xDims, 1, MLCC_DTYPE_F32};
  SECTION("a buffer of the bound gets the actual extent") {
    int64_t yDims[1] = {kCount};
    mlcc_tensor out{y, yDims, 1, MLCC_DTYPE_F32};
    REQUIRE(mlcc_model_run(&d, c.ctx, &in, &out) == MLCC_OK);
    CHECK(yDims[0] == 3);
    CHECK(y[0] == 1);
    CHECK(y[1] == 3);
    CHECK(y[2] == 5);
    // The next run starts from the capacity again, not the last extent.
    x[1] = 2;
    yDims[0] = kCount;
    REQUIRE(mlcc_model_run(&d, c.ctx, &in, &out) == MLCC_OK);
    CHECK(yDims[0] == 4);
  }
  SECTION("a buffer smaller than the bound is refused") {
    int64_t yDims[1] = {2};
    mlcc_tensor out{y, yDims, 1, MLCC_DTYPE_F32};
    CHECK(mlcc_model_run(&d, c.ctx, &in, &out) == MLCC_SHAPE_MISMATCH);
    CHECK(lastError() == "output 'y': dim 0 is 2, but its extent comes from "
                         "the data and may be up to 6: give a buffer of that "
                         "size");
    CHECK(yDims[0] == 2);
  }
  SECTION("raw pointers cannot say the extent") {
    const void *ins[] = {x};
    void *outs[] = {y};
    CHECK(mlcc_model_run_pointers(&d, c.ctx, ins, outs) == MLCC_UNSUPPORTED);
    CHECK(lastError() == "mlcc_positives_run_static: output 'y' of model "
                         "'positives' has extents that depend on the data; "
                         "run it with tensor descriptors");
  }
  SECTION("max_dims on an input is a broken descriptor") {
    mlcc_model_tensor_desc inputs[] = {
        {"x", kFlatDims, 1, MLCC_DTYPE_F32, kFlatDims}};
    d.inputs = inputs;
    CHECK(createFails(d) == MLCC_INVALID_ARGUMENT);
    CHECK(lastError() == "mlcc_positives_create: input 0 ('x') has max_dims");
  }
}
