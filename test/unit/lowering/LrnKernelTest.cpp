//===- LrnKernelTest.cpp - ONNX LRN through the AVX-512 stencil kernel ----===//
//
// graph.lrn on avx512 is one stencil kernel (lrnStencilSpec in
// lowering/AVX512/Kernels/Stencil.h: square prologue, window over the
// channels, lrn epilogue). These tests generate it and run it against the
// reference LRN kernel (compiler/Reference/Kernels/NormalizationMisc.cpp),
// the oracle: window sizes 1 to 5 (the even ones have one more channel
// after c than before), channel counts that are and are not multiples of
// 16, spatial sizes with vector tails, ranks 2 to 5, the exact
// beta = 0.75 / 0.5 / 1 / 0 paths and the general exp(-beta log t) one,
// NaN and inf inputs. The square prologue alone is checked against the
// reference stencil on squared inputs, in every padding mode. Inputs and
// outputs end at an unmapped page, so a read or write past them faults.
//
// Tolerance, relative to the reference's output y (which is computed in
// double and rounded once), with K = size taps and u = 2^-24:
// - the window sum: x * x rounds (u), the weight alpha / size rounds (u),
//   K fmas of non-negative terms add up to K u of the sum, and bias + s
//   rounds (u): t is within (K + 3) u of bias + alpha / size * sum x^2,
//   so t^-beta within |beta| (K + 3) u.
// - exact paths: sqrt(t), sqrt(sqrt(t)), their product and the division
//   add at most 2.25 u, y's rounding 0.5 u: 4 u in all is allowed.
// - general beta: log(t) is within about u |log t| + u (one rounding of
//   e ln2 + log(m), the atanh series within 5e-12), -beta log(t) rounds
//   once more: |beta log t| (2 u) + |beta| u of absolute error in exp's
//   argument, which is relative error in its result; exp itself is within
//   4.5e-7 (7.6 u), the product with x rounds (u) and so does y (0.5 u):
//   10 u plus those.
// Below the smallest normal, one denormal step (2^-149) is allowed too.
// One test checks that this tolerance rejects a kernel whose bias is 1%
// off, so that it does not pass anything.
//
//===----------------------------------------------------------------------===//

#include "ExecutableBuffer.h"
#include "KernelABI.h"
#include "KernelTestSupport.h"
#include "Stencil.h"

#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <limits>
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

int64_t product(const std::vector<int64_t> &v) {
  int64_t n = 1;
  for (int64_t d : v)
    n *= d;
  return n;
}

std::string ints(const std::vector<int64_t> &v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i)
    os << (i ? "," : "") << v[i];
  os << "]";
  return os.str();
}

struct Lrn {
  std::vector<int64_t> shape;
  int64_t size = 5;
  float alpha = 1e-4f, beta = 0.75f, bias = 1.0f;

  std::string describe() const {
    std::ostringstream os;
    os << "lrn " << ints(shape) << " size " << size << " alpha " << alpha
       << " beta " << beta << " bias " << bias;
    return os.str();
  }
};

StencilSpec specOf(const Lrn &l) {
  StencilSpec spec;
  Status s =
      lrnStencilSpec("lrn", l.shape, l.size, l.alpha, l.beta, l.bias, spec);
  INFO(s.message());
  REQUIRE(s.ok());
  return spec;
}

std::vector<float> runKernel(const StencilSpec &spec,
                             const std::vector<float> &x) {
  std::vector<uint8_t> code = generateCode(generateStencil, spec);
  ExecutableBuffer exec(code);
  REQUIRE(exec.ok());
  GuardedArray<float> src(x);
  REQUIRE(src.ok());
  GuardedArray<float> dst(std::vector<float>(x.size(), -7.0f));
  REQUIRE(dst.ok());
  mlcc_stencil_args args = {src.data(), dst.data()};
  exec.function<mlcc_stencil_kernel_fn>()(&args);
  return dst.values();
}

