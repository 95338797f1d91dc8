//===- NormalizationKernelTest.cpp - Tests of softmax and layer_norm ------===//
//
// Generates softmax, log_softmax, layer_norm and instance_norm (layer_norm
// with a scale and bias per row) kernels, maps their bytes
// executable and runs them against the reference kernel registry
// (compiler/Reference), the oracle, over row lengths with every kind of
// vector tail, rows kept in registers and rows streamed. Inputs reach
// +-80, where an exp without the max subtracted would overflow. Inputs and
// outputs end at an unmapped page, so a kernel that touches an element past
// its tensors faults.
//
// Tolerance: |got - want| <= 2e-6 max(1, |want|). The kernels sum in f32
// (64 partial sums), the reference in double; log_softmax outputs near 0
// and layer_norm outputs where gamma * xhat cancels beta are held to 2e-6
// absolute. Measured: softmax and log_softmax within 3e-7, layer_norm
// within 5e-7 (of the 2e-6), so the bound has a 4x margin.
//
//===----------------------------------------------------------------------===//

#include "ExecutableBuffer.h"
#include "KernelABI.h"
#include "KernelTestSupport.h"
#include "Normalization.h"

#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <algorithm>
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

constexpr float kTolerance = 2e-6f;
const int64_t kRows[] = {1, 3, 12};
const int64_t kCols[] = {1, 15, 16, 17, 128, 768, 1000, 4096};

std::string describe(const char *op, int64_t rows, int64_t cols) {
  return std::string(op) + " [" + std::to_string(rows) + ", " +
         std::to_string(cols) + "]";
}

//===----------------------------------------------------------------------===//
// Running a kernel and the oracle
//===----------------------------------------------------------------------===//

std::vector<uint8_t> generate(const SoftmaxSpec &spec) {
  return generateCode(generateSoftmax, spec);
}

std::vector<uint8_t> generate(const LayerNormSpec &spec) {
  return generateCode(generateLayerNorm, spec);
}

std::vector<float> runSoftmax(const std::vector<uint8_t> &code,
                              const std::vector<float> &x, size_t offset = 0,
                              bool inPlace = false) {
  ExecutableBuffer exec(code, offset);
  REQUIRE(exec.ok());
  GuardedArray<float> src(x);
  GuardedArray<float> dst(x.size());
  REQUIRE(src.ok());
  REQUIRE(dst.ok());
  mlcc_softmax_args args = {src.data(), inPlace ? src.data() : dst.data()};
  exec.function<mlcc_softmax_kernel_fn>()(&args);
  return inPlace ? src.values() : dst.values();
}

/// `skip` empty: a layer_norm kernel; else skip_layer_norm's second input.
/// `inPlace`: dst is src.
std::vector<float> runLayerNorm(const std::vector<uint8_t> &code,
                                const std::vector<float> &x,
                                const std::vector<float> &gamma,
                                const std::vector<float> &beta,
                                size_t offset = 0,
                                const std::vector<float> &skip = {},
                                bool inPlace = false) {
  ExecutableBuffer exec(code, offset);
  REQUIRE(exec.ok());
  GuardedArray<float> src(x), g(gamma), b(beta), s(skip);
  GuardedArray<float> dst(x.size());
  REQUIRE(src.ok());
  REQUIRE(g.ok());
  REQUIRE(b.ok());
  REQUIRE(dst.ok());
  mlcc_layer_norm_args args = {src.data(), g.data(), b.data(),
                               inPlace ? src.data() : dst.data(),
                               skip.empty() ? nullptr : s.data()};
  exec.function<mlcc_layer_norm_kernel_fn>()(&args);
  return inPlace ? src.values() : dst.values();
}

std::vector<float> referenceSoftmax(const SoftmaxSpec &spec,
                                    const std::vector<float> &x) {
  ref::Attrs attrs;
  attrs.set("axis", int64_t(-1));
  return runReference(
      spec.log ? "log_softmax" : "softmax", attrs,
      {ref::Tensor::fromBytes(DType::F32, {spec.rows, spec.cols}, x.data())});
}

