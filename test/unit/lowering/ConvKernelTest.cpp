//===- ConvKernelTest.cpp - Tests of the AVX-512 conv kernels -------------===//
//
// Generates conv kernels, maps their bytes executable and runs them on
// blocked (NCHW16c) input and packed weights. The oracle is the reference
// "conv" kernel (compiler/Reference) on the plain NCHW tensors, with relu
// applied to its output; the kernel's output is reordered back to NCHW to
// compare. Kernels with a residual and an activation are compared with the
// reference "fused_conv" (conv, add, then the activation's kernel). X's padding
// lanes hold NaN, so a kernel that reads them fails; Y's must come out 0.
// Inputs, weights, bias and output end at an unmapped page, so a kernel that
// touches one element too many faults.
//
// Tolerance: the kernel sums C * KH * KW products of values in [-1, 1) in a
// different order than the reference, so
//   |kernel - reference| <= 1e-5 * C * KH * KW
// (f32 rounding is 6e-8 per add; the bound leaves a wide margin yet catches
// any wrong or missing term, which is of order 1).
//
// The [.perf] case measures single-thread GFLOP/s on ResNet-50 layers and
// MobileNetV2's depthwise ones; it is hidden from the default run.
//
//===----------------------------------------------------------------------===//

#include "Conv.h"
#include "ExecutableBuffer.h"
#include "JitGenerator.h"
#include "KernelABI.h"
#include "KernelTestSupport.h"

#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace mlcc;
using namespace mlcc::avx512;
using namespace mlcc::test;

