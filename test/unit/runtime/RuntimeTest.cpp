//===- RuntimeTest.cpp - The runtime C API: status, pool, arena, tensor ---===//

#include "mlcc/runtime.h"
#include "mlcc/Reference/Tensor.h"

// Not public: the setter that runtime and generated code record messages with.
#include "LastError.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string lastError() { return mlcc_last_error_message(); }

/// Owns a pool for one test; fails the test if creation fails.
struct Pool {
  mlcc_threadpool *pool = nullptr;
  explicit Pool(int32_t threads) {
    REQUIRE(mlcc_threadpool_create(threads, &pool) == MLCC_OK);
    REQUIRE(pool != nullptr);
  }
  ~Pool() { mlcc_threadpool_destroy(pool); }
};

/// Counts how often each index is visited, and whether any chunk was bad.
struct Coverage {
  int64_t n;
  std::vector<std::atomic<uint32_t>> hits;
  std::atomic<int64_t> calls{0};
  std::atomic<bool> badRange{false};
  explicit Coverage(int64_t n) : n(n), hits(static_cast<size_t>(n)) {}

  static void visit(void *ctx, int64_t begin, int64_t end) {
    auto *self = static_cast<Coverage *>(ctx);
    self->calls.fetch_add(1);
    if (begin < 0 || begin >= end || end > self->n) {
      self->badRange = true;
      return;
    }
    for (int64_t i = begin; i < end; ++i)
      self->hits[static_cast<size_t>(i)].fetch_add(1,
                                                   std::memory_order_relaxed);
  }

  /// The number of indices not visited exactly once.
  int64_t wrong() const {
    int64_t count = 0;
    for (const auto &h : hits)
      count += h.load() != 1;
    return count;
  }
};

void noop(void *, int64_t, int64_t) {}

/// Holds each caller until two different threads have arrived (or a long
/// timeout passed): proves that a worker took part however slowly the
/// machine schedules it, instead of hoping that sleeps were long enough.
struct Rendezvous {
  std::mutex mutex;
  std::condition_variable arrived;
  std::set<std::thread::id> ids;

