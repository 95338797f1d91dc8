//===- QuantizeKernelTest.cpp - Tests of the QuantizeLinear kernels -------===//
//
// Generates quantize kernels and compares every element with the
// definition computed here: saturate(nearbyint(x / scale) + zero), the f32
// division and rounding to nearest even of the reference. Inputs include
// values on the .5 rounding boundaries, values far outside the output's
// range, and counts around the 16-lane vector and the 4-vector unroll.
// Source and destination end at an unmapped page: a kernel that touches a
// lane past the count faults.
//
// On a CPU without AVX-512 each test exits with 77, which CTest reports as
// skipped.
//
//===----------------------------------------------------------------------===//

#include "ExecutableBuffer.h"
#include "GemmInt8.h"
#include "KernelABI.h"
#include "KernelTestSupport.h"
#include "Quantize.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

using namespace mlcc;
using namespace mlcc::avx512;
using namespace mlcc::test;

namespace {

/// `runtime`: the scale and zero point are passed to the kernel (src[1],
/// src[2]; no zero point at all when it is 0 and `runtime` is 2).
void check(int64_t n, float scale, int32_t zero, bool signedOutput,
           uint32_t seed, int runtime = 0) {
  INFO("n=" << n << " scale=" << scale << " zero=" << zero
            << " signed=" << signedOutput << " runtime=" << runtime);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> wide(-400 * scale, 400 * scale);
  std::uniform_int_distribution<int> half(-300, 300);
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i)
    // Every third value is an exact multiple of scale / 2: a tie.
    x[i] = i % 3 == 0 ? (half(rng) + 0.5f) * scale : wide(rng);
  QuantizeSpec spec;
  spec.n = n;
  spec.scale = scale;
  spec.zero = zero;
  spec.signedOutput = signedOutput;
  uint8_t zeroByte = static_cast<uint8_t>(zero);
  if (runtime) {
    // What the kernel must not read: the spec's own values.
    spec.runtimeParameters = true;
    spec.scale = 1.0f;
    spec.zero = 0;
  }
  std::vector<uint8_t> code = generateCode(generateQuantize, spec);
  ExecutableBuffer exec(code);
  REQUIRE(exec.ok());
  GuardedArray<float> src(x);
  GuardedArray<uint8_t> dst(std::vector<uint8_t>(n, 0xA5));
  REQUIRE((src.ok() && dst.ok()));
  mlcc_eltwise_args args{{src.data()}, dst.data(), n};
  if (runtime) {
    args.src[1] = &scale;
    args.src[2] = runtime == 2 && zero == 0 ? nullptr : &zeroByte;
  }
  exec.function<mlcc_eltwise_kernel_fn>()(&args);
  std::vector<uint8_t> out = dst.values();
  const float lo = signedOutput ? -128 : 0, hi = signedOutput ? 127 : 255;
  int mismatches = 0;
  for (int64_t i = 0; i < n; ++i) {
    float q = std::nearbyint(x[i] / scale) + float(zero);
    int32_t want = int32_t(std::min(hi, std::max(lo, q)));
    int32_t got = signedOutput ? int32_t(int8_t(out[i])) : int32_t(out[i]);
    if (got != want && ++mismatches <= 5)
      UNSCOPED_INFO("x[" << i << "] = " << x[i] << ": got " << got << ", want "
                         << want);
  }
  CHECK(mismatches == 0);
}

