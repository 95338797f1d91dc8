//===- PoolKernelTest.cpp - Tests of the AVX-512 pooling kernels ----------===//
//
// Generates pooling kernels, maps their bytes executable and runs them
// against the reference kernel registry (compiler/Reference), the oracle.
// Windows cover the usual CNN pools (3x3 s1 and s2 with padding, 2x2 s2,
// ceil_mode, 5x5, dilation) over widths with every kind of vector tail and
// several planes; inputs and outputs end at an unmapped page, so a kernel
// that touches an element past its tensors faults. Each case runs the
// NCHW kernel and the NCHW16c one (PoolBlocked.cpp), with channel counts
// below, at and past a block of 16.
//
//===----------------------------------------------------------------------===//

#include "ExecutableBuffer.h"
#include "KernelABI.h"
#include "KernelTestSupport.h"
#include "Pool.h"

#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

using namespace mlcc;
using namespace mlcc::avx512;
using namespace mlcc::test;

namespace {

constexpr float kNanF = std::numeric_limits<float>::quiet_NaN();
constexpr float kInfF = std::numeric_limits<float>::infinity();

const int64_t kWidths[] = {1, 7, 15, 16, 17, 33};

PoolSpec windowed(PoolKind kind, std::vector<int64_t> nchw, int64_t k,
                  int64_t s, int64_t p, int64_t d = 1) {
  PoolSpec spec;
  spec.name = poolKindName(kind);
  spec.kind = kind;
  spec.n = nchw[0];
  spec.c = nchw[1];
  spec.h = nchw[2];
  spec.w = nchw[3];
  spec.kernel[0] = spec.kernel[1] = k;
  spec.strides[0] = spec.strides[1] = s;
  spec.dilations[0] = spec.dilations[1] = d;
  for (int64_t &pad : spec.pads)
    pad = p;
  return spec;
}

std::string describe(const PoolSpec &s) {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "%s [%lld,%lld,%lld,%lld] k %lldx%lld s %lldx%lld d %lldx%lld "
                "pads %lld,%lld,%lld,%lld ceil %d include_pad %d",
                poolKindName(s.kind), (long long)s.n, (long long)s.c,
                (long long)s.h, (long long)s.w, (long long)s.kernel[0],
                (long long)s.kernel[1], (long long)s.strides[0],
                (long long)s.strides[1], (long long)s.dilations[0],
                (long long)s.dilations[1], (long long)s.pads[0],
                (long long)s.pads[1], (long long)s.pads[2],
                (long long)s.pads[3], s.ceilMode, s.countIncludePad);
  return buf;
}

std::vector<float> randomInput(const PoolSpec &spec, unsigned seed) {
  return randomValues(static_cast<size_t>(spec.n * spec.c * spec.h * spec.w),
                      -2.0f, 2.0f, seed);
}

//===----------------------------------------------------------------------===//
// Running a kernel and the oracle
//===----------------------------------------------------------------------===//

std::vector<uint8_t> generate(const PoolSpec &spec) {
  return generateCode(generatePool, spec);
}

size_t outputCount(const PoolSpec &spec) {
  int64_t oh = 0, ow = 0;
  Status s = poolOutputSize(spec, oh, ow);
  INFO(s.message());
  REQUIRE(s.ok());
  return static_cast<size_t>(spec.n * spec.c * oh * ow);
}

std::vector<float> runCode(const std::vector<uint8_t> &code,
                           const PoolSpec &spec, const std::vector<float> &x,
                           size_t offset = 0) {
  ExecutableBuffer exec(code, offset);
  REQUIRE(exec.ok());
  GuardedArray<float> src(x);
  GuardedArray<float> dst(outputCount(spec));
  REQUIRE(src.ok());
  REQUIRE(dst.ok());
  mlcc_pool_args args = {src.data(), dst.data()};
  exec.function<mlcc_pool_kernel_fn>()(&args);
  return dst.values();
}

