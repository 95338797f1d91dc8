//===- GemmInt8KernelTest.cpp - Tests of the VNNI int8 GEMM kernels -------===//
//
// Generates int8 kernels, runs them on packed B and compares with the
// definition computed here in int64: acc = sum (a - za) * (b - zb[n]).
// Int32 outputs must match exactly; u8/s8 outputs are the same f32
// arithmetic as the kernel's (float(acc) * scale + bias, rounded to nearest
// even, saturated), so they must match exactly too; f32 outputs within one
// rounding. Shapes cover the tails: M around the 6- and 4-row blocks, N
// around 16 and the 4-vector block, K around the 4-byte group and the 2-group
// unroll. A and C end at an unmapped page: a kernel that reads a byte past
// A's last row (the K tail) faults.
//
// The kernels use AVX512-VNNI: on a CPU without it each test exits with 77,
// which CTest reports as skipped.
//
//===----------------------------------------------------------------------===//

#include "ExecutableBuffer.h"
#include "GemmInt8.h"
#include "KernelABI.h"
#include "KernelTestSupport.h"

#include <catch2/catch.hpp>

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

struct Case {
  int64_t m, n, k;
  bool signedA, unsignedB;
  int32_t za;
  std::vector<int32_t> zb; // 1 or N
  Int8GemmOutput output;
  bool residual = false; // Float output: + R (M x N) after the bias
  int32_t outputZero = 0; // U8/S8 output: added after rounding
  /// A, C and R in the channel-blocked layout of the int8 convs: A as
  /// [K/16][M][16] (aBlockStride), C and R as [ceil(N/16)][M][16]
  /// (cBlockStride), whose padding lanes must come out 0.
  bool blocked = false;
  /// With `blocked`: A stays dense, as a gathered patch matrix is.
  bool denseA = false;
  /// The AMX kernel (Int8GemmSpec::amx).
  bool amx = false;
  /// >= 0: a kernel of a run-time M (Int8GemmSpec::runTimeM) called for
  /// this many rows (more than m are clamped to m); the rows past them
  /// must stay as they were.
  int64_t runRows = -1;
};

struct Data {
  std::vector<int32_t> a, b; // A M x K, B K x N, in their types' ranges
  std::vector<float> scale, bias, residual;
};

Data randomData(const Case &c, uint32_t seed) {
  std::mt19937 rng(seed);
  auto values = [&](size_t n, bool isSigned) {
    std::uniform_int_distribution<int32_t> d(isSigned ? -128 : 0,
                                             isSigned ? 127 : 255);
    std::vector<int32_t> v(n);
    for (int32_t &x : v)
      x = d(rng);
    return v;
  };
  Data d;
  d.a = values(c.m * c.k, c.signedA);
  d.b = values(c.k * c.n, !c.unsignedB);
  std::uniform_real_distribution<float> s(1e-4f, 3e-3f), z(-3, 3);
  if (c.output != Int8GemmOutput::Int32)
    for (int64_t j = 0; j < c.n; ++j) {
      d.scale.push_back(s(rng));
      d.bias.push_back(c.output == Int8GemmOutput::Float ? z(rng)
                                                         : float(j % 7));
    }
  if (c.residual)
    for (int64_t i = 0; i < c.m * c.n; ++i)
      d.residual.push_back(z(rng));
  return d;
}

int64_t accumulator(const Case &c, const Data &d, int64_t i, int64_t j) {
  int64_t sum = 0;
  int32_t zb = c.zb[c.zb.size() == 1 ? 0 : j];
  for (int64_t kk = 0; kk < c.k; ++kk)
    sum += int64_t(d.a[i * c.k + kk] - c.za) * (d.b[kk * c.n + j] - zb);
  return sum;
}