std::vector<float> referenceLayerNorm(const LayerNormSpec &spec,
                                      const std::vector<float> &x,
                                      const std::vector<float> &gamma,
                                      const std::vector<float> &beta,
                                      const std::vector<float> &skip = {}) {
  ref::Attrs attrs;
  attrs.set("axis", int64_t(-1));
  attrs.set("epsilon", spec.epsilon);
  std::vector<ref::Tensor> in = {
      ref::Tensor::fromBytes(DType::F32, {spec.rows, spec.cols}, x.data())};
  if (spec.skip)
    in.push_back(
        ref::Tensor::fromBytes(DType::F32, {spec.rows, spec.cols}, skip.data()));
  in.push_back(ref::Tensor::fromBytes(DType::F32, {spec.cols}, gamma.data()));
  in.push_back(ref::Tensor::fromBytes(DType::F32, {spec.cols}, beta.data()));
  return runReference(spec.skip ? "skip_layer_norm" : "layer_norm", attrs, in);
}

void compare(const std::string &what, const std::vector<float> &got,
             const std::vector<float> &want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    bool ok;
    if (std::isnan(want[i]))
      ok = std::isnan(got[i]);
    else if (std::isinf(want[i]))
      ok = got[i] == want[i];
    else
      ok = std::fabs(got[i] - want[i]) <=
           kTolerance * std::max(1.0f, std::fabs(want[i]));
    if (!ok) {
      INFO(what << ": element " << i << " is " << got[i] << ", expected "
                << want[i]);
      CHECK(ok);
      return;
    }
  }
}

SoftmaxSpec softmaxSpec(bool log, int64_t rows, int64_t cols) {
  SoftmaxSpec spec;
  spec.name = log ? "log_softmax" : "softmax";
  spec.log = log;
  spec.rows = rows;
  spec.cols = cols;
  return spec;
}

LayerNormSpec layerNormSpec(int64_t rows, int64_t cols, float eps = 1e-5f,
                            bool skip = false) {
  LayerNormSpec spec;
  spec.rows = rows;
  spec.cols = cols;
  spec.epsilon = eps;
  spec.skip = skip;
  return spec;
}

void checkSoftmax(const SoftmaxSpec &spec, float lo, float hi, unsigned seed) {
  std::string what = describe(spec.name.c_str(), spec.rows, spec.cols);
  INFO(what);
  std::vector<float> x =
      randomValues(static_cast<size_t>(spec.rows * spec.cols), lo, hi, seed);
  compare(what, runSoftmax(generate(spec), x), referenceSoftmax(spec, x));
}

void checkLayerNorm(const LayerNormSpec &spec, float lo, float hi,
                    unsigned seed) {
  std::string what = describe(spec.skip ? "skip_layer_norm" : "layer_norm",
                              spec.rows, spec.cols);
  INFO(what);
  size_t n = static_cast<size_t>(spec.rows * spec.cols);
  std::vector<float> x = randomValues(n, lo, hi, seed);
  std::vector<float> gamma = randomValues(spec.cols, -2.0f, 2.0f, seed + 1);
  std::vector<float> beta = randomValues(spec.cols, -1.0f, 1.0f, seed + 2);
  // The skip half the input's spread: the sum keeps the input's offset.
  std::vector<float> skip;
  if (spec.skip)
    skip = randomValues(n, -(hi - lo) / 4, (hi - lo) / 4, seed + 3);
  std::vector<float> want = referenceLayerNorm(spec, x, gamma, beta, skip);
  std::vector<uint8_t> code = generate(spec);
  compare(what, runLayerNorm(code, x, gamma, beta, 0, skip), want);
  // In place, as the arena planner may place it: long rows store the sum
  // into dst in their first pass and read it back.
  compare(what + " in place",
          runLayerNorm(code, x, gamma, beta, 0, skip, /*inPlace=*/true), want);
}

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