namespace {

constexpr float kSentinel = -12345.0f;

std::vector<uint8_t> generate(const ConvSpec &spec) {
  return generateCode(generateConv, spec);
}

/// Plain NCHW x to NCHW16c with NaN in the padding lanes.
std::vector<float> blockInput(const ConvSpec &spec,
                              const std::vector<float> &x) {
  std::vector<float> b(
      static_cast<size_t>(blockedSize(spec.n, spec.c, spec.h, spec.w)));
  reorderNCHWtoNCHW16c(x.data(), spec.n, spec.c, spec.h, spec.w, b.data());
  const int64_t cb = convBlocks(spec.c);
  for (int64_t n = 0; n < spec.n; ++n)
    for (int64_t ch = spec.c; ch < cb * kConvBlock; ++ch)
      for (int64_t p = 0; p < spec.h * spec.w; ++p)
        b[((n * cb + ch / 16) * spec.h * spec.w + p) * 16 + ch % 16] =
            std::numeric_limits<float>::quiet_NaN();
  return b;
}

/// Runs `code` and returns the NCHW16c output, padding lanes included. `zb`
/// is the blocked residual of a kernel generated with one.
std::vector<float> runCode(const std::vector<uint8_t> &code,
                           const ConvSpec &spec, const std::vector<float> &xb,
                           const std::vector<float> &packed,
                           const std::vector<float> &bias, size_t offset = 0,
                           const std::vector<float> &zb = {}) {
  int64_t oh = 0, ow = 0;
  REQUIRE(convOutputSize(spec, oh, ow).ok());
  if (spec.dstFrame[0] != 0) {
    oh = spec.dstFrame[0];
    ow = spec.dstFrame[1];
  }
  ExecutableBuffer exec(code, offset);
  REQUIRE(exec.ok());
  GuardedArray<float> gx(xb), gw(packed), gbias(bias), gz(zb);
  GuardedArray<float> gy(std::vector<float>(
      static_cast<size_t>(blockedSize(spec.n, spec.oc, oh, ow)), kSentinel));
  REQUIRE((gx.ok() && gw.ok() && gbias.ok() && gy.ok() && gz.ok()));
  mlcc_conv_args args = {};
  args.src = gx.data();
  args.weights = gw.data();
  args.bias = bias.empty() ? nullptr : gbias.data();
  args.dst = gy.data();
  args.residual = zb.empty() ? nullptr : gz.data();
  exec.function<mlcc_conv_kernel_fn>()(&args);
  return gy.values();
}

/// The reference conv on plain NCHW tensors.
std::vector<float> refConv(const ConvSpec &spec, const std::vector<float> &x,
                           const std::vector<float> &w,
                           const std::vector<float> &bias) {
  std::vector<ref::Tensor> in = {
      ref::Tensor::fromBytes(DType::F32, {spec.n, spec.c, spec.h, spec.w},
                             x.data()),
      ref::Tensor::fromBytes(
          DType::F32,
          {spec.oc, spec.c / spec.group, spec.kernel[0], spec.kernel[1]},
          w.data())};
  if (!bias.empty())
    in.push_back(ref::Tensor::fromBytes(DType::F32, {spec.oc}, bias.data()));
  ref::Attrs attrs = {
      {"strides", std::vector<int64_t>{spec.strides[0], spec.strides[1]}},
      {"dilations", std::vector<int64_t>{spec.dilations[0], spec.dilations[1]}},
      {"pads", std::vector<int64_t>{spec.pads[0], spec.pads[1], spec.pads[2],
                                    spec.pads[3]}},
      {"group", spec.group}};
  return runReference("conv", attrs, in);
}

struct Case {
  int64_t n = 1, c = 16, h = 8, w = 8, oc = 16;
  int64_t k = 3, stride = 1, pad = 0, dilation = 1;
  bool bias = false, relu = false;
  int blockWidth = 0;
  bool depthwise = false; // group = C, OC = C
};

ConvSpec specOf(const Case &c) {
  ConvSpec spec;
  spec.n = c.n;
  spec.c = c.c;
  spec.h = c.h;
  spec.w = c.w;
  spec.oc = c.oc;
  spec.kernel[0] = spec.kernel[1] = c.k;
  spec.strides[0] = spec.strides[1] = c.stride;
  spec.dilations[0] = spec.dilations[1] = c.dilation;
  for (int64_t &p : spec.pads)
    p = c.pad;
  spec.bias = c.bias;
  spec.blockWidth = c.blockWidth;
  if (c.depthwise) {
    spec.group = c.c;
    spec.oc = c.c;
  }
  if (c.relu)
    spec.epilogue.push_back(EltwiseOp::unary(EltwiseKind::Relu));
  return spec;
}

/// Generates, runs and compares one spec.
void check(const ConvSpec &spec, size_t offset = 0) {
  INFO("N=" << spec.n << " C=" << spec.c << " H=" << spec.h << " W=" << spec.w
            << " OC=" << spec.oc << " K=" << spec.kernel[0] << "x"
            << spec.kernel[1] << " s=" << spec.strides[0] << ","
            << spec.strides[1] << " p=" << spec.pads[0] << "," << spec.pads[1]
            << "," << spec.pads[2] << "," << spec.pads[3]
            << " d=" << spec.dilations[0] << "," << spec.dilations[1]
            << " bias=" << spec.bias << " ops=" << spec.epilogue.size()
            << " blockWidth=" << spec.blockWidth
            << " plainInput=" << spec.plainInput);
  const int64_t kh = spec.kernel[0], kw = spec.kernel[1];
  const int64_t cg = spec.c / spec.group; // input channels per output
  std::vector<float> x = randomValues(spec.n * spec.c * spec.h * spec.w, 1);
  std::vector<float> w = randomValues(spec.oc * cg * kh * kw, 2);
  // Paired groups: a dense 16 x 16 conv whose weights are zero between the
  // two halves of 8 channels (the kernel never reads those).
  for (int64_t o = 0; spec.pairedGroups && o < spec.oc; ++o)
    for (int64_t i = 0; i < cg; ++i)
      if (o / 8 != i / 8)
        std::fill_n(w.begin() + (o * cg + i) * kh * kw, kh * kw, 0.0f);
  std::vector<float> bias =
      spec.bias ? randomValues(spec.oc, 3) : std::vector<float>{};
  std::vector<float> packed;
  if (spec.group == 1) {
    packConvWeights(w.data(), spec.oc, spec.c, kh, kw, packed);
    REQUIRE(static_cast<int64_t>(packed.size()) ==
            packedConvWeightsSize(spec.oc, spec.c, kh, kw));
  } else {
    packDepthwiseConvWeights(w.data(), spec.c, kh, kw, packed);
    REQUIRE(static_cast<int64_t>(packed.size()) ==
            packedDepthwiseConvWeightsSize(spec.c, kh, kw));
  }

  std::vector<float> want = refConv(spec, x, w, bias);
  std::vector<float> got =
      runCode(generate(spec), spec, spec.plainInput ? x : blockInput(spec, x),
              packed, bias, offset);
  int64_t oh = 0, ow = 0;
  REQUIRE(convOutputSize(spec, oh, ow).ok());
  REQUIRE(static_cast<int64_t>(want.size()) == spec.n * spec.oc * oh * ow);

  const bool relu = !spec.epilogue.empty();
  const double tol = 1e-5 * cg * kh * kw;
  const int64_t ocb = convBlocks(spec.oc), plane = oh * ow;
  int bad = 0;
  for (int64_t n = 0; n < spec.n; ++n)
    for (int64_t o = 0; o < ocb * kConvBlock; ++o)
      for (int64_t p = 0; p < plane; ++p) {
        float g = got[((n * ocb + o / 16) * plane + p) * 16 + o % 16];
        if (o >= spec.oc) { // padding lane
          if (g != 0.0f && bad++ < 5)
            FAIL_CHECK("padding lane " << o << " at " << p << " is " << g);
          continue;
        }
        double v = want[(n * spec.oc + o) * plane + p];
        if (relu)
          v = std::max(v, 0.0);
        if (!(std::fabs(g - v) <= tol) && bad++ < 5)
          FAIL_CHECK("Y[" << n << "][" << o << "] pixel " << p << " = " << g
                          << ", want " << v);
      }
  CHECK(bad == 0);
}

void check(const Case &c, size_t offset = 0) { check(specOf(c), offset); }

/// A graph.fused_conv activation: its attributes and the epilogue op.
struct Activation {
  const char *name;
  EltwiseOp op;
  float alpha = 0.0f, beta = 0.0f;
};

const Activation kActivations[] = {
    {"none", EltwiseOp()},
    {"relu", EltwiseOp::unary(EltwiseKind::Relu)},
    {"clip", EltwiseOp::clip(0.0f, 6.0f), 0.0f, 6.0f},
    {"leaky_relu", EltwiseOp::leakyRelu(0.1f), 0.1f},
    {"sigmoid", EltwiseOp::unary(EltwiseKind::Sigmoid)},
    {"tanh", EltwiseOp::unary(EltwiseKind::Tanh)},
    {"hard_swish", EltwiseOp::unary(EltwiseKind::HardSwish)},
    {"silu", EltwiseOp::unary(EltwiseKind::Silu)},
    {"gelu", EltwiseOp::unary(EltwiseKind::Gelu)},
};

/// Generates `spec` with a residual and `act`, runs it, and compares with
/// the reference graph.fused_conv (conv, add, then the activation's own
/// kernel). Z's padding lanes hold NaN: only its real lanes may be read.
/// Tolerance: the conv's bound above, times 1.5 (the steepest activation
/// slope, hard_swish's at x = 3), plus the activations' approximation
/// error (below 5e-7 relative, EltwiseInjector.h) with a margin.
void checkFused(ConvSpec spec, const Activation &act) {
  spec.residual = true;
  spec.epilogue.clear();
  if (std::string(act.name) != "none")
    spec.epilogue.push_back(act.op);
  INFO("N=" << spec.n << " C=" << spec.c << " H=" << spec.h << " W=" << spec.w
            << " OC=" << spec.oc << " K=" << spec.kernel[0] << "x"
            << spec.kernel[1] << " s=" << spec.strides[0] << " p="
            << spec.pads[0] << " group=" << spec.group << " bias=" << spec.bias
            << " activation=" << act.name << " blockWidth=" << spec.blockWidth);
  int64_t oh = 0, ow = 0;
  REQUIRE(convOutputSize(spec, oh, ow).ok());
  const int64_t kh = spec.kernel[0], kw = spec.kernel[1];
  const int64_t cg = spec.c / spec.group;
  std::vector<float> x = randomValues(spec.n * spec.c * spec.h * spec.w, 11);
  std::vector<float> w = randomValues(spec.oc * cg * kh * kw, 12);
  std::vector<float> bias =
      spec.bias ? randomValues(spec.oc, 13) : std::vector<float>{};
  std::vector<float> z = randomValues(spec.n * spec.oc * oh * ow, 14);
  std::vector<float> packed;
  if (spec.group == 1)
    packConvWeights(w.data(), spec.oc, spec.c, kh, kw, packed);
  else
    packDepthwiseConvWeights(w.data(), spec.c, kh, kw, packed);
  ConvSpec zSpec = spec; // Z blocked like Y, NaN in its padding lanes
  zSpec.c = spec.oc;
  zSpec.h = oh;
  zSpec.w = ow;
  std::vector<float> got = runCode(generate(spec), spec, blockInput(spec, x),
                                   packed, bias, 0, blockInput(zSpec, z));

  std::vector<ref::Tensor> in = {
      ref::Tensor::fromBytes(DType::F32, {spec.n, spec.c, spec.h, spec.w},
                             x.data()),
      ref::Tensor::fromBytes(DType::F32, {spec.oc, cg, kh, kw}, w.data()),
      spec.bias ? ref::Tensor::fromBytes(DType::F32, {spec.oc}, bias.data())
                : ref::Tensor(),
      ref::Tensor::fromBytes(DType::F32, {spec.n, spec.oc, oh, ow}, z.data())};
  ref::Attrs attrs = {
      {"strides", std::vector<int64_t>{spec.strides[0], spec.strides[1]}},
      {"dilations", std::vector<int64_t>{spec.dilations[0], spec.dilations[1]}},
      {"pads", std::vector<int64_t>{spec.pads[0], spec.pads[1], spec.pads[2],
                                    spec.pads[3]}},
      {"group", spec.group},
      {"activation", std::string(act.name)},
      {"activation_alpha", act.alpha},
      {"activation_beta", act.beta}};
  std::vector<float> want = runReference("fused_conv", attrs, in);
  REQUIRE(static_cast<int64_t>(want.size()) == spec.n * spec.oc * oh * ow);

  const double tol = 1.5e-5 * cg * kh * kw;
  const int64_t ocb = convBlocks(spec.oc), plane = oh * ow;
  int bad = 0;
  for (int64_t n = 0; n < spec.n; ++n)
    for (int64_t o = 0; o < ocb * kConvBlock; ++o)
      for (int64_t p = 0; p < plane; ++p) {
        float g = got[((n * ocb + o / 16) * plane + p) * 16 + o % 16];
        if (o >= spec.oc) {
          if (g != 0.0f && bad++ < 5)
            FAIL_CHECK("padding lane " << o << " at " << p << " is " << g);
          continue;
        }
        double v = want[(n * spec.oc + o) * plane + p];
        if (!(std::fabs(g - v) <= tol + 1e-6 * (1.0 + std::fabs(v))) &&
            bad++ < 5)
          FAIL_CHECK("Y[" << n << "][" << o << "] pixel " << p << " = " << g
                          << ", want " << v);
      }
  CHECK(bad == 0);
}

} // namespace

