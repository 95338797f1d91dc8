//===- ReduceKernelTest.cpp - Tests of the AVX-512 reduction kernels ------===//
//
// Generates reduce_{sum,mean,max,min,sum_square,l1,l2} kernels for
// [outer, r, inner] views, maps their bytes executable and runs them
// against the reference kernels (compiler/Reference), the oracle, reducing
// axis 1 with keepdims=0. Rows (inner == 1) and columns (inner > 1) of
// lengths with every kind of vector tail: 1, 7, 15, 16, 17, 33, 1000 and
// more. Inputs and outputs end at an unmapped page, so a kernel that
// touches an element past its tensors faults.
//
// Tolerance: max and min are exact (nan where the reference has nan). The
// sums are in f32 against the reference's double: |got - want| <= (r + 2) *
// 2^-24 * S, S the sum of |x| (of x * x for sum_square and l2) over the
// reduced elements, divided by r for mean, its square root for l2: the
// first-order bound of any order of f32 additions, plus the final rounding
// (l2: the square root halves the sum's relative error and rounds once
// more). The test prints the largest error as a fraction of its bound.
//
//===----------------------------------------------------------------------===//

#include "ExecutableBuffer.h"
#include "KernelABI.h"
#include "KernelTestSupport.h"
#include "Reduce.h"

#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace mlcc;
using namespace mlcc::avx512;
using namespace mlcc::test;

namespace {

constexpr float kNanF = std::numeric_limits<float>::quiet_NaN();
constexpr float kInfF = std::numeric_limits<float>::infinity();

const ReduceKind kKinds[] = {
    ReduceKind::Sum,       ReduceKind::Mean, ReduceKind::Max, ReduceKind::Min,
    ReduceKind::SumSquare, ReduceKind::L1,   ReduceKind::L2};
const int64_t kLengths[] = {1, 7, 15, 16, 17, 33, 1000};

ReduceSpec spec(ReduceKind kind, int64_t outer, int64_t r, int64_t inner) {
  ReduceSpec s;
  s.name = reduceKindName(kind);
  s.kind = kind;
  s.outer = outer;
  s.r = r;
  s.inner = inner;
  return s;
}

std::string describe(const ReduceSpec &s) {
  return s.name + " [" + std::to_string(s.outer) + ", " + std::to_string(s.r) +
         ", " + std::to_string(s.inner) + "]";
}

std::vector<float> runKernel(const std::vector<uint8_t> &code,
                             const std::vector<float> &x, size_t outCount,
                             size_t offset = 0, int64_t runRows = 0) {
  ExecutableBuffer exec(code, offset);
  REQUIRE(exec.ok());
  GuardedArray<float> src(x);
  GuardedArray<float> dst(outCount);
  REQUIRE(src.ok());
  REQUIRE(dst.ok());
  mlcc_reduce_args args = {src.data(), dst.data(), runRows};
  static CalleeSavedChecker checker;
  CHECK(checker.run(&args, exec.address()) == 0);
  return dst.values();
}

std::vector<float> reference(const ReduceSpec &s, const std::vector<float> &x) {
  ref::Attrs attrs;
  attrs.set("axes", std::vector<int64_t>{1});
  attrs.set("keepdims", int64_t(0));
  return runReference(
      s.name, attrs,
      {ref::Tensor::fromBytes(DType::F32, {s.outer, s.r, s.inner}, x.data())});
}

/// Runs `kernel` on `input` and compares with the reference; returns the
/// largest error as a fraction of its bound (0 for the exact kinds). A
/// kernel of a run-time r is called for `runRows` rows and compared with
/// the reduction of each slice's first rows (the others are nan, so that
/// reading one shows).
double check(const ReduceSpec &kernel, const std::vector<float> &input,
             int64_t runRows = -1) {
  std::string what =
      describe(kernel) +
      (kernel.runTimeR ? " run for " + std::to_string(runRows) : "");
  INFO(what);
  ReduceSpec s = kernel; // what the call reduces
  std::vector<float> x = input;
  std::vector<float> padded = input;
  if (kernel.runTimeR) {
    s.r = std::min(runRows, kernel.r);
    s.runTimeR = false;
    x.clear();
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t k = 0; k < kernel.r; ++k)
        for (int64_t j = 0; j < s.inner; ++j) {
          size_t i = static_cast<size_t>((o * kernel.r + k) * s.inner + j);
          if (k < s.r)
            x.push_back(input[i]);
          else
            padded[i] = kNanF;
        }
  }
  std::vector<float> got =
      runKernel(generateCode(generateReduce, kernel), padded,
                static_cast<size_t>(s.outer * s.inner), 0, runRows);
  std::vector<float> want = reference(s, x);
  REQUIRE(got.size() == want.size());
  const bool exact = s.kind == ReduceKind::Max || s.kind == ReduceKind::Min;
  double worst = 0;
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t j = 0; j < s.inner; ++j) {
      size_t i = static_cast<size_t>(o * s.inner + j);
      bool ok;
      if (std::isnan(want[i])) {
        ok = std::isnan(got[i]);
      } else if (exact || std::isinf(want[i])) {
        ok = got[i] == want[i];
      } else {
        double sum = 0;
        for (int64_t k = 0; k < s.r; ++k) {
          double v = x[static_cast<size_t>((o * s.r + k) * s.inner + j)];
          bool square =
              s.kind == ReduceKind::SumSquare || s.kind == ReduceKind::L2;
          sum += square ? v * v : std::fabs(v);
        }
        if (s.kind == ReduceKind::Mean && s.r > 0)
          sum /= static_cast<double>(s.r);
        if (s.kind == ReduceKind::L2)
          sum = std::sqrt(sum);
        double bound = (s.r + 2) * std::ldexp(1.0, -24) * sum;
        double err = std::fabs(double(got[i]) - double(want[i]));
        ok = err <= bound;
        if (bound > 0)
          worst = std::max(worst, err / bound);
      }
      if (!ok) {
        INFO(what << ": output " << i << " is " << got[i] << ", expected "
                  << want[i]);
        CHECK(ok);
        return worst;
      }
    }
  return worst;
}

