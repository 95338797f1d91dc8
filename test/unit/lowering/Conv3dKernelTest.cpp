//===- Conv3dKernelTest.cpp - Tests of the AVX-512 3-D conv kernels -------===//
//
// 3-D convs ([N, C, D, H, W]) on the direct conv kernel (Conv.h): depth
// planes classified by the depth taps inside the input, a loop over those
// taps around the input channel blocks, weights packed by packConv3dWeights.
// The oracle is the reference "conv" (or "fused_conv", with a residual) on
// the plain tensors; the kernel's NCDHW16c output is compared lane by lane.
// X's and Z's padding lanes hold NaN, Y's must come out 0, and every array
// ends at an unmapped page (GuardedArray), as in ConvKernelTest.cpp.
//
// Tolerance: C * KD * KH * KW products of values in [-1, 1) summed in
// another order: |kernel - reference| <= 1e-5 * that count (f32 rounding is
// 6e-8 per add; a wrong or missing term is of order 1).
//
//===----------------------------------------------------------------------===//

#include "Conv.h"
#include "ExecutableBuffer.h"
#include "JitGenerator.h"
#include "KernelABI.h"
#include "KernelTestSupport.h"

#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

using namespace mlcc;
using namespace mlcc::avx512;
using namespace mlcc::test;

namespace {

struct Case3d {
  int64_t n = 1, c = 16, d = 4, h = 5, w = 6, oc = 32;
  int64_t k[3] = {3, 3, 3}, stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1};
  /// ONNX order: front, top, left, back, bottom, right.
  int64_t pads[6] = {1, 1, 1, 1, 1, 1};
  bool bias = true, relu = false, residual = false, plainInput = false,
       depthwise = false;
};

ConvSpec specOf(const Case3d &c) {
  ConvSpec spec;
  spec.n = c.n;
  spec.c = c.c;
  spec.d = c.d;
  spec.h = c.h;
  spec.w = c.w;
  spec.oc = c.depthwise ? c.c : c.oc;
  spec.group = c.depthwise ? c.c : 1;
  spec.depthKernel = c.k[0];
  spec.depthStride = c.stride[0];
  spec.depthDilation = c.dilation[0];
  spec.depthPads[0] = c.pads[0];
  spec.depthPads[1] = c.pads[3];
  for (int i = 0; i < 2; ++i) {
    spec.kernel[i] = c.k[1 + i];
    spec.strides[i] = c.stride[1 + i];
    spec.dilations[i] = c.dilation[1 + i];
    spec.pads[i] = c.pads[1 + i];
    spec.pads[2 + i] = c.pads[4 + i];
  }
  spec.bias = c.bias;
  spec.residual = c.residual;
  spec.plainInput = c.plainInput;
  if (c.relu)
    spec.epilogue.push_back(EltwiseOp::unary(EltwiseKind::Relu));
  return spec;
}

/// Plain [N, C, D, H, W] to NCDHW16c with NaN in the padding lanes.
std::vector<float> blocked(const std::vector<float> &x, int64_t n, int64_t c,
                           int64_t planes) {
  std::vector<float> b(static_cast<size_t>(blockedSize(n, c, planes, 1)));
  reorderNCHWtoNCHW16c(x.data(), n, c, planes, 1, b.data());
  const int64_t cb = convBlocks(c);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = c; ch < cb * kConvBlock; ++ch)
      for (int64_t p = 0; p < planes; ++p)
        b[((i * cb + ch / 16) * planes + p) * 16 + ch % 16] =
            std::numeric_limits<float>::quiet_NaN();
  return b;
}

