//===- GemmKernelTest.cpp - Tests of the AVX-512 gemm kernels -------------===//
//
// Generates gemm kernels, maps their bytes executable and runs them on
// packed B. The oracle is the reference "gemm" kernel (compiler/Reference),
// with relu applied to its output, and the definition in double for gelu
// and sigmoid; a residual (graph.fc's Z) is added after the bias, before
// the activation.
// Shapes cover every tail: M around the 6-row block, N around the 16-column
// vector and the 4-vector block, K around the 4-step unroll. A, packed B,
// bias and C end at an unmapped page, so a kernel that touches one element
// too many faults.
//
// Tolerance: the kernel sums K products in a different order than the
// reference, so |kernel - reference| <= 1e-5 * K * max|a| * max|b| (f32
// rounding is 6e-8 per add; the bound leaves a wide margin yet catches any
// wrong or missing term, which is of order max|a| * max|b|).
//
//===----------------------------------------------------------------------===//

#include "ExecutableBuffer.h"
#include "Gemm.h"
#include "JitGenerator.h"
#include "KernelABI.h"
#include "KernelTestSupport.h"

#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace mlcc;
using namespace mlcc::avx512;
using namespace mlcc::test;

namespace {

constexpr float kSentinel = -12345.0f;

std::vector<uint8_t> generate(const GemmSpec &spec) {
  return generateCode(generateGemm, spec);
}

/// Runs `code` and returns C (M x ldc, padding included: it must keep the
/// sentinel). `a` is M x lda, `packed` from packB, `bias` N or empty,
/// `residual` M x ldc or empty.
std::vector<float> runCode(const std::vector<uint8_t> &code,
                           const GemmSpec &spec, const std::vector<float> &a,
                           const std::vector<float> &packed,
                           const std::vector<float> &bias, size_t offset = 0,
                           const std::vector<float> &residual = {},
                           int64_t callRows = 0, int64_t callK = 0,
                           int64_t callN = 0) {
  ExecutableBuffer exec(code, offset);
  REQUIRE(exec.ok());
  int64_t ldc = spec.ldc ? spec.ldc : spec.n;
  GuardedArray<float> ga(a), gb(packed), gbias(bias), gr(residual);
  GuardedArray<float> gc(
      std::vector<float>(static_cast<size_t>(spec.m * ldc), kSentinel));
  REQUIRE((ga.ok() && gb.ok() && gbias.ok() && gr.ok() && gc.ok()));
  mlcc_gemm_args args = {};
  args.a = ga.data();
  args.packed_b = gb.data();
  args.bias = bias.empty() ? nullptr : gbias.data();
  args.c = gc.data();
  args.residual = residual.empty() ? nullptr : gr.data();
  args.m = callRows;
  args.k = callK;
  args.n = callN;
  exec.function<mlcc_gemm_kernel_fn>()(&args);
  return gc.values();
}

/// The reference gemm on dense copies: Y = A x B' (+ bias), B' = B or B^T.
std::vector<float> refGemm(int64_t m, int64_t n, int64_t k,
                           const std::vector<float> &a,
                           const std::vector<float> &b, bool transB,
                           const std::vector<float> &bias) {
  std::vector<ref::Tensor> in = {
      ref::Tensor::fromBytes(DType::F32, {m, k}, a.data()),
      ref::Tensor::fromBytes(
          DType::F32, transB ? ref::Shape{n, k} : ref::Shape{k, n}, b.data())};
  if (!bias.empty())
    in.push_back(ref::Tensor::fromBytes(DType::F32, {n}, bias.data()));
  return runReference("gemm", {{"transB", int64_t(transB ? 1 : 0)}}, in);
}

double geluExact(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }

double sigmoidExact(double x) { return 1.0 / (1.0 + std::exp(-x)); }

enum class Act { None, Relu, Gelu, Sigmoid };

struct Case {
  int64_t m, n, k;
  bool bias = false;
  Act act = Act::None;
  bool transB = false;
  int64_t lda = 0, ldc = 0; // 0: dense
  int blockRows = 0, blockVectors = 0;
  bool residual = false;
  /// >= 0: a kernel with a run-time M of at most `m`, called with this many
  /// rows (more than `m` are clamped to it); the rows past them keep C's
  /// sentinel.
  int64_t callRows = -1;
  /// >= 0: likewise a run-time K of at most `k`, or N of at most `n`.
  int64_t callK = -1;
  int64_t callN = -1;
  /// K steps per pass over C (GemmSpec::kBlock).
  int64_t kBlock = 0;
  /// GemmSpec::prefetchNextB: B ends at a guard page, so the prefetches of
  /// the next call's B must be the only accesses past it.
  bool prefetchNextB = false;
};

/// Generates, runs and compares one case.
void check(const Case &c, size_t offset = 0) {
  INFO("M=" << c.m << " N=" << c.n << " K=" << c.k << " bias=" << c.bias
            << " act=" << static_cast<int>(c.act) << " transB=" << c.transB
            << " lda=" << c.lda << " ldc=" << c.ldc << " block=" << c.blockRows
            << "x" << c.blockVectors << " residual=" << c.residual
            << " callRows=" << c.callRows << " callK=" << c.callK
            << " callN=" << c.callN << " kBlock=" << c.kBlock
            << " prefetchNextB=" << c.prefetchNextB);
  GemmSpec spec;
  spec.m = c.m;
  spec.n = c.n;
  spec.k = c.k;
  spec.lda = c.lda;
  spec.ldc = c.ldc;
  spec.bias = c.bias;
  spec.residual = c.residual;
  spec.blockRows = c.blockRows;
  spec.blockVectors = c.blockVectors;
  spec.runTimeM = c.callRows >= 0;
  spec.runTimeK = c.callK >= 0;
  spec.runTimeN = c.callN >= 0;
  spec.kBlock = c.kBlock;
  spec.prefetchNextB = c.prefetchNextB;
  // The columns the kernel writes.
  const int64_t cols =
      spec.runTimeN ? std::clamp<int64_t>(c.callN, 0, c.n) : c.n;
  // The products each element sums.
  const int64_t depth = spec.runTimeK ? std::min(c.callK, c.k) : c.k;
  // The rows the kernel computes.
  const int64_t rows = spec.runTimeM ? std::min(c.callRows, c.m) : c.m;
  if (c.act == Act::Relu)
    spec.epilogue.push_back(EltwiseOp::unary(EltwiseKind::Relu));
  if (c.act == Act::Gelu)
    spec.epilogue.push_back(EltwiseOp::unary(EltwiseKind::Gelu));
  if (c.act == Act::Sigmoid)
    spec.epilogue.push_back(EltwiseOp::unary(EltwiseKind::Sigmoid));
  const int64_t lda = c.lda ? c.lda : c.k, ldc = c.ldc ? c.ldc : c.n;

  std::vector<float> a = randomValues(c.m * lda, 1);
  std::vector<float> b = randomValues(c.k * c.n, 2); // K x N, or N x K
  std::vector<float> bias =
      c.bias ? randomValues(c.n, 3) : std::vector<float>{};
  // Laid out like C; the padding of a strided C holds values too, which
  // must not reach C's padding.
  std::vector<float> residual =
      c.residual ? randomValues(c.m * ldc, 10) : std::vector<float>{};
  std::vector<float> packed;
  packB(b.data(), c.k, c.n, c.transB ? c.k : c.n, c.transB, packed);
  REQUIRE(static_cast<int64_t>(packed.size()) == packedBSize(c.k, c.n));

  // B's first `depth` rows (K x N, or N x K).
  std::vector<float> bDepth(depth * c.n);
  for (int64_t r = 0; r < depth; ++r)
    for (int64_t j = 0; j < c.n; ++j)
      bDepth[c.transB ? j * depth + r : r * c.n + j] =
          c.transB ? b[j * c.k + r] : b[r * c.n + j];
  std::vector<float> dense(rows * depth);
  for (int64_t i = 0; i < rows; ++i)
    std::copy_n(a.data() + i * lda, depth, dense.data() + i * depth);
  std::vector<float> want =
      refGemm(rows, c.n, depth, dense, bDepth, c.transB, bias);
  std::vector<float> got =
      runCode(generate(spec), spec, a, packed, bias, offset, residual,
              c.callRows, c.callK, c.callN);

  const double tol = 1e-5 * std::max<int64_t>(c.k, 1) + 1e-6;
  int bad = 0;
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      float g = got[i * ldc + j];
      if (j >= cols || i >= rows) { // C's padding, rows and cols not asked
        if (g != kSentinel && bad++ < 5)
          FAIL_CHECK("C[" << i << "][" << j << "] padding written: " << g);
        continue;
      }
      double w = want[i * c.n + j];
      if (c.residual)
        w += residual[i * ldc + j];
      if (c.act == Act::Relu)
        w = std::max(w, 0.0);
      if (c.act == Act::Gelu)
        w = geluExact(w);
      if (c.act == Act::Sigmoid)
        w = sigmoidExact(w);
      if (!(std::fabs(g - w) <= tol) && bad++ < 5)
        FAIL_CHECK("C[" << i << "][" << j << "] = " << g << ", want " << w);
    }
  CHECK(bad == 0);
}

} // namespace