void check(const Case &c, uint32_t seed) {
  INFO("M=" << c.m << " N=" << c.n << " K=" << c.k << " signedA=" << c.signedA
            << " unsignedB=" << c.unsignedB << " za=" << c.za
            << " zb[0]=" << c.zb[0] << " output=" << int(c.output)
            << " blocked=" << c.blocked << " amx=" << c.amx
            << " runRows=" << c.runRows);
  Data d = randomData(c, seed);
  PackedInt8B packed = packInt8B(d.b.data(), c.k, c.n, c.unsignedB, c.zb, c.za,
                                 c.signedA, d.scale, d.bias);
  if (c.amx && c.signedA)
    amxCompensation(packed, c.k, c.n);
  Int8GemmSpec spec;
  spec.amx = c.amx;
  spec.m = c.m;
  spec.n = c.n;
  spec.k = c.k;
  spec.signedA = c.signedA;
  spec.rowSums = packed.rowSums;
  spec.output = c.output;
  spec.residual = c.residual;
  spec.outputZero = c.outputZero;
  spec.runTimeM = c.runRows >= 0;
  const int64_t rows = c.runRows >= 0 ? std::min(c.runRows, c.m) : c.m;
  const int64_t blocks = (c.n + 15) / 16;
  const bool blockedA = c.blocked && !c.denseA;
  if (blockedA) {
    spec.lda = 16;
    spec.aBlockStride = c.m * 16;
  }
  if (c.blocked) {
    spec.ldc = 16;
    spec.cBlockStride = c.m * 16;
  }
  std::vector<uint8_t> code = generateCode(generateInt8Gemm, spec);
  ExecutableBuffer exec(code);
  REQUIRE(exec.ok());

  // Where element (i, j) of C (and R) is.
  auto cAt = [&](int64_t i, int64_t j) {
    return size_t(c.blocked ? ((j / 16) * c.m + i) * 16 + j % 16 : i * c.n + j);
  };
  std::vector<uint8_t> aBytes(d.a.begin(), d.a.end());
  if (blockedA)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t kk = 0; kk < c.k; ++kk)
        aBytes[((kk / 16) * c.m + i) * 16 + kk % 16] =
            uint8_t(d.a[i * c.k + kk]);
  std::vector<float> residual = d.residual;
  if (c.blocked && c.residual) {
    residual.assign(size_t(blocks * c.m * 16), 0.0f);
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j)
        residual[cAt(i, j)] = d.residual[i * c.n + j];
  }
  GuardedArray<uint8_t> ga(aBytes);
  GuardedArray<int8_t> gb(packed.panels);
  GuardedArray<uint8_t> gcol(packed.columnData);
  bool bytes = c.output == Int8GemmOutput::U8 || c.output == Int8GemmOutput::S8;
  size_t elements = size_t(c.blocked ? blocks * c.m * 16 : c.m * c.n);
  size_t cBytes = elements * (bytes ? 1 : 4);
  GuardedArray<uint8_t> gc(std::vector<uint8_t>(cBytes, 0xA5));
  GuardedArray<float> gr(residual);
  REQUIRE((ga.ok() && gb.ok() && gcol.ok() && gc.ok() && gr.ok()));
  mlcc_int8_gemm_args args{ga.data(),
                           gb.data(),
                           gcol.data(),
                           gc.data(),
                           c.residual ? gr.data() : nullptr,
                           0,
                           c.runRows};
  exec.function<mlcc_int8_gemm_kernel_fn>()(&args);
  std::vector<uint8_t> out = gc.values();

  int mismatches = 0;
  // The rows past a run-time M: not written.
  for (int64_t i = rows; i < c.m; ++i)
    for (int64_t j = 0; j < (c.blocked ? blocks * 16 : c.n); ++j)
      for (size_t byte = 0; byte < (bytes ? 1 : 4); ++byte)
        if (out[cAt(i, j) * (bytes ? 1 : 4) + byte] != 0xA5 &&
            ++mismatches <= 5)
          UNSCOPED_INFO("row " << i << " past the run's " << rows
                               << " was written");
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      int64_t acc = accumulator(c, d, i, j);
      size_t at = cAt(i, j);
      bool ok = true;
      if (c.output == Int8GemmOutput::Int32) {
        int32_t got;
        std::memcpy(&got, &out[at * 4], 4);
        ok = got == acc;
      } else {
        float x = float(acc) * d.scale[j] + d.bias[j];
        if (c.residual)
          x += d.residual[i * c.n + j];
        if (c.output == Int8GemmOutput::Float) {
          float got;
          std::memcpy(&got, &out[at * 4], 4);
          ok = std::fabs(got - x) <= 1e-6f * (1 + std::fabs(x));
        } else {
          float r = std::nearbyint(x) + float(c.outputZero);
          float lo = c.output == Int8GemmOutput::U8 ? 0 : -128;
          float hi = c.output == Int8GemmOutput::U8 ? 255 : 127;
          int32_t want = int32_t(std::min(hi, std::max(lo, r)));
          int32_t got = c.output == Int8GemmOutput::U8
                            ? int32_t(out[at])
                            : int32_t(int8_t(out[at]));
          ok = got == want;
        }
      }
      if (!ok && ++mismatches <= 5)
        UNSCOPED_INFO("mismatch at (" << i << ", " << j << ")");
    }
  // A blocked C's padding lanes: every byte 0.
  for (int64_t i = 0; c.blocked && i < rows; ++i)
    for (int64_t j = c.n; j < blocks * 16; ++j)
      for (size_t byte = 0; byte < (bytes ? 1 : 4); ++byte)
        if (out[cAt(i, j) * (bytes ? 1 : 4) + byte] != 0 && ++mismatches <= 5)
          UNSCOPED_INFO("padding lane (" << i << ", " << j << ") is not 0");
  CHECK(mismatches == 0);
}

} // namespace

