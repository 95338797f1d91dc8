//===- WinogradKernelTest.cpp - Winograd F(m x m, r x r) vs reference ---===//
//
// The whole conv as WinogradConv.cpp runs it, as F(2x2, 3x3), F(4x4, 3x3)
// and F(2x2, 5x5): the input transform, a GEMM per position on the
// transformed and packed weights, the output transform with bias, residual
// and activation; against the reference fused_conv. Shapes cover even and
// odd outputs (a last tile of one row or column), pads of 0 to r - 1 on
// each side, tiles wholly in the pads, channel counts past whole
// blocks on both sides, batches, and planes wide enough for the row and
// column loops. The input's and residual's padding lanes hold NaN (the
// GEMMs must not read them); Y's must come out 0.
//
//===----------------------------------------------------------------------===//

#include "Conv.h"
#include "ExecutableBuffer.h"
#include "Gemm.h"
#include "KernelABI.h"
#include "KernelTestSupport.h"
#include "Winograd.h"

#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace mlcc;
using namespace mlcc::avx512;
using namespace mlcc::test;

namespace {

struct Case {
  int64_t n, c, h, w, oc;
  int64_t pads[4];
  bool bias = false, residual = false;
  const char *activation = "none";
  int64_t m = 2, r = 3;
};

/// x [N, C, H, W] in NCHW16c, NaN in the padding lanes.
std::vector<float> blocked(const std::vector<float> &x, int64_t n, int64_t c,
                           int64_t h, int64_t w) {
  std::vector<float> b(static_cast<size_t>(blockedSize(n, c, h, w)),
                       std::numeric_limits<float>::quiet_NaN());
  std::vector<float> tmp(b.size());
  reorderNCHWtoNCHW16c(x.data(), n, c, h, w, tmp.data());
  const int64_t cb = convBlocks(c);
  for (int64_t i = 0; i < n * cb * h * w * kConvBlock; ++i)
    if ((i / (h * w * kConvBlock) % cb) * kConvBlock + i % kConvBlock < c)
      b[i] = tmp[i];
  return b;
}

/// With bandRows, the conv runs as bands of that many tile rows (one
/// image), each its own conv (winogradBand) on the same X, Y and Z.
void checkTile(const Case &k, int64_t bandRows = 0) {
  WinogradSpec spec;
  spec.n = k.n;
  spec.c = k.c;
  spec.h = k.h;
  spec.w = k.w;
  spec.oc = k.oc;
  spec.m = k.m;
  spec.r = k.r;
  std::copy(k.pads, k.pads + 4, spec.pads);
  spec.bias = k.bias;
  spec.residual = k.residual;
  if (std::string(k.activation) == "relu")
    spec.epilogue.push_back(EltwiseOp::unary(EltwiseKind::Relu));
  else if (std::string(k.activation) == "sigmoid")
    spec.epilogue.push_back(EltwiseOp::unary(EltwiseKind::Sigmoid));
  const int64_t oh = spec.outH(), ow = spec.outW();
  const int64_t cp = convBlocks(k.c) * 16, ocp = convBlocks(k.oc) * 16;
  INFO("F(" << k.m << ", " << k.r << ") N=" << k.n << " C=" << k.c
            << " H=" << k.h << " W=" << k.w << " OC=" << k.oc << " pads "
            << k.pads[0] << "," << k.pads[1] << "," << k.pads[2] << ","
            << k.pads[3] << " bias=" << k.bias << " residual=" << k.residual
            << " act=" << k.activation << " bands of " << bandRows
            << " tile rows");

  std::vector<float> x = randomValues(k.n * k.c * k.h * k.w, 21);
  std::vector<float> w = randomValues(k.oc * k.c * k.r * k.r, 22);
  std::vector<float> bias =
      k.bias ? randomValues(k.oc, 23) : std::vector<float>{};
  std::vector<float> z = randomValues(k.n * k.oc * oh * ow, 24);

  std::vector<float> u;
  transformWinogradWeights(w.data(), k.oc, k.c, ocp, k.m, k.r, u);
  std::vector<float> packedU;
  for (int64_t xi = 0; xi < spec.positions(); ++xi) {
    std::vector<float> packed;
    packB(u.data() + xi * k.c * ocp, k.c, ocp, ocp, false, packed);
    packedU.insert(packedU.end(), packed.begin(), packed.end());
  }
  const int64_t packedFloats = packedBSize(k.c, ocp);
  GuardedArray<float> gx(blocked(x, k.n, k.c, k.h, k.w));
  GuardedArray<float> gz(blocked(z, k.n, k.oc, oh, ow));
  GuardedArray<float> gbias(bias);
  GuardedArray<float> y(static_cast<size_t>(blockedSize(k.n, k.oc, oh, ow)));
  REQUIRE((gx.ok() && gz.ok() && gbias.ok() && y.ok()));

  // The conv `part` (the whole one or a band of it) from X, Z and Y at
  // those addresses.
  auto run = [&](const WinogradSpec &part, const float *xAt, float *yAt,
                 const float *zAt) {
    ExecutableBuffer in(generateCode(generateWinogradInput, part));
    ExecutableBuffer out(generateCode(generateWinogradOutput, part));
    GemmSpec gemm;
    gemm.m = part.tiles();
    gemm.n = ocp;
    gemm.k = k.c;
    gemm.lda = cp;
    ExecutableBuffer product(generateCode(generateGemm, gemm));
    REQUIRE((in.ok() && out.ok() && product.ok()));
    const int64_t positions = part.positions(), tiles = part.tiles();
    GuardedArray<float> v(static_cast<size_t>(positions * tiles * cp));
    GuardedArray<float> m(static_cast<size_t>(positions * tiles * ocp));
    REQUIRE((v.ok() && m.ok()));
    mlcc_winograd_args args = {xAt, v.data(), nullptr, nullptr};
    in.function<mlcc_winograd_kernel_fn>()(&args);
    for (int64_t xi = 0; xi < positions; ++xi) {
      mlcc_gemm_args g = {};
      g.a = v.data() + xi * tiles * cp;
      g.packed_b = packedU.data() + xi * packedFloats;
      g.c = m.data() + xi * tiles * ocp;
      product.function<mlcc_gemm_kernel_fn>()(&g);
    }
    args = {m.data(), yAt, k.bias ? gbias.data() : nullptr,
            k.residual ? zAt : nullptr};
    out.function<mlcc_winograd_kernel_fn>()(&args);
  };
  if (bandRows == 0) {
    run(spec, gx.data(), y.data(), gz.data());
  } else {
    for (int64_t r0 = 0; r0 < spec.tileRows(); r0 += bandRows) {
      int64_t firstRow;
      WinogradSpec band = winogradBand(
          spec, r0, std::min(spec.tileRows(), r0 + bandRows), firstRow);
      const int64_t yRow = r0 * k.m * ow * kConvBlock;
      run(band, gx.data() + firstRow * k.w * kConvBlock, y.data() + yRow,
          gz.data() + yRow);
    }
  }
  std::vector<float> got = y.values();

  std::vector<ref::Tensor> inputs = {
      ref::Tensor::fromBytes(DType::F32, {k.n, k.c, k.h, k.w}, x.data()),
      ref::Tensor::fromBytes(DType::F32, {k.oc, k.c, k.r, k.r}, w.data()),
      k.bias ? ref::Tensor::fromBytes(DType::F32, {k.oc}, bias.data())
             : ref::Tensor(),
      k.residual
          ? ref::Tensor::fromBytes(DType::F32, {k.n, k.oc, oh, ow}, z.data())
          : ref::Tensor()};
  ref::Attrs attrs = {{"pads", std::vector<int64_t>(k.pads, k.pads + 4)},
                      {"activation", std::string(k.activation)}};
  std::vector<float> want = runReference("fused_conv", attrs, inputs);
  REQUIRE(static_cast<int64_t>(want.size()) == k.n * k.oc * oh * ow);

  // Inputs and weights are in [-1, 1): the products' magnitudes add up to
  // at most r^2 C; the transforms' rounding is a few ulps of that.
  const double tol = 2e-6 * k.r * k.r * k.c;
  const int64_t ocb = convBlocks(k.oc), plane = oh * ow;
  int bad = 0;
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t o = 0; o < ocb * 16; ++o)
      for (int64_t p = 0; p < plane; ++p) {
        float g = got[((n * ocb + o / 16) * plane + p) * 16 + o % 16];
        if (o >= k.oc) {
          if (g != 0.0f && bad++ < 5)
            FAIL_CHECK("padding lane " << o << " at " << p << " is " << g);
          continue;
        }
        double want1 = want[(n * k.oc + o) * plane + p];
        if (!(std::fabs(g - want1) <= tol) && bad++ < 5)
          FAIL_CHECK("Y[" << n << "][" << o << "] pixel " << p << " = " << g
                          << ", want " << want1);
      }
  CHECK(bad == 0);
}