TEST_CASE("gemm: every M, N and K tail matches the reference",
          "[lowering][avx512][gemm]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t m : {1, 5, 6, 7, 13})
    for (int64_t n : {1, 15, 16, 17, 33, 64, 100})
      for (int64_t k : {1, 3, 64, 257})
        for (bool bias : {false, true})
          check({m, n, k, bias});
}

TEST_CASE("gemm: relu and gelu epilogues", "[lowering][avx512][gemm]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t m : {1, 7, 13})
    for (int64_t n : {15, 17, 100})
      for (int64_t k : {3, 64}) {
        check({m, n, k, true, Act::Relu});
        check({m, n, k, false, Act::Relu});
        check({m, n, k, true, Act::Gelu});
      }
}

TEST_CASE("gemm: bias, residual and activation (graph.fc's epilogue)",
          "[lowering][avx512][gemm]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t m : {1, 5, 7, 13})
    for (int64_t n : {1, 15, 17, 33, 100})
      for (int64_t k : {1, 3, 64, 257})
        for (Act act : {Act::None, Act::Relu, Act::Gelu, Act::Sigmoid}) {
          Case c{m, n, k, /*bias=*/true, act};
          c.residual = true;
          check(c);
          c.bias = false; // a residual alone
          check(c);
        }
}