/// Dequantizes a random [outer, channels, inner] tensor of `type` with a
/// scale and zero point per channel (or no zero point) and compares each
/// element with (double(q) - zero) * scale rounded to f32. Both ends of
/// the data sit at an unmapped page.
void checkDequantize(int64_t outer, int64_t channels, int64_t inner,
                     QuantizedType type, bool hasZero, uint32_t seed) {
  INFO("outer=" << outer << " channels=" << channels << " inner=" << inner
                << " type=" << int(type) << " zero=" << hasZero);
  std::mt19937 rng(seed);
  const int64_t n = outer * channels * inner;
  const int bytes = type == QuantizedType::I32 ? 4 : 1;
  std::uniform_int_distribution<int> byteValue(0, 255);
  std::uniform_int_distribution<int32_t> wide(-(1 << 20), 1 << 20);
  std::vector<uint8_t> q(static_cast<size_t>(n * bytes));
  std::vector<uint8_t> zero(static_cast<size_t>(channels * bytes));
  for (uint8_t &v : q)
    v = static_cast<uint8_t>(byteValue(rng));
  for (uint8_t &v : zero)
    v = static_cast<uint8_t>(byteValue(rng));
  if (type == QuantizedType::I32) {
    for (int64_t i = 0; i < n; ++i) {
      int32_t v = wide(rng);
      std::memcpy(&q[i * 4], &v, 4);
    }
    for (int64_t c = 0; c < channels; ++c) {
      int32_t v = wide(rng);
      std::memcpy(&zero[c * 4], &v, 4);
    }
  }
  std::vector<float> scale(channels);
  for (int64_t c = 0; c < channels; ++c)
    scale[c] = 0.001f * float(c + 1) + 0.0137f;
  auto value = [&](const std::vector<uint8_t> &v, int64_t i) -> double {
    switch (type) {
    case QuantizedType::U8:
      return v[i];
    case QuantizedType::S8:
      return int8_t(v[i]);
    case QuantizedType::I32: {
      int32_t x;
      std::memcpy(&x, &v[i * 4], 4);
      return x;
    }
    }
    return 0;
  };
  DequantizeSpec spec;
  spec.outer = outer;
  spec.channels = channels;
  spec.inner = inner;
  spec.type = type;
  spec.hasZero = hasZero;
  std::vector<uint8_t> code = generateCode(generateDequantize, spec);
  ExecutableBuffer exec(code);
  REQUIRE(exec.ok());
  GuardedArray<uint8_t> src(q);
  GuardedArray<float> dst(std::vector<float>(n, -7.0f));
  REQUIRE((src.ok() && dst.ok()));
  mlcc_eltwise_args args{
      {src.data(), scale.data(), zero.data()}, dst.data(), n};
  if (!hasZero)
    args.src[2] = nullptr; // must not be read
  exec.function<mlcc_eltwise_kernel_fn>()(&args);
  std::vector<float> out = dst.values();
  int mismatches = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t c = (i / inner) % channels;
    double z = hasZero ? value(zero, c) : 0.0;
    float want = static_cast<float>(value(q, i) - z) * scale[c];
    if (out[i] != want && ++mismatches <= 5)
      UNSCOPED_INFO("y[" << i << "]: got " << out[i] << ", want " << want);
  }
  CHECK(mismatches == 0);
}

} // namespace

TEST_CASE("dequantize: u8, s8 and int32, per tensor and per axis, every "
          "tail",
          "[avx512][quantize]") {
  MLCC_SKIP_WITHOUT("avx512f", "avx512f");
  uint32_t seed = 200;
  for (QuantizedType type :
       {QuantizedType::U8, QuantizedType::S8, QuantizedType::I32})
    for (bool hasZero : {true, false}) {
      for (int64_t n : {0, 1, 15, 16, 17, 63, 64, 65, 100, 1000})
        checkDequantize(1, 1, n, type, hasZero, seed++);
      checkDequantize(1, 3, 6, type, hasZero, seed++); // [1, 3, 3, 2]
      checkDequantize(2, 5, 33, type, hasZero, seed++);
      checkDequantize(3, 70, 1, type, hasZero, seed++);
    }
}

TEST_CASE("dequantize: sizes are checked", "[avx512][quantize]") {
  DequantizeSpec spec;
  spec.name = "dq";
  spec.channels = 0;
  std::vector<uint8_t> code;
  CHECK(generateDequantize(spec, code).message() ==
        "dq: dequantize of 1 x 0 x 0 elements");
  spec.channels = 1 << 20;
  spec.inner = 1 << 20;
  CHECK(generateDequantize(spec, code).message() ==
        "dq: dequantize of 1 x 1048576 x 1048576 elements: 0 to 2^29 "
        "supported");
}

TEST_CASE("quantize: u8 and s8 over every tail", "[avx512][quantize]") {
  MLCC_SKIP_WITHOUT("avx512f", "avx512f");
  uint32_t seed = 1;
  for (int64_t n : {1, 15, 16, 17, 63, 64, 65, 100, 1000}) {
    check(n, 0.05f, 128, false, seed++);
    check(n, 0.013f, 0, false, seed++);
    check(n, 0.2f, 0, true, seed++);
    check(n, 0.007f, -20, true, seed++);
  }
}

TEST_CASE("quantize: scale and zero point read at run time",
          "[avx512][quantize]") {
  MLCC_SKIP_WITHOUT("avx512f", "avx512f");
  uint32_t seed = 100;
  for (int64_t n : {1, 17, 65, 1000}) {
    check(n, 0.05f, 128, false, seed++, 1);
    check(n, 0.013f, 0, false, seed++, 2);
    check(n, 0.2f, 0, true, seed++, 2);
    check(n, 0.007f, -20, true, seed++, 1);
    check(n, 0.03f, 255, false, seed++, 1);
  }
}

