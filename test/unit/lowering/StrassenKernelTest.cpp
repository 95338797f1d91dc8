//===- StrassenKernelTest.cpp - Tests of the Strassen sum kernels ---------===//
//
// Generates the two kernels of Kernels/Strassen.h, maps them executable and
// runs them on seeded values. The oracle is the definition, in float: each
// output is one or three adds of the inputs, so the kernel's must be
// bitwise equal (the combine's relu too). A's last row block, S's and the
// combine's arrays end at an unmapped page, so a kernel that reads or writes
// one element too many faults; rows outside a call's keep a sentinel.
//
//===----------------------------------------------------------------------===//

#include "ExecutableBuffer.h"
#include "KernelABI.h"
#include "KernelTestSupport.h"
#include "Strassen.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

using namespace mlcc;
using namespace mlcc::avx512;
using namespace mlcc::test;

namespace {

constexpr float kSentinel = -12345.0f;

} // namespace

TEST_CASE("strassen: the sums of A's blocks, all rows and some",
          "[lowering][avx512][strassen]") {
  MLCC_REQUIRE_AVX512F();
  for (auto [m, k, first, rows] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t>{3, 16, 0, 3},
        {5, 48, 0, 5},
        {8, 32, 2, 5},
        {8, 32, 6, 2},
        {4, 16, 0, 9}}) { // more rows than m: clamped to m
    StrassenSumsSpec spec;
    spec.m = m;
    spec.k = k;
    spec.lda = 2 * k;
    INFO("m " << m << " k " << k << " rows " << first << " + " << rows);
    std::vector<uint8_t> code = generateCode(generateStrassenSums, spec);
    ExecutableBuffer exec(code);
    REQUIRE(exec.ok());
    GuardedArray<float> a(randomValues(2 * m * 2 * k, 7));
    GuardedArray<float> s(std::vector<float>(4 * m * k, kSentinel));
    REQUIRE((a.ok() && s.ok()));
    mlcc_strassen_sums_args args{a.data() + first * 2 * k, s.data() + first * k,
                                 rows};
    exec.function<mlcc_strassen_sums_kernel_fn>()(&args);
    const int64_t last = std::min(first + rows, m);
    std::vector<float> got = s.values(), av = a.values();
    auto at = [&](int i, int j, int64_t r, int64_t c) {
      return av[(i * m + r) * 2 * k + j * k + c];
    };
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < k; ++c) {
        const bool inCall = r >= first && r < last;
        float s1 = at(1, 0, r, c) + at(1, 1, r, c), s2 = s1 - at(0, 0, r, c);
        float want[4] = {s1, s2, at(0, 0, r, c) - at(1, 0, r, c),
                         at(0, 1, r, c) - s2};
        for (int i = 0; i < 4; ++i)
          REQUIRE(got[(i * m + r) * k + c] == (inCall ? want[i] : kSentinel));
      }
  }
}