TEST_CASE("conv: 3x3 stride 1 and 2, pad 1", "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t w : {1, 7, 17, 56})
    for (int64_t stride : {1, 2}) {
      Case c;
      c.c = 32;
      c.oc = 48;
      c.h = 6;
      c.w = w;
      c.stride = stride;
      c.pad = 1;
      c.bias = true;
      c.relu = true;
      check(c);
    }
}

TEST_CASE("conv: 1x1 stride 1 and 2", "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t stride : {1, 2})
    for (int64_t w : {1, 7, 17, 56}) {
      Case c;
      c.k = 1;
      c.c = 64;
      c.oc = 32;
      c.h = 5;
      c.w = w;
      c.stride = stride;
      c.bias = stride == 1;
      check(c);
    }
}

TEST_CASE("conv: 7x7 stride 2 pad 3 stem, C = 3", "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  Case c;
  c.c = 3;
  c.oc = 64;
  c.h = 30;
  c.w = 32;
  c.k = 7;
  c.stride = 2;
  c.pad = 3;
  c.bias = true;
  c.relu = true;
  check(c);
}

// X read as it is in NCHW (a stem on a model input): channel counts below,
// at and past one block (a whole block then a tail, both strided by planes),
// batches (images C planes apart), strides, pads, dilation, block widths.
TEST_CASE("conv: plain NCHW input", "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  const std::pair<int64_t, int64_t> channels[] = {
      {1, 8}, {3, 64}, {4, 24}, {16, 16}, {19, 40}};
  for (auto [ci, co] : channels)
    for (int64_t stride : {1, 2}) {
      Case c;
      c.n = 2;
      c.c = ci;
      c.oc = co;
      c.h = 9;
      c.w = 13;
      c.stride = stride;
      c.pad = 1;
      c.bias = true;
      c.relu = true;
      ConvSpec spec = specOf(c);
      spec.plainInput = true;
      check(spec);
    }
  Case c;
  c.c = 3;
  c.oc = 64;
  c.h = 30;
  c.w = 32;
  c.k = 7;
  c.stride = 2;
  c.pad = 3;
  for (int width : {0, 1, 5, 14}) {
    ConvSpec spec = specOf(c);
    spec.plainInput = true;
    spec.blockWidth = width;
    check(spec);
  }
  c.k = 3;
  c.dilation = 2;
  ConvSpec spec = specOf(c);
  spec.plainInput = true;
  check(spec);
}

