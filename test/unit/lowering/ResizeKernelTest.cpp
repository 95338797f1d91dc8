//===- ResizeKernelTest.cpp - Tests of the AVX-512 resize kernels ---------===//
//
// Generates nearest, linear and cubic resize kernels, maps their bytes
// executable and runs them against the reference Resize kernel
// (compiler/Reference), the oracle: every coordinate mode and nearest
// mode, upsampling by 2, 3 and 4, fractional scales up and down (windows
// of 16 and 32 source columns, and gathers), exclude_outside, two cubic
// coefficients, scales and sizes, widths with every kind of vector tail,
// NCHW and NCHW16c input (channel counts that are and are not multiples of
// 16; its padding lanes hold NaN, which must never reach the output).
// Inputs and outputs end at an unmapped page, so a kernel that touches an
// element past them faults.
//
// Nearest must match bit for bit. Linear computes in f32 in the
// reference's order where the reference sums in double, so it must be
// within 2^-21 (4 ulp) of sum |w * x|, the reference's result for |x|.
// Cubic's weights have both signs, so the reference of |x| does not bound
// sum |w * x|: that is at most max |x| (sum |w|)^2 < 2 max |x| (sum |w|
// per axis is at most 1.375 for a = -0.75, less for -0.5), and each
// output is 4 rows' and 4 columns' products rounded in f32 (with the
// weights rounded: about 10 roundings), so it must be within
// 2^-20 * 2 max |x|.
//
//===----------------------------------------------------------------------===//

#include "ExecutableBuffer.h"
#include "KernelABI.h"
#include "KernelTestSupport.h"
#include "Resize.h"

#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace mlcc;
using namespace mlcc::avx512;
using namespace mlcc::test;
using ref::DType;

namespace {

constexpr float kNanF = std::numeric_limits<float>::quiet_NaN();
constexpr float kInfF = std::numeric_limits<float>::infinity();

struct Case {
  std::string mode = "nearest";
  std::string coord = "half_pixel";
  std::string nearest = "round_prefer_floor";
  bool excludeOutside = false;
  double cubicA = -0.75;
  int64_t n = 1, c = 1, h = 1, w = 1;
  /// Scales of H and W, or (when sizes[0] >= 0) the output H and W.
  double scales[2] = {2.0, 2.0};
  int64_t sizes[2] = {-1, -1};
  bool blocked = false;

  bool fromSizes() const { return sizes[0] >= 0; }
  int64_t oh() const {
    return fromSizes() ? sizes[0]
                       : static_cast<int64_t>(std::floor(h * scales[0]));
  }
  int64_t ow() const {
    return fromSizes() ? sizes[1]
                       : static_cast<int64_t>(std::floor(w * scales[1]));
  }
};

std::string describe(const Case &k) {
  char buf[320];
  std::snprintf(buf, sizeof(buf),
                "%s %s %s exclude %d a %g [%lld,%lld,%lld,%lld] -> %lld x "
                "%lld (%s %g x %g)%s",
                k.mode.c_str(), k.coord.c_str(), k.nearest.c_str(),
                k.excludeOutside, k.cubicA, (long long)k.n, (long long)k.c,
                (long long)k.h, (long long)k.w, (long long)k.oh(),
                (long long)k.ow(), k.fromSizes() ? "sizes" : "scales",
                k.scales[0], k.scales[1], k.blocked ? " NCHW16c" : "");
  return buf;
}

ResizeSpec specOf(const Case &k) {
  ResizeSpec s;
  s.coords.mode = k.mode == "linear"  ? ResizeMode::Linear
                  : k.mode == "cubic" ? ResizeMode::Cubic
                                      : ResizeMode::Nearest;
  s.coords.cubicA = static_cast<float>(k.cubicA); // the attribute is f32
  if (k.coord == "half_pixel")
    s.coords.coord = ResizeCoord::HalfPixel;
  else if (k.coord == "pytorch_half_pixel")
    s.coords.coord = ResizeCoord::PytorchHalfPixel;
  else if (k.coord == "align_corners")
    s.coords.coord = ResizeCoord::AlignCorners;
  else if (k.coord == "asymmetric")
    s.coords.coord = ResizeCoord::Asymmetric;
  else
    s.coords.coord = ResizeCoord::TfHalfPixelForNN;
  if (k.nearest == "round_prefer_floor")
    s.coords.rounding = ResizeRounding::PreferFloor;
  else if (k.nearest == "round_prefer_ceil")
    s.coords.rounding = ResizeRounding::PreferCeil;
  else if (k.nearest == "floor")
    s.coords.rounding = ResizeRounding::Floor;
  else
    s.coords.rounding = ResizeRounding::Ceil;
  s.coords.excludeOutside = k.excludeOutside;
  s.coords.fromSizes = k.fromSizes();
  s.n = k.n;
  s.c = k.c;
  s.h = k.h;
  s.w = k.w;
  s.oh = k.oh();
  s.ow = k.ow();
  for (int i = 0; i < 2; ++i)
    s.scales[i] = k.fromSizes()
                      ? static_cast<double>(k.sizes[i]) / (i ? k.w : k.h)
                      : k.scales[i];
  s.blockedInput = k.blocked;
  return s;
}

/// x in NCHW16c, the padding lanes NaN.
std::vector<float> toBlocked(const Case &k, const std::vector<float> &x) {
  int64_t blocks = (k.c + 15) / 16, hw = k.h * k.w;
  std::vector<float> b(k.n * blocks * hw * 16, kNanF);
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t c = 0; c < k.c; ++c)
      for (int64_t i = 0; i < hw; ++i)
        b[((n * blocks + c / 16) * hw + i) * 16 + c % 16] =
            x[(n * k.c + c) * hw + i];
  return b;
}