TEST_CASE("gemm: a residual with strided A and C, and every block shape",
          "[lowering][avx512][gemm]") {
  MLCC_REQUIRE_AVX512F();
  Case c{7, 17, 5, true, Act::Relu, false, /*lda=*/9, /*ldc=*/20};
  c.residual = true;
  check(c);
  c = {13, 100, 64, true, Act::Gelu, false, /*lda=*/70, /*ldc=*/129};
  c.residual = true;
  check(c);
  const std::pair<int, int> blocks[] = {{1, 1}, {1, 8}, {2, 8}, {3, 6},
                                        {4, 5}, {5, 2}, {6, 4}};
  for (auto [rows, vectors] : blocks)
    for (int64_t m : {1, 13})
      for (int64_t n : {15, 129}) {
        c = {m, n, 9, true, Act::Sigmoid, false, 0, 0, rows, vectors};
        c.residual = true;
        check(c);
      }
  // K = 0: C = act(bias + residual).
  c = {5, 17, 0, true, Act::Relu};
  c.residual = true;
  check(c);
}

TEST_CASE("gemm: B packed from its transpose", "[lowering][avx512][gemm]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t m : {1, 6, 13})
    for (int64_t n : {1, 17, 64, 100})
      for (int64_t k : {1, 3, 257})
        check({m, n, k, true, Act::None, /*transB=*/true});
}