TEST_CASE("conv: 5x5 pad 2 and dilation 2", "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  Case c;
  c.c = 20;
  c.oc = 24;
  c.h = 9;
  c.w = 17;
  c.k = 5;
  c.pad = 2;
  c.bias = true;
  check(c);
  c.k = 3;
  c.dilation = 2;
  c.pad = 2;
  check(c);
  c.pad = 0;
  c.relu = true;
  check(c);
}

TEST_CASE("conv: channel counts that are not multiples of 16",
          "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  // A last block of at most 8 channels runs its FMAs on ymm halves; of 9 or
  // more, on whole zmm vectors, masked.
  const std::pair<int64_t, int64_t> channels[] = {
      {3, 8}, {20, 24}, {1, 1}, {16, 17}, {33, 50}, {17, 16}, {20, 25}, {5, 30}};
  for (auto [ci, co] : channels)
    for (int64_t w : {1, 7}) {
      Case c;
      c.c = ci;
      c.oc = co;
      c.h = 4;
      c.w = w;
      c.pad = 1;
      c.bias = true;
      c.relu = true;
      check(c);
    }
}

TEST_CASE("conv: batches, asymmetric pads and every block width",
          "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  Case c;
  c.n = 3;
  c.c = 18;
  c.oc = 40;
  c.h = 5;
  c.w = 19;
  c.pad = 1;
  c.bias = true;
  check(c);
  for (int width : {1, 3, 5, 14, 28}) {
    c.n = 2;
    c.oc = width == 28 ? 16 : 40; // 28 pixels only with one channel block
    c.blockWidth = width;
    check(c);
  }
  ConvSpec spec = specOf(Case{});
  spec.pads[0] = 2;
  spec.pads[1] = 0;
  spec.pads[2] = 0;
  spec.pads[3] = 3;
  spec.kernel[1] = 2;
  spec.strides[0] = 3;
  check(spec);
  // A pad wider than the window: border rows and pixels see only the bias.
  spec = specOf(Case{});
  spec.h = spec.w = 2;
  for (int64_t &p : spec.pads)
    p = 4;
  spec.bias = true;
  check(spec);
}

// Two halves of 8 channels in and out on ymm halves: strides, pads, widths
// past the 14 pixels a block holds, a 1x1 on two images.
TEST_CASE("conv: paired halves of 8 channels", "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t stride : {1, 2})
    for (int64_t w : {1, 9, 14, 29}) {
      Case c;
      c.c = 16;
      c.oc = 16;
      c.h = 6;
      c.w = w;
      c.stride = stride;
      c.pad = 1;
      c.bias = stride == 1;
      c.relu = true;
      ConvSpec spec = specOf(c);
      spec.pairedGroups = true;
      check(spec);
    }
  Case c;
  c.c = 16;
  c.oc = 16;
  c.k = 1;
  c.h = 3;
  c.w = 20;
  ConvSpec spec = specOf(c);
  spec.pairedGroups = true;
  spec.n = 2;
  check(spec);
}

TEST_CASE("conv: depthwise (group = C = OC)", "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t ch : {1, 16, 20, 32, 40, 29})
    for (int64_t w : {1, 7, 17, 56}) {
      Case c;
      c.depthwise = true;
      c.c = ch;
      c.h = 5;
      c.w = w;
      c.pad = 1;
      c.bias = true;
      c.relu = true;
      check(c);
    }
  Case c; // MobileNet's stride-2 5x5, batch 2, dilation
  c.depthwise = true;
  c.n = 2;
  c.c = 24;
  c.h = 11;
  c.w = 13;
  c.k = 5;
  c.stride = 2;
  c.pad = 2;
  c.bias = true;
  check(c);
  c.k = 3;
  c.stride = 1;
  c.dilation = 2;
  c.blockWidth = 4;
  check(c);
}

TEST_CASE("conv: residual and every activation, vs fused_conv",
          "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  // Two channel blocks and a masked third (OC = 40), odd C, widths with a
  // short last pixel block, both strides.
  for (const Activation &act : kActivations)
    for (int64_t w : {1, 7, 17})
      for (int64_t stride : {1, 2}) {
        Case c;
        c.c = 20;
        c.oc = 40;
        c.h = 5;
        c.w = w;
        c.stride = stride;
        c.pad = 1;
        c.bias = w != 7;
        checkFused(specOf(c), act);
      }
}