std::vector<float> referenceLrn(const Lrn &l, const std::vector<float> &x) {
  const ref::KernelDef *k = ref::KernelRegistry::get().find("lrn");
  REQUIRE(k);
  ref::Attrs attrs;
  attrs.set("size", l.size);
  attrs.set("alpha", l.alpha);
  attrs.set("beta", l.beta);
  attrs.set("bias", l.bias);
  std::vector<ref::Tensor> out(1);
  ref::Status s = k->run(
      attrs, {ref::Tensor::fromBytes(DType::F32, l.shape, x.data())}, out);
  INFO(s.message());
  REQUIRE(s.ok());
  REQUIRE(out[0].dtype() == DType::F32);
  return {out[0].data<float>(), out[0].data<float>() + out[0].numel()};
}

bool exactPath(float beta) {
  return beta == 0.0f || beta == 0.5f || beta == 0.75f || beta == 1.0f;
}

/// The largest error relative to the tolerance's unit, per path, for the
/// log: |got - want| / (u |want|).
double maxExactUlps = 0.0, maxGeneralUlps = 0.0;

/// Whether `got` is within the tolerance above of `want`; reports the
/// first element that is not.
bool withinTolerance(const Lrn &l, const std::vector<float> &x,
                     const std::vector<float> &got,
                     const std::vector<float> &want, bool report = true) {
  if (got.size() != want.size())
    return false;
  const double u = std::ldexp(1.0, -24);
  const double k = static_cast<double>(l.size);
  const double beta = std::fabs(l.beta);
  const int64_t c = l.shape[1], s = product(l.shape) / (l.shape[0] * c);
  const int64_t before = (l.size - 1) / 2, after = l.size - 1 - before;
  for (size_t i = 0; i < got.size(); ++i) {
    float g = got[i], e = want[i];
    bool ok;
    if (std::isnan(e) || std::isinf(e)) {
      ok = std::isnan(e) ? std::isnan(g) : g == e;
    } else {
      double units = beta * (k + 3) + 4;
      if (!exactPath(l.beta)) {
        // t as the reference has it, for |beta log t|.
        int64_t img = static_cast<int64_t>(i) / (c * s),
                ch = static_cast<int64_t>(i) / s % c, j = i % s;
        double sum = 0;
        for (int64_t q = std::max<int64_t>(0, ch - before);
             q <= std::min<int64_t>(c - 1, ch + after); ++q) {
          double v = x[(img * c + q) * s + j];
          sum += v * v;
        }
        double t = l.bias + l.alpha / k * sum;
        units += 2 * beta * std::fabs(std::log(t)) + beta + 10;
      }
      double err = std::fabs(static_cast<double>(g) - e);
      double rel = err / (u * std::max<double>(std::fabs(e), 1e-38));
      ok = err <= units * u * std::fabs(e) ||
           err <= std::numeric_limits<float>::denorm_min();
      if (ok && std::fabs(e) >= std::numeric_limits<float>::min()) {
        double &worst = exactPath(l.beta) ? maxExactUlps : maxGeneralUlps;
        worst = std::max(worst, rel);
      }
    }
    if (!ok) {
      if (report) {
        INFO(l.describe() << ": element " << i << " is " << g << ", expected "
                          << e);
        CHECK(ok);
      }
      return false;
    }
  }
  return true;
}

void check(const Lrn &l, const std::vector<float> &x) {
  INFO(l.describe());
  std::vector<float> got = runKernel(specOf(l), x);
  withinTolerance(l, x, got, referenceLrn(l, x));
}

void check(const Lrn &l, unsigned seed = 1) {
  check(l,
        randomValues(static_cast<size_t>(product(l.shape)), -2.0f, 2.0f, seed));
}

/// alpha, beta, bias: ONNX's defaults (the sum barely matters), sums that
/// dominate bias on each exact path, and general betas (negative too).
const float kParams[][3] = {{1e-4f, 0.75f, 1.0f}, {2.0f, 0.75f, 1.0f},
                            {1.5f, 0.5f, 0.5f},   {1.0f, 1.0f, 2.0f},
                            {3.0f, 0.0f, 1.0f},   {0.9f, 0.6f, 1.3f},
                            {3.0f, 2.5f, 0.1f},   {1.0f, -0.4f, 1.0f}};

} // namespace

//===----------------------------------------------------------------------===//
// LRN against the reference
//===----------------------------------------------------------------------===//