TEST_CASE("gemm: strided A and C leave C's padding alone",
          "[lowering][avx512][gemm]") {
  MLCC_REQUIRE_AVX512F();
  check({7, 17, 5, true, Act::None, false, /*lda=*/9, /*ldc=*/20});
  check({13, 100, 64, false, Act::Relu, false, /*lda=*/70, /*ldc=*/129});
  check({1, 33, 3, false, Act::None, false, /*lda=*/3, /*ldc=*/40});
}

TEST_CASE("gemm: every register block shape", "[lowering][avx512][gemm]") {
  MLCC_REQUIRE_AVX512F();
  const std::pair<int, int> blocks[] = {{1, 1}, {1, 8}, {2, 8}, {3, 6},
                                        {4, 5}, {5, 2}, {6, 4}};
  for (auto [rows, vectors] : blocks)
    for (int64_t m : {1, 5, 13})
      for (int64_t n : {15, 33, 100, 129})
        check({m, n, 9, true, Act::Relu, false, 0, 0, rows, vectors});
}

TEST_CASE("gemm: a run-time M computes the rows of each call",
          "[lowering][avx512][gemm]") {
  MLCC_REQUIRE_AVX512F();
  // Every row count up to the most (each tail block), one past it
  // (clamped), and 0 and -1 (nothing written), with both epilogue paths.
  for (int64_t m : {1, 6, 13})
    for (int64_t rows = -1; rows <= m + 1; ++rows)
      for (int64_t n : {17, 100}) {
        check({m, n, 9, true, Act::Relu, false, 0, 0, 0, 0, false, rows});
        Case c{m, n, 64, false, Act::Gelu, false, /*lda=*/70, /*ldc=*/129};
        c.residual = true;
        c.callRows = rows;
        check(c);
      }
  const std::pair<int, int> blocks[] = {{1, 8}, {3, 6}, {5, 2}};
  for (auto [blockRows, vectors] : blocks)
    for (int64_t rows : {1, 4, 11})
      check({11, 33, 5, true, Act::None, false, 0, 0, blockRows, vectors, false,
             rows});
}

TEST_CASE("gemm: K summed in passes over C", "[lowering][avx512][gemm]") {
  MLCC_REQUIRE_AVX512F();
  // One pass (a block at least K), two (first and last), and several (the
  // loop over the middle passes), with a short last pass; every epilogue
  // path, so that only the last pass applies it; N tails (the masked
  // vector loaded back from C), and run-time M and N.
  for (int64_t kBlock : {1, 4, 5, 60, 64})
    for (int64_t m : {1, 7, 13})
      for (int64_t n : {17, 100}) {
        Case plain{m, n, 64};
        plain.kBlock = kBlock;
        check(plain);
        Case fc{m, n, 63, true, Act::Gelu, false, /*lda=*/70, /*ldc=*/129};
        fc.residual = true;
        fc.kBlock = kBlock;
        check(fc);
        Case rows{m, n, 64, true, Act::Relu};
        rows.callRows = m - 1;
        rows.kBlock = kBlock;
        check(rows);
        Case cols{m, n, 64, true, Act::Sigmoid};
        cols.callN = n - 2;
        cols.kBlock = kBlock;
        check(cols);
      }
  // The default splits a long K only with enough row blocks to reuse B.
  for (int64_t m : {2, 30})
    check({m, 40, 1500, true, Act::Relu});
}