TEST_CASE("softmax matches the reference at every row length",
          "[avx512][normalization]") {
  MLCC_REQUIRE_AVX512F();
  unsigned seed = 1;
  for (int64_t rows : kRows)
    for (int64_t cols : kCols) {
      checkSoftmax(softmaxSpec(false, rows, cols), -5.0f, 5.0f, seed++);
      // exp(80) is 5.5e34: summed unshifted over 4096 columns it would
      // overflow; exp(-80 - 80) would underflow every element.
      checkSoftmax(softmaxSpec(false, rows, cols), -80.0f, 80.0f, seed++);
      checkSoftmax(softmaxSpec(false, rows, cols), 70.0f, 80.0f, seed++);
      checkSoftmax(softmaxSpec(false, rows, cols), -80.0f, -70.0f, seed++);
    }
}

TEST_CASE("log_softmax matches the reference at every row length",
          "[avx512][normalization]") {
  MLCC_REQUIRE_AVX512F();
  unsigned seed = 100;
  for (int64_t rows : kRows)
    for (int64_t cols : kCols) {
      checkSoftmax(softmaxSpec(true, rows, cols), -5.0f, 5.0f, seed++);
      checkSoftmax(softmaxSpec(true, rows, cols), -80.0f, 80.0f, seed++);
      checkSoftmax(softmaxSpec(true, rows, cols), 70.0f, 80.0f, seed++);
      // Near-equal inputs: the sum is close to cols, log(sum) is large.
      checkSoftmax(softmaxSpec(true, rows, cols), 1.0f, 1.001f, seed++);
    }
}

TEST_CASE("layer_norm matches the reference at every row length",
          "[avx512][normalization]") {
  MLCC_REQUIRE_AVX512F();
  unsigned seed = 200;
  for (int64_t rows : kRows)
    for (int64_t cols : kCols) {
      checkLayerNorm(layerNormSpec(rows, cols), -2.0f, 2.0f, seed += 3);
      checkLayerNorm(layerNormSpec(rows, cols), -80.0f, 80.0f, seed += 3);
      // An offset 20x the spread: E[x^2] - E[x]^2 would lose ~9 bits.
      checkLayerNorm(layerNormSpec(rows, cols), 78.0f, 82.0f, seed += 3);
      checkLayerNorm(layerNormSpec(rows, cols, 0.5f), -1.0f, 1.0f, seed += 3);
    }
}

// softmax and log_softmax along the middle axis of [outer, len, inner]:
// the kernel for columns [first, first + columns) of the inner ones,
// called at them, against the reference's whole result there (the other
// columns of dst are the kernel's to leave alone: they stay NaN).
void checkSoftmaxAxis(bool log, int64_t outer, int64_t len, int64_t inner,
                      unsigned seed, int64_t first = 0, int64_t columns = 0) {
  std::string what = std::string(log ? "log_softmax" : "softmax") + " [" +
                     std::to_string(outer) + ", " + std::to_string(len) +
                     ", " + std::to_string(inner) + "] columns " +
                     std::to_string(first) + " + " + std::to_string(columns);
  INFO(what);
  SoftmaxSpec spec = softmaxSpec(log, outer, len);
  spec.inner = inner;
  spec.columns = columns;
  std::vector<float> x = randomValues(
      static_cast<size_t>(outer * len * inner), -80.0f, 80.0f, seed);
  ref::Attrs attrs;
  attrs.set("axis", int64_t(1));
  std::vector<float> want = runReference(
      log ? "log_softmax" : "softmax", attrs,
      {ref::Tensor::fromBytes(DType::F32, {outer, len, inner}, x.data())});
  std::vector<uint8_t> code = generate(spec);
  ExecutableBuffer exec(code);
  REQUIRE(exec.ok());
  GuardedArray<float> src(x);
  GuardedArray<float> dst(std::vector<float>(x.size(), NAN));
  REQUIRE(src.ok());
  REQUIRE(dst.ok());
  mlcc_softmax_args args = {src.data() + first, dst.data() + first};
  exec.function<mlcc_softmax_kernel_fn>()(&args);
  std::vector<float> got = dst.values();
  const int64_t end = columns ? first + columns : inner;
  for (size_t i = 0; i < got.size(); ++i) {
    int64_t column = static_cast<int64_t>(i) % inner;
    if (column < first || column >= end) {
      INFO("element " << i << " outside the kernel's columns is " << got[i]);
      CHECK(std::isnan(got[i]));
      want[i] = got[i] = 0;
    }
  }
  compare(what, got, want);
}

