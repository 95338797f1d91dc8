//===- StencilKernelTest.cpp - Tests of the AVX-512 stencil kernels -------===//
//
// Generates graph.stencil kernels, maps their bytes executable and runs them
// against the reference kernel (compiler/Reference/Kernels/Stencil.cpp), the
// oracle: every reduction times every padding mode, 2-D and 3-D windows
// (the 5- and 7-point Laplacians among them), widths with every kind of
// vector tail, offsets, strides (2 along the rows too) and dilations,
// windows larger than the input, NaN and inf inputs, exact ties, and 300
// random shapes and attributes. Inputs and outputs end at an unmapped page,
// so a kernel that touches an element past its tensors faults.
//
// min, max, argmin and argmax must match exactly. sum is accumulated in f32
// where the reference uses double: it may differ by (K + 1) * 2^-24 times
// the sum of |x * w| over the window (K taps), a bound on the error of K
// fused multiply-adds.
//
//===----------------------------------------------------------------------===//

#include "ExecutableBuffer.h"
#include "KernelABI.h"
#include "KernelTestSupport.h"
#include "Stencil.h"

#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace mlcc;
using namespace mlcc::avx512;
using namespace mlcc::test;
using ref::DType;

namespace {

constexpr float kNanF = std::numeric_limits<float>::quiet_NaN();
constexpr float kInfF = std::numeric_limits<float>::infinity();

const StencilReduction kReductions[] = {
    StencilReduction::Sum, StencilReduction::Min, StencilReduction::Max,
    StencilReduction::ArgMin, StencilReduction::ArgMax};
const StencilPadding kPaddings[] = {StencilPadding::Zero, StencilPadding::Clamp,
                                    StencilPadding::Reflect,
                                    StencilPadding::Mirror};
const int64_t kWidths[] = {1, 7, 16, 33, 64};

const char *reductionName(StencilReduction r) {
  switch (r) {
  case StencilReduction::Sum:
    return "sum";
  case StencilReduction::Min:
    return "min";
  case StencilReduction::Max:
    return "max";
  case StencilReduction::ArgMin:
    return "argmin";
  case StencilReduction::ArgMax:
    return "argmax";
  }
  return "?";
}

const char *paddingName(StencilPadding p) {
  switch (p) {
  case StencilPadding::Zero:
    return "zero";
  case StencilPadding::Clamp:
    return "clamp";
  case StencilPadding::Reflect:
    return "reflect";
  case StencilPadding::Mirror:
    return "mirror";
  }
  return "?";
}

bool isArg(StencilReduction r) {
  return r == StencilReduction::ArgMin || r == StencilReduction::ArgMax;
}

std::string ints(const std::vector<int64_t> &v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i)
    os << (i ? "," : "") << v[i];
  os << "]";
  return os.str();
}

std::string describe(const StencilSpec &s) {
  std::ostringstream os;
  os << reductionName(s.reduction) << " " << paddingName(s.padding) << " ("
     << s.paddingValue << ") input " << ints(s.shape) << " weights "
     << ints(s.kernel) << " offsets " << ints(s.offsets) << " strides "
     << ints(s.strides) << " dilations " << ints(s.dilations);
  return os.str();
}

int64_t product(const std::vector<int64_t> &v) {
  int64_t n = 1;
  for (int64_t d : v)
    n *= d;
  return n;
}

StencilSpec makeSpec(std::vector<int64_t> shape, std::vector<int64_t> kernel,
                     std::vector<float> weights,
                     StencilReduction r = StencilReduction::Sum,
                     StencilPadding p = StencilPadding::Zero) {
  StencilSpec spec;
  spec.shape = std::move(shape);
  spec.kernel = std::move(kernel);
  spec.weights = std::move(weights);
  spec.reduction = r;
  spec.padding = p;
  return spec;
}

/// Random weights in [-1, 1) for a window of `kernel`'s shape.
StencilSpec randomSpec(std::vector<int64_t> shape, std::vector<int64_t> kernel,
                       unsigned seed) {
  std::vector<float> w = randomValues(product(kernel), -1.0f, 1.0f, seed);
  return makeSpec(std::move(shape), std::move(kernel), std::move(w));
}