TEST_CASE("strassen: a block of C from signed terms, bias and relu",
          "[lowering][avx512][strassen]") {
  MLCC_REQUIRE_AVX512F();
  struct Case {
    int64_t rows, cols, ld;
    std::vector<int> signs;
    bool bias, relu;
  };
  for (const Case &c : {Case{1, 16, 16, {1}, false, false},
                        Case{3, 64, 80, {1, 1, -1}, true, true},
                        Case{2, 80, 96, {1, -1, 1, 1}, true, false},
                        Case{4, 144, 144, {1, 1}, false, true}}) {
    StrassenCombineSpec spec;
    spec.rows = c.rows;
    spec.cols = c.cols;
    spec.ld = c.ld;
    spec.signs = c.signs;
    spec.bias = c.bias;
    if (c.relu)
      spec.epilogue.push_back(EltwiseOp::unary(EltwiseKind::Relu));
    INFO(c.rows << " x " << c.cols << " ld " << c.ld << ", " << c.signs.size()
                << " terms");
    std::vector<uint8_t> code = generateCode(generateStrassenCombine, spec);
    ExecutableBuffer exec(code);
    REQUIRE(exec.ok());
    // Each matrix ends with its last row's last column.
    const size_t size = static_cast<size_t>((c.rows - 1) * c.ld + c.cols);
    std::vector<std::vector<float>> terms;
    std::vector<std::unique_ptr<GuardedArray<float>>> guarded;
    mlcc_strassen_combine_args args{};
    for (size_t t = 0; t < c.signs.size(); ++t) {
      terms.push_back(randomValues(size, 11 + t));
      guarded.push_back(std::make_unique<GuardedArray<float>>(terms.back()));
      args.terms[t] = guarded.back()->data();
    }
    std::vector<float> biasValues = randomValues(c.cols, 3);
    GuardedArray<float> bias(biasValues);
    GuardedArray<float> dst(std::vector<float>(size, kSentinel));
    args.dst = dst.data();
    args.bias = c.bias ? bias.data() : nullptr;
    exec.function<mlcc_strassen_combine_kernel_fn>()(&args);
    std::vector<float> got = dst.values();
    for (int64_t r = 0; r < c.rows; ++r)
      for (int64_t col = 0; col < c.ld && r * c.ld + col < int64_t(size);
           ++col) {
        const size_t i = static_cast<size_t>(r * c.ld + col);
        if (col >= c.cols) {
          REQUIRE(got[i] == kSentinel); // between rows: not written
          continue;
        }
        float want = terms[0][i];
        for (size_t t = 1; t < terms.size(); ++t)
          want = c.signs[t] > 0 ? want + terms[t][i] : want - terms[t][i];
        if (c.bias)
          want += biasValues[col];
        if (c.relu)
          want = std::max(want, 0.0f);
        REQUIRE(got[i] == want);
      }
  }
}

TEST_CASE("strassen: bad specs are errors", "[lowering][avx512][strassen]") {
  auto fails = [](auto generator, auto spec, const std::string &fragment) {
    spec.name = "my_strassen";
    std::vector<uint8_t> code = {1, 2, 3};
    Status s = generator(spec, code);
    INFO(s.message());
    CHECK_FALSE(s.ok());
    CHECK(code.empty());
    CHECK(s.message().find("my_strassen") != std::string::npos);
    CHECK(s.message().find(fragment) != std::string::npos);
  };
  StrassenSumsSpec sums;
  sums.k = 24;
  sums.lda = 48;
  fails(generateStrassenSums, sums, "not whole vectors");
  sums.k = 16;
  sums.lda = 16;
  fails(generateStrassenSums, sums, "not whole vectors");
  sums.lda = int64_t(1) << 30;
  fails(generateStrassenSums, sums, "31-bit");
  StrassenCombineSpec combine;
  combine.cols = 20;
  combine.ld = 32;
  fails(generateStrassenCombine, combine, "whole vectors");
  combine.cols = 16;
  combine.signs = {-1, 1};
  fails(generateStrassenCombine, combine, "the first added");
  combine.signs = {1, 1, 1, 1, 1};
  fails(generateStrassenCombine, combine, "one to four terms");
  combine.signs = {1};
  EltwiseOp add = EltwiseOp::unary(EltwiseKind::Add);
  combine.epilogue = {add};
  fails(generateStrassenCombine, combine, "unary ops only");
}

TEST_CASE("strassen: kernels keep the callee-saved registers and rsp",
          "[lowering][avx512][strassen]") {
  MLCC_REQUIRE_AVX512F();
  CalleeSavedChecker checker;
  StrassenSumsSpec sums;
  std::vector<uint8_t> code = generateCode(generateStrassenSums, sums);
  ExecutableBuffer exec(code);
  REQUIRE(exec.ok());
  std::vector<float> a(64, 1.0f), s(64);
  mlcc_strassen_sums_args sumsArgs{a.data(), s.data(), 1};
  CHECK(checker.run(&sumsArgs, exec.address()) == 0);
  StrassenCombineSpec combine;
  combine.signs = {1, 1, -1, 1};
  std::vector<uint8_t> code2 = generateCode(generateStrassenCombine, combine);
  ExecutableBuffer exec2(code2);
  REQUIRE(exec2.ok());
  std::vector<float> d(16), t(16, 2.0f);
  mlcc_strassen_combine_args combineArgs{
      d.data(), nullptr, {t.data(), t.data(), t.data(), t.data()}};
  CHECK(checker.run(&combineArgs, exec2.address()) == 0);
  CHECK(d[0] == 4.0f);
}