TEST_CASE("conv: residual with odd channels, 1x1, 7x7 and block widths",
          "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  const Activation &relu = kActivations[1], &silu = kActivations[7];
  const std::pair<int64_t, int64_t> channels[] = {
      {3, 1}, {16, 17}, {33, 50}, {17, 16}};
  for (auto [ci, co] : channels) {
    Case c;
    c.c = ci;
    c.oc = co;
    c.h = 4;
    c.w = 9;
    c.pad = 1;
    c.bias = true;
    checkFused(specOf(c), relu);
  }
  Case c; // ResNet's downsampling 1x1 stride 2, no bias
  c.k = 1;
  c.c = 33;
  c.oc = 17;
  c.h = 7;
  c.w = 13;
  c.stride = 2;
  checkFused(specOf(c), kActivations[0]);
  c = Case(); // the 7x7 stem shape, asymmetric work per row
  c.c = 3;
  c.oc = 64;
  c.h = 12;
  c.w = 15;
  c.k = 7;
  c.stride = 2;
  c.pad = 3;
  c.bias = true;
  checkFused(specOf(c), relu);
  c = Case(); // batches and every block width
  c.n = 2;
  c.c = 18;
  c.oc = 40;
  c.h = 4;
  c.w = 19;
  c.pad = 1;
  c.bias = true;
  for (int width : {1, 3, 5, 14, 28}) {
    c.oc = width == 28 ? 16 : 40;
    c.blockWidth = width;
    checkFused(specOf(c), silu);
  }
}

TEST_CASE("conv: depthwise with residual and activations",
          "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  for (const Activation &act : kActivations)
    for (int64_t ch : {1, 20, 40}) {
      Case c;
      c.depthwise = true;
      c.c = ch;
      c.h = 5;
      c.w = 17;
      c.pad = 1;
      c.bias = true;
      checkFused(specOf(c), act);
    }
  Case c; // MobileNet's stride-2 5x5, batch 2
  c.depthwise = true;
  c.n = 2;
  c.c = 24;
  c.h = 11;
  c.w = 13;
  c.k = 5;
  c.stride = 2;
  c.pad = 2;
  checkFused(specOf(c), kActivations[2]);
}