/// The 5-point Laplacian over the last two dims of a rank-`rank` input.
std::vector<float> laplacian2d() { return {0, 1, 0, 1, -4, 1, 0, 1, 0}; }
/// The 7-point Laplacian, 3 x 3 x 3.
std::vector<float> laplacian3d() {
  std::vector<float> w(27, 0.0f);
  w[13] = -6.0f;
  for (int i : {4, 10, 12, 14, 16, 22})
    w[i] = 1.0f;
  return w;
}

//===----------------------------------------------------------------------===//
// Running a kernel and the oracle
//===----------------------------------------------------------------------===//

/// An output, as the bits of its elements (f32 or i64), to compare either.
struct Output {
  std::vector<float> f;
  std::vector<int64_t> i;
};

std::vector<int64_t> outputShape(const StencilSpec &spec) {
  std::vector<int64_t> out;
  Status s = stencilOutputShape(spec, out);
  INFO(s.message());
  REQUIRE(s.ok());
  return out;
}

Output runCode(const std::vector<uint8_t> &code, const StencilSpec &spec,
               const std::vector<float> &x) {
  ExecutableBuffer exec(code);
  REQUIRE(exec.ok());
  GuardedArray<float> src(x);
  REQUIRE(src.ok());
  size_t n = static_cast<size_t>(product(outputShape(spec)));
  Output out;
  if (isArg(spec.reduction)) {
    GuardedArray<int64_t> dst(std::vector<int64_t>(n, -7));
    REQUIRE(dst.ok());
    mlcc_stencil_args args = {src.data(), dst.data()};
    exec.function<mlcc_stencil_kernel_fn>()(&args);
    out.i = dst.values();
  } else {
    GuardedArray<float> dst(std::vector<float>(n, -7.0f));
    REQUIRE(dst.ok());
    mlcc_stencil_args args = {src.data(), dst.data()};
    exec.function<mlcc_stencil_kernel_fn>()(&args);
    out.f = dst.values();
  }
  return out;
}

ref::Attrs attrsOf(const StencilSpec &spec) {
  ref::Attrs attrs;
  attrs.set("reduction", std::string(reductionName(spec.reduction)));
  attrs.set("padding", std::string(paddingName(spec.padding)));
  attrs.set("padding_value", spec.paddingValue);
  if (!spec.offsets.empty())
    attrs.set("offsets", spec.offsets);
  if (!spec.strides.empty())
    attrs.set("strides", spec.strides);
  if (!spec.dilations.empty())
    attrs.set("dilations", spec.dilations);
  return attrs;
}

ref::Tensor referenceTensor(const StencilSpec &spec,
                            const std::vector<float> &x,
                            const std::vector<float> &w) {
  const ref::KernelDef *k = ref::KernelRegistry::get().find("stencil");
  REQUIRE(k);
  std::vector<ref::Tensor> out(1);
  ref::Status s =
      k->run(attrsOf(spec),
             {ref::Tensor::fromBytes(DType::F32, spec.shape, x.data()),
              ref::Tensor::fromBytes(DType::F32, spec.kernel, w.data())},
             out);
  INFO(s.message());
  REQUIRE(s.ok());
  return out[0];
}

Output reference(const StencilSpec &spec, const std::vector<float> &x) {
  ref::Tensor t = referenceTensor(spec, x, spec.weights);
  Output out;
  if (isArg(spec.reduction)) {
    REQUIRE(t.dtype() == DType::I64);
    out.i.assign(t.data<int64_t>(), t.data<int64_t>() + t.numel());
  } else {
    REQUIRE(t.dtype() == DType::F32);
    out.f.assign(t.data<float>(), t.data<float>() + t.numel());
  }
  return out;
}