TEST_CASE("gemm: prefetching the next call's B reads nothing of it",
          "[lowering][avx512][gemm]") {
  MLCC_REQUIRE_AVX512F();
  // B (packed) ends at a guard page: the last column block's row blocks
  // prefetch past it, which must neither fault nor change C. One column
  // block and several, an N tail, several passes over K (no prefetch of
  // the next B then), run-time M and N.
  for (int64_t m : {7, 30})
    for (int64_t n : {64, 100, 256}) {
      Case c{m, n, 40, true, Act::Relu};
      c.prefetchNextB = true;
      check(c);
      c.kBlock = 16;
      check(c);
      c.kBlock = 0;
      c.callRows = m - 1;
      check(c);
      c.callRows = -1;
      c.callN = n - 3;
      check(c);
    }
}

TEST_CASE("gemm: a run-time K sums the products of each call",
          "[lowering][avx512][gemm]") {
  MLCC_REQUIRE_AVX512F();
  // Around the 4-step unroll, none, fewer than none and more than the most
  // (clamped); with a run-time M too, as attention's context product.
  for (int64_t k : {1, 7, 64})
    for (int64_t depth = -1; depth <= k + 1; depth += (k > 9 ? 5 : 1))
      for (int64_t n : {17, 64}) {
        Case c{13, n, k, true, Act::Relu, false, 0, 0};
        c.callK = depth;
        check(c);
        c.residual = true;
        c.callRows = 7;
        check(c);
        c = {5, n, k, false, Act::None, /*transB=*/true};
        c.callK = depth;
        check(c);
      }
}

TEST_CASE("gemm: a run-time N writes the columns of each call",
          "[lowering][avx512][gemm]") {
  MLCC_REQUIRE_AVX512F();
  // Every column tail of blocks of 4 and 8 vectors, none, fewer than none
  // and more than the most (clamped); with run-time M and K too, as
  // attention's scores over keys of a run-time length.
  for (int64_t n : {1, 16, 17, 100, 129})
    for (int64_t cols :
         {-1, 0, 1, 15, 16, 17, 33, 64, 65, 99, 100, 128, 129, 130}) {
      if (cols > n + 1)
        continue;
      Case c{13, n, 9, true, Act::Gelu, false, 0, /*ldc=*/n + 3};
      c.callN = cols;
      check(c);
      c = {2, n, 9, true, Act::None}; // 2 x 8 blocks
      c.callN = cols;
      check(c);
      c = {13, n, 20, false, Act::Relu};
      c.residual = true;
      c.callN = cols;
      c.callRows = 11;
      c.callK = 18;
      check(c);
    }
  const std::pair<int, int> blocks[] = {{1, 1}, {3, 6}, {4, 5}, {5, 2}};
  for (auto [rows, vectors] : blocks)
    for (int64_t cols : {1, 31, 80, 129}) {
      Case c{7, 129, 5, true, Act::None, false, 0, 0, rows, vectors};
      c.callN = cols;
      check(c);
    }
}

TEST_CASE("gemm: K = 0 gives the bias, M or N = 0 writes nothing",
          "[lowering][avx512][gemm]") {
  MLCC_REQUIRE_AVX512F();
  check({5, 17, 0, true});
  check({5, 17, 0, false, Act::Relu});
  check({0, 17, 8});
  check({5, 0, 8, true});
  check({0, 0, 0});
}

TEST_CASE("gemm: kernels are position independent",
          "[lowering][avx512][gemm]") {
  GemmSpec spec;
  spec.m = 7;
  spec.n = 33;
  spec.k = 10;
  spec.bias = true;
  spec.epilogue = {EltwiseOp::unary(EltwiseKind::Gelu)};
  std::vector<uint8_t> code = generate(spec);
  // The bytes do not depend on where the generator's buffer was.
  CHECK(generate(spec) == code);
  MLCC_REQUIRE_AVX512F();
  std::vector<float> a = randomValues(7 * 10, 4), b = randomValues(10 * 33, 5);
  std::vector<float> bias = randomValues(33, 6), packed;
  packB(b.data(), 10, 33, 33, false, packed);
  std::vector<float> first = runCode(code, spec, a, packed, bias, 0);
  std::vector<float> second = runCode(code, spec, a, packed, bias, 1237);
  CHECK(first == second);
  check({7, 33, 10, true, Act::Gelu}, 4093);
}