// Threads split a conv by bands of output rows (ConvRowBands.cpp): a band
// kernel must write exactly its rows, each as the whole kernel computes it
// (the same code per row, so bit for bit), and no other row.
TEST_CASE("conv: a band of rows", "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  struct BandCase {
    Case c;
    bool plain = false, residual = false;
  };
  std::vector<BandCase> cases;
  for (int64_t stride : {1, 2}) {
    Case c; // two output blocks, 3x3 pad 1
    c.c = 24;
    c.oc = 40;
    c.h = 13;
    c.w = 11;
    c.stride = stride;
    c.pad = 1;
    c.bias = true;
    c.relu = true;
    cases.push_back({c});
    c.depthwise = true;
    cases.push_back({c, false, true});
  }
  Case stem; // a 7x7 stride 2 stem on a plain input
  stem.c = 3;
  stem.oc = 32;
  stem.h = 23;
  stem.w = 20;
  stem.k = 7;
  stem.stride = 2;
  stem.pad = 3;
  cases.push_back({stem, true});
  for (const BandCase &bc : cases) {
    ConvSpec spec = specOf(bc.c);
    spec.plainInput = bc.plain;
    spec.residual = bc.residual;
    int64_t oh = 0, ow = 0;
    REQUIRE(convOutputSize(spec, oh, ow).ok());
    const int64_t cg = spec.c / spec.group;
    std::vector<float> x = randomValues(spec.c * spec.h * spec.w, 21);
    std::vector<float> xb = bc.plain ? x : blockInput(spec, x);
    std::vector<float> w = randomValues(spec.oc * cg * 9 * 9, 22);
    std::vector<float> bias = randomValues(spec.oc, 23);
    std::vector<float> z =
        bc.residual ? randomValues(blockedSize(1, spec.oc, oh, ow), 24)
                    : std::vector<float>{};
    std::vector<float> packed;
    if (spec.group == 1)
      packConvWeights(w.data(), spec.oc, spec.c, spec.kernel[0], spec.kernel[1],
                      packed);
    else
      packDepthwiseConvWeights(w.data(), spec.c, spec.kernel[0], spec.kernel[1],
                               packed);
    std::vector<float> whole =
        runCode(generate(spec), spec, xb, packed, bias, 0, z);
    const std::pair<int64_t, int64_t> bands[] = {
        {0, 1}, {0, 3}, {2, 5}, {oh - 2, oh}, {0, oh}};
    for (auto [first, end] : bands) {
      INFO("stride " << spec.strides[0] << " depthwise " << (spec.group != 1)
                     << " plain " << bc.plain << " rows [" << first << ", "
                     << end << ") of " << oh);
      ConvSpec part = spec;
      part.rowBand[0] = first;
      part.rowBand[1] = end;
      std::vector<float> got =
          runCode(generate(part), part, xb, packed, bias, 0, z);
      int bad = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        int64_t row = static_cast<int64_t>(i) / (ow * kConvBlock) % oh;
        float want = row >= first && row < end ? whole[i] : kSentinel;
        if (got[i] != want && bad++ < 5)
          FAIL_CHECK("element " << i << " (row " << row << ") is " << got[i]
                                << ", want " << want);
      }
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("conv: an output lattice", "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  Case dense; // two output blocks and a tail, 3x3 pad 1
  dense.c = 20;
  dense.oc = 40;
  dense.h = 9;
  dense.w = 11;
  dense.pad = 1;
  dense.bias = true;
  dense.relu = true;
  Case depthwise = dense;
  depthwise.depthwise = true;
  for (const Case &c : {dense, depthwise}) {
    ConvSpec spec = specOf(c);
    spec.residual = true;
    int64_t oh = 0, ow = 0;
    REQUIRE(convOutputSize(spec, oh, ow).ok());
    const int64_t cg = spec.c / spec.group;
    std::vector<float> x = randomValues(spec.c * spec.h * spec.w, 31);
    std::vector<float> xb = blockInput(spec, x);
    std::vector<float> w = randomValues(spec.oc * cg * 9, 32);
    std::vector<float> bias = randomValues(spec.oc, 33);
    std::vector<float> packed;
    if (spec.group == 1)
      packConvWeights(w.data(), spec.oc, spec.c, 3, 3, packed);
    else
      packDepthwiseConvWeights(w.data(), spec.c, 3, 3, packed);
    // Rows 2 apart from row 1, columns 3 apart from column 2, in a frame
    // one larger than the lattice needs; the residual laid out as Y.
    ConvSpec lattice = spec;
    lattice.dstStrides[0] = 2;
    lattice.dstStrides[1] = 3;
    lattice.dstOffsets[0] = 1;
    lattice.dstOffsets[1] = 2;
    lattice.dstFrame[0] = 1 + 2 * oh;
    lattice.dstFrame[1] = 3 + 3 * ow;
    const int64_t fh = lattice.dstFrame[0], fw = lattice.dstFrame[1];
    std::vector<float> zFrame =
        randomValues(blockedSize(1, spec.oc, fh, fw), 34);
    // The residual the whole conv reads: the frame's lattice pixels.
    std::vector<float> z(static_cast<size_t>(blockedSize(1, spec.oc, oh, ow)));
    const int64_t planes = convBlocks(spec.oc);
    auto frameAt = [&](int64_t cb, int64_t y, int64_t x) {
      return static_cast<size_t>(((cb * fh + y * 2 + 1) * fw + x * 3 + 2) *
                                 kConvBlock);
    };
    for (int64_t cb = 0; cb < planes; ++cb)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo)
          std::copy_n(
              &zFrame[frameAt(cb, y, xo)], kConvBlock,
              &z[static_cast<size_t>(((cb * oh + y) * ow + xo) * kConvBlock)]);
    std::vector<float> whole =
        runCode(generate(spec), spec, xb, packed, bias, 0, z);
    for (auto [first, end] : {std::pair<int64_t, int64_t>{0, 0}, {1, 3}}) {
      INFO("depthwise " << c.depthwise << " rows [" << first << ", " << end
                        << ")");
      ConvSpec part = lattice;
      part.rowBand[0] = first;
      part.rowBand[1] = end;
      std::vector<float> want(
          static_cast<size_t>(blockedSize(1, spec.oc, fh, fw)), kSentinel);
      for (int64_t cb = 0; cb < planes; ++cb)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t xo = 0; xo < ow; ++xo)
            if (end == 0 || (y >= first && y < end))
              std::copy_n(&whole[static_cast<size_t>(((cb * oh + y) * ow + xo) *
                                                     kConvBlock)],
                          kConvBlock, &want[frameAt(cb, y, xo)]);
      std::vector<float> got =
          runCode(generate(part), part, xb, packed, bias, 0, zFrame);
      int bad = 0;
      for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i] && bad++ < 5)
          FAIL_CHECK("element " << i << " is " << got[i] << ", want "
                                << want[i]);
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("conv: a chunk prefetching the next one's weights reads nothing "
          "of them",
          "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  // One group of output channels with few pixel blocks, as a thread's chunk
  // of ResNet-50's 7x7 layers: its prefetches reach past the weights, which
  // end at a guard page; the outputs must still be the reference's.
  for (int64_t oc : {16, 32, 40})
    for (int64_t k : {1, 3}) {
      Case c;
      c.c = 48;
      c.oc = oc;
      c.h = c.w = 14;
      c.k = k;
      c.stride = 2;
      c.pad = k / 2;
      c.bias = true;
      c.relu = true;
      ConvSpec spec = specOf(c);
      spec.nextWeightsFollow = true;
      check(spec);
    }
}

TEST_CASE("conv: N = 0 writes nothing", "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  ConvSpec spec = specOf(Case{});
  spec.n = 0;
  std::vector<uint8_t> code = generate(spec);
  ExecutableBuffer exec(code);
  REQUIRE(exec.ok());
  // src and weights null: any read faults. dst is one image of sentinels,
  // which must stay as they are, and the registers the ABI keeps too.
  int64_t oh = 0, ow = 0;
  REQUIRE(convOutputSize(spec, oh, ow).ok());
  std::vector<float> dst(static_cast<size_t>(blockedSize(1, spec.oc, oh, ow)),
                         kSentinel);
  mlcc_conv_args args = {};
  args.dst = dst.data();
  CalleeSavedChecker checker;
  CHECK(checker.run(&args, exec.address()) == 0);
  CHECK(std::count(dst.begin(), dst.end(), kSentinel) ==
        static_cast<std::ptrdiff_t>(dst.size()));
}