TEST_CASE("int8 gemm: u8 x s8 to int32 over every tail", "[avx512][int8]") {
  MLCC_SKIP_WITHOUT("avx512vnni", "avx512_vnni");
  uint32_t seed = 1;
  for (int64_t m : {1, 2, 3, 5, 6, 7, 13})
    for (int64_t n : {1, 15, 16, 17, 64, 70})
      for (int64_t k : {1, 3, 4, 7, 8, 9, 33})
        check({m, n, k, false, false, 0, {0}, Int8GemmOutput::Int32}, seed++);
}

TEST_CASE("int8 gemm: zero points, signed A and unsigned B", "[avx512][int8]") {
  MLCC_SKIP_WITHOUT("avx512vnni", "avx512_vnni");
  uint32_t seed = 100;
  for (int64_t k : {5, 16, 27}) {
    // za alone: a column constant.
    check({7, 33, k, false, false, 117, {0}, Int8GemmOutput::Int32}, seed++);
    // s8 A with its own zero point.
    check({7, 33, k, true, false, -9, {0}, Int8GemmOutput::Int32}, seed++);
    // u8 B (ONNX's MatMulInteger test), zero points on both sides: row sums.
    check({5, 20, k, false, true, 12, {200}, Int8GemmOutput::Int32}, seed++);
    // Per-column zero points of an s8 B, with s8 A.
    std::vector<int32_t> zb(33);
    for (int j = 0; j < 33; ++j)
      zb[j] = j % 5 - 2;
    check({9, 33, k, true, false, 3, zb, Int8GemmOutput::Int32}, seed++);
  }
}

TEST_CASE("int8 gemm: requantised and dequantised outputs", "[avx512][int8]") {
  MLCC_SKIP_WITHOUT("avx512vnni", "avx512_vnni");
  uint32_t seed = 200;
  for (int64_t m : {1, 6, 11})
    for (int64_t n : {3, 16, 50}) {
      check({m, n, 37, false, false, 128, {0}, Int8GemmOutput::U8}, seed++);
      check({m, n, 37, true, false, 0, {0}, Int8GemmOutput::S8}, seed++);
      check({m, n, 37, false, true, 100, {128}, Int8GemmOutput::Float}, seed++);
      check({m, n, 37, true, true, 5, {130}, Int8GemmOutput::U8}, seed++);
      check({m, n, 37, false, false, 7, {0}, Int8GemmOutput::U8, false, 121},
            seed++);
      check({m, n, 37, true, false, 0, {0}, Int8GemmOutput::S8, false, -3},
            seed++);
      check({m, n, 37, false, false, 128, {0}, Int8GemmOutput::Float, true},
            seed++);
    }
}