TEST_CASE("gemm: kernels keep the callee-saved registers",
          "[lowering][avx512][gemm]") {
  MLCC_REQUIRE_AVX512F();
  CalleeSavedChecker checker;

  // Both loops (rows in rbx, column blocks in r12) run.
  GemmSpec spec;
  spec.m = 13;
  spec.n = 200;
  spec.k = 9;
  spec.bias = true;
  std::vector<float> a = randomValues(13 * 9, 7), b = randomValues(9 * 200, 8);
  std::vector<float> bias = randomValues(200, 9), packed, c(13 * 200);
  packB(b.data(), 9, 200, 200, false, packed);
  ExecutableBuffer exec(generate(spec));
  REQUIRE(exec.ok());
  mlcc_gemm_args args = {a.data(), packed.data(), bias.data(), c.data(),
                         nullptr};
  CHECK(checker.run(&args, exec.address()) == 0);

  // With a residual the kernel also uses r13.
  spec.residual = true;
  std::vector<float> residual = randomValues(13 * 200, 10);
  ExecutableBuffer withResidual(generate(spec));
  REQUIRE(withResidual.ok());
  args.residual = residual.data();
  CHECK(checker.run(&args, withResidual.address()) == 0);

  // A run-time M counts its rows in rbx too.
  spec.runTimeM = true;
  ExecutableBuffer runTimeM(generate(spec));
  REQUIRE(runTimeM.ok());
  args.m = 11;
  CHECK(checker.run(&args, runTimeM.address()) == 0);

  // K in passes keeps the pass's start in r15.
  spec.kBlock = 4;
  ExecutableBuffer passes(generate(spec));
  REQUIRE(passes.ok());
  CHECK(checker.run(&args, passes.address()) == 0);
}

TEST_CASE("gemm: packB layout", "[lowering][avx512][gemm]") {
  // B[k][n] = 100 k + n, K = 2, N = 18: two panels, the second padded.
  std::vector<float> b(2 * 18), bt(18 * 2), packed, packedT;
  for (int k = 0; k < 2; ++k)
    for (int n = 0; n < 18; ++n)
      b[k * 18 + n] = bt[n * 2 + k] = static_cast<float>(100 * k + n);
  packB(b.data(), 2, 18, 18, false, packed);
  packB(bt.data(), 2, 18, 2, true, packedT);
  REQUIRE(packed.size() == 2 * 2 * 16);
  CHECK(packed == packedT);
  for (int p = 0; p < 2; ++p)
    for (int k = 0; k < 2; ++k)
      for (int j = 0; j < 16; ++j) {
        int n = 16 * p + j;
        float want = n < 18 ? static_cast<float>(100 * k + n) : 0.0f;
        CHECK(packed[(p * 2 + k) * 16 + j] == want);
      }
}