/// x [N, C, H, W] as [N, ceil(C/16), H, W, 16], the padding lanes `pad`.
std::vector<float> toBlocked(const std::vector<float> &x, int64_t n,
                             int64_t c, int64_t hw, float pad) {
  const int64_t blocks = (c + 15) / 16;
  std::vector<float> out(static_cast<size_t>(n * blocks * hw * 16), pad);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p)
        out[((i * blocks + ch / 16) * hw + p) * 16 + ch % 16] =
            x[(i * c + ch) * hw + p];
  return out;
}

/// The blocked kernel (generateBlockedPool) on x, its output back in NCHW.
/// The padding lanes of the input hold 7: nothing may leak from them.
std::vector<float> runBlocked(const PoolSpec &spec,
                              const std::vector<float> &x) {
  std::vector<uint8_t> code = generateCode(generateBlockedPool, spec);
  ExecutableBuffer exec(code);
  REQUIRE(exec.ok());
  const int64_t plane = static_cast<int64_t>(outputCount(spec)) /
                        std::max<int64_t>(1, spec.n * spec.c);
  GuardedArray<float> src(toBlocked(x, spec.n, spec.c, spec.h * spec.w, 7));
  GuardedArray<float> dst(static_cast<size_t>(spec.n * ((spec.c + 15) / 16) *
                                              plane * 16));
  REQUIRE(src.ok());
  REQUIRE(dst.ok());
  mlcc_pool_args args = {src.data(), dst.data()};
  exec.function<mlcc_pool_kernel_fn>()(&args);
  std::vector<float> blocked = dst.values(), out(outputCount(spec));
  const int64_t blocks = (spec.c + 15) / 16;
  for (int64_t i = 0; i < spec.n; ++i)
    for (int64_t ch = 0; ch < spec.c; ++ch)
      for (int64_t p = 0; p < plane; ++p)
        out[(i * spec.c + ch) * plane + p] =
            blocked[((i * blocks + ch / 16) * plane + p) * 16 + ch % 16];
  return out;
}

std::vector<float> reference(const PoolSpec &spec,
                             const std::vector<float> &x) {
  ref::Attrs attrs;
  std::string op = poolKindName(spec.kind);
  if (spec.kind == PoolKind::Max || spec.kind == PoolKind::Average) {
    attrs.set("kernel_shape",
              std::vector<int64_t>{spec.kernel[0], spec.kernel[1]});
    attrs.set("strides",
              std::vector<int64_t>{spec.strides[0], spec.strides[1]});
    attrs.set("dilations",
              std::vector<int64_t>{spec.dilations[0], spec.dilations[1]});
    attrs.set("pads", std::vector<int64_t>(spec.pads, spec.pads + 4));
    attrs.set("ceil_mode", int64_t(spec.ceilMode));
    attrs.set("count_include_pad", int64_t(spec.countIncludePad));
  }
  return runReference(op, attrs,
                      {ref::Tensor::fromBytes(
                          DType::F32, {spec.n, spec.c, spec.h, spec.w},
                          x.data())});
}

/// Max must match exactly; the average is summed in the reference's order
/// and so matches too, but only 1e-6 relative is promised.
void compare(const PoolSpec &spec, const std::vector<float> &got,
             const std::vector<float> &want) {
  REQUIRE(got.size() == want.size());
  bool exact = spec.kind == PoolKind::Max || spec.kind == PoolKind::GlobalMax;
  for (size_t i = 0; i < got.size(); ++i) {
    bool ok;
    if (std::isnan(want[i]))
      ok = std::isnan(got[i]);
    else if (exact || std::isinf(want[i]))
      ok = got[i] == want[i];
    else
      ok = std::fabs(got[i] - want[i]) <=
           1e-6f * std::max(1.0f, std::fabs(want[i]));
    if (!ok) {
      INFO(describe(spec) << ": element " << i << " is " << got[i]
                          << ", expected " << want[i]);
      CHECK(ok);
      return;
    }
  }
}