TEST_CASE("int8 gemm: channel-blocked A and C", "[avx512][int8]") {
  MLCC_SKIP_WITHOUT("avx512vnni", "avx512_vnni");
  uint32_t seed = 300;
  for (int64_t m : {1, 5, 6, 13})
    for (int64_t n : {7, 16, 20, 70})
      for (int64_t k : {16, 48}) {
        check({m,
               n,
               k,
               false,
               false,
               3,
               {0},
               Int8GemmOutput::Int32,
               false,
               0,
               true},
              seed++);
        check({m,
               n,
               k,
               false,
               true,
               128,
               {133},
               Int8GemmOutput::U8,
               false,
               9,
               true},
              seed++);
        check({m,
               n,
               k,
               true,
               false,
               -5,
               {0},
               Int8GemmOutput::Float,
               true,
               0,
               true},
              seed++);
      }
}

TEST_CASE("int8 gemm: a run-time M computes its rows only", "[avx512][int8]") {
  MLCC_SKIP_WITHOUT("avx512vnni", "avx512_vnni");
  uint32_t seed = 400;
  // Blocks of 6 rows (4 with row sums), 2 for M <= 2; calls of none, of a
  // tail, of whole blocks and past M.
  for (int64_t m : {2, 13, 24})
    for (int64_t run : {0, 1, 5, 6, 12, 13, 24, 40}) {
      Case plain{m,   33, 37, false, false, 128, {0}, Int8GemmOutput::Float,
                 true};
      plain.runRows = run;
      check(plain, seed++);
      Case sums{m, 20, 9, true, true, 5, {130}, Int8GemmOutput::U8};
      sums.runRows = run;
      check(sums, seed++);
    }
}

TEST_CASE("int8 gemm: bad specs are errors", "[avx512][int8]") {
  Int8GemmSpec spec;
  spec.name = "q";
  spec.m = 2;
  spec.n = 3;
  spec.k = -1;
  std::vector<uint8_t> code;
  Status s = generateInt8Gemm(spec, code);
  CHECK(s.failed());
  CHECK(s.message().find("q: int8 gemm sizes") == 0);
  spec.k = 4;
  spec.epilogue.push_back(EltwiseOp{});
  CHECK(generateInt8Gemm(spec, code).message() ==
        "q: a residual and epilogue ops need a float output");
  spec.epilogue.clear();
  spec.k = 20;
  spec.lda = 16;
  spec.aBlockStride = 64;
  CHECK(generateInt8Gemm(spec, code)
            .message()
            .find("q: blocked A needs K (20) a multiple of 16") == 0);
  spec.lda = spec.aBlockStride = 0;
  spec.amx = spec.runTimeM = true;
  CHECK(generateInt8Gemm(spec, code).message() ==
        "q: the AMX kernel takes no run-time M");
}

