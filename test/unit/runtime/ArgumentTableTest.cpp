//===- ArgumentTableTest.cpp - Every public function refuses bad arguments ===//
//
// One row per public runtime function that returns a status and one bad
// argument: NULL for each pointer it takes, and misaligned or too small
// memory where it takes caller memory. Each call must return the row's
// status (never crash, never MLCC_OK) and record a message naming the
// function and what is wrong. The argument checks of the tensors
// themselves (dtype, rank, dims) are ModelTest's and RuntimeTest's.
//
//===----------------------------------------------------------------------===//

#include "mlcc/runtime.h"

// Not public: to plant a stale message that each call must replace.
#include "LastError.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

int32_t okEntry(void *, const void *, const void *const *, void *const *,
                mlcc_threadpool *) {
  return MLCC_OK;
}

const int64_t kDims[] = {4};
const mlcc_model_tensor_desc kInputs[] = {{"x", kDims, 1, MLCC_DTYPE_F32}};
const mlcc_model_tensor_desc kOutputs[] = {{"y", kDims, 1, MLCC_DTYPE_F32}};

/// A model "table" with one input and one output of 4 floats, its weights
/// in the object (`external` false) or in a weights file.
mlcc_model_desc tableDesc(bool external) {
  mlcc_model_desc d{};
  d.abi_version = MLCC_MODEL_ABI_VERSION;
  d.num_inputs = 1;
  d.num_outputs = 1;
  d.name = "table";
  d.inputs = kInputs;
  d.outputs = kOutputs;
  d.arena_bytes = 64;
  d.entry = okEntry;
  d.weights_bytes = external ? 64 : 0;
  return d;
}

const mlcc_model_desc kEmbedded = tableDesc(false);
const mlcc_model_desc kExternal = tableDesc(true);

struct Row {
  /// How the message starts: the function's name, as the caller knows it.
  const char *call;
  mlcc_status expected;
  /// What the message must contain besides the function's name.
  const char *says;
  std::function<mlcc_status()> run;
};

} // namespace