void report(const char *what, double worst) {
  std::printf("%s: largest error %.3f of the bound\n", what, worst);
}

} // namespace

TEST_CASE("reductions along contiguous rows match the reference",
          "[avx512][reduce]") {
  MLCC_REQUIRE_AVX512F();
  unsigned seed = 1;
  double worst = 0;
  for (ReduceKind kind : kKinds)
    for (int64_t outer : {1, 3})
      for (int64_t r : kLengths) {
        ReduceSpec s = spec(kind, outer, r, 1);
        worst = std::max(
            worst, check(s, randomValues(outer * r, -1.0f, 1.0f, seed++)));
      }
  // Long rows: the accumulator loop, with and without leftover vectors.
  for (ReduceKind kind : kKinds)
    for (int64_t r : {128, 129, 4096, 4100, 100000}) {
      ReduceSpec s = spec(kind, 2, r, 1);
      worst =
          std::max(worst, check(s, randomValues(2 * r, -2.0f, 3.0f, seed++)));
    }
  report("rows", worst);
}

TEST_CASE("reductions across columns match the reference", "[avx512][reduce]") {
  MLCC_REQUIRE_AVX512F();
  unsigned seed = 1000;
  double worst = 0;
  for (ReduceKind kind : kKinds)
    for (int64_t inner : {7, 15, 16, 17, 33, 1000})
      for (int64_t r : kLengths) {
        if (inner * r > 200000)
          continue;
        ReduceSpec s = spec(kind, 2, r, inner);
        worst = std::max(
            worst, check(s, randomValues(2 * r * inner, -1.0f, 1.0f, seed++)));
      }
  // Several full blocks of eight vectors and a partial one; long columns.
  for (ReduceKind kind : kKinds)
    for (auto [r, inner] : {std::pair<int64_t, int64_t>{3, 128},
                            {5, 272},
                            {300, 64},
                            {300, 2},
                            {2048, 49}}) {
      ReduceSpec s = spec(kind, 3, r, inner);
      worst = std::max(
          worst, check(s, randomValues(3 * r * inner, -2.0f, 3.0f, seed++)));
    }
  report("columns", worst);
}