namespace {

/// The bf16 kernel (Int8GemmSpec::bf16) against sums in double of the
/// bf16-rounded operands: f32 accumulation, so within 1e-5 of the sum of
/// the products' magnitudes. A bf16 at run time, C f32 (+ bias, residual).
/// runRows as Case's: >= 0 for a kernel of a run-time M called for that
/// many rows.
void checkBf16(int64_t m, int64_t n, int64_t k, bool residual, uint32_t seed,
               bool amx = false, int64_t runRows = -1) {
  INFO("bf16 M=" << m << " N=" << n << " K=" << k << " residual=" << residual
                 << " amx=" << amx << " runRows=" << runRows);
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0, 1);
  auto bf16 = [](float v) {
    uint32_t bits = uint32_t(toBf16(v)) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  };
  std::vector<float> a(m * k), b(k * n), bias(n), r(m * n);
  for (float &v : a)
    v = d(rng);
  for (float &v : b)
    v = d(rng);
  for (float &v : bias)
    v = d(rng);
  for (float &v : r)
    v = d(rng);
  std::vector<uint16_t> aBf16(m * k);
  for (size_t i = 0; i < a.size(); ++i)
    aBf16[i] = toBf16(a[i]);
  PackedInt8B packed = packBf16B(b.data(), k, n, {}, bias);
  Int8GemmSpec spec;
  spec.bf16 = true;
  spec.amx = amx;
  spec.m = m;
  spec.n = n;
  spec.k = k;
  spec.output = Int8GemmOutput::Float;
  spec.residual = residual;
  spec.runTimeM = runRows >= 0;
  const int64_t rows = runRows >= 0 ? std::min(runRows, m) : m;
  std::vector<uint8_t> code = generateCode(generateInt8Gemm, spec);
  ExecutableBuffer exec(code);
  REQUIRE(exec.ok());
  GuardedArray<uint16_t> ga(aBf16);
  GuardedArray<int8_t> gb(packed.panels);
  GuardedArray<uint8_t> gcol(packed.columnData);
  GuardedArray<float> gc(std::vector<float>(m * n, -7.0f));
  GuardedArray<float> gr(r);
  REQUIRE((ga.ok() && gb.ok() && gcol.ok() && gc.ok() && gr.ok()));
  mlcc_int8_gemm_args args{ga.data(),
                           gb.data(),
                           gcol.data(),
                           gc.data(),
                           residual ? gr.data() : nullptr,
                           0,
                           runRows};
  exec.function<mlcc_int8_gemm_kernel_fn>()(&args);
  std::vector<float> out = gc.values();
  int mismatches = 0;
  for (int64_t i = rows; i < m; ++i) // past a run-time M: not written
    for (int64_t j = 0; j < n; ++j)
      if (out[i * n + j] != -7.0f && ++mismatches <= 5)
        UNSCOPED_INFO("row " << i << " past the run's " << rows
                             << " was written");
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = bias[j] + (residual ? r[i * n + j] : 0.0), mag = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        double p = double(bf16(a[i * k + kk])) * bf16(b[kk * n + j]);
        want += p;
        mag += std::fabs(p);
      }
      if (!(std::fabs(out[i * n + j] - want) <= 1e-5 * mag + 1e-5) &&
          ++mismatches <= 5)
        UNSCOPED_INFO("(" << i << ", " << j << "): got " << out[i * n + j]
                          << ", want " << want);
    }
  CHECK(mismatches == 0);
}

} // namespace

TEST_CASE("bf16 gemm: every tail, bias and residual", "[avx512][bf16]") {
  MLCC_SKIP_WITHOUT("avx512bf16", "avx512_bf16");
  uint32_t seed = 400;
  for (int64_t m : {1, 2, 5, 6, 13})
    for (int64_t n : {1, 16, 17, 70})
      for (int64_t k : {1, 2, 3, 8, 33})
        checkBf16(m, n, k, (m + n + k) % 2 == 0, seed++);
  for (int64_t m : {2, 13})
    for (int64_t run : {0, 1, 5, 6, 13, 20})
      checkBf16(m, 33, 35, run % 2 == 0, seed++, /*amx=*/false, run);
}

// The AMX kernels: M around the 16-row tiles and 32-row blocks (a tail
// block of one or two tiles), N around the 16-column panels and 2-panel
// blocks, K around the 64-byte tile step (no step, a K tail of 1-3 bytes
// past whole steps).
TEST_CASE("amx int8 gemm: every tail and output", "[avx512][int8][amx]") {
  MLCC_SKIP_WITHOUT_AMX("amx-int8", "amx_int8");
  uint32_t seed = 500;
  for (int64_t m : {1, 15, 16, 17, 32, 33, 50, 70})
    for (int64_t n : {1, 16, 17, 33, 70})
      for (int64_t k : {3, 64, 65, 130, 256}) {
        Case c{m, n, k, false, false, 0, {0}, Int8GemmOutput::Int32};
        c.amx = true;
        check(c, seed++);
      }
  for (int64_t m : {7, 33, 64})
    for (int64_t k : {63, 128, 199}) {
      auto amx = [](Case c) {
        c.amx = true;
        return c;
      };
      check(amx({m, 40, k, false, false, 117, {0}, Int8GemmOutput::Int32}),
            seed++);
      check(amx({m, 40, k, true, false, -9, {0}, Int8GemmOutput::Int32}),
            seed++);
      check(amx({m, 33, k, true, true, 5, {128}, Int8GemmOutput::U8}), seed++);
      check(amx({m, 50, k, false, false, 7, {0}, Int8GemmOutput::S8, false,
                 -3}),
            seed++);
      check(amx({m, 20, k, true, false, 3, {0}, Int8GemmOutput::Float, true}),
            seed++);
    }
}