TEST_CASE("every public function refuses a NULL or bad argument",
          "[runtime][arguments]") {
  alignas(64) static unsigned char memory[256];
  void *misaligned = memory + 8;
  mlcc_arena *arena = nullptr;
  mlcc_threadpool *pool = nullptr;
  mlcc_model_context *ctx = nullptr, *made = nullptr;
  REQUIRE(mlcc_model_create(&kEmbedded, nullptr, &ctx) == MLCC_OK);
  float x[4] = {}, y[4] = {};
  int64_t dims[1] = {4};
  mlcc_tensor in{x, dims, 1, MLCC_DTYPE_F32}, out{y, dims, 1, MLCC_DTYPE_F32};
  int64_t count = 0;
  size_t size = 0;
  mlcc_device *device = nullptr;
  mlcc_device_buffer *buffer = nullptr;
  mlcc_device_kernel *kernel = nullptr;
  mlcc_device_kernel_desc kernelDesc{};
  uint32_t groups[3] = {1, 1, 1};
  const void *inputPointers[] = {x};
  void *outputPointers[] = {y};
  const void *nullInput[] = {nullptr};
  auto noop = [](void *, int64_t, int64_t) {};

  const std::vector<Row> rows = {
      {"mlcc_arena_create", MLCC_INVALID_ARGUMENT, "NULL",
       [&] { return mlcc_arena_create(64, nullptr); }},
      {"mlcc_arena_wrap", MLCC_INVALID_ARGUMENT, "NULL",
       [&] { return mlcc_arena_wrap(nullptr, 64, 64, &arena); }},
      {"mlcc_arena_wrap", MLCC_INVALID_ARGUMENT, "NULL",
       [&] { return mlcc_arena_wrap(memory, 64, 64, nullptr); }},
      {"mlcc_arena_wrap", MLCC_INVALID_ARGUMENT, "aligned",
       [&] { return mlcc_arena_wrap(misaligned, 64, 64, &arena); }},
      {"mlcc_arena_wrap", MLCC_OUT_OF_RANGE, "64",
       [&] { return mlcc_arena_wrap(memory, 32, 64, &arena); }},
      {"mlcc_threadpool_create", MLCC_INVALID_ARGUMENT, "NULL",
       [&] { return mlcc_threadpool_create(1, nullptr); }},
      {"mlcc_threadpool_create", MLCC_INVALID_ARGUMENT, "-3",
       [&] { return mlcc_threadpool_create(-3, &pool); }},
      {"mlcc_threadpool_parallel_for", MLCC_INVALID_ARGUMENT, "NULL",
       [&] {
         return mlcc_threadpool_parallel_for(nullptr, 4, nullptr, nullptr);
       }},
      {"mlcc_threadpool_parallel_for", MLCC_INVALID_ARGUMENT, "-1",
       [&] {
         return mlcc_threadpool_parallel_for(nullptr, -1, noop, nullptr);
       }},
      // tensor_check's messages start with the name it is given.
      {"input 'x'", MLCC_INVALID_ARGUMENT, "NULL",
       [&] {
         return mlcc_tensor_check(nullptr, MLCC_DTYPE_F32, 1, dims,
                                  "input 'x'");
       }},
      {"mlcc_tensor_num_elements", MLCC_INVALID_ARGUMENT, "NULL",
       [&] { return mlcc_tensor_num_elements(nullptr, &count); }},
      {"mlcc_tensor_num_elements", MLCC_INVALID_ARGUMENT, "NULL",
       [&] { return mlcc_tensor_num_elements(&in, nullptr); }},
      {"mlcc_tensor_byte_size", MLCC_INVALID_ARGUMENT, "NULL",
       [&] { return mlcc_tensor_byte_size(nullptr, &size); }},
      {"mlcc_tensor_byte_size", MLCC_INVALID_ARGUMENT, "NULL",
       [&] { return mlcc_tensor_byte_size(&in, nullptr); }},
      {"mlcc_device_open", MLCC_INVALID_ARGUMENT, "NULL",
       [&] {
         return mlcc_device_open(MLCC_DEVICE_API_VULKAN, nullptr, nullptr);
       }},
      {"mlcc_device_buffer_create", MLCC_INVALID_ARGUMENT, "NULL",
       [&] { return mlcc_device_buffer_create(nullptr, 64, &buffer); }},
      {"mlcc_device_kernel_create", MLCC_INVALID_ARGUMENT, "NULL",
       [&] {
         return mlcc_device_kernel_create(nullptr, &kernelDesc, &kernel);
       }},
      {"mlcc_device_launch", MLCC_INVALID_ARGUMENT, "NULL",
       [&] {
         return mlcc_device_launch(nullptr, kernel, groups, nullptr, 0, nullptr,
                                   0);
       }},
      {"mlcc_device_write", MLCC_INVALID_ARGUMENT, "NULL",
       [&] { return mlcc_device_write(nullptr, buffer, 0, x, 16); }},
      {"mlcc_device_read", MLCC_INVALID_ARGUMENT, "NULL",
       [&] { return mlcc_device_read(nullptr, buffer, 0, y, 16); }},
      {"mlcc_device_wait", MLCC_INVALID_ARGUMENT, "NULL",
       [&] { return mlcc_device_wait(device); }},
      {"mlcc_device_set_stream", MLCC_INVALID_ARGUMENT, "NULL",
       [&] { return mlcc_device_set_stream(device, nullptr); }},
      {"mlcc_model_create", MLCC_INVALID_ARGUMENT, "NULL",
       [&] { return mlcc_model_create(nullptr, nullptr, &made); }},
      {"mlcc_table_create", MLCC_INVALID_ARGUMENT, "NULL",
       [&] { return mlcc_model_create(&kEmbedded, nullptr, nullptr); }},
      {"mlcc_model_create", MLCC_INVALID_ARGUMENT, "NULL",
       [&] {
         return mlcc_model_create_from_file(nullptr, "w.bin", nullptr, &made);
       }},
      {"mlcc_table_create", MLCC_INVALID_ARGUMENT, "weights_path is NULL",
       [&] {
         return mlcc_model_create_from_file(&kExternal, nullptr, nullptr,
                                            &made);
       }},
      {"mlcc_table_create", MLCC_INVALID_ARGUMENT, "NULL",
       [&] {
         return mlcc_model_create_from_file(&kExternal, "w.bin", nullptr,
                                            nullptr);
       }},
      {"mlcc_model_create_from_memory", MLCC_INVALID_ARGUMENT, "NULL",
       [&] {
         return mlcc_model_create_from_memory(nullptr, memory, 128, nullptr,
                                              &made);
       }},
      {"mlcc_table_create_from_memory", MLCC_INVALID_ARGUMENT, "image is NULL",
       [&] {
         return mlcc_model_create_from_memory(&kExternal, nullptr, 128, nullptr,
                                              &made);
       }},
      {"mlcc_table_create_from_memory", MLCC_INVALID_ARGUMENT, "aligned",
       [&] {
         return mlcc_model_create_from_memory(&kExternal, misaligned, 128,
                                              nullptr, &made);
       }},
      {"mlcc_table_create_from_memory", MLCC_INVALID_ARGUMENT, "NULL",
       [&] {
         return mlcc_model_create_from_memory(&kExternal, memory, 128, nullptr,
                                              nullptr);
       }},
      {"mlcc_model_run", MLCC_INVALID_ARGUMENT, "NULL",
       [&] { return mlcc_model_run(nullptr, ctx, &in, &out); }},
      {"mlcc_table_run", MLCC_INVALID_ARGUMENT, "ctx is NULL",
       [&] { return mlcc_model_run(&kEmbedded, nullptr, &in, &out); }},
      {"mlcc_table_run", MLCC_INVALID_ARGUMENT, "inputs is NULL",
       [&] { return mlcc_model_run(&kEmbedded, ctx, nullptr, &out); }},
      {"mlcc_table_run", MLCC_INVALID_ARGUMENT, "outputs is NULL",
       [&] { return mlcc_model_run(&kEmbedded, ctx, &in, nullptr); }},
      {"mlcc_model_run_static", MLCC_INVALID_ARGUMENT, "NULL",
       [&] {
         return mlcc_model_run_pointers(nullptr, ctx, inputPointers,
                                        outputPointers);
       }},
      {"mlcc_table_run_static", MLCC_INVALID_ARGUMENT, "ctx is NULL",
       [&] {
         return mlcc_model_run_pointers(&kEmbedded, nullptr, inputPointers,
                                        outputPointers);
       }},
      {"mlcc_table_run_static", MLCC_INVALID_ARGUMENT, "inputs is NULL",
       [&] {
         return mlcc_model_run_pointers(&kEmbedded, ctx, nullptr,
                                        outputPointers);
       }},
      {"mlcc_table_run_static", MLCC_INVALID_ARGUMENT, "outputs is NULL",
       [&] {
         return mlcc_model_run_pointers(&kEmbedded, ctx, inputPointers,
                                        nullptr);
       }},
      {"mlcc_table_run_static", MLCC_INVALID_ARGUMENT, "data is NULL",
       [&] {
         return mlcc_model_run_pointers(&kEmbedded, ctx, nullInput,
                                        outputPointers);
       }},
      {"mlcc_model_run_with_arena", MLCC_INVALID_ARGUMENT, "NULL",
       [&] {
         return mlcc_model_run_with_arena(nullptr, memory, 64, &in, &out);
       }},
      {"mlcc_table_run_with_arena", MLCC_INVALID_ARGUMENT, "NULL",
       [&] {
         return mlcc_model_run_with_arena(&kEmbedded, nullptr, 64, &in, &out);
       }},
      {"mlcc_table_run_with_arena", MLCC_INVALID_ARGUMENT, "aligned",
       [&] {
         return mlcc_model_run_with_arena(&kEmbedded, misaligned, 64, &in,
                                          &out);
       }},
      {"mlcc_table_run_with_arena", MLCC_OUT_OF_RANGE, "64",
       [&] {
         return mlcc_model_run_with_arena(&kEmbedded, memory, 16, &in, &out);
       }},
      {"mlcc_table_run_with_arena", MLCC_INVALID_ARGUMENT, "inputs is NULL",
       [&] {
         return mlcc_model_run_with_arena(&kEmbedded, memory, 64, nullptr,
                                          &out);
       }},
      {"mlcc_table_run_with_arena", MLCC_INVALID_ARGUMENT, "outputs is NULL",
       [&] {
         return mlcc_model_run_with_arena(&kEmbedded, memory, 64, &in, nullptr);
       }},
  };
  for (const Row &row : rows) {
    mlcc_last_error_set(MLCC_INTERNAL, "stale");
    mlcc_status status = row.run();
    std::string message = mlcc_last_error_message();
    INFO(row.call << ": " << mlcc_status_string(status) << ": " << message);
    CHECK(status == row.expected);
    CHECK(message.rfind(std::string(row.call) + ":", 0) == 0);
    CHECK(message.find(row.says) != std::string::npos);
  }
  mlcc_model_destroy(ctx);

  // The functions without a status take NULL quietly.
  mlcc_arena_destroy(nullptr);
  CHECK(mlcc_arena_data(nullptr) == nullptr);
  CHECK(mlcc_arena_size(nullptr) == 0);
  mlcc_threadpool_destroy(nullptr);
  CHECK(mlcc_threadpool_num_threads(nullptr) == 1);
  mlcc_model_destroy(nullptr);
  CHECK(mlcc_model_device(nullptr) == nullptr);
  mlcc_device_close(nullptr);
  mlcc_device_buffer_destroy(nullptr, nullptr);
  mlcc_device_kernel_destroy(nullptr, nullptr);
  CHECK(mlcc_device_offset_alignment(nullptr) == 0);
  CHECK(mlcc_device_validation_messages(nullptr) == 0);
  CHECK(mlcc_device_name(nullptr) != nullptr);
}