TEST_CASE("softmax and log_softmax over a non-last axis match the reference",
          "[avx512][normalization]") {
  MLCC_REQUIRE_AVX512F();
  unsigned seed = 1200;
  for (bool log : {false, true}) {
    for (int64_t inner : {2, 15, 16, 17, 64, 65, 100, 200})
      for (int64_t len : {1, 3, 21})
        checkSoftmaxAxis(log, 2, len, inner, seed += 2);
    // A thread's chunk: 48 of the 200 columns, from column 64; a last,
    // narrower one.
    checkSoftmaxAxis(log, 3, 5, 200, seed += 2, 64, 48);
    checkSoftmaxAxis(log, 3, 5, 200, seed += 2, 192, 8);
  }
}

// instance_norm: n images of c channels, each plane a row; the kernel's
// per-row scale and bias are the op's [c] ones repeated for each image.
void checkInstanceNorm(int64_t n, int64_t c, int64_t cols, float lo, float hi,
                       unsigned seed) {
  std::string what = describe("instance_norm", n * c, cols);
  INFO(what);
  LayerNormSpec spec = layerNormSpec(n * c, cols);
  spec.rowAffine = true;
  std::vector<float> x = randomValues(static_cast<size_t>(n * c * cols), lo,
                                      hi, seed);
  std::vector<float> scale = randomValues(c, -2.0f, 2.0f, seed + 1);
  std::vector<float> bias = randomValues(c, -1.0f, 1.0f, seed + 2);
  std::vector<float> gamma, beta;
  for (int64_t i = 0; i < n; ++i) {
    gamma.insert(gamma.end(), scale.begin(), scale.end());
    beta.insert(beta.end(), bias.begin(), bias.end());
  }
  ref::Attrs attrs;
  attrs.set("epsilon", spec.epsilon);
  std::vector<float> want = runReference(
      "instance_norm", attrs,
      {ref::Tensor::fromBytes(DType::F32, {n, c, cols}, x.data()),
       ref::Tensor::fromBytes(DType::F32, {c}, scale.data()),
       ref::Tensor::fromBytes(DType::F32, {c}, bias.data())});
  std::vector<uint8_t> code = generate(spec);
  compare(what, runLayerNorm(code, x, gamma, beta), want);
  compare(what + " in place",
          runLayerNorm(code, x, gamma, beta, 0, {}, /*inPlace=*/true), want);
}

TEST_CASE("instance_norm matches the reference at every row length",
          "[avx512][normalization]") {
  MLCC_REQUIRE_AVX512F();
  unsigned seed = 900;
  for (int64_t cols : kCols) {
    checkInstanceNorm(1, 3, cols, -2.0f, 2.0f, seed += 3);
    checkInstanceNorm(2, 5, cols, -80.0f, 80.0f, seed += 3);
    checkInstanceNorm(3, 4, cols, 78.0f, 82.0f, seed += 3);
  }
}