TEST_CASE("a run-time r reduces the run's rows only", "[avx512][reduce]") {
  MLCC_REQUIRE_AVX512F();
  unsigned seed = 3000;
  double worst = 0;
  // Rows (inner == 1: whole vectors, then a run-time tail mask) and
  // columns (rounds of partial accumulators, then single rows); calls for
  // none, a few, a vector and one more, all, and past r.
  for (ReduceKind kind : kKinds)
    for (auto [r, inner] :
         {std::pair<int64_t, int64_t>{40, 1}, {40, 7}, {40, 33}, {64, 130}})
      for (int64_t run : {0, 1, 5, 16, 17, 39, 40, 99}) {
        if (run > r && run != 99)
          continue;
        ReduceSpec s = spec(kind, 2, r, inner);
        s.runTimeR = true;
        worst = std::max(
            worst,
            check(s, randomValues(2 * r * inner, -1.0f, 1.0f, seed++), run));
      }
  report("run-time rows", worst);
}

TEST_CASE("max and min return nan when they meet one, inf otherwise",
          "[avx512][reduce]") {
  MLCC_REQUIRE_AVX512F();
  for (ReduceKind kind : {ReduceKind::Max, ReduceKind::Min})
    for (auto [r, inner] : {std::pair<int64_t, int64_t>{1, 1},
                            {17, 1},
                            {1000, 1},
                            {7, 17},
                            {33, 40},
                            {300, 3}}) {
      ReduceSpec s = spec(kind, 2, r, inner);
      std::vector<float> x = randomValues(2 * r * inner, -1.0f, 1.0f, 7);
      // A nan early in some outputs (it must survive later elements), a
      // nan last in others, infinities of both signs elsewhere.
      for (size_t i = 0; i < x.size(); i += 29)
        x[i] = kNanF;
      x.back() = kNanF;
      for (size_t i = 5; i < x.size(); i += 31)
        x[i] = (i % 2) ? kInfF : -kInfF;
      check(s, x);
      // A first element nan, then only numbers.
      std::vector<float> y = randomValues(2 * r * inner, -1.0f, 1.0f, 8);
      y[0] = kNanF;
      check(s, y);
    }
}

TEST_CASE("reductions over nothing give the identity", "[avx512][reduce]") {
  MLCC_REQUIRE_AVX512F();
  for (ReduceKind kind : kKinds)
    for (int64_t inner : {1, 20}) {
      ReduceSpec s = spec(kind, 2, 0, inner);
      std::vector<float> got =
          runKernel(generateCode(generateReduce, s), {}, 2 * inner);
      float want = kind == ReduceKind::Max   ? -kInfF
                   : kind == ReduceKind::Min ? kInfF
                                             : 0.0f;
      INFO(describe(s));
      for (float g : got) {
        if (kind == ReduceKind::Mean)
          CHECK(std::isnan(g));
        else
          CHECK(g == want);
      }
    }
}

TEST_CASE("reduce kernels are position independent", "[avx512][reduce]") {
  MLCC_REQUIRE_AVX512F();
  // Constants (the nan, the |x| mask, 1 / r) are reached RIP-relative.
  for (ReduceKind kind : kKinds)
    for (int64_t inner : {1, 40}) {
      ReduceSpec s = spec(kind, 3, 37, inner);
      INFO(describe(s));
      std::vector<float> x = randomValues(3 * 37 * inner, -1.0f, 1.0f, 11);
      x[5] = kNanF;
      std::vector<uint8_t> code = generateCode(generateReduce, s);
      std::vector<float> a = runKernel(code, x, 3 * inner, 0);
      std::vector<float> b = runKernel(code, x, 3 * inner, 3);
      std::vector<float> c = runKernel(code, x, 3 * inner, 4000);
      CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
      CHECK(std::memcmp(a.data(), c.data(), a.size() * sizeof(float)) == 0);
    }
}

TEST_CASE("reduce kernels reject what they cannot do", "[avx512][reduce]") {
  std::vector<uint8_t> code;
  ReduceSpec s = spec(ReduceKind::Sum, 1, 4, 4);
  s.dtype = DType::F16;
  CHECK(generateReduce(s, code).failed());
  s = spec(ReduceKind::Sum, 1, -1, 4);
  CHECK(generateReduce(s, code).failed());
  s = spec(ReduceKind::Sum, 1, int64_t(1) << 20, int64_t(1) << 10);
  CHECK(generateReduce(s, code).failed());
}