TEST_CASE("amx int8 gemm: blocked C", "[avx512][int8][amx]") {
  MLCC_SKIP_WITHOUT_AMX("amx-int8", "amx_int8");
  // Dense A (a gathered patch matrix) into NCHW16c C, as the convs run.
  uint32_t seed = 600;
  for (int64_t m : {9, 49, 100})
    for (int64_t n : {16, 24, 64}) {
      Case c{m, n, 144, false, false, 3, {0}, Int8GemmOutput::Float, true};
      c.blocked = c.denseA = c.amx = true;
      check(c, seed++);
    }
}

TEST_CASE("amx bf16 gemm: every tail, bias and residual",
          "[avx512][bf16][amx]") {
  MLCC_SKIP_WITHOUT_AMX("amx-bf16", "amx_bf16");
  uint32_t seed = 700;
  for (int64_t m : {1, 16, 17, 33, 70})
    for (int64_t n : {1, 16, 17, 70})
      for (int64_t k : {1, 32, 33, 64, 97})
        checkBf16(m, n, k, (m + n + k) % 2 == 0, seed++, /*amx=*/true);
}

TEST_CASE("int8 and bf16 gemm: single-thread GOP/s, VNNI against AMX",
          "[avx512][int8][.perf]") {
  MLCC_SKIP_WITHOUT("avx512vnni", "avx512_vnni");
  const bool amx = __builtin_cpu_supports("amx-int8") &&
                   __builtin_cpu_supports("amx-bf16") &&
                   syscall(SYS_arch_prctl, 0x1023, 18) == 0;
  struct Shape {
    const char *name;
    int64_t m, n, k;
  };
  for (const Shape &s : {Shape{"BERT qkv s128", 128, 768, 768},
                         Shape{"BERT ffn1 s128", 128, 3072, 768},
                         Shape{"ResNet-50 3x3 64@56", 3136, 64, 576},
                         Shape{"ResNet-50 3x3 256@14", 196, 256, 2304},
                         Shape{"MLP batch 1", 1, 1024, 1024}})
    for (bool bf16 : {false, true})
      for (bool tiles : {false, true}) {
        if (tiles && !amx)
          continue;
        std::vector<int32_t> b(s.k * s.n, 3);
        std::vector<float> bf(s.k * s.n, 0.5f);
        PackedInt8B packed =
            bf16 ? packBf16B(bf.data(), s.k, s.n, {}, {})
                 : packInt8B(b.data(), s.k, s.n, false, {0}, 0, false, {}, {});
        Int8GemmSpec spec;
        spec.m = s.m;
        spec.n = s.n;
        spec.k = s.k;
        spec.bf16 = bf16;
        spec.amx = tiles;
        spec.output = Int8GemmOutput::Float;
        std::vector<uint8_t> code = generateCode(generateInt8Gemm, spec);
        ExecutableBuffer exec(code);
        REQUIRE(exec.ok());
        std::vector<uint8_t> a(s.m * s.k * (bf16 ? 2 : 1), 1);
        std::vector<float> c(s.m * s.n);
        mlcc_int8_gemm_args args{a.data(), packed.panels.data(),
                                 packed.columnData.data(), c.data(), nullptr};
        auto fn = exec.function<mlcc_int8_gemm_kernel_fn>();
        double best = 1e30;
        for (int rep = 0; rep < 7; ++rep) {
          const int iters = 10;
          auto t0 = std::chrono::steady_clock::now();
          for (int i = 0; i < iters; ++i)
            fn(&args);
          auto t1 = std::chrono::steady_clock::now();
          best = std::min(
              best, std::chrono::duration<double>(t1 - t0).count() / iters);
        }
        WARN(s.name << (bf16 ? " bf16" : " int8") << (tiles ? " amx" : "")
                    << ": " << 2.0 * s.m * s.n * s.k / best * 1e-9
                    << " GOP/s (" << best * 1e6 << " us)");
      }
  if (!amx)
    WARN("SKIPPED the AMX figures: this CPU or Linux gives no AMX");
}