std::vector<float> runKernel(const Case &k, const std::vector<float> &x) {
  std::vector<uint8_t> code = generateCode(generateResize, specOf(k));
  ExecutableBuffer exec(code);
  REQUIRE(exec.ok());
  GuardedArray<float> src(k.blocked ? toBlocked(k, x) : x);
  GuardedArray<float> dst(static_cast<size_t>(k.n * k.c * k.oh() * k.ow()));
  REQUIRE(src.ok());
  REQUIRE(dst.ok());
  mlcc_resize_args args = {src.data(), dst.data()};
  static CalleeSavedChecker checker;
  CHECK(checker.run(&args, exec.address()) == 0);
  return dst.values();
}

std::vector<float> reference(const Case &k, const std::vector<float> &x) {
  ref::Attrs attrs;
  attrs.set("mode", k.mode);
  attrs.set("coordinate_transformation_mode", k.coord);
  attrs.set("nearest_mode", k.nearest);
  attrs.set("exclude_outside", int64_t(k.excludeOutside));
  attrs.set("cubic_coeff_a", static_cast<float>(k.cubicA));
  ref::Tensor scales, sizes;
  if (k.fromSizes())
    sizes = ref::Tensor::fromVector(
        DType::I64, {4},
        std::vector<int64_t>{k.n, k.c, k.sizes[0], k.sizes[1]});
  else
    scales = ref::Tensor::fromVector(
        DType::F32, {4},
        std::vector<float>{1.0f, 1.0f, static_cast<float>(k.scales[0]),
                           static_cast<float>(k.scales[1])});
  return runReference(
      "resize", attrs,
      {ref::Tensor::fromBytes(DType::F32, {k.n, k.c, k.h, k.w}, x.data()),
       ref::Tensor(), scales, sizes});
}

/// Whether N and C (scale 1) are left alone, as the kernels assume:
/// tf_half_pixel_for_nn moves them by half a pixel, which its linear mode
/// and its nearest rounding up turn into a different channel.
bool keepsBatchAndChannels(const Case &k) {
  ResizeCoords coords = specOf(k).coords;
  coords.fromSizes = false;
  return isIdentityAxis(resizeAxisTaps(coords, 1.0, k.n, k.n), k.n, k.n) &&
         isIdentityAxis(resizeAxisTaps(coords, 1.0, k.c, k.c), k.c, k.c);
}