  void arrive() {
    std::unique_lock<std::mutex> lock(mutex);
    ids.insert(std::this_thread::get_id());
    arrived.notify_all();
    arrived.wait_for(lock, std::chrono::seconds(10),
                     [&] { return ids.size() >= 2; });
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Status codes and the last error
//===----------------------------------------------------------------------===//

TEST_CASE("status strings name every code", "[runtime][status]") {
  CHECK(std::string(mlcc_status_string(MLCC_OK)) == "ok");
  CHECK(std::string(mlcc_status_string(MLCC_INVALID_ARGUMENT)) ==
        "invalid argument");
  CHECK(std::string(mlcc_status_string(MLCC_OUT_OF_MEMORY)) == "out of memory");
  CHECK(std::string(mlcc_status_string(MLCC_SHAPE_MISMATCH)) ==
        "shape mismatch");
  CHECK(std::string(mlcc_status_string(MLCC_TYPE_MISMATCH)) == "type mismatch");
  CHECK(std::string(mlcc_status_string(MLCC_OUT_OF_RANGE)) == "out of range");
  CHECK(std::string(mlcc_status_string(MLCC_UNSUPPORTED)) == "unsupported");
  CHECK(std::string(mlcc_status_string(MLCC_INTERNAL)) == "internal error");
  CHECK(std::string(mlcc_status_string(MLCC_NO_DEVICE)) == "no device");
  CHECK(std::string(mlcc_status_string(MLCC_UNSUPPORTED_CPU)) ==
        "unsupported cpu");
  // A value from a newer model or a bad cast still gets a string.
  CHECK(std::string(mlcc_status_string(static_cast<mlcc_status>(99))) ==
        "unknown status");
  CHECK(std::string(mlcc_status_string(static_cast<mlcc_status>(-1))) ==
        "unknown status");
  // The codes are ABI: they must not move.
  CHECK(MLCC_OK == 0);
  CHECK(MLCC_INTERNAL == 7);
}

TEST_CASE("the last error formats, truncates and survives success",
          "[runtime][status]") {
  CHECK(mlcc_last_error_set(MLCC_SHAPE_MISMATCH,
                            "input '%s': expected %d "
                            "dims, got %d",
                            "x", 4, 3) == MLCC_SHAPE_MISMATCH);
  CHECK(lastError() == "input 'x': expected 4 dims, got 3");
  // Success does not clear it (errno semantics).
  mlcc_arena *arena = nullptr;
  REQUIRE(mlcc_arena_create(16, &arena) == MLCC_OK);
  mlcc_arena_destroy(arena);
  CHECK(lastError() == "input 'x': expected 4 dims, got 3");

  // The current message may be an argument of the next.
  mlcc_last_error_set(MLCC_SHAPE_MISMATCH, "while running node '%s': %s",
                      "conv1", mlcc_last_error_message());
  CHECK(lastError() ==
        "while running node 'conv1': input 'x': expected 4 dims, got 3");

  std::string longText(5000, 'a');
  mlcc_last_error_set(MLCC_INTERNAL, "%s", longText.c_str());
  CHECK(lastError() == longText.substr(0, MLCC_LAST_ERROR_CAPACITY - 1));
  mlcc_last_error_clear();
  CHECK(lastError().empty());
}

TEST_CASE("the last error belongs to one thread", "[runtime][status]") {
  // Recorded by a real failing call on this thread.
  REQUIRE(mlcc_threadpool_create(-3, nullptr) == MLCC_INVALID_ARGUMENT);
  const std::string mine = lastError();
  CHECK(mine == "mlcc_threadpool_create: out_pool is NULL");

  std::string otherBefore, otherAfter;
  std::thread other([&] {
    otherBefore = lastError();
    mlcc_arena *arena = nullptr;
    mlcc_arena_wrap(nullptr, 64, 0, &arena);
    otherAfter = lastError();
  });
  other.join();
  CHECK(otherBefore.empty());
  CHECK(otherAfter == "mlcc_arena_wrap: memory is NULL but size is 64");
  // The other thread's failure did not overwrite this thread's message.
  CHECK(lastError() == mine);
}

//===----------------------------------------------------------------------===//
// Thread pool
//===----------------------------------------------------------------------===//

TEST_CASE("parallel_for covers every index exactly once",
          "[runtime][threadpool]") {
  int32_t threads = GENERATE(1, 2, 4);
  int64_t n = GENERATE(int64_t(0), int64_t(1), int64_t(7), int64_t(1000000));
  Pool p(threads);
  CHECK(mlcc_threadpool_num_threads(p.pool) == threads);
  CAPTURE(threads, n);
  // Repeated, so that a race between consecutive jobs has chances to show.
  int repeats = n < 1000 ? 500 : 3;
  for (int r = 0; r < repeats; ++r) {
    Coverage c(n);
    REQUIRE(mlcc_threadpool_parallel_for(p.pool, n, Coverage::visit, &c) ==
            MLCC_OK);
    REQUIRE_FALSE(c.badRange.load());
    REQUIRE(c.wrong() == 0);
    if (n == 0)
      REQUIRE(c.calls.load() == 0);
    // No more chunks than 4 per thread: a chunk per index would be slow.
    REQUIRE(c.calls.load() <= std::max<int64_t>(1, 4 * threads));
  }
}

TEST_CASE("parallel_for uses the workers", "[runtime][threadpool]") {
  // A pool that ran everything on the caller would fail here (after the
  // rendezvous timed out).
  Pool p(2);
  Rendezvous r;
  auto body = [](void *raw, int64_t, int64_t) {
    static_cast<Rendezvous *>(raw)->arrive();
  };
  REQUIRE(mlcc_threadpool_parallel_for(p.pool, 8, body, &r) == MLCC_OK);
  CHECK(r.ids.size() == 2);
  CHECK(r.ids.count(std::this_thread::get_id()) == 1);
}

TEST_CASE("parallel_for gives each thread its own run of chunks first",
          "[runtime][threadpool]") {
  // 2 threads, 8 chunks of one index: the caller's run is [0, 4), the
  // worker's [4, 8). The caller holds chunk 0 until the worker has started,
  // so the worker's first claim cannot be a chunk that the caller left: it
  // must be its own run's first. (With one shared counter it was chunk 1.)
  Pool p(2);
  struct Ctx {
    std::thread::id caller = std::this_thread::get_id();
    std::mutex mutex;
    std::condition_variable ran;
    std::vector<int64_t> workerChunks;
  } ctx;
  auto body = [](void *raw, int64_t begin, int64_t) {
    auto *c = static_cast<Ctx *>(raw);
    std::unique_lock<std::mutex> lock(c->mutex);
    if (std::this_thread::get_id() != c->caller) {
      c->workerChunks.push_back(begin);
      c->ran.notify_all();
    } else if (begin == 0) {
      c->ran.wait_for(lock, std::chrono::seconds(10),
                      [&] { return !c->workerChunks.empty(); });
    }
  };
  REQUIRE(mlcc_threadpool_parallel_for(p.pool, 8, body, &ctx) == MLCC_OK);
  REQUIRE_FALSE(ctx.workerChunks.empty());
  CHECK(ctx.workerChunks.front() == 4);
}

TEST_CASE("parallel_for wakes workers that went to sleep",
          "[runtime][threadpool]") {
  // Gaps longer than the spin make every call go through the sleep path.
  Pool p(4);
  for (int r = 0; r < 50; ++r) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    Coverage c(1000);
    REQUIRE(mlcc_threadpool_parallel_for(p.pool, 1000, Coverage::visit, &c) ==
            MLCC_OK);
    REQUIRE(c.wrong() == 0);
  }
}

TEST_CASE("a nested parallel_for runs serially on the calling thread",
          "[runtime][threadpool]") {
  Pool p(2);
  Pool other(2);
  struct Ctx {
    mlcc_threadpool *inner;
    Coverage inside{8 * 100};
    std::atomic<bool> notSerial{false};
    std::atomic<bool> failed{false};
    Rendezvous outerThreads; // so that the worker makes nested calls too
  };
  auto outer = [](void *raw, int64_t begin, int64_t end) {
    auto *c = static_cast<Ctx *>(raw);
    c->outerThreads.arrive();
    for (int64_t i = begin; i < end; ++i) {
      struct Inner {
        Ctx *c;
        int64_t row;
        std::thread::id caller;
      } in{c, i, std::this_thread::get_id()};
      auto body = [](void *rawIn, int64_t b, int64_t e) {
        auto *x = static_cast<Inner *>(rawIn);
        if (std::this_thread::get_id() != x->caller || b != 0 || e != 100)
          x->c->notSerial = true;
        Coverage::visit(&x->c->inside, x->row * 100 + b, x->row * 100 + e);
      };
      if (mlcc_threadpool_parallel_for(c->inner, 100, body, &in) != MLCC_OK)
        c->failed = true;
    }
  };
  SECTION("on the same pool") {
    Ctx ctx{p.pool};
    REQUIRE(mlcc_threadpool_parallel_for(p.pool, 8, outer, &ctx) == MLCC_OK);
    CHECK_FALSE(ctx.failed.load());
    CHECK_FALSE(ctx.notSerial.load());
    CHECK(ctx.inside.wrong() == 0);
    CHECK(ctx.outerThreads.ids.size() == 2);
  }
  SECTION("on another pool") {
    Ctx ctx{other.pool};
    REQUIRE(mlcc_threadpool_parallel_for(p.pool, 8, outer, &ctx) == MLCC_OK);
    CHECK_FALSE(ctx.failed.load());
    CHECK_FALSE(ctx.notSerial.load());
    CHECK(ctx.inside.wrong() == 0);
    CHECK(ctx.outerThreads.ids.size() == 2);
  }
}

TEST_CASE("parallel_for from several threads on one pool",
          "[runtime][threadpool]") {
  Pool p(4);
  std::atomic<int64_t> wrong{0};
  auto submitter = [&] {
    for (int r = 0; r < 300; ++r) {
      Coverage c(64);
      if (mlcc_threadpool_parallel_for(p.pool, 64, Coverage::visit, &c) !=
          MLCC_OK)
        wrong += 1000;
      wrong += c.wrong();
    }
  };
  std::thread a(submitter), b(submitter);
  submitter();
  a.join();
  b.join();
  CHECK(wrong.load() == 0);
}

TEST_CASE("a NULL pool runs the loop serially", "[runtime][threadpool]") {
  CHECK(mlcc_threadpool_num_threads(nullptr) == 1);
  Coverage c(1000);
  REQUIRE(mlcc_threadpool_parallel_for(nullptr, 1000, Coverage::visit, &c) ==
          MLCC_OK);
  CHECK(c.calls.load() == 1);
  CHECK(c.wrong() == 0);
  mlcc_threadpool_destroy(nullptr); // a no-op
}

TEST_CASE("thread pool argument errors", "[runtime][threadpool]") {
  mlcc_threadpool *pool = reinterpret_cast<mlcc_threadpool *>(0x1);
  CHECK(mlcc_threadpool_create(-1, &pool) == MLCC_INVALID_ARGUMENT);
  CHECK(pool == nullptr);
  CHECK(lastError() == "mlcc_threadpool_create: num_threads is negative (-1)");
  CHECK(mlcc_threadpool_create(100000, &pool) == MLCC_OUT_OF_RANGE);
  CHECK(lastError().find("at most 1024") != std::string::npos);

  Pool p(2);
  CHECK(mlcc_threadpool_parallel_for(p.pool, 10, nullptr, nullptr) ==
        MLCC_INVALID_ARGUMENT);
  CHECK(lastError() == "mlcc_threadpool_parallel_for: fn is NULL");
  CHECK(mlcc_threadpool_parallel_for(p.pool, -5, noop, nullptr) ==
        MLCC_INVALID_ARGUMENT);
  CHECK(lastError() == "mlcc_threadpool_parallel_for: n is negative (-5)");
  CHECK(mlcc_threadpool_parallel_for(nullptr, -5, noop, nullptr) ==
        MLCC_INVALID_ARGUMENT);
}

TEST_CASE("a pool of 0 threads has one per CPU", "[runtime][threadpool]") {
  Pool p(0);
  int32_t threads = mlcc_threadpool_num_threads(p.pool);
  CHECK(threads >= 1);
  CHECK(threads <= static_cast<int32_t>(
                       std::max(1u, std::thread::hardware_concurrency())));
  Coverage c(12345);
  REQUIRE(mlcc_threadpool_parallel_for(p.pool, 12345, Coverage::visit, &c) ==
          MLCC_OK);
  CHECK(c.wrong() == 0);
}

//===----------------------------------------------------------------------===//
// Arena
//===----------------------------------------------------------------------===//

TEST_CASE("created arenas are 64-byte aligned and usable", "[runtime][arena]") {
  size_t size = GENERATE(size_t(0), size_t(1), size_t(63), size_t(64),
                         size_t(65), size_t(1) << 20);
  CAPTURE(size);
  mlcc_arena *arena = nullptr;
  REQUIRE(mlcc_arena_create(size, &arena) == MLCC_OK);
  auto *data = static_cast<unsigned char *>(mlcc_arena_data(arena));
  REQUIRE(data != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(data) % MLCC_ARENA_ALIGNMENT == 0);
  CHECK(mlcc_arena_size(arena) == size);
  std::memset(data, 0xab, size); // all of it is ours
  mlcc_arena_destroy(arena);
}

TEST_CASE("arenas of 2 MiB and more are huge-page mappings",
          "[runtime][arena]") {
  // Their own mapping, 2 MiB aligned (advised as transparent huge pages),
  // all of it writable; destroy unmaps it.
  size_t size = GENERATE(size_t(2) << 20, (size_t(2) << 20) + 64,
                         size_t(5) << 20);
  CAPTURE(size);
  for (int i = 0; i < 3; ++i) {
    mlcc_arena *arena = nullptr;
    REQUIRE(mlcc_arena_create(size, &arena) == MLCC_OK);
    auto *data = static_cast<unsigned char *>(mlcc_arena_data(arena));
    REQUIRE(data != nullptr);
#ifdef __linux__
    CHECK(reinterpret_cast<uintptr_t>(data) % (size_t(2) << 20) == 0);
#endif
    CHECK(mlcc_arena_size(arena) == size);
    std::memset(data, 0xcd, size);
    CHECK(data[size - 1] == 0xcd);
    mlcc_arena_destroy(arena);
  }
}

TEST_CASE("arena errors", "[runtime][arena]") {
  mlcc_arena *arena = reinterpret_cast<mlcc_arena *>(0x1);
  CHECK(mlcc_arena_create(SIZE_MAX, &arena) == MLCC_OUT_OF_MEMORY);
  CHECK(arena == nullptr);
  CHECK(mlcc_arena_create(SIZE_MAX / 2, &arena) == MLCC_OUT_OF_MEMORY);
  CHECK(lastError().find("cannot allocate") != std::string::npos);
  CHECK(mlcc_arena_create(64, nullptr) == MLCC_INVALID_ARGUMENT);
  CHECK(mlcc_arena_data(nullptr) == nullptr);
  CHECK(mlcc_arena_size(nullptr) == 0);
  mlcc_arena_destroy(nullptr); // a no-op
}

TEST_CASE("wrapping caller memory checks alignment and size",
          "[runtime][arena]") {
  alignas(64) static unsigned char buffer[1024];
  mlcc_arena *arena = nullptr;

  SECTION("aligned and large enough") {
    REQUIRE(mlcc_arena_wrap(buffer, sizeof(buffer), 1000, &arena) == MLCC_OK);
    CHECK(mlcc_arena_data(arena) == buffer);
    CHECK(mlcc_arena_size(arena) == sizeof(buffer));
    mlcc_arena_destroy(arena); // frees the handle, not the buffer
    buffer[0] = 1;
  }
  SECTION("exactly the required size") {
    REQUIRE(mlcc_arena_wrap(buffer + 64, 512, 512, &arena) == MLCC_OK);
    mlcc_arena_destroy(arena);
  }
  SECTION("misaligned") {
    size_t offset =
        GENERATE(size_t(1), size_t(8), size_t(16), size_t(32), size_t(63));
    CAPTURE(offset);
    CHECK(mlcc_arena_wrap(buffer + offset, 512, 256, &arena) ==
          MLCC_INVALID_ARGUMENT);
    CHECK(arena == nullptr);
    CHECK(lastError().find("is not 64-byte aligned (offset " +
                           std::to_string(offset) + ")") != std::string::npos);
  }
  SECTION("too small") {
    CHECK(mlcc_arena_wrap(buffer, 999, 1000, &arena) == MLCC_OUT_OF_RANGE);
    CHECK(arena == nullptr);
    CHECK(lastError() == "mlcc_arena_wrap: arena too small: 999 bytes given, "
                         "1000 required");
  }
  SECTION("NULL memory") {
    CHECK(mlcc_arena_wrap(nullptr, 64, 0, &arena) == MLCC_INVALID_ARGUMENT);
    // An empty arena may be NULL: a model without activations needs none.
    REQUIRE(mlcc_arena_wrap(nullptr, 0, 0, &arena) == MLCC_OK);
    CHECK(mlcc_arena_data(arena) == nullptr);
    mlcc_arena_destroy(arena);
    CHECK(mlcc_arena_wrap(nullptr, 0, 1, &arena) == MLCC_OUT_OF_RANGE);
  }
  SECTION("NULL out parameter") {
    CHECK(mlcc_arena_wrap(buffer, 64, 0, nullptr) == MLCC_INVALID_ARGUMENT);
  }
}

//===----------------------------------------------------------------------===//
// Tensor descriptors
//===----------------------------------------------------------------------===//

TEST_CASE("dtypes match the compiler's", "[runtime][tensor]") {
  // The runtime's enum is ABI and promises the order of mlcc::ref::DType;
  // sizes and names come from the reference code, written independently.
  CHECK(MLCC_DTYPE_UNDEFINED == static_cast<int>(mlcc::ref::DType::Undefined));
  for (int v = 1; v <= static_cast<int>(mlcc::ref::DType::Bool); ++v) {
    CAPTURE(v);
    auto ref = static_cast<mlcc::ref::DType>(v);
    auto rt = static_cast<mlcc_dtype>(v);
    CHECK(mlcc_dtype_size(rt) == mlcc::ref::dtypeSize(ref));
    CHECK(std::string(mlcc_dtype_string(rt)) == mlcc::ref::dtypeName(ref));
  }
  CHECK(mlcc_dtype_size(MLCC_DTYPE_UNDEFINED) == 0);
  CHECK(mlcc_dtype_size(static_cast<mlcc_dtype>(200)) == 0);
  CHECK(std::string(mlcc_dtype_string(static_cast<mlcc_dtype>(200))) ==
        "undefined");
}

TEST_CASE("the tensor descriptor layout is fixed", "[runtime][tensor]") {
  // Generated code reads these fields by offset.
  CHECK(sizeof(mlcc_tensor) == 24);
  CHECK(offsetof(mlcc_tensor, data) == 0);
  CHECK(offsetof(mlcc_tensor, dims) == 8);
  CHECK(offsetof(mlcc_tensor, rank) == 16);
  CHECK(offsetof(mlcc_tensor, dtype) == 20);
  CHECK(sizeof(mlcc_dtype) == 4);
}

TEST_CASE("tensor_check accepts matching tensors", "[runtime][tensor]") {
  float data[2 * 3 * 4] = {};
  int64_t dims[] = {2, 3, 4};
  mlcc_tensor t{data, dims, 3, MLCC_DTYPE_F32};
  const int64_t exact[] = {2, 3, 4};
  const int64_t anyBatch[] = {-1, 3, 4};
  CHECK(mlcc_tensor_check(&t, MLCC_DTYPE_F32, 3, exact, "input 'x'") ==
        MLCC_OK);
  CHECK(mlcc_tensor_check(&t, MLCC_DTYPE_F32, 3, anyBatch, "input 'x'") ==
        MLCC_OK);
  CHECK(mlcc_tensor_check(&t, MLCC_DTYPE_F32, 3, nullptr, nullptr) == MLCC_OK);

  // A scalar needs no dims; an empty tensor needs no data.
  float scalar = 1.0f;
  mlcc_tensor s{&scalar, nullptr, 0, MLCC_DTYPE_F32};
  CHECK(mlcc_tensor_check(&s, MLCC_DTYPE_F32, 0, nullptr, "s") == MLCC_OK);
  int64_t emptyDims[] = {0, 5};
  mlcc_tensor e{nullptr, emptyDims, 2, MLCC_DTYPE_I64};
  const int64_t emptyExpected[] = {-1, 5};
  CHECK(mlcc_tensor_check(&e, MLCC_DTYPE_I64, 2, emptyExpected, "e") ==
        MLCC_OK);

  int64_t count = -1;
  size_t bytes = 0;
  REQUIRE(mlcc_tensor_num_elements(&t, &count) == MLCC_OK);
  CHECK(count == 24);
  REQUIRE(mlcc_tensor_byte_size(&t, &bytes) == MLCC_OK);
  CHECK(bytes == sizeof(data));
  REQUIRE(mlcc_tensor_num_elements(&s, &count) == MLCC_OK);
  CHECK(count == 1);
  REQUIRE(mlcc_tensor_byte_size(&e, &bytes) == MLCC_OK);
  CHECK(bytes == 0);
}

TEST_CASE("tensor_check reports what is wrong", "[runtime][tensor]") {
  float data[2 * 3 * 4] = {};
  int64_t dims[] = {2, 3, 4};
  mlcc_tensor t{data, dims, 3, MLCC_DTYPE_F32};
  const int64_t expected4[] = {1, 2, 3, 4};
  const int64_t expected3[] = {-1, 3, 5};

  CHECK(mlcc_tensor_check(nullptr, MLCC_DTYPE_F32, 3, nullptr, "input 'x'") ==
        MLCC_INVALID_ARGUMENT);
  CHECK(lastError() == "input 'x': tensor descriptor is NULL");

  CHECK(mlcc_tensor_check(&t, MLCC_DTYPE_I64, 3, nullptr, "input 'x'") ==
        MLCC_TYPE_MISMATCH);
  CHECK(lastError() == "input 'x': expected i64 elements, got f32");

  CHECK(mlcc_tensor_check(&t, MLCC_DTYPE_F32, 4, expected4, "input 'x'") ==
        MLCC_SHAPE_MISMATCH);
  CHECK(lastError() == "input 'x': expected 4 dims, got 3");

  CHECK(mlcc_tensor_check(&t, MLCC_DTYPE_F32, 3, expected3, "input 'x'") ==
        MLCC_SHAPE_MISMATCH);
  CHECK(lastError() == "input 'x': dim 2 is 4, expected 5 (shape [2, 3, 4], "
                       "expected [?, 3, 5])");

  CHECK(mlcc_tensor_check(&t, MLCC_DTYPE_F32, 3, expected3, nullptr) ==
        MLCC_SHAPE_MISMATCH);
  CHECK(lastError().rfind("tensor: dim 2", 0) == 0);

  int64_t negative[] = {2, -3, 4};
  mlcc_tensor n{data, negative, 3, MLCC_DTYPE_F32};
  CHECK(mlcc_tensor_check(&n, MLCC_DTYPE_F32, 3, nullptr, "y") ==
        MLCC_INVALID_ARGUMENT);
  CHECK(lastError() == "y: dim 1 is negative (-3)");

  mlcc_tensor noDims{data, nullptr, 3, MLCC_DTYPE_F32};
  CHECK(mlcc_tensor_check(&noDims, MLCC_DTYPE_F32, 3, nullptr, "y") ==
        MLCC_INVALID_ARGUMENT);
  CHECK(lastError() == "y: dims is NULL for rank 3");

  mlcc_tensor noData{nullptr, dims, 3, MLCC_DTYPE_F32};
  CHECK(mlcc_tensor_check(&noData, MLCC_DTYPE_F32, 3, nullptr, "y") ==
        MLCC_INVALID_ARGUMENT);
  CHECK(lastError() == "y: data is NULL for 24 elements");

  // 2^40 * 2^40 elements overflow int64_t; 2^31 * 2^31 f32 overflow nothing
  // in the count but 2^62 * 4 bytes overflow size_t.
  int64_t huge[] = {int64_t(1) << 40, int64_t(1) << 40};
  mlcc_tensor h{data, huge, 2, MLCC_DTYPE_U8};
  CHECK(mlcc_tensor_check(&h, MLCC_DTYPE_U8, 2, nullptr, "z") ==
        MLCC_OUT_OF_RANGE);
  CHECK(lastError() == "z: the byte size of a u8 tensor of shape "
                       "[1099511627776, 1099511627776] overflows");
  int64_t count;
  CHECK(mlcc_tensor_num_elements(&h, &count) == MLCC_OUT_OF_RANGE);
  int64_t big[] = {int64_t(1) << 31, int64_t(1) << 31};
  mlcc_tensor b{data, big, 2, MLCC_DTYPE_F32};
  REQUIRE(mlcc_tensor_num_elements(&b, &count) == MLCC_OK);
  CHECK(count == int64_t(1) << 62);
  size_t bytes;
  CHECK(mlcc_tensor_byte_size(&b, &bytes) == MLCC_OUT_OF_RANGE);
  CHECK(mlcc_tensor_check(&b, MLCC_DTYPE_F32, 2, nullptr, "z") ==
        MLCC_OUT_OF_RANGE);

  mlcc_tensor undefined{data, dims, 3, MLCC_DTYPE_UNDEFINED};
  CHECK(mlcc_tensor_byte_size(&undefined, &bytes) == MLCC_INVALID_ARGUMENT);
  CHECK(mlcc_tensor_byte_size(&t, nullptr) == MLCC_INVALID_ARGUMENT);
  CHECK(mlcc_tensor_num_elements(nullptr, &count) == MLCC_INVALID_ARGUMENT);
}

TEST_CASE("tensor_check cuts a long shape short", "[runtime][tensor]") {
  // 30 dims of 1000000007 do not fit the shape text: it ends in "...".
  std::vector<int64_t> dims(30, 1000000007), expected(30, -1);
  expected[29] = 1;
  float x = 0;
  mlcc_tensor t{&x, dims.data(), 30, MLCC_DTYPE_F32};
  CHECK(mlcc_tensor_check(&t, MLCC_DTYPE_F32, 30, expected.data(), "w") ==
        MLCC_SHAPE_MISMATCH);
  std::string message = lastError();
  CHECK(message.rfind("w: dim 29 is 1000000007, expected 1 (shape [", 0) == 0);
  CHECK(message.find("...") != std::string::npos);
  CHECK(message.size() < MLCC_LAST_ERROR_CAPACITY);
}