/// Both kernels, NCHW and NCHW16c, against the reference.
void checkBoth(const PoolSpec &spec, const std::vector<float> &x) {
  std::vector<float> want = reference(spec, x);
  {
    INFO("NCHW");
    compare(spec, runCode(generate(spec), spec, x), want);
  }
  INFO("NCHW16c");
  compare(spec, runBlocked(spec, x), want);
}

void check(const PoolSpec &spec, unsigned seed = 1) {
  INFO(describe(spec));
  checkBoth(spec, randomInput(spec, seed));
}

/// Max, and average counting the pads and not, of one window.
void checkAll(PoolSpec spec) {
  spec.kind = PoolKind::Max;
  check(spec);
  spec.kind = PoolKind::Average;
  spec.countIncludePad = false;
  check(spec);
  spec.countIncludePad = true;
  check(spec);
}

//===----------------------------------------------------------------------===//
// Windowed pools
//===----------------------------------------------------------------------===//

TEST_CASE("3x3 stride 1 pad 1 matches the reference at every width",
          "[avx512][pool]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t w : kWidths)
    checkAll(windowed(PoolKind::Max, {2, 3, 9, w}, 3, 1, 1));
  checkAll(windowed(PoolKind::Max, {1, 2, 40, 70}, 3, 1, 1));
  // Whole blocks of 16 channels, and a partial one past them.
  checkAll(windowed(PoolKind::Max, {1, 16, 10, 23}, 3, 1, 1));
  checkAll(windowed(PoolKind::Max, {2, 33, 12, 20}, 3, 1, 1));
}

TEST_CASE("3x3 stride 2 pad 1 matches the reference", "[avx512][pool]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t w : kWidths)
    checkAll(windowed(PoolKind::Max, {2, 3, 9, w}, 3, 2, 1));
  // The ResNet stem's pool, on fewer channels.
  checkAll(windowed(PoolKind::Max, {1, 4, 112, 112}, 3, 2, 1));
  checkAll(windowed(PoolKind::Max, {2, 33, 21, 30}, 3, 2, 1));
}

TEST_CASE("2x2 stride 2 pad 0 matches the reference", "[avx512][pool]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t w : {2, 7, 16, 17, 32, 33, 66})
    checkAll(windowed(PoolKind::Max, {2, 3, 8, w}, 2, 2, 0));
}

TEST_CASE("ceil_mode adds the partial last window", "[avx512][pool]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t w : kWidths) {
    if (w < 3)
      continue;
    PoolSpec spec = windowed(PoolKind::Max, {1, 3, 14, w}, 3, 2, 0);
    spec.ceilMode = true;
    checkAll(spec);
    spec.pads[2] = spec.pads[3] = 1;
    checkAll(spec);
  }
  // 2x2 s2 over an odd size, where ceil_mode makes a difference.
  PoolSpec spec = windowed(PoolKind::Max, {1, 2, 15, 35}, 2, 2, 0);
  spec.ceilMode = true;
  int64_t oh = 0, ow = 0;
  REQUIRE(poolOutputSize(spec, oh, ow).ok());
  CHECK(oh == 8);
  CHECK(ow == 18);
  checkAll(spec);
}

TEST_CASE("5x5 stride 1 pad 2 matches the reference", "[avx512][pool]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t w : kWidths)
    checkAll(windowed(PoolKind::Max, {1, 2, 6, w}, 5, 1, 2));
  checkAll(windowed(PoolKind::Max, {1, 1, 13, 50}, 5, 1, 2));
}

TEST_CASE("dilated windows match the reference", "[avx512][pool]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t w : {5, 16, 33}) {
    checkAll(windowed(PoolKind::Max, {1, 2, 11, w}, 3, 1, 2, 2));
    checkAll(windowed(PoolKind::Max, {1, 2, 11, w}, 3, 2, 1, 2));
  }
}