/// Per output, the sum of |x * w| over its window (the scale of a sum's
/// rounding error): the reference's sum over |x|, |w|, |padding_value|.
std::vector<float> magnitudes(StencilSpec spec, std::vector<float> x) {
  for (float &v : x)
    v = std::fabs(v);
  std::vector<float> w = spec.weights;
  for (float &v : w)
    v = std::fabs(v);
  spec.paddingValue = std::fabs(spec.paddingValue);
  spec.reduction = StencilReduction::Sum;
  ref::Tensor t = referenceTensor(spec, x, w);
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

float maxSumError = 0.0f; // the largest sum error seen, for the log

void compare(const StencilSpec &spec, const std::vector<float> &x,
             const Output &got, const Output &want) {
  INFO(describe(spec));
  if (isArg(spec.reduction)) {
    REQUIRE(got.i.size() == want.i.size());
    for (size_t i = 0; i < got.i.size(); ++i)
      if (got.i[i] != want.i[i]) {
        INFO("element " << i << " is " << got.i[i] << ", expected "
                        << want.i[i]);
        CHECK(got.i[i] == want.i[i]);
        return;
      }
    return;
  }
  REQUIRE(got.f.size() == want.f.size());
  bool sum = spec.reduction == StencilReduction::Sum;
  std::vector<float> scale;
  if (sum)
    scale = magnitudes(spec, x);
  const float taps = static_cast<float>(product(spec.kernel));
  for (size_t i = 0; i < got.f.size(); ++i) {
    float g = got.f[i], e = want.f[i];
    bool ok;
    if (std::isnan(e))
      ok = std::isnan(g);
    else if (!sum || std::isinf(e))
      ok = g == e;
    else {
      float err = std::fabs(g - e);
      maxSumError = std::max(maxSumError, err);
      ok = err <= (taps + 1) * std::ldexp(1.0f, -24) * scale[i];
    }
    if (!ok) {
      INFO("element " << i << " is " << g << ", expected " << e);
      CHECK(ok);
      return;
    }
  }
}

void check(const StencilSpec &spec, const std::vector<float> &x) {
  INFO(describe(spec));
  std::vector<uint8_t> code = generateCode(generateStencil, spec);
  compare(spec, x, runCode(code, spec, x), reference(spec, x));
}

void check(const StencilSpec &spec, unsigned seed = 1) {
  check(spec, randomValues(static_cast<size_t>(product(spec.shape)), -2.0f,
                           2.0f, seed));
}

/// `spec` with every reduction and padding mode.
void checkAllModes(StencilSpec spec, unsigned seed = 1) {
  for (StencilReduction r : kReductions)
    for (StencilPadding p : kPaddings) {
      spec.reduction = r;
      spec.padding = p;
      check(spec, seed);
    }
}

//===----------------------------------------------------------------------===//
// 2-D windows
//===----------------------------------------------------------------------===//

TEST_CASE("stencil: 3x3 windows match the reference in every mode and width",
          "[avx512][stencil]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t w : kWidths)
    for (int64_t h : {1, 5, 9})
      checkAllModes(randomSpec({2, 3, h, w}, {1, 1, 3, 3}, 11), 3);
}

TEST_CASE("stencil: the 5-point Laplacian on 64 x 64 and odd sizes",
          "[avx512][stencil]") {
  MLCC_REQUIRE_AVX512F();
  for (auto shape : std::vector<std::vector<int64_t>>{
           {1, 1, 64, 64}, {1, 2, 33, 17}, {1, 1, 2, 2}, {2, 70, 100}}) {
    std::vector<int64_t> kernel(shape.size(), 1);
    kernel[shape.size() - 2] = kernel[shape.size() - 1] = 3;
    checkAllModes(makeSpec(shape, kernel, laplacian2d()));
  }
}

TEST_CASE("stencil: windows larger than the input wrap every padding mode",
          "[avx512][stencil]") {
  MLCC_REQUIRE_AVX512F();
  // A 7x7 window on 1-, 2- and 3-wide dims reflects and mirrors several
  // times over.
  for (int64_t n : {1, 2, 3})
    checkAllModes(randomSpec({2, n, n + 1}, {1, 7, 7}, 5));
  checkAllModes(randomSpec({1, 2, 40}, {1, 5, 21}, 6));
}

TEST_CASE("stencil: offsets, strides and dilations", "[avx512][stencil]") {
  MLCC_REQUIRE_AVX512F();
  StencilSpec spec = randomSpec({2, 13, 37}, {1, 3, 5}, 7);
  spec.offsets = {0, -3, 1};
  checkAllModes(spec);
  spec.offsets = {0, 2, -6};
  checkAllModes(spec);
  spec.offsets.clear();
  spec.dilations = {1, 2, 3};
  checkAllModes(spec);
  spec.strides = {1, 2, 1};
  checkAllModes(spec);
  spec.strides = {1, 3, 1};
  spec.dilations = {1, 1, 2};
  spec.offsets = {0, -1, -2};
  checkAllModes(spec);
  // Stride 2 along the rows: 32 columns per vector, permuted.
  for (int64_t w : {1, 2, 7, 31, 32, 33, 64, 67}) {
    StencilSpec s2 = randomSpec({2, 5, w}, {1, 3, 3}, 20);
    s2.strides = {1, 1, 2};
    checkAllModes(s2);
    s2.dilations = {1, 1, 2};
    s2.offsets = {0, 1, -5};
    checkAllModes(s2);
  }
  // Even windows: the default origin is -(k - 1) / 2, rounded to zero.
  checkAllModes(randomSpec({3, 10, 20}, {1, 2, 4}, 8));
}

TEST_CASE("stencil: 1-D windows and inputs of other ranks",
          "[avx512][stencil]") {
  MLCC_REQUIRE_AVX512F();
  checkAllModes(randomSpec({50}, {5}, 9));
  checkAllModes(randomSpec({4, 33}, {1, 3}, 10));
  checkAllModes(randomSpec({2, 9, 18}, {1, 1, 3}, 12));
  checkAllModes(randomSpec({2, 9, 18}, {1, 3, 1}, 13));
  checkAllModes(randomSpec({2, 1, 3, 5, 17}, {1, 1, 3, 3, 3}, 14));
}

TEST_CASE("stencil: padding_value enters zero padding as an input value",
          "[avx512][stencil]") {
  MLCC_REQUIRE_AVX512F();
  StencilSpec spec = randomSpec({2, 7, 19}, {1, 3, 3}, 15);
  for (float pv : {0.5f, -3.0f, kInfF, kNanF}) {
    spec.paddingValue = pv;
    for (StencilReduction r : kReductions) {
      spec.reduction = r;
      check(spec);
    }
  }
}

TEST_CASE("stencil: NaN and inf inputs as the reference treats them",
          "[avx512][stencil]") {
  MLCC_REQUIRE_AVX512F();
  StencilSpec spec = randomSpec({2, 9, 35}, {1, 3, 3}, 16);
  std::vector<float> x = randomValues(2 * 9 * 35, -2.0f, 2.0f, 17);
  for (size_t i = 0; i < x.size(); i += 13)
    x[i] = kNanF;
  for (size_t i = 5; i < x.size(); i += 29)
    x[i] = kInfF;
  for (size_t i = 7; i < x.size(); i += 31)
    x[i] = -kInfF;
  for (StencilReduction r : kReductions)
    for (StencilPadding p : kPaddings) {
      spec.reduction = r;
      spec.padding = p;
      check(spec, x);
    }
  // Only NaN: min and max stay at their start (+-inf), the arg modes at 0.
  std::fill(x.begin(), x.end(), kNanF);
  for (StencilReduction r : kReductions) {
    spec.reduction = r;
    check(spec, x);
  }
}

TEST_CASE("stencil: ties keep the first tap, as the reference",
          "[avx512][stencil]") {
  MLCC_REQUIRE_AVX512F();
  // Few distinct values and weights: most windows have tied extremes.
  std::vector<float> x(3 * 11 * 40);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(static_cast<int>((i * 7919) % 5) - 2);
  StencilSpec spec =
      makeSpec({3, 11, 40}, {1, 3, 3}, {1, -1, 0.5f, 1, 0, -1, 0.5f, 1, -0.5f});
  for (StencilReduction r : kReductions)
    for (StencilPadding p : kPaddings) {
      spec.reduction = r;
      spec.padding = p;
      check(spec, x);
    }
  // Products equal in f32 but not exactly: b * 1 = b, a * a = b + 2^-46
  // rounds to b. The arg modes compare the exact product, as the
  // reference does in double: argmax must pick the second tap.
  float a = 1.0f + std::ldexp(1.0f, -23), b = 1.0f + std::ldexp(1.0f, -22);
  REQUIRE(a * a == b);
  std::vector<float> y = {b, a, b, a, b, a, b, a, b, a, b, a, b, a, b, a, b};
  StencilSpec tie = makeSpec({17}, {2}, {1.0f, a});
  tie.offsets = {0};
  for (StencilReduction r : kReductions) {
    tie.reduction = r;
    check(tie, y);
  }
}

//===----------------------------------------------------------------------===//
// 3-D windows
//===----------------------------------------------------------------------===//

TEST_CASE("stencil: 3x3x3 windows match the reference in every mode",
          "[avx512][stencil]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t w : {1, 7, 16, 33})
    for (int64_t d : {1, 4})
      checkAllModes(randomSpec({2, d, 5, w}, {1, 3, 3, 3}, 18), 4);
}

TEST_CASE("stencil: the 7-point Laplacian", "[avx512][stencil]") {
  MLCC_REQUIRE_AVX512F();
  checkAllModes(makeSpec({1, 1, 16, 16, 16}, {1, 1, 3, 3, 3}, laplacian3d()));
  checkAllModes(makeSpec({9, 10, 33}, {3, 3, 3}, laplacian3d()));
}

TEST_CASE("stencil: 3-D offsets, strides and dilations", "[avx512][stencil]") {
  MLCC_REQUIRE_AVX512F();
  StencilSpec spec = randomSpec({2, 7, 8, 21}, {1, 2, 3, 3}, 19);
  spec.strides = {1, 2, 2, 1};
  spec.dilations = {1, 3, 1, 2};
  spec.offsets = {0, -2, 1, -3};
  checkAllModes(spec);
}

TEST_CASE("stencil: random shapes, windows and attributes",
          "[avx512][stencil]") {
  MLCC_REQUIRE_AVX512F();
  std::mt19937 gen(2026);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(gen);
  };
  for (int iter = 0; iter < 300; ++iter) {
    int rank = static_cast<int>(pick(1, 5));
    int windowDims = static_cast<int>(std::min<int64_t>(rank, pick(1, 3)));
    std::vector<int64_t> shape, kernel, offsets, strides, dilations;
    for (int d = 0; d < rank; ++d) {
      bool window = d >= rank - windowDims;
      bool last = d == rank - 1;
      shape.push_back(last ? pick(1, 40) : pick(1, 7));
      kernel.push_back(window ? pick(1, 5) : 1);
      strides.push_back(window ? pick(1, last ? 2 : 3) : 1);
      dilations.push_back(window ? pick(1, 3) : 1);
      offsets.push_back(window ? pick(-8, 4) : 0);
    }
    StencilSpec spec = randomSpec(shape, kernel, iter);
    spec.reduction = kReductions[pick(0, 4)];
    spec.padding = kPaddings[pick(0, 3)];
    spec.paddingValue = static_cast<float>(pick(-2, 2)) * 0.75f;
    spec.strides = strides;
    spec.dilations = dilations;
    if (pick(0, 1))
      spec.offsets = offsets;
    check(spec, static_cast<unsigned>(iter));
  }
}