TEST_CASE("skip_layer_norm matches the reference at every row length",
          "[avx512][normalization]") {
  MLCC_REQUIRE_AVX512F();
  unsigned seed = 600;
  for (int64_t rows : kRows)
    for (int64_t cols : kCols) {
      checkLayerNorm(layerNormSpec(rows, cols, 1e-5f, true), -2.0f, 2.0f,
                     seed += 4);
      checkLayerNorm(layerNormSpec(rows, cols, 1e-12f, true), 78.0f, 82.0f,
                     seed += 4);
    }
}

// A kernel with run-time dims (at most maxRows x maxCols, rows maxCols
// apart) called with rows x cols: the dense [rows', cols'] block of the
// clamped dims matches the reference, and every other element of dst keeps
// its sentinel.
void checkRunTimeShape(bool layerNorm, bool log, int64_t maxRows,
                       int64_t maxCols, bool runTimeCols, int64_t rows,
                       int64_t cols, unsigned seed) {
  INFO((layerNorm ? "layer_norm"
        : log     ? "log_softmax"
                  : "softmax")
       << " of at most [" << maxRows << ", " << maxCols << "] called with ["
       << rows << ", " << cols << "]");
  const int64_t r = std::clamp<int64_t>(rows, 0, maxRows);
  const int64_t c =
      runTimeCols ? std::clamp<int64_t>(cols, 0, maxCols) : maxCols;
  const float sentinel = -12345.0f;
  std::vector<float> x = randomValues(maxRows * maxCols, -8.0f, 8.0f, seed);
  std::vector<float> gamma = randomValues(maxCols, -2.0f, 2.0f, seed + 1);
  std::vector<float> beta = randomValues(maxCols, -1.0f, 1.0f, seed + 2);
  GuardedArray<float> src(x), dst(std::vector<float>(x.size(), sentinel)),
      g(gamma), b(beta);
  REQUIRE((src.ok() && dst.ok() && g.ok() && b.ok()));
  std::vector<float> dense(r * c);
  for (int64_t i = 0; i < r; ++i)
    std::copy_n(x.data() + i * maxCols, c, dense.data() + i * c);
  std::vector<float> want;
  if (layerNorm) {
    LayerNormSpec spec = layerNormSpec(maxRows, maxCols);
    spec.runTimeRows = true;
    ExecutableBuffer exec(generate(spec));
    REQUIRE(exec.ok());
    mlcc_layer_norm_args args = {src.data(), g.data(), b.data(),
                                 dst.data(), nullptr,  rows};
    exec.function<mlcc_layer_norm_kernel_fn>()(&args);
    spec.rows = r;
    if (r > 0)
      want = referenceLayerNorm(spec, dense, gamma, beta);
  } else {
    SoftmaxSpec spec = softmaxSpec(log, maxRows, maxCols);
    spec.runTimeRows = true;
    spec.runTimeCols = runTimeCols;
    ExecutableBuffer exec(generate(spec));
    REQUIRE(exec.ok());
    mlcc_softmax_args args = {src.data(), dst.data(), rows, cols};
    exec.function<mlcc_softmax_kernel_fn>()(&args);
    spec.rows = r;
    spec.cols = c;
    if (r > 0 && c > 0)
      want = referenceSoftmax(spec, dense);
  }
  std::vector<float> got = dst.values(), block(r * c);
  for (int64_t i = 0; i < maxRows; ++i)
    for (int64_t j = 0; j < maxCols; ++j) {
      float v = got[i * maxCols + j];
      if (i < r && j < c) {
        block[i * c + j] = v;
      } else if (v != sentinel) {
        FAIL_CHECK("dst[" << i << "][" << j << "] written: " << v);
        return;
      }
    }
  if (!want.empty())
    compare("the rows and cols of the call", block, want);
}