TEST_CASE("gemm: bad specs are errors", "[lowering][avx512][gemm]") {
  auto fails = [](GemmSpec spec, const std::string &fragment) {
    spec.name = "my_gemm";
    std::vector<uint8_t> code = {1, 2, 3};
    Status s = generateGemm(spec, code);
    INFO(s.message());
    CHECK_FALSE(s.ok());
    CHECK(code.empty());
    CHECK(s.message().find("my_gemm") != std::string::npos);
    CHECK(s.message().find(fragment) != std::string::npos);
  };
  GemmSpec ok;
  ok.m = 4;
  ok.n = 20;
  ok.k = 8;
  GemmSpec s = ok;
  s.m = -1;
  fails(s, "negative");
  s = ok;
  s.n = -3;
  fails(s, "negative");
  s = ok;
  s.k = -2;
  fails(s, "negative");
  s = ok;
  s.kBlock = -1;
  fails(s, "K block");
  s = ok;
  s.lda = 7;
  fails(s, "lda");
  s = ok;
  s.ldc = 19;
  fails(s, "ldc");
  s = ok;
  s.m = int64_t(1) << 20;
  s.lda = int64_t(1) << 20;
  fails(s, "too large");
  s = ok;
  s.k = int64_t(1) << 30;
  fails(s, "too large");
  s = ok;
  s.blockRows = 7;
  fails(s, "block rows");
  s = ok;
  s.blockVectors = 9;
  fails(s, "block vectors");
  s = ok;
  s.blockRows = 6;
  s.blockVectors = 8;
  fails(s, "zmm registers");
  s = ok;
  s.epilogue = {EltwiseOp::binary(EltwiseKind::Add, EltwiseOperand::array(1))};
  fails(s, "constants only");
}

// Hidden: run with [.bench]. What the run-time dims cost: BERT-base's fc
// shapes at 128 tokens, kernels for exactly that against kernels for at
// most 512 rows (and, for the attention products, 512 keys) called with
// 128; rounds interleaved, the median of each round's best of 20.
TEST_CASE("gemm speed with run-time dims against exact dims", "[.bench]") {
  MLCC_REQUIRE_AVX512F();
  struct Shape {
    const char *what;
    int64_t m, n, k;
    bool runTimeN, runTimeK;
  };
  const Shape shapes[] = {{"fc 768 -> 768", 128, 768, 768, false, false},
                          {"fc 768 -> 3072", 128, 3072, 768, false, false},
                          {"scores (q k^T)", 128, 128, 64, true, false},
                          {"context (p v)", 128, 64, 128, false, true}};
  for (const Shape &sh : shapes) {
    GemmSpec exact;
    exact.m = sh.m;
    exact.n = sh.n;
    exact.k = sh.k;
    exact.bias = true;
    GemmSpec generic = exact;
    generic.runTimeM = true;
    generic.m = 512;
    generic.runTimeN = sh.runTimeN;
    generic.runTimeK = sh.runTimeK;
    if (sh.runTimeN)
      generic.n = 512;
    if (sh.runTimeK)
      generic.k = 512;
    std::vector<float> a = randomValues(generic.m * generic.k, 1),
                       b = randomValues(generic.k * generic.n, 2),
                       bias = randomValues(generic.n, 3), packed, packedExact;
    std::vector<float> c(generic.m * generic.n);
    packB(b.data(), generic.k, generic.n, generic.n, false, packed);
    packB(b.data(), exact.k, exact.n, generic.n, false, packedExact);
    ExecutableBuffer exactCode(generate(exact)), genericCode(generate(generic));
    REQUIRE((exactCode.ok() && genericCode.ok()));
    // Each kernel reads A and writes C dense at its own sizes.
    mlcc_gemm_args exactArgs = {a.data(), packedExact.data(), bias.data(),
                                c.data(), nullptr};
    mlcc_gemm_args genericArgs = {a.data(), packed.data(), bias.data(),
                                  c.data(), nullptr,       sh.m,
                                  sh.k,     sh.n};
    auto exactFn = exactCode.function<mlcc_gemm_kernel_fn>();
    auto genericFn = genericCode.function<mlcc_gemm_kernel_fn>();
    auto [e, g] = interleavedMedianMicros(
        [&] { exactFn(&exactArgs); }, [&] { genericFn(&genericArgs); }, 15, 20);
    std::printf("%-16s [%lld x %lld x %lld]: exact %.1f us, run-time dims "
                "%.1f us (%.3fx)\n",
                sh.what, static_cast<long long>(sh.m),
                static_cast<long long>(sh.n), static_cast<long long>(sh.k), e,
                g, g / e);
  }
}