//===----------------------------------------------------------------------===//
// What the generator declines, and the ABI
//===----------------------------------------------------------------------===//

TEST_CASE("stencil: declines what it does not generate", "[stencil]") {
  std::vector<uint8_t> code;
  // A stride above 2 along the innermost dim.
  StencilSpec spec = randomSpec({1, 8, 8}, {1, 3, 3}, 1);
  spec.strides = {1, 1, 3};
  CHECK(generateStencil(spec, code).failed());
  // A window over four dims.
  CHECK(generateStencil(randomSpec({2, 3, 4, 5}, {2, 1, 1, 1}, 1), code)
            .failed());
  // A batch dim with an offset.
  spec = randomSpec({2, 3, 4, 5}, {1, 1, 1, 1}, 1);
  spec.offsets = {1, 0, 0, 0};
  CHECK(generateStencil(spec, code).failed());
  // Weights that do not fill the window, or of another rank.
  spec = randomSpec({4, 5}, {3, 3}, 1);
  spec.weights.pop_back();
  CHECK(generateStencil(spec, code).failed());
  CHECK(generateStencil(makeSpec({4, 5}, {3}, {1, 2, 3}), code).failed());
  // A batch dim beyond the window is fine.
  CHECK(generateStencil(randomSpec({2, 3, 4, 5}, {1, 3, 1, 1}, 1), code).ok());
}