TEST_CASE("lrn: window sizes 1-5 over channels, every width tail",
          "[avx512][stencil][lrn]") {
  MLCC_REQUIRE_AVX512F();
  unsigned seed = 1;
  for (int64_t size : {1, 2, 3, 4, 5})
    for (int64_t c : {1, 3, 16, 19})
      for (int64_t w : {1, 7, 16, 33}) {
        Lrn l;
        l.shape = {2, c, 3, w};
        l.size = size;
        for (const auto &p : kParams) {
          l.alpha = p[0];
          l.beta = p[1];
          l.bias = p[2];
          check(l, ++seed);
        }
      }
  std::printf("lrn: max error %.2f u (exact beta paths), %.2f u (general "
              "beta), u = 2^-24 of the output\n",
              maxExactUlps, maxGeneralUlps);
}

TEST_CASE("lrn: ranks 2 to 5, windows wider than C, a large image",
          "[avx512][stencil][lrn]") {
  MLCC_REQUIRE_AVX512F();
  // Rank 2 (and 1 x 1 spatial dims) run the window along the vectors.
  for (auto shape : std::vector<std::vector<int64_t>>{{3, 37},
                                                      {1, 5},
                                                      {2, 16},
                                                      {1, 40, 1, 1},
                                                      {2, 6, 33},
                                                      {1, 7, 3, 4, 5},
                                                      {1, 64, 27, 27}})
    for (int64_t size : {3, 4, 5, 9, 41})
      for (const auto &p : kParams) {
        Lrn l;
        l.shape = shape;
        l.size = size;
        l.alpha = p[0];
        l.beta = p[1];
        l.bias = p[2];
        check(l, static_cast<unsigned>(size));
      }
}

TEST_CASE("lrn: NaN and inf inputs as the reference treats them",
          "[avx512][stencil][lrn]") {
  MLCC_REQUIRE_AVX512F();
  for (auto shape : std::vector<std::vector<int64_t>>{{1, 9, 2, 20}, {2, 21}})
    for (const auto &p : kParams) {
      Lrn l;
      l.shape = shape;
      l.size = 3;
      l.alpha = p[0];
      l.beta = p[1];
      l.bias = p[2];
      std::vector<float> x =
          randomValues(static_cast<size_t>(product(shape)), -2.0f, 2.0f, 5);
      // NaN spreads to its window's neighbours, inf makes theirs 0 (x /
      // inf) and its own NaN (inf / inf).
      x[3] = kNanF;
      x[x.size() / 2] = kInfF;
      x[x.size() - 5] = -kInfF;
      x[7] = 0.0f;
      check(l, x);
    }
}

TEST_CASE("lrn: the tolerance rejects a bias 1% off",
          "[avx512][stencil][lrn]") {
  MLCC_REQUIRE_AVX512F();
  for (const auto &p : kParams) {
    if (p[1] == 0.0f)
      continue; // beta 0 ignores the bias
    Lrn l;
    l.shape = {1, 19, 2, 17};
    l.size = 5;
    l.alpha = p[0];
    l.beta = p[1];
    l.bias = p[2];
    INFO(l.describe());
    std::vector<float> x =
        randomValues(static_cast<size_t>(product(l.shape)), -2.0f, 2.0f, 9);
    Lrn off = l;
    off.bias = l.bias * 1.01f;
    std::vector<float> got = runKernel(specOf(off), x);
    CHECK_FALSE(withinTolerance(l, x, got, referenceLrn(l, x), false));
    CHECK(withinTolerance(l, x, runKernel(specOf(l), x), referenceLrn(l, x)));
  }
}

