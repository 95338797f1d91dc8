//===- GridSampleKernelTest.cpp - Tests of the AVX-512 grid_sample kernels ===//
//
// Generates grid_sample kernels, maps their bytes executable and runs them
// against the reference GridSample kernel (compiler/Reference), the
// oracle: bilinear and nearest, zeros and border padding, both
// align_corners, grids reaching past the input on every side, point counts
// with every kind of block tail, several channels and images, and grid
// values that are nan, infinite, exactly -1, 0 and 1, or land exactly on
// pixels and half-way between them. Input, grid and output end at an
// unmapped page, so a kernel that touches an element past them faults (a
// gather of a tap outside the input would).
//
// Nearest copies an element: it must match bit for bit (the coordinates are
// computed in double, as the reference does). Bilinear weighs four taps
// with weights that are >= 0 and sum to 1, rounded to f32, and sums the
// products in f32 where the reference sums in double: about five
// roundings, so within 2^-21 max |x|.
//
//===----------------------------------------------------------------------===//

#include "ExecutableBuffer.h"
#include "GridSample.h"
#include "KernelABI.h"
#include "KernelTestSupport.h"

#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <cmath>
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

std::string describe(const GridSampleSpec &s) {
  return std::string(s.mode == GridSampleMode::Bilinear ? "bilinear"
                                                        : "nearest") +
         (s.padding == GridSamplePadding::Zeros ? " zeros" : " border") +
         (s.alignCorners ? " align_corners" : "") + " [" +
         std::to_string(s.n) + ", " + std::to_string(s.c) + ", " +
         std::to_string(s.h) + ", " + std::to_string(s.w) + "] at " +
         std::to_string(s.ho) + " x " + std::to_string(s.wo);
}

std::vector<float> runKernel(const GridSampleSpec &s,
                             const std::vector<float> &x,
                             const std::vector<float> &grid) {
  std::vector<uint8_t> code = generateCode(generateGridSample, s);
  ExecutableBuffer exec(code);
  REQUIRE(exec.ok());
  GuardedArray<float> src(x), g(grid);
  GuardedArray<float> dst(static_cast<size_t>(s.n * s.c * s.ho * s.wo));
  REQUIRE(src.ok());
  REQUIRE(g.ok());
  REQUIRE(dst.ok());
  mlcc_grid_sample_args args = {src.data(), g.data(), dst.data()};
  static CalleeSavedChecker checker;
  CHECK(checker.run(&args, exec.address()) == 0);
  return dst.values();
}

std::vector<float> reference(const GridSampleSpec &s,
                             const std::vector<float> &x,
                             const std::vector<float> &grid) {
  ref::Attrs attrs;
  attrs.set("mode", std::string(s.mode == GridSampleMode::Bilinear
                                    ? "bilinear"
                                    : "nearest"));
  attrs.set("padding_mode", std::string(s.padding == GridSamplePadding::Zeros
                                            ? "zeros"
                                            : "border"));
  attrs.set("align_corners", int64_t(s.alignCorners));
  return runReference(
      "grid_sample", attrs,
      {ref::Tensor::fromBytes(DType::F32, {s.n, s.c, s.h, s.w}, x.data()),
       ref::Tensor::fromBytes(DType::F32, {s.n, s.ho, s.wo, 2},
                              grid.data())});
}

void check(const GridSampleSpec &s, const std::vector<float> &x,
           const std::vector<float> &grid) {
  INFO(describe(s));
  std::vector<float> got = runKernel(s, x, grid), want = reference(s, x, grid);
  REQUIRE(got.size() == want.size());
  float maxAbs = 0;
  for (float v : x)
    maxAbs = std::max(maxAbs, std::fabs(v));
  const double tol =
      s.mode == GridSampleMode::Nearest ? 0.0 : std::ldexp(maxAbs, -21);
  for (size_t i = 0; i < got.size(); ++i) {
    bool ok = std::isnan(want[i])
                  ? std::isnan(got[i])
                  : std::fabs(double(got[i]) - want[i]) <= tol;
    if (!ok) {
      INFO("element " << i << " is " << got[i] << ", expected " << want[i]);
      CHECK(ok);
      return;
    }
  }
}