TEST_CASE("quantize: a scale and zero point per slice of an axis",
          "[avx512][quantize]") {
  MLCC_SKIP_WITHOUT("avx512f", "avx512f");
  std::mt19937 rng(300);
  struct Shape {
    int64_t outer, channels, inner;
  };
  for (Shape sh :
       {Shape{1, 3, 6}, Shape{2, 5, 33}, Shape{3, 70, 1}, Shape{1, 2, 64}})
    for (bool signedOutput : {false, true})
      for (bool hasZero : {true, false}) {
        INFO("outer=" << sh.outer << " channels=" << sh.channels
                      << " inner=" << sh.inner << " signed=" << signedOutput
                      << " zero=" << hasZero);
        const int64_t n = sh.outer * sh.channels * sh.inner;
        std::vector<float> scale(sh.channels);
        std::vector<uint8_t> zero(sh.channels);
        std::uniform_int_distribution<int> byteValue(0, 255);
        for (int64_t c = 0; c < sh.channels; ++c) {
          scale[c] = 0.01f * float(c % 7 + 1);
          zero[c] = static_cast<uint8_t>(byteValue(rng));
        }
        std::vector<float> x(n);
        std::uniform_real_distribution<float> wide(-3.0f, 3.0f);
        for (float &v : x)
          v = wide(rng);
        QuantizeSpec spec;
        spec.runtimeParameters = true;
        spec.signedOutput = signedOutput;
        spec.outer = sh.outer;
        spec.channels = sh.channels;
        spec.n = sh.inner;
        ExecutableBuffer exec(generateCode(generateQuantize, spec));
        REQUIRE(exec.ok());
        GuardedArray<float> src(x);
        GuardedArray<uint8_t> dst(std::vector<uint8_t>(n, 0xA5));
        REQUIRE((src.ok() && dst.ok()));
        mlcc_eltwise_args args{
            {src.data(), scale.data(), hasZero ? zero.data() : nullptr},
            dst.data(),
            n};
        exec.function<mlcc_eltwise_kernel_fn>()(&args);
        std::vector<uint8_t> out = dst.values();
        const float lo = signedOutput ? -128 : 0, hi = signedOutput ? 127 : 255;
        int mismatches = 0;
        for (int64_t i = 0; i < n; ++i) {
          int64_t c = (i / sh.inner) % sh.channels;
          float z = !hasZero       ? 0.0f
                    : signedOutput ? float(int8_t(zero[c]))
                                   : float(zero[c]);
          float q = std::nearbyint(x[i] / scale[c]) + z;
          int32_t want = int32_t(std::min(hi, std::max(lo, q)));
          int32_t got =
              signedOutput ? int32_t(int8_t(out[i])) : int32_t(out[i]);
          if (got != want && ++mismatches <= 5)
            UNSCOPED_INFO("x[" << i << "] = " << x[i] << ": got " << got
                               << ", want " << want);
        }
        CHECK(mismatches == 0);
      }
}

TEST_CASE("quantize: bad specs are errors", "[avx512][quantize]") {
  QuantizeSpec spec;
  spec.name = "q";
  spec.n = 4;
  spec.scale = 0.0f;
  std::vector<uint8_t> code;
  CHECK(generateQuantize(spec, code).message() ==
        "q: quantize scale 0 must be finite and not 0");
  spec.scale = 1.0f;
  spec.zero = 300;
  CHECK(generateQuantize(spec, code).message() ==
        "q: zero point 300 is outside 0..255");
  spec.zero = 0;
  spec.channels = 3;
  CHECK(generateQuantize(spec, code).message() ==
        "q: a quantize per slice reads its scales at run time");
}

TEST_CASE("bf16 conversion: every tail, rounding to nearest even",
          "[avx512][bf16]") {
  MLCC_SKIP_WITHOUT("avx512bf16", "avx512_bf16");
  std::mt19937 rng(9);
  std::normal_distribution<float> d(0, 100);
  for (int64_t n : {1, 15, 16, 17, 64, 65, 100}) {
    INFO("n=" << n);
    std::vector<float> x(n);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = d(rng);
      if (i % 4 == 0) { // a tie: the 16 dropped bits are 0x8000
        uint32_t bits;
        std::memcpy(&bits, &x[i], 4);
        bits = (bits & 0xffff0000u) | 0x8000u;
        std::memcpy(&x[i], &bits, 4);
      }
    }
    std::vector<uint8_t> code;
    REQUIRE(generateToBf16("t", n, code).ok());
    ExecutableBuffer exec(code);
    REQUIRE(exec.ok());
    GuardedArray<float> src(x);
    GuardedArray<uint16_t> dst(std::vector<uint16_t>(n, 0xA5A5));
    REQUIRE((src.ok() && dst.ok()));
    mlcc_eltwise_args args{{src.data()}, dst.data(), n};
    exec.function<mlcc_eltwise_kernel_fn>()(&args);
    std::vector<uint16_t> out = dst.values();
    int mismatches = 0;
    for (int64_t i = 0; i < n; ++i)
      if (out[i] != toBf16(x[i]) && ++mismatches <= 5)
        UNSCOPED_INFO("x[" << i << "] = " << x[i] << ": got " << out[i]
                           << ", want " << toBf16(x[i]));
    CHECK(mismatches == 0);
  }
}