TEST_CASE("asymmetric windows and pads match the reference", "[avx512][pool]") {
  MLCC_REQUIRE_AVX512F();
  PoolSpec spec = windowed(PoolKind::Max, {2, 2, 10, 37}, 3, 1, 0);
  spec.kernel[0] = 2;
  spec.kernel[1] = 4;
  spec.strides[0] = 3;
  spec.strides[1] = 1;
  spec.pads[0] = 1;
  spec.pads[1] = 0;
  spec.pads[2] = 0;
  spec.pads[3] = 3;
  checkAll(spec);
  spec.strides[1] = 3;
  spec.dilations[0] = 2;
  checkAll(spec);
}

TEST_CASE("windows wholly in the padding get the reference's value",
          "[avx512][pool]") {
  MLCC_REQUIRE_AVX512F();
  // Pads larger than the kernel: the corner windows see no input at all;
  // max gives -FLT_MAX there and the average 0 (or 0 / 4).
  checkAll(windowed(PoolKind::Max, {1, 2, 4, 5}, 2, 1, 3));
  checkAll(windowed(PoolKind::Max, {1, 1, 3, 20}, 2, 2, 3));
}

TEST_CASE("pooling: NaN and infinities propagate as in the reference",
          "[avx512][pool]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t s : {1, 2}) {
    PoolSpec spec = windowed(PoolKind::Max, {1, 2, 8, 33}, 3, s, 1);
    std::vector<float> x = randomInput(spec, 7);
    x[5] = kNanF;
    x[40] = -kInfF;
    x[41] = -kInfF;
    x[70] = kInfF;
    x[8 * 33 + 3] = kNanF;
    for (size_t i = 8 * 33 + 34; i < 8 * 33 + 66; ++i)
      x[i] = -kInfF; // a row of -inf: max keeps -inf, not -FLT_MAX
    for (PoolKind kind : {PoolKind::Max, PoolKind::Average}) {
      spec.kind = kind;
      INFO(describe(spec));
      checkBoth(spec, x);
    }
  }
}

//===----------------------------------------------------------------------===//
// Global pools
//===----------------------------------------------------------------------===//