void check(const Case3d &c) {
  const ConvSpec spec = specOf(c);
  INFO("N=" << c.n << " C=" << c.c << " DHW=" << c.d << "x" << c.h << "x"
            << c.w << " OC=" << spec.oc << " K=" << c.k[0] << "x" << c.k[1]
            << "x" << c.k[2] << " s=" << c.stride[0] << "," << c.stride[1]
            << "," << c.stride[2] << " dil=" << c.dilation[0] << " pads="
            << c.pads[0] << "," << c.pads[1] << "," << c.pads[3] << ","
            << c.pads[4] << " residual=" << c.residual
            << " plain=" << c.plainInput << " depthwise=" << c.depthwise);
  int64_t oh = 0, ow = 0;
  REQUIRE(convOutputSize(spec, oh, ow).ok());
  const int64_t od = convOutputDepth(spec);
  REQUIRE(od >= 1);
  const int64_t cg = spec.c / spec.group;
  const int64_t taps = c.k[0] * c.k[1] * c.k[2];
  const int64_t inPlanes = c.d * c.h * c.w, outPlanes = od * oh * ow;
  std::vector<float> x = randomValues(c.n * c.c * inPlanes, 21);
  std::vector<float> w = randomValues(spec.oc * cg * taps, 22);
  std::vector<float> bias =
      c.bias ? randomValues(spec.oc, 23) : std::vector<float>{};
  std::vector<float> z =
      c.residual ? randomValues(c.n * spec.oc * outPlanes, 24)
                 : std::vector<float>{};
  std::vector<float> packed;
  if (c.depthwise)
    packDepthwiseConv3dWeights(w.data(), c.c, c.k[0], c.k[1], c.k[2], packed);
  else
    packConv3dWeights(w.data(), spec.oc, c.c, c.k[0], c.k[1], c.k[2], packed);

  ExecutableBuffer exec(generateCode(generateConv, spec));
  REQUIRE(exec.ok());
  GuardedArray<float> gx(c.plainInput ? x : blocked(x, c.n, c.c, inPlanes)),
      gw(packed), gbias(bias),
      gz(c.residual ? blocked(z, c.n, spec.oc, outPlanes)
                    : std::vector<float>{});
  GuardedArray<float> gy(std::vector<float>(
      static_cast<size_t>(blockedSize(c.n, spec.oc, outPlanes, 1)), -1.0f));
  REQUIRE((gx.ok() && gw.ok() && gbias.ok() && gy.ok() && gz.ok()));
  mlcc_conv_args args = {};
  args.src = gx.data();
  args.weights = gw.data();
  args.bias = c.bias ? gbias.data() : nullptr;
  args.dst = gy.data();
  args.residual = c.residual ? gz.data() : nullptr;
  exec.function<mlcc_conv_kernel_fn>()(&args);
  std::vector<float> got = gy.values();

  std::vector<ref::Tensor> in = {
      ref::Tensor::fromBytes(DType::F32, {c.n, c.c, c.d, c.h, c.w}, x.data()),
      ref::Tensor::fromBytes(DType::F32, {spec.oc, cg, c.k[0], c.k[1], c.k[2]},
                             w.data()),
      c.bias ? ref::Tensor::fromBytes(DType::F32, {spec.oc}, bias.data())
             : ref::Tensor()};
  ref::Attrs attrs = {
      {"strides", std::vector<int64_t>(c.stride, c.stride + 3)},
      {"dilations", std::vector<int64_t>(c.dilation, c.dilation + 3)},
      {"pads", std::vector<int64_t>(c.pads, c.pads + 6)},
      {"group", spec.group}};
  if (c.residual) {
    in.push_back(ref::Tensor::fromBytes(DType::F32, {c.n, spec.oc, od, oh, ow},
                                        z.data()));
    attrs.set("activation", std::string(c.relu ? "relu" : "none"));
  }
  std::vector<float> want =
      runReference(c.residual ? "fused_conv" : "conv", attrs, in);
  REQUIRE(static_cast<int64_t>(want.size()) == c.n * spec.oc * outPlanes);

  const double tol = 1e-5 * cg * taps;
  const int64_t ocb = convBlocks(spec.oc);
  int bad = 0;
  for (int64_t i = 0; i < c.n; ++i)
    for (int64_t o = 0; o < ocb * kConvBlock; ++o)
      for (int64_t p = 0; p < outPlanes; ++p) {
        float g = got[((i * ocb + o / 16) * outPlanes + p) * 16 + o % 16];
        if (o >= spec.oc) {
          if (g != 0.0f && bad++ < 5)
            FAIL_CHECK("padding lane " << o << " at " << p << " is " << g);
          continue;
        }
        double v = want[(i * spec.oc + o) * outPlanes + p];
        if (c.relu && !c.residual)
          v = std::max(v, 0.0);
        if (!(std::fabs(g - v) <= tol) && bad++ < 5)
          FAIL_CHECK("Y[" << i << "][" << o << "] at " << p << " = " << g
                          << ", want " << v);
      }
  CHECK(bad == 0);
}

} // namespace

TEST_CASE("conv3d: 3x3x3 with strides, pads and a channel tail",
          "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  for (int64_t oc : {16, 32, 40})
    for (int64_t stride : {1, 2}) {
      Case3d c;
      c.c = oc == 40 ? 20 : 16;
      c.oc = oc;
      for (int64_t &s : c.stride)
        s = stride;
      c.relu = stride == 1;
      check(c);
    }
}

TEST_CASE("conv3d: depth strides, dilations and planes without taps",
          "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  Case3d down; // r3d's downsample: 1x1x1, stride 2
  down.d = 5;
  down.k[0] = down.k[1] = down.k[2] = 1;
  for (int64_t &s : down.stride)
    s = 2;
  for (int64_t &p : down.pads)
    p = 0;
  check(down);
  Case3d dilated; // depth taps 2 apart, asymmetric depth pads
  dilated.d = 6;
  dilated.dilation[0] = 2;
  dilated.pads[0] = 2;
  dilated.pads[3] = 0;
  check(dilated);
  Case3d outside; // the first two and the last output planes read no input
  outside.k[0] = 1;
  outside.pads[0] = 2;
  outside.pads[3] = 1;
  check(outside);
  outside.bias = false;
  check(outside);
}

TEST_CASE("conv3d: a stem on plain input", "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  // r3d_18's: 3 -> 64, 3x7x7, stride (1, 2, 2), pads (1, 3, 3).
  Case3d c;
  c.c = 3;
  c.oc = 64;
  c.d = 3;
  c.h = c.w = 14;
  c.k[1] = c.k[2] = 7;
  c.stride[1] = c.stride[2] = 2;
  c.pads[1] = c.pads[2] = c.pads[4] = c.pads[5] = 3;
  c.plainInput = true;
  c.relu = true;
  check(c);
}

TEST_CASE("conv3d: depthwise, batches and residuals",
          "[lowering][avx512][conv]") {
  MLCC_REQUIRE_AVX512F();
  Case3d dw;
  dw.c = 24;
  dw.depthwise = true;
  dw.n = 2;
  check(dw);
  dw.residual = true;
  dw.relu = true;
  check(dw);
  Case3d block; // a residual block's second conv, two images
  block.n = 2;
  block.c = block.oc = 32;
  block.residual = true;
  block.relu = true;
  check(block);
}

TEST_CASE("conv3d: bad depth specs are errors", "[lowering][avx512][conv]") {
  ConvSpec spec = specOf(Case3d());
  std::vector<uint8_t> code;
  spec.depthKernel = 9; // deeper than the padded 4 + 2 planes
  CHECK(generateConv(spec, code).failed());
  spec = specOf(Case3d());
  spec.depthStride = 0;
  CHECK(generateConv(spec, code).failed());
}