void check(const Case &k, std::vector<float> x) {
  INFO(describe(k));
  if (!keepsBatchAndChannels(k))
    return;
  std::vector<float> got = runKernel(k, x), want = reference(k, x);
  REQUIRE(got.size() == want.size());
  std::vector<float> magnitude;
  float maxAbs = 0;
  for (float &v : x) {
    v = std::fabs(v);
    if (std::isfinite(v))
      maxAbs = std::max(maxAbs, v);
  }
  if (k.mode == "linear")
    magnitude = reference(k, x);
  for (size_t i = 0; i < got.size(); ++i) {
    bool ok;
    if (std::isnan(want[i]))
      ok = std::isnan(got[i]);
    else if (k.mode == "nearest" || std::isinf(want[i]))
      ok = std::memcmp(&got[i], &want[i], sizeof(float)) == 0;
    else if (k.mode == "cubic")
      ok = std::fabs(got[i] - want[i]) <= std::ldexp(2 * maxAbs, -20);
    else
      ok = std::fabs(got[i] - want[i]) <= std::ldexp(magnitude[i], -21);
    if (!ok) {
      INFO("element " << i << " is " << got[i] << ", expected " << want[i]);
      CHECK(ok);
      return;
    }
  }
}

void check(const Case &k, unsigned seed = 1) {
  check(k, randomValues(static_cast<size_t>(k.n * k.c * k.h * k.w), -2.0f, 2.0f,
                        seed));
}

Case make(std::string mode, std::string coord, std::vector<int64_t> nchw,
          double sh, double sw) {
  Case k;
  k.mode = std::move(mode);
  k.coord = std::move(coord);
  k.n = nchw[0];
  k.c = nchw[1];
  k.h = nchw[2];
  k.w = nchw[3];
  // The scales operand is f32.
  k.scales[0] = static_cast<float>(sh);
  k.scales[1] = static_cast<float>(sw);
  return k;
}

Case sized(Case k, int64_t oh, int64_t ow) {
  k.sizes[0] = oh;
  k.sizes[1] = ow;
  return k;
}

const int64_t kWidths[] = {1, 5, 8, 9, 15, 16, 17, 24, 33, 48};
const char *const kCoords[] = {"half_pixel", "pytorch_half_pixel",
                               "align_corners", "asymmetric",
                               "tf_half_pixel_for_nn"};
const char *const kRoundings[] = {"round_prefer_floor", "round_prefer_ceil",
                                  "floor", "ceil"};

//===----------------------------------------------------------------------===//
// Nearest
//===----------------------------------------------------------------------===//

TEST_CASE("nearest 2x, 3x and 4x match the reference at every width",
          "[avx512][resize]") {
  MLCC_REQUIRE_AVX512F();
  for (double s : {2.0, 3.0, 4.0})
    for (int64_t w : kWidths) {
      Case k = make("nearest", "asymmetric", {2, 3, 5, w}, s, s);
      k.nearest = "floor";
      check(k);
    }
}

TEST_CASE("nearest in every coordinate and nearest mode", "[avx512][resize]") {
  MLCC_REQUIRE_AVX512F();
  for (const char *coord : kCoords)
    for (const char *rounding : kRoundings)
      for (double s : {2.0, 1.5, 0.6, 0.3}) {
        Case k = make("nearest", coord, {1, 2, 7, 70}, s, s);
        k.nearest = rounding;
        check(k);
        check(sized(k, 11, 37));
      }
}

//===----------------------------------------------------------------------===//
// Linear
//===----------------------------------------------------------------------===//

TEST_CASE("linear 2x matches the reference at every width",
          "[avx512][resize]") {
  MLCC_REQUIRE_AVX512F();
  // All but align_corners have the 2x column pattern (its own pass).
  for (const char *coord : kCoords)
    for (int64_t w : kWidths) {
      check(make("linear", coord, {2, 3, 5, w}, 2, 2));
      check(sized(make("linear", coord, {2, 3, 5, w}, 2, 2), 10, 2 * w));
    }
}

TEST_CASE("linear in every coordinate mode, up and down", "[avx512][resize]") {
  MLCC_REQUIRE_AVX512F();
  for (const char *coord : kCoords)
    for (double s : {3.0, 1.7, 0.6, 0.3}) {
      check(make("linear", coord, {1, 2, 9, 70}, s, s));
      Case k = make("linear", coord, {1, 2, 9, 70}, s, s);
      k.excludeOutside = true;
      check(k);
    }
  // The U-Net's: 48 -> 80 half_pixel, 96 -> 48 align_corners (sizes).
  check(sized(make("linear", "half_pixel", {2, 4, 48, 48}, 1, 1), 80, 80));
  check(sized(make("linear", "align_corners", {2, 3, 96, 96}, 1, 1), 48, 48));
  // One axis only: rows copied, or columns copied.
  check(make("linear", "half_pixel", {1, 2, 6, 40}, 1, 2));
  check(make("linear", "half_pixel", {1, 2, 6, 40}, 2, 1));
}