TEST_CASE("lrn: what the kernel does not take is declined",
          "[avx512][stencil][lrn]") {
  StencilSpec spec;
  CHECK(lrnStencilSpec("n", {4}, 3, 1e-4f, 0.75f, 1.0f, spec).failed());
  CHECK(lrnStencilSpec("n", {1, 0, 4}, 3, 1e-4f, 0.75f, 1.0f, spec).failed());
  CHECK(lrnStencilSpec("n", {1, 4, 4}, 0, 1e-4f, 0.75f, 1.0f, spec).failed());
  CHECK(lrnStencilSpec("n", {1, 4, 4}, 3, 1e-4f, 0.75f, 0.0f, spec).failed());
  CHECK(lrnStencilSpec("n", {1, 4, 4}, 3, -1.0f, 0.75f, 1.0f, spec).failed());
  CHECK(lrnStencilSpec("n", {1, 4, 4}, 3, 1e-4f, kNanF, 1.0f, spec).failed());
  CHECK(
      lrnStencilSpec("n", {1, 4, 4}, 5000, 1e-4f, 0.75f, 1.0f, spec).failed());
  REQUIRE(lrnStencilSpec("n", {1, 4, 4}, 3, 1e-4f, 0.75f, 1.0f, spec).ok());
  std::vector<uint8_t> code;
  // The epilogue's conditions: sum, the square prologue, weights >= 0,
  // strides of 1.
  StencilSpec bad = spec;
  bad.reduction = StencilReduction::Max;
  CHECK(generateStencil(bad, code).failed());
  bad = spec;
  bad.prologue = StencilPrologue::None;
  CHECK(generateStencil(bad, code).failed());
  bad = spec;
  bad.weights[1] = -1.0f;
  CHECK(generateStencil(bad, code).failed());
  bad = spec;
  bad.strides = {1, 1, 2};
  CHECK(generateStencil(bad, code).failed());
  bad = spec;
  bad.epilogue = StencilEpilogue::None;
  bad.reduction = StencilReduction::Min;
  CHECK(generateStencil(bad, code).failed());
}

//===----------------------------------------------------------------------===//
// The square prologue alone
//===----------------------------------------------------------------------===//

TEST_CASE("stencil: the square prologue is the stencil of x * x",
          "[avx512][stencil][lrn]") {
  MLCC_REQUIRE_AVX512F();
  const ref::KernelDef *k = ref::KernelRegistry::get().find("stencil");
  REQUIRE(k);
  const char *paddings[] = {"zero", "clamp", "reflect", "mirror"};
  for (int p = 0; p < 4; ++p)
    for (int64_t w : {1, 7, 16, 33}) {
      StencilSpec spec;
      spec.shape = {2, 5, w};
      spec.kernel = {1, 3, 3};
      spec.weights = randomValues(9, -1.0f, 1.0f, 4);
      spec.padding = static_cast<StencilPadding>(p);
      spec.paddingValue = 1.5f; // squared: 2.25, exactly
      spec.prologue = StencilPrologue::Square;
      INFO(paddings[p] << " width " << w);
      std::vector<float> x = randomValues(
          static_cast<size_t>(product(spec.shape)), -2.0f, 2.0f, 6);
      std::vector<float> got = runKernel(spec, x);
      std::vector<float> sq(x.size()), absW(spec.weights.size());
      for (size_t i = 0; i < x.size(); ++i)
        sq[i] = x[i] * x[i];
      for (size_t i = 0; i < absW.size(); ++i)
        absW[i] = std::fabs(spec.weights[i]);
      auto run = [&](const std::vector<float> &w) {
        ref::Attrs attrs;
        attrs.set("reduction", std::string("sum"));
        attrs.set("padding", std::string(paddings[p]));
        attrs.set("padding_value", 2.25f);
        std::vector<ref::Tensor> out(1);
        ref::Status s =
            k->run(attrs,
                   {ref::Tensor::fromBytes(DType::F32, spec.shape, sq.data()),
                    ref::Tensor::fromBytes(DType::F32, spec.kernel, w.data())},
                   out);
        INFO(s.message());
        REQUIRE(s.ok());
        return std::vector<float>(out[0].data<float>(),
                                  out[0].data<float>() + out[0].numel());
      };
      std::vector<float> want = run(spec.weights), scale = run(absW);
      REQUIRE(got.size() == want.size());
      // The stencil tests' bound for K = 9 fmas.
      for (size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i << " is " << got[i] << ", expected " << want[i]);
        REQUIRE(std::fabs(got[i] - want[i]) <=
                10 * std::ldexp(1.0f, -24) * scale[i]);
      }
    }
}