TEST_CASE("stencil: kernels keep the callee-saved registers",
          "[avx512][stencil]") {
  MLCC_REQUIRE_AVX512F();
  CalleeSavedChecker checker;
  for (StencilReduction r : kReductions) {
    StencilSpec spec = randomSpec({2, 4, 9, 40}, {1, 3, 3, 3}, 2);
    spec.reduction = r;
    spec.padding = StencilPadding::Reflect;
    std::vector<uint8_t> code = generateCode(generateStencil, spec);
    ExecutableBuffer exec(code);
    REQUIRE(exec.ok());
    std::vector<float> x = randomValues(2 * 4 * 9 * 40, -1.0f, 1.0f, 3);
    std::vector<int64_t> y(2 * 4 * 9 * 40);
    mlcc_stencil_args args = {x.data(), y.data()};
    CHECK(checker.run(&args, exec.address()) == 0);
  }
}

TEST_CASE("stencil: largest sum error", "[avx512][stencil]") {
  MLCC_REQUIRE_AVX512F();
  checkAllModes(makeSpec({1, 1, 64, 64}, {1, 1, 3, 3}, laplacian2d()));
  checkAllModes(randomSpec({2, 8, 8, 40}, {1, 3, 3, 3}, 21));
  WARN("largest |sum - reference| seen: " << maxSumError);
}