TEST_CASE("linear skips zero weights, as the reference, so inf stays inf",
          "[avx512][resize]") {
  MLCC_REQUIRE_AVX512F();
  // align_corners 9 -> 17: every other output row and column is an input
  // one (weight 1, the other 0).
  Case k = sized(make("linear", "align_corners", {1, 2, 9, 9}, 1, 1), 17, 17);
  std::vector<float> x = randomValues(2 * 81, -2.0f, 2.0f, 3);
  x[10] = kInfF;
  x[81 + 40] = -kInfF;
  check(k, x);
  k.blocked = true;
  check(k, x);
  // The 2x pass: an inf next to a finite value, and next to -inf (NaN).
  for (const char *coord : {"half_pixel", "asymmetric"}) {
    k = make("linear", coord, {1, 2, 9, 20}, 2, 2);
    x = randomValues(2 * 180, -2.0f, 2.0f, 4);
    x[25] = kInfF;
    x[180 + 40] = kInfF;
    x[180 + 41] = -kInfF;
    check(k, x);
    k.blocked = true;
    check(k, x);
  }
}

//===----------------------------------------------------------------------===//
// Cubic
//===----------------------------------------------------------------------===//

TEST_CASE("cubic 2x and 3x match the reference at every width",
          "[avx512][resize]") {
  MLCC_REQUIRE_AVX512F();
  for (double s : {2.0, 3.0})
    for (int64_t w : kWidths) {
      check(make("cubic", "half_pixel", {2, 3, 5, w}, s, s));
      check(sized(make("cubic", "align_corners", {1, 3, 5, w}, s, s),
                  static_cast<int64_t>(5 * s), static_cast<int64_t>(w * s)));
    }
}

TEST_CASE("cubic in every coordinate mode, up and down, both coefficients",
          "[avx512][resize]") {
  MLCC_REQUIRE_AVX512F();
  for (const char *coord : kCoords)
    for (double a : {-0.75, -0.5})
      for (double s : {3.0, 1.7, 0.6, 0.3})
        for (bool exclude : {false, true}) {
          Case k = make("cubic", coord, {1, 2, 9, 70}, s, s);
          k.cubicA = a;
          k.excludeOutside = exclude;
          check(k);
        }
  // Sizes; one axis only (rows copied, or columns copied); inputs of one
  // and two rows (taps clamped onto the same row).
  check(sized(make("cubic", "half_pixel", {2, 4, 48, 48}, 1, 1), 80, 80));
  check(sized(make("cubic", "pytorch_half_pixel", {1, 3, 96, 96}, 1, 1), 37,
              41));
  check(make("cubic", "half_pixel", {1, 2, 6, 40}, 1, 2));
  check(make("cubic", "half_pixel", {1, 2, 6, 40}, 2, 1));
  check(make("cubic", "half_pixel", {1, 2, 1, 3}, 4, 4));
  check(make("cubic", "asymmetric", {1, 2, 2, 20}, 3, 3));
}

TEST_CASE("cubic skips zero weights, as the reference, so inf stays inf",
          "[avx512][resize]") {
  MLCC_REQUIRE_AVX512F();
  // half_pixel 3x: every third output row and column is an input one
  // (weights 0, 1, 0, 0); the others take inf from four neighbours.
  Case k = make("cubic", "half_pixel", {1, 2, 9, 20}, 3, 3);
  std::vector<float> x = randomValues(2 * 180, -2.0f, 2.0f, 6);
  x[25] = kInfF;
  x[180 + 40] = -kInfF;
  check(k, x);
  k.blocked = true;
  check(k, x);
}

//===----------------------------------------------------------------------===//
// NCHW16c input
//===----------------------------------------------------------------------===//