/// Both tile sizes of a 3x3 window.
void check(Case k) {
  for (int64_t m : {2, 4}) {
    k.m = m;
    checkTile(k);
  }
}

/// F(2x2, 5x5).
void check5(Case k, int64_t bandRows = 0) {
  k.m = 2;
  k.r = 5;
  checkTile(k, bandRows);
}

} // namespace

TEST_CASE("winograd: even and odd outputs, pads 0 to 2",
          "[lowering][avx512][winograd]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t h : {1, 2, 5, 8})
    for (int64_t w : {3, 6, 9}) {
      check({1, 16, h, w, 16, {1, 1, 1, 1}});
      check({1, 16, h + 2, w, 16, {0, 0, 0, 0}});
      check({1, 16, h, w + 1, 16, {2, 2, 2, 2}});
    }
  check({1, 32, 7, 9, 32, {0, 1, 2, 0}});
  check({1, 32, 6, 6, 32, {2, 0, 1, 2}});
}

TEST_CASE("winograd: channels past whole blocks, batches",
          "[lowering][avx512][winograd]") {
  MLCC_REQUIRE_AVX512F();
  check({1, 33, 10, 10, 17, {1, 1, 1, 1}});
  check({2, 40, 6, 5, 20, {1, 1, 1, 1}});
  check({3, 17, 4, 4, 48, {1, 1, 1, 1}});
}