//===----------------------------------------------------------------------===//
// Speed (run with "[.bench]")
//===----------------------------------------------------------------------===//

/// Microseconds per call of the kernel and of the reference on `spec`.
void bench(const char *what, const StencilSpec &spec, int runs, int refRuns) {
  std::vector<uint8_t> code = generateCode(generateStencil, spec);
  ExecutableBuffer exec(code);
  REQUIRE(exec.ok());
  std::vector<float> x = randomValues(product(spec.shape), -1.0f, 1.0f, 4);
  std::vector<float> y(product(outputShape(spec)));
  mlcc_stencil_args args = {x.data(), y.data()};
  auto fn = exec.function<mlcc_stencil_kernel_fn>();
  for (int i = 0; i < runs / 10; ++i)
    fn(&args);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i)
    fn(&args);
  auto t1 = std::chrono::steady_clock::now();
  for (int i = 0; i < refRuns; ++i)
    reference(spec, x);
  auto t2 = std::chrono::steady_clock::now();
  double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
  double refUs = std::chrono::duration<double, std::micro>(t2 - t1).count();
  std::printf("stencil %s %s: %.2f us per call (%zu bytes of code), "
              "reference %.1f us\n",
              what, paddingName(spec.padding), us / runs, code.size(),
              refUs / refRuns);
}

TEST_CASE("stencil: speed of the 5- and 7-point Laplacians", "[.bench]") {
  MLCC_REQUIRE_AVX512F();
  for (StencilPadding p : kPaddings) {
    bench("64x64 laplacian",
          makeSpec({1, 1, 64, 64}, {1, 1, 3, 3}, laplacian2d(),
                   StencilReduction::Sum, p),
          20000, 20);
    bench("32x32x32 laplacian",
          makeSpec({1, 1, 32, 32, 32}, {1, 1, 3, 3, 3}, laplacian3d(),
                   StencilReduction::Sum, p),
          2000, 2);
  }
}

} // namespace