TEST_CASE("normalization: run-time rows and cols compute each call's",
          "[avx512][normalization]") {
  MLCC_REQUIRE_AVX512F();
  unsigned seed = 900;
  // Cols around the vector and the four-vector loop, long rows; rows of
  // none, fewer than none and more than the most (clamped).
  for (int64_t maxCols : {1, 16, 17, 100, 128, 300})
    for (int64_t rows : {-1, 0, 1, 3, 5})
      for (int64_t cols : {-1, 0, 1, 15, 16, 17, 64, 99, 128, 300, 301}) {
        const int64_t maxRows = 4;
        checkRunTimeShape(false, false, maxRows, maxCols, true, rows, cols,
                          seed++);
        checkRunTimeShape(false, true, maxRows, maxCols, true, rows, cols,
                          seed++);
        if (cols == 1) { // the cols are the spec's
          checkRunTimeShape(false, false, maxRows, maxCols, false, rows, cols,
                            seed++);
          checkRunTimeShape(true, false, maxRows, maxCols, false, rows, cols,
                            seed++);
        }
      }
}

TEST_CASE("softmax rows of one element are 1, log_softmax rows 0",
          "[avx512][normalization]") {
  MLCC_REQUIRE_AVX512F();
  std::vector<float> x = {-80.0f, 0.0f, 3.5f, 80.0f};
  for (float v : runSoftmax(generate(softmaxSpec(false, 4, 1)), x))
    CHECK(v == 1.0f);
  for (float v : runSoftmax(generate(softmaxSpec(true, 4, 1)), x))
    CHECK(v == 0.0f);
}

TEST_CASE("constant rows give beta from layer_norm",
          "[avx512][normalization]") {
  MLCC_REQUIRE_AVX512F();
  LayerNormSpec spec = layerNormSpec(2, 33);
  std::vector<float> x(66, 7.25f);
  std::vector<float> gamma = randomValues(33, -2.0f, 2.0f, 9);
  std::vector<float> beta = randomValues(33, -1.0f, 1.0f, 10);
  std::vector<float> y = runLayerNorm(generate(spec), x, gamma, beta);
  for (size_t i = 0; i < y.size(); ++i)
    CHECK(y[i] == beta[i % 33]);
}

TEST_CASE("softmax and log_softmax work in place", "[avx512][normalization]") {
  MLCC_REQUIRE_AVX512F();
  for (bool log : {false, true})
    for (int64_t cols : {int64_t(100), int64_t(1000)}) {
      SoftmaxSpec spec = softmaxSpec(log, 3, cols);
      std::vector<float> x = randomValues(3 * cols, -20.0f, 20.0f, 31);
      compare(describe(spec.name.c_str(), 3, cols) + " in place",
              runSoftmax(generate(spec), x, 0, /*inPlace=*/true),
              referenceSoftmax(spec, x));
    }
}

TEST_CASE("normalization: NaN and infinities propagate as in the reference",
          "[avx512][normalization]") {
  MLCC_REQUIRE_AVX512F();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t cols : {int64_t(40), int64_t(300)}) {
    // Row 0 holds a NaN, row 1 +inf, row 2 -inf, row 3 is finite: a NaN
    // or +inf makes the whole row NaN, -inf only gives 0 (log: -inf).
    std::vector<float> x = randomValues(4 * cols, -10.0f, 10.0f, 51);
    x[cols - 1] = nan;
    x[cols + 5] = inf;
    x[2 * cols + 17] = -inf;
    for (bool log : {false, true}) {
      SoftmaxSpec spec = softmaxSpec(log, 4, cols);
      compare(describe(spec.name.c_str(), 4, cols) + " with NaN and inf",
              runSoftmax(generate(spec), x), referenceSoftmax(spec, x));
    }
    LayerNormSpec spec = layerNormSpec(4, cols);
    std::vector<float> gamma = randomValues(cols, -2.0f, 2.0f, 52);
    std::vector<float> beta = randomValues(cols, -1.0f, 1.0f, 53);
    compare(describe("layer_norm", 4, cols) + " with NaN and inf",
            runLayerNorm(generate(spec), x, gamma, beta),
            referenceLayerNorm(spec, x, gamma, beta));
  }
}

