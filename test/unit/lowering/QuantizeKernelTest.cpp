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

} // namespace

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