TEST_CASE("winograd: bias, residual and activations",
          "[lowering][avx512][winograd]") {
  MLCC_REQUIRE_AVX512F();
  for (const char *act : {"none", "relu", "sigmoid"}) {
    check({1, 32, 9, 9, 24, {1, 1, 1, 1}, true, false, act});
    check({2, 32, 8, 7, 40, {1, 1, 1, 1}, true, true, act});
    check({1, 16, 5, 6, 16, {0, 0, 1, 1}, false, true, act});
  }
}

TEST_CASE("winograd: planes with row and column loops",
          "[lowering][avx512][winograd]") {
  MLCC_REQUIRE_AVX512F();
  check({1, 64, 28, 28, 64, {1, 1, 1, 1}, true, true, "relu"});
  check({1, 32, 15, 21, 32, {1, 1, 1, 1}, true, false, "relu"});
}

TEST_CASE("winograd: bands of tile rows", "[lowering][avx512][winograd]") {
  MLCC_REQUIRE_AVX512F();
  // Every band partition of images with pads 0 to 2, including a last band
  // of one output row after a band that reads past the image (bottom pad 2).
  for (int64_t m : {2, 4})
    for (int64_t rows : {1, 2, 3}) {
      Case k = {1, 16, 13, 9, 16, {1, 1, 1, 1}, true, true, "relu"};
      k.m = m;
      checkTile(k, rows);
      k = {1, 20, 11, 10, 33, {2, 0, 2, 1}, true, false, "none"};
      k.m = m;
      checkTile(k, rows);
      k = {1, 32, 14, 14, 16, {0, 2, 0, 2}, false, true, "sigmoid"};
      k.m = m;
      checkTile(k, rows);
    }
}

TEST_CASE("winograd: 5x5 windows", "[lowering][avx512][winograd]") {
  MLCC_REQUIRE_AVX512F();
  // Even and odd outputs, pads 0 to 4, tiles wholly in the pads.
  for (int64_t h : {1, 2, 5, 8})
    for (int64_t w : {3, 6, 9}) {
      check5({1, 16, h, w, 16, {2, 2, 2, 2}});
      check5({1, 16, h + 4, w + 4, 16, {0, 0, 0, 0}});
      check5({1, 16, h, w, 16, {4, 3, 3, 4}});
    }
  check5({1, 32, 7, 9, 32, {0, 1, 2, 0}});
  // Channels past whole blocks, batches, bias, residual and activations,
  // planes with row and column loops.
  check5({1, 33, 10, 10, 17, {2, 2, 2, 2}});
  check5({2, 40, 6, 5, 20, {2, 2, 2, 2}, true, true, "relu"});
  check5({1, 32, 9, 9, 24, {2, 2, 2, 2}, true, false, "sigmoid"});
  check5({1, 16, 5, 6, 16, {1, 0, 1, 3}, false, true, "none"});
  check5({1, 32, 32, 32, 32, {2, 2, 2, 2}, true, false, "relu"});
  // Bands, as on several threads.
  for (int64_t rows : {1, 2, 3}) {
    check5({1, 16, 13, 9, 16, {2, 2, 2, 2}, true, true, "relu"}, rows);
    check5({1, 20, 11, 10, 33, {4, 0, 3, 1}, true, false, "none"}, rows);
  }
}

TEST_CASE("winograd: bad specs are errors", "[lowering][avx512][winograd]") {
  std::vector<uint8_t> code = {1};
  WinogradSpec spec;
  spec.name = "wconv";
  spec.c = spec.oc = 16;
  spec.h = spec.w = 4;
  spec.pads[2] = 3;
  ref::Status s = generateWinogradInput(spec, code);
  CHECK_FALSE(s.ok());
  CHECK(code.empty());
  CHECK(s.message().find("wconv") != std::string::npos);
  spec.pads[2] = 0;
  spec.h = 2; // no room for the window
  CHECK_FALSE(generateWinogradOutput(spec, code).ok());
  spec.h = spec.w = 8;
  spec.r = 5;
  spec.m = 4; // F(4x4, 5x5) is not one of them
  s = generateWinogradInput(spec, code);
  CHECK_FALSE(s.ok());
  CHECK(s.message().find("F(4x4, 5x5)") != std::string::npos);
  spec.m = 2;
  spec.pads[0] = 4; // pads up to 4 with a 5x5 window
  CHECK(generateWinogradInput(spec, code).ok());
  spec.pads[0] = 5;
  CHECK_FALSE(generateWinogradInput(spec, code).ok());
}