//===----------------------------------------------------------------------===//
// Code properties
//===----------------------------------------------------------------------===//

TEST_CASE("normalization kernels are position independent",
          "[avx512][normalization]") {
  MLCC_REQUIRE_AVX512F();
  // Both read their constants RIP-relative (the exp and log polynomials,
  // 1 / cols, epsilon).
  for (int64_t cols : {int64_t(100), int64_t(1000)}) {
    for (bool log : {false, true}) {
      SoftmaxSpec spec = softmaxSpec(log, 3, cols);
      std::vector<uint8_t> code = generate(spec);
      CHECK(code == generate(spec));
      std::vector<float> x = randomValues(3 * cols, -30.0f, 30.0f, 41);
      std::vector<float> want = referenceSoftmax(spec, x);
      for (size_t offset : {size_t(0), size_t(1), size_t(13), size_t(4095)})
        compare(describe(spec.name.c_str(), 3, cols),
                runSoftmax(code, x, offset), want);
    }
    LayerNormSpec spec = layerNormSpec(3, cols);
    std::vector<uint8_t> code = generate(spec);
    CHECK(code == generate(spec));
    std::vector<float> x = randomValues(3 * cols, -3.0f, 3.0f, 42);
    std::vector<float> gamma = randomValues(cols, -2.0f, 2.0f, 43);
    std::vector<float> beta = randomValues(cols, -1.0f, 1.0f, 44);
    std::vector<float> want = referenceLayerNorm(spec, x, gamma, beta);
    for (size_t offset : {size_t(0), size_t(1), size_t(13), size_t(4095)})
      compare(describe("layer_norm", 3, cols),
              runLayerNorm(code, x, gamma, beta, offset), want);
  }
}

TEST_CASE("normalization: empty arrays give kernels that do nothing",
          "[avx512][normalization]") {
  MLCC_REQUIRE_AVX512F();
  CHECK(runSoftmax(generate(softmaxSpec(false, 0, 16)), {}).empty());
  CHECK(runSoftmax(generate(softmaxSpec(true, 5, 0)), {}).empty());
  CHECK(runLayerNorm(generate(layerNormSpec(0, 768)), {}, {}, {}).empty());
}

TEST_CASE("bad normalization specs are errors, not crashes",
          "[avx512][normalization]") {
  std::vector<uint8_t> code = {1, 2, 3};
  auto check = [&](const Status &s, const std::string &name,
                   const char *needle) {
    INFO(s.message());
    CHECK_FALSE(s.ok());
    CHECK(code.empty());
    CHECK(s.message().find(name) != std::string::npos);
    CHECK(s.message().find(needle) != std::string::npos);
    code = {1, 2, 3};
  };
  SoftmaxSpec sm = softmaxSpec(false, 2, 8);
  sm.name = "softmax7";
  SoftmaxSpec bad = sm;
  bad.dtype = DType::F64;
  check(generateSoftmax(bad, code), sm.name, "f32");
  bad = sm;
  bad.rows = -1;
  check(generateSoftmax(bad, code), sm.name, "negative");
  bad = sm;
  bad.cols = kMaxNormalizationCols + 1;
  check(generateSoftmax(bad, code), sm.name, "too long");

  LayerNormSpec ln = layerNormSpec(2, 8);
  ln.name = "layer_norm3";
  LayerNormSpec badLn = ln;
  badLn.epsilon = -1e-5f;
  check(generateLayerNorm(badLn, code), ln.name, "epsilon");
  badLn.epsilon = std::numeric_limits<float>::quiet_NaN();
  check(generateLayerNorm(badLn, code), ln.name, "epsilon");
  badLn = ln;
  badLn.dtype = DType::F16;
  check(generateLayerNorm(badLn, code), ln.name, "f32");
  badLn = ln;
  badLn.cols = -3;
  check(generateLayerNorm(badLn, code), ln.name, "negative");
}