void check(const GridSampleSpec &s, unsigned seed, float reach = 1.3f) {
  std::vector<float> x = randomValues(
      static_cast<size_t>(s.n * s.c * s.h * s.w), -2.0f, 2.0f, seed);
  std::vector<float> grid = randomValues(
      static_cast<size_t>(s.n * s.ho * s.wo * 2), -reach, reach, seed + 1);
  check(s, x, grid);
}

GridSampleSpec make(GridSampleMode mode, GridSamplePadding padding,
                    bool align, std::vector<int64_t> nchw, int64_t ho,
                    int64_t wo) {
  GridSampleSpec s;
  s.mode = mode;
  s.padding = padding;
  s.alignCorners = align;
  s.n = nchw[0];
  s.c = nchw[1];
  s.h = nchw[2];
  s.w = nchw[3];
  s.ho = ho;
  s.wo = wo;
  return s;
}

const GridSampleMode kModes[] = {GridSampleMode::Bilinear,
                                 GridSampleMode::Nearest};
const GridSamplePadding kPaddings[] = {GridSamplePadding::Zeros,
                                       GridSamplePadding::Border};

} // namespace

TEST_CASE("grid_sample matches the reference in every mode",
          "[avx512][grid_sample]") {
  MLCC_REQUIRE_AVX512F();
  unsigned seed = 10;
  for (GridSampleMode mode : kModes)
    for (GridSamplePadding padding : kPaddings)
      for (bool align : {false, true}) {
        // Point counts 1, 7, 8, 9, 16, 17, 40 (tails of each kind), one
        // and three channels, two images.
        for (int64_t wo : {1, 7, 8, 9, 16, 17, 40})
          check(make(mode, padding, align, {2, 3, 5, 7}, 1, wo), seed += 2);
        check(make(mode, padding, align, {1, 1, 28, 28}, 28, 28), seed += 2);
        check(make(mode, padding, align, {1, 20, 9, 33}, 6, 11), seed += 2);
        // Points far outside: zeros reads nothing, border the edges.
        check(make(mode, padding, align, {1, 2, 4, 6}, 5, 9), seed += 2, 4.0f);
        // A one-pixel input.
        check(make(mode, padding, align, {1, 2, 1, 1}, 3, 5), seed += 2);
      }
}

TEST_CASE("grid_sample special grid values follow the reference",
          "[avx512][grid_sample]") {
  MLCC_REQUIRE_AVX512F();
  // Pixel centres and half-way points of a 4 x 6 input in both
  // align_corners conventions, the corners -1 and 1, 0, nan and infinities.
  const std::vector<float> special = {
      -1.0f,  1.0f,   0.0f,  -0.5f,   0.5f, 0.2f, -0.2f, 1.0f / 6, -1.0f / 3,
      0.25f,  -0.75f, kNanF, kInfF, -kInfF, 1.2f, -1.2f, 0.6f,    2.0f / 3};
  for (GridSampleMode mode : kModes)
    for (GridSamplePadding padding : kPaddings)
      for (bool align : {false, true}) {
        GridSampleSpec s = make(mode, padding, align, {1, 2, 4, 6}, 3,
                                static_cast<int64_t>(special.size()));
        std::vector<float> grid;
        for (int64_t i = 0; i < s.ho * s.wo; ++i) {
          grid.push_back(special[i % special.size()]);
          grid.push_back(special[(i * 7 + 3) % special.size()]);
        }
        check(s, randomValues(2 * 4 * 6, -2.0f, 2.0f, 99), grid);
      }
}

TEST_CASE("grid_sample of empty tensors does nothing; bad specs fail",
          "[avx512][grid_sample]") {
  MLCC_REQUIRE_AVX512F();
  check(make(GridSampleMode::Bilinear, GridSamplePadding::Zeros, false,
             {0, 3, 4, 4}, 2, 2),
        1);
  check(make(GridSampleMode::Nearest, GridSamplePadding::Border, true,
             {1, 0, 4, 4}, 2, 2),
        1);
  GridSampleSpec s;
  s.name = "graph.grid_sample @7";
  s.h = -1;
  std::vector<uint8_t> code;
  Status st = generateGridSample(s, code);
  REQUIRE(st.failed());
  CHECK(st.message().find("graph.grid_sample @7") != std::string::npos);
  s.h = 1 << 16;
  s.w = 1 << 16;
  CHECK(generateGridSample(s, code).failed());
}