TEST_CASE("conv: kernels are position independent",
          "[lowering][avx512][conv]") {
  Case c;
  c.c = 20;
  c.oc = 40;
  c.w = 17;
  c.pad = 1;
  c.bias = true;
  ConvSpec spec = specOf(c);
  spec.epilogue = {EltwiseOp::unary(EltwiseKind::Gelu)};
  std::vector<uint8_t> code = generate(spec);
  // The bytes do not depend on where the generator's buffer was.
  CHECK(generate(spec) == code);
  MLCC_REQUIRE_AVX512F();
  std::vector<float> x = randomValues(20 * 8 * 17, 4);
  std::vector<float> w = randomValues(40 * 20 * 9, 5);
  std::vector<float> bias = randomValues(40, 6), packed;
  packConvWeights(w.data(), 40, 20, 3, 3, packed);
  std::vector<float> xb = blockInput(spec, x);
  std::vector<float> first = runCode(code, spec, xb, packed, bias, 0);
  std::vector<float> second = runCode(code, spec, xb, packed, bias, 1237);
  CHECK(first == second);
  c.relu = true;
  check(c, 4093);
}

TEST_CASE("conv: reorders and weight packing", "[lowering][avx512][conv]") {
  // x[n][c][h][w] = 1000 n + 100 c + 10 h + w, N = 2, C = 18, 2 x 3.
  std::vector<float> x(2 * 18 * 6), back(x.size());
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 18; ++c)
      for (int p = 0; p < 6; ++p)
        x[(n * 18 + c) * 6 + p] =
            static_cast<float>(1000 * n + 100 * c + 10 * (p / 3) + p % 3);
  std::vector<float> b(static_cast<size_t>(blockedSize(2, 18, 2, 3)), 7.0f);
  REQUIRE(b.size() == 2 * 2 * 6 * 16);
  reorderNCHWtoNCHW16c(x.data(), 2, 18, 2, 3, b.data());
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 32; ++c)
      for (int p = 0; p < 6; ++p) {
        float want = c < 18 ? x[(n * 18 + c) * 6 + p] : 0.0f;
        CHECK(b[((n * 2 + c / 16) * 6 + p) * 16 + c % 16] == want);
      }
  reorderNCHW16cToNCHW(b.data(), 2, 18, 2, 3, back.data());
  CHECK(back == x);

  // w[o][i][y][x] = 1000 o + 100 i + 10 y + x, OC = 17, C = 2, 1 x 2.
  std::vector<float> w(17 * 2 * 2), packed;
  for (int o = 0; o < 17; ++o)
    for (int i = 0; i < 2; ++i)
      for (int t = 0; t < 2; ++t)
        w[(o * 2 + i) * 2 + t] = static_cast<float>(1000 * o + 100 * i + t);
  packConvWeights(w.data(), 17, 2, 1, 2, packed);
  REQUIRE(packed.size() == 2 * 1 * 2 * 256);
  for (int ob = 0; ob < 2; ++ob)
    for (int t = 0; t < 2; ++t)
      for (int i = 0; i < 16; ++i)
        for (int o = 0; o < 16; ++o) {
          int oo = 16 * ob + o;
          float want = oo < 17 && i < 2 ? w[(oo * 2 + i) * 2 + t] : 0.0f;
          CHECK(packed[((ob * 2 + t) * 16 + i) * 16 + o] == want);
        }
}

TEST_CASE("conv: bad specs are errors", "[lowering][avx512][conv]") {
  auto fails = [](ConvSpec spec, const std::string &fragment) {
    spec.name = "my_conv";
    std::vector<uint8_t> code = {1, 2, 3};
    Status s = generateConv(spec, code);
    INFO(s.message());
    CHECK_FALSE(s.ok());
    CHECK(code.empty());
    CHECK(s.message().find("my_conv") != std::string::npos);
    CHECK(s.message().find(fragment) != std::string::npos);
  };
  const ConvSpec ok = specOf(Case{});
  ConvSpec s = ok;
  s.n = -1;
  fails(s, "negative");
  for (auto [first, end] :
       {std::pair<int64_t, int64_t>{3, 3}, {-1, 2}, {4, 2}, {0, 7}}) {
    s = ok; // 8x8, 3x3, no pad: 6 output rows
    s.rowBand[0] = first;
    s.rowBand[1] = end;
    fails(s, "row band");
  }
  s = ok;
  s.c = 0;
  fails(s, "positive");
  s = ok;
  s.oc = -4;
  fails(s, "positive");
  s = ok;
  s.group = 2;
  fails(s, "group");
  s = ok;
  s.group = 16;
  s.oc = 32; // a channel multiplier of 2 is not depthwise here
  fails(s, "group");
  s = ok;
  s.group = s.c = s.oc = 16;
  s.plainInput = true; // depthwise reads blocked input only
  fails(s, "plain");
  s = ok;
  s.kernel[1] = 0;
  fails(s, "kernel dim");
  s = ok;
  s.strides[0] = 0;
  fails(s, "stride");
  s = ok;
  s.dilations[1] = -1;
  fails(s, "dilation");
  s = ok;
  s.pads[2] = -1;
  fails(s, "pad");
  s = ok;
  s.kernel[0] = 9; // 9 > 8 rows, no padding
  fails(s, "empty output");
  s = ok;
  s.c = int64_t(1) << 20;
  s.h = s.w = 64;
  fails(s, "too large");
  s = ok;
  s.blockWidth = 29;
  fails(s, "block width");
  s = ok;
  s.pads[1] = int64_t(1) << 20;
  fails(s, "pad");
  s = ok;
  s.kernel[0] = 1025;
  s.h = 2000;
  fails(s, "<= 1024");
  s = ok;
  s.epilogue = {EltwiseOp::binary(EltwiseKind::Add, EltwiseOperand::array(1))};
  fails(s, "constants only");
  s = ok; // 6 output rows 2 apart from row 1 need a frame of 12
  s.dstFrame[0] = 11;
  s.dstFrame[1] = 6;
  s.dstStrides[0] = 2;
  s.dstOffsets[0] = 1;
  fails(s, "does not fit");
  s.dstFrame[0] = 12;
  s.dstOffsets[1] = -1;
  fails(s, "does not fit");
  s = ok;
  s.dstFrame[0] = s.dstFrame[1] = 6;
  s.d = 2;
  fails(s, "2-D convs only");
}