//===----------------------------------------------------------------------===//
// Speed (hidden: run with [.bench])
//===----------------------------------------------------------------------===//

TEST_CASE("normalization speed against the reference", "[.bench]") {
  MLCC_REQUIRE_AVX512F();
  // BERT-base attention: 12 heads x 128 queries, rows of 128 keys.
  for (bool log : {false, true}) {
    SoftmaxSpec spec = softmaxSpec(log, 12 * 128, 128);
    std::vector<float> x = randomValues(12 * 128 * 128, -10.0f, 10.0f, 5);
    std::vector<float> y(x.size());
    std::vector<uint8_t> code = generate(spec);
    ExecutableBuffer exec(code);
    REQUIRE(exec.ok());
    mlcc_softmax_args args = {x.data(), y.data()};
    auto fn = exec.function<mlcc_softmax_kernel_fn>();
    double jit = bestMicros([&] { fn(&args); }, 200);
    double ref = bestMicros([&] { referenceSoftmax(spec, x); }, 10);
    compare("bench", y, referenceSoftmax(spec, x));
    std::printf("%s [1536, 128]: %zu code bytes, jit %.1f us, reference "
                "%.1f us (%.1fx)\n",
                spec.name.c_str(), code.size(), jit, ref, ref / jit);
  }
  // The same rows from a kernel for at most 512 x 512 (rows 512 apart).
  {
    SoftmaxSpec exact = softmaxSpec(false, 128, 128);
    SoftmaxSpec generic = softmaxSpec(false, 512, 512);
    generic.runTimeRows = generic.runTimeCols = true;
    std::vector<float> x = randomValues(512 * 512, -10.0f, 10.0f, 9);
    std::vector<float> y(x.size());
    ExecutableBuffer exactCode(generate(exact)), genericCode(generate(generic));
    REQUIRE((exactCode.ok() && genericCode.ok()));
    mlcc_softmax_args exactArgs = {x.data(), y.data()};
    mlcc_softmax_args genericArgs = {x.data(), y.data(), 128, 128};
    auto exactFn = exactCode.function<mlcc_softmax_kernel_fn>();
    auto genericFn = genericCode.function<mlcc_softmax_kernel_fn>();
    auto [e, g] = interleavedMedianMicros(
        [&] { exactFn(&exactArgs); }, [&] { genericFn(&genericArgs); }, 15, 50);
    std::printf("softmax [128, 128]: exact %.1f us, run-time rows and cols "
                "%.1f us (%.2fx)\n",
                e, g, g / e);
  }
  // BERT-base hidden states: 128 tokens x 768.
  LayerNormSpec spec = layerNormSpec(128, 768);
  std::vector<float> x = randomValues(128 * 768, -3.0f, 3.0f, 6);
  std::vector<float> gamma = randomValues(768, -2.0f, 2.0f, 7);
  std::vector<float> beta = randomValues(768, -1.0f, 1.0f, 8);
  std::vector<float> y(x.size());
  std::vector<uint8_t> code = generate(spec);
  ExecutableBuffer exec(code);
  REQUIRE(exec.ok());
  mlcc_layer_norm_args args = {x.data(), gamma.data(), beta.data(), y.data()};
  auto fn = exec.function<mlcc_layer_norm_kernel_fn>();
  double jit = bestMicros([&] { fn(&args); }, 200);
  double ref =
      bestMicros([&] { referenceLayerNorm(spec, x, gamma, beta); }, 10);
  compare("bench", y, referenceLayerNorm(spec, x, gamma, beta));
  std::printf("layer_norm [128, 768]: %zu code bytes, jit %.1f us, reference "
              "%.1f us (%.1fx)\n",
              code.size(), jit, ref, ref / jit);
}

} // namespace