TEST_CASE("global pools match the reference", "[avx512][pool]") {
  MLCC_REQUIRE_AVX512F();
  for (PoolKind kind : {PoolKind::GlobalMax, PoolKind::GlobalAverage}) {
    for (auto hw : {std::pair<int64_t, int64_t>{7, 7},
                    {1, 1},
                    {4, 4},
                    {5, 7},
                    {14, 14},
                    {1, 33}}) {
      PoolSpec spec;
      spec.kind = kind;
      spec.name = poolKindName(kind);
      spec.n = 2;
      spec.c = 37;
      spec.h = hw.first;
      spec.w = hw.second;
      // Positive inputs: the vector sum's order then moves the result by
      // a few ulps at most.
      std::vector<float> x = randomInput(spec, 3);
      for (float &v : x)
        v = std::fabs(v);
      INFO(describe(spec));
      checkBoth(spec, x);
      if (kind == PoolKind::GlobalMax) {
        x[1] = kNanF;
        x[x.size() - 1] = kNanF;
        checkBoth(spec, x);
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Code properties
//===----------------------------------------------------------------------===//

TEST_CASE("pool kernels are position independent", "[avx512][pool]") {
  MLCC_REQUIRE_AVX512F();
  // Stride 2 reads its gather indices RIP-relative, average its divisors.
  for (PoolSpec spec : {windowed(PoolKind::Max, {1, 3, 17, 35}, 3, 2, 1),
                        windowed(PoolKind::Average, {1, 3, 17, 35}, 3, 1, 1)}) {
    INFO(describe(spec));
    std::vector<uint8_t> code = generate(spec);
    std::vector<uint8_t> again = generate(spec);
    CHECK(code == again);
    std::vector<float> x = randomInput(spec, 11);
    std::vector<float> want = reference(spec, x);
    for (size_t offset : {size_t(0), size_t(1), size_t(13), size_t(4095)})
      compare(spec, runCode(code, spec, x, offset), want);
  }
}

TEST_CASE("empty tensors give a kernel that does nothing", "[avx512][pool]") {
  MLCC_REQUIRE_AVX512F();
  PoolSpec spec = windowed(PoolKind::Max, {0, 3, 8, 8}, 3, 1, 1);
  std::vector<float> none = runCode(generate(spec), spec, {});
  CHECK(none.empty());
}

TEST_CASE("bad pool specs are errors, not crashes", "[avx512][pool]") {
  std::vector<uint8_t> code = {1, 2, 3};
  auto fails = [&](const PoolSpec &spec, const char *needle) {
    Status s = generatePool(spec, code);
    INFO(s.message());
    CHECK_FALSE(s.ok());
    CHECK(code.empty());
    CHECK(s.message().find(spec.name) != std::string::npos);
    CHECK(s.message().find(needle) != std::string::npos);
  };
  PoolSpec spec = windowed(PoolKind::Max, {1, 1, 8, 8}, 3, 1, 1);
  spec.name = "pool7";
  PoolSpec bad = spec;
  bad.dtype = DType::F64;
  fails(bad, "f32");
  bad = spec;
  bad.kernel[1] = 0;
  fails(bad, "kernel");
  bad = spec;
  bad.strides[0] = 0;
  fails(bad, "stride");
  bad = spec;
  bad.pads[3] = -1;
  fails(bad, "pad");
  bad = spec;
  bad.h = -2;
  fails(bad, "negative");
  bad = spec;
  bad.kernel[0] = 12; // 12 > 8 + 1 + 1
  fails(bad, "does not fit");
  bad = spec;
  bad.pads[0] = 1 << 20; // displacements would not fit 32 bits
  bad.w = 1 << 12;
  fails(bad, "too big");
  bad = spec;
  bad.kind = static_cast<PoolKind>(42);
  fails(bad, "kind");
}

//===----------------------------------------------------------------------===//
// Speed (hidden: run with [.bench])
//===----------------------------------------------------------------------===//

/// Best-of times of the kernel and of the reference on `spec`, printed.
void bench(const PoolSpec &spec, int reps) {
  std::vector<float> x = randomInput(spec, 5);
  std::vector<uint8_t> code = generate(spec);
  ExecutableBuffer exec(code);
  REQUIRE(exec.ok());
  std::vector<float> y(outputCount(spec));
  mlcc_pool_args args = {x.data(), y.data()};
  auto fn = exec.function<mlcc_pool_kernel_fn>();
  double jit = bestMicros([&] { fn(&args); }, reps);
  double ref = bestMicros([&] { reference(spec, x); }, 5);
  compare(spec, y, reference(spec, x));
  std::printf("%s: %zu code bytes, jit %.1f us, reference %.1f us (%.1fx)\n",
              describe(spec).c_str(), code.size(), jit, ref, ref / jit);
}

TEST_CASE("pool speed against the reference", "[.bench]") {
  MLCC_REQUIRE_AVX512F();
  // ResNet-50's max pool, after the 7x7 s2 stem conv.
  bench(windowed(PoolKind::Max, {1, 64, 112, 112}, 3, 2, 1), 200);
  bench(windowed(PoolKind::Max, {1, 64, 56, 56}, 3, 1, 1), 200);
  bench(windowed(PoolKind::Average, {1, 64, 56, 56}, 3, 1, 1), 200);
  bench(windowed(PoolKind::Max, {1, 64, 112, 112}, 3, 3, 1), 50);
  PoolSpec global;
  global.kind = PoolKind::GlobalAverage;
  global.c = 2048;
  global.h = global.w = 7;
  bench(global, 200);
}

} // namespace