TEST_CASE("conv: kernels keep the callee-saved registers and rsp",
          "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  CalleeSavedChecker checker;

  // Every loop runs: images, groups, row and pixel-block runs, channel
  // blocks and kernel rows.
  Case c;
  c.n = 2;
  c.c = 40;
  c.oc = 72;
  c.h = 9;
  c.w = 40;
  c.pad = 1;
  c.bias = true;
  ConvSpec spec = specOf(c);
  std::vector<float> x(static_cast<size_t>(blockedSize(2, 40, 9, 40)), 0.5f);
  std::vector<float> w = randomValues(72 * 40 * 9, 8), packed;
  std::vector<float> bias = randomValues(72, 9);
  std::vector<float> y(static_cast<size_t>(blockedSize(2, 72, 9, 40)));
  packConvWeights(w.data(), 72, 40, 3, 3, packed);
  ExecutableBuffer exec(generate(spec));
  REQUIRE(exec.ok());
  mlcc_conv_args args = {x.data(), packed.data(), bias.data(), y.data()};
  CHECK(checker.run(&args, exec.address()) == 0);

  // With a residual (its own stack slot) and a silu epilogue.
  spec.residual = true;
  spec.epilogue = {EltwiseOp::unary(EltwiseKind::Silu)};
  std::vector<float> z(y.size(), 0.25f);
  ExecutableBuffer fused(generate(spec));
  REQUIRE(fused.ok());
  args.residual = z.data();
  CHECK(checker.run(&args, fused.address()) == 0);
}

TEST_CASE("conv: single-thread GFLOP/s of ResNet-50 and MobileNetV2 layers",
          "[lowering][avx512][conv][.perf]") {
  MLCC_REQUIRE_AVX512F();
  struct Layer {
    const char *name;
    int64_t c, oc, k, pad, stride, hw;
    bool depthwise = false;
  };
  for (const Layer &l :
       {Layer{"64x56x56 -> 64 3x3 p1", 64, 64, 3, 1, 1, 56},
        Layer{"256x56x56 -> 64 1x1", 256, 64, 1, 0, 1, 56},
        Layer{"3x224x224 -> 64 7x7 s2 p3 (stem)", 3, 64, 7, 3, 2, 224},
        Layer{"depthwise 32x112x112 3x3 p1", 32, 32, 3, 1, 1, 112, true},
        Layer{"depthwise 144x56x56 3x3 p1", 144, 144, 3, 1, 1, 56, true},
        Layer{"depthwise 96x112x112 3x3 s2 p1", 96, 96, 3, 1, 2, 112, true},
        Layer{"depthwise 144x28x28 3x3 p1 (L2)", 144, 144, 3, 1, 1, 28, true},
        Layer{"depthwise 240x28x28 5x5 p2 (EfficientNet-B0)", 240, 240, 5, 2, 1,
              28, true}}) {
    Case c;
    c.c = l.c;
    c.oc = l.oc;
    c.h = c.w = l.hw;
    c.k = l.k;
    c.pad = l.pad;
    c.stride = l.stride;
    c.bias = true;
    c.relu = true;
    c.depthwise = l.depthwise;
    ConvSpec spec = specOf(c);
    int64_t oh = 0, ow = 0;
    REQUIRE(convOutputSize(spec, oh, ow).ok());
    std::vector<uint8_t> code = generate(spec);
    ExecutableBuffer exec(code);
    REQUIRE(exec.ok());
    std::vector<float> x = randomValues(blockedSize(1, l.c, l.hw, l.hw), 1);
    const int64_t perOut = l.depthwise ? 1 : l.c;
    std::vector<float> w = randomValues(l.oc * perOut * l.k * l.k, 2), packed;
    std::vector<float> bias = randomValues(l.oc, 3);
    std::vector<float> y(static_cast<size_t>(blockedSize(1, l.oc, oh, ow)));
    if (l.depthwise)
      packDepthwiseConvWeights(w.data(), l.c, l.k, l.k, packed);
    else
      packConvWeights(w.data(), l.oc, l.c, l.k, l.k, packed);
    mlcc_conv_args args = {x.data(), packed.data(), bias.data(), y.data()};
    auto fn = exec.function<mlcc_conv_kernel_fn>();
    for (int i = 0; i < 5; ++i)
      fn(&args);
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      const int iters = 20;
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i)
        fn(&args);
      auto t1 = std::chrono::steady_clock::now();
      best = std::min(best,
                      std::chrono::duration<double>(t1 - t0).count() / iters);
    }
    double flops = 2.0 * l.oc * perOut * l.k * l.k * oh * ow;
    WARN(l.name << ": " << flops / best * 1e-9 << " GFLOP/s (" << best * 1e6
                << " us, code " << code.size() << " bytes)");
  }
}