TEST_CASE("NCHW16c input gives the NCHW output", "[avx512][resize]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t c : {16, 4, 20, 35})
    for (int64_t w : {5, 16, 24, 33}) {
      Case k = make("nearest", "asymmetric", {2, c, 4, w}, 2, 2);
      k.nearest = "floor";
      k.blocked = true;
      check(k);
      k = make("linear", "half_pixel", {2, c, 4, w}, 2, 2);
      k.blocked = true;
      check(k);
      k = sized(make("linear", "align_corners", {1, c, 7, w}, 1, 1), 5, 11);
      k.blocked = true;
      check(k);
      k = make("cubic", "half_pixel", {2, c, 4, w}, 3, 3);
      k.blocked = true;
      check(k);
    }
  // Input rows read by several output rows, by one, or skipped: the two
  // (cubic: four) slots of transposed rows.
  for (double s : {3.0, 1.7, 0.6, 0.3}) {
    Case k = make("linear", "pytorch_half_pixel", {1, 20, 10, 21}, s, s);
    k.blocked = true;
    check(k);
    k.mode = "nearest";
    check(k);
    k.mode = "cubic";
    check(k);
  }
}

TEST_CASE("empty tensors, too long rows and empty inputs", "[avx512][resize]") {
  MLCC_REQUIRE_AVX512F();
  check(make("nearest", "half_pixel", {0, 3, 4, 4}, 2, 2));
  check(make("linear", "half_pixel", {1, 0, 4, 4}, 2, 2));
  // NCHW16c rows are transposed into a stack scratch of 64 KiB.
  ResizeSpec s = specOf(make("linear", "half_pixel", {1, 16, 2, 2000}, 1, 1));
  std::vector<uint8_t> code;
  CHECK(generateResize(s, code).ok());
  s.blockedInput = true;
  CHECK(generateResize(s, code).failed());
  // Cubic's four slots of 300 columns are past it, linear's two are not.
  s = specOf(make("cubic", "half_pixel", {1, 16, 2, 300}, 2, 2));
  s.blockedInput = true;
  CHECK(generateResize(s, code).failed());
  s.coords.mode = ResizeMode::Linear;
  CHECK(generateResize(s, code).ok());
  s.blockedInput = false;
  s.h = 0;
  CHECK(generateResize(s, code).failed());
}

//===----------------------------------------------------------------------===//
// Speed (hidden: run with [.bench])
//===----------------------------------------------------------------------===//

void bench(const Case &k, int reps) {
  std::vector<float> x =
      randomValues(static_cast<size_t>(k.n * k.c * k.h * k.w), -2.0f, 2.0f, 5);
  std::vector<float> src = k.blocked ? toBlocked(k, x) : x;
  std::vector<uint8_t> code = generateCode(generateResize, specOf(k));
  ExecutableBuffer exec(code);
  REQUIRE(exec.ok());
  std::vector<float> y(k.n * k.c * k.oh() * k.ow()), copy(y.size());
  mlcc_resize_args args = {src.data(), y.data()};
  auto fn = exec.function<mlcc_resize_kernel_fn>();
  double jit = bestMicros([&] { fn(&args); }, reps);
  double mem = bestMicros(
      [&] { std::memcpy(copy.data(), y.data(), y.size() * sizeof(float)); },
      reps);
  std::printf("%s: %zu code bytes, jit %.1f us, memcpy of the output %.1f "
              "us (%.2fx)\n",
              describe(k).c_str(), code.size(), jit, mem, jit / mem);
}

TEST_CASE("resize speed against a copy of its output", "[.bench]") {
  MLCC_REQUIRE_AVX512F();
  // The U-Net's resizes (batch 2).
  Case k = make("nearest", "asymmetric", {2, 16, 24, 24}, 2, 2);
  k.nearest = "floor";
  bench(k, 200);
  k = make("nearest", "asymmetric", {2, 16, 48, 48}, 2, 2);
  k.nearest = "floor";
  bench(k, 200);
  k = make("linear", "half_pixel", {2, 16, 24, 24}, 2, 2);
  bench(k, 200);
  bench(make("linear", "half_pixel", {2, 16, 32, 32}, 2, 2), 200);
  bench(make("linear", "half_pixel", {2, 16, 48, 48}, 2, 2), 200);
  k.blocked = true;
  bench(k, 200);
  bench(sized(make("linear", "align_corners", {2, 16, 96, 96}, 1, 1), 48, 48),
        200);
  k = sized(make("linear", "half_pixel", {2, 4, 48, 48}, 1, 1), 80, 80);
  k.blocked = true;
  bench(k, 200);
  // ESPCN's bicubic 3x.
  bench(make("cubic", "half_pixel", {1, 3, 32, 32}, 3, 3), 200);
}

} // namespace
