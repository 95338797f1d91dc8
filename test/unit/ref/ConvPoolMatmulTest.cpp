//===- ConvPoolMatmulTest.cpp - Tests of conv, pool and matmul kernels ----===//
//
// Expected values are worked out by hand from the op definitions or by a
// direct formula written here (a naive loop over the definition), never
// taken from the kernels themselves.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtils.h"
#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace mlcc::ref;
using namespace mlcc::ref::test;

namespace {

/// Deterministic pseudo-random values in [-1, 1).
Tensor noise(Shape shape, uint32_t seed, DType t = DType::F32) {
  Tensor x(t, shape);
  for (int64_t i = 0; i < x.numel(); ++i) {
    seed = seed * 1664525u + 1013904223u;
    x.setDouble(i, static_cast<double>(seed >> 8) / (1 << 23) - 1.0);
  }
  return x;
}
using Ints = std::vector<int64_t>;

/// The definition of conv, for one configuration: y[n, m, o...] = b[m] +
/// sum over c in m's group and taps k of x[n, c, o*s - pb + k*d] w[m, c, k].
std::vector<double> naiveConv(const Tensor &x, const Tensor &w, const Tensor &b,
                              const Ints &s, const Ints &d, const Ints &pads,
                              int64_t group, const Shape &yShape) {
  size_t nd = s.size();
  int64_t cg = w.dim(1), mg = w.dim(0) / group;
  std::vector<int64_t> xs = stridesOf(x.shape()), ws = stridesOf(w.shape());
  std::vector<double> y(numElements(yShape));
  Shape kShape(w.shape().begin() + 2, w.shape().end());
  std::vector<int64_t> ks = stridesOf(kShape), ys = stridesOf(yShape);
  for (int64_t yi = 0; yi < static_cast<int64_t>(y.size()); ++yi) {
    std::vector<int64_t> at(yShape.size());
    for (size_t q = 0; q < yShape.size(); ++q)
      at[q] = (yi / ys[q]) % yShape[q];
    int64_t m = at[1];
    double acc = b.present() ? b.getDouble(m) : 0;
    for (int64_t c = 0; c < cg; ++c) {
      for (int64_t ki = 0; ki < numElements(kShape); ++ki) {
        int64_t xo = at[0] * xs[0] + ((m / mg) * cg + c) * xs[1];
        int64_t wo = m * ws[0] + c * ws[1];
        bool inside = true;
        for (size_t q = 0; q < nd; ++q) {
          int64_t kq = (ki / ks[q]) % kShape[q];
          int64_t p = at[2 + q] * s[q] - pads[q] + kq * d[q];
          inside = inside && p >= 0 && p < x.dim(2 + q);
          xo += p * xs[2 + q];
          wo += kq * ws[2 + q];
        }
        if (inside)
          acc += x.getDouble(xo) * w.getDouble(wo);
      }
    }
    y[yi] = acc;
  }
  return y;
}

} // namespace

//===----------------------------------------------------------------------===//
// conv
//===----------------------------------------------------------------------===//

TEST_CASE("nn: conv sums kernel windows, with pads and bias",
          "[ref][nn][conv]") {
  Tensor x = iota({1, 1, 3, 3});
  Tensor w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  Tensor y = ok("conv", {}, {x, w})[0];
  CHECK(y.shape() == Shape{1, 1, 2, 2});
  requireValues(y,
                {0 + 1 + 3 + 4, 1 + 2 + 4 + 5, 3 + 4 + 6 + 7, 4 + 5 + 7 + 8});

  // Pads of 1 all around: 4x4 output, corners see one input each.
  Tensor yp =
      ok("conv", {{"pads", Ints{1, 1, 1, 1}}}, {x, w, f32({1}, {10})})[0];
  CHECK(yp.shape() == Shape{1, 1, 4, 4});
  CHECK(yp.getDouble(0) == 10 + 0);
  CHECK(yp.getDouble(3) == 10 + 2);
  CHECK(yp.getDouble(5) == 10 + 8);
  CHECK(yp.getDouble(15) == 10 + 8);
}

TEST_CASE("nn: conv matches its definition over strides, dilations, groups",
          "[ref][nn][conv]") {
  struct Case {
    Shape x, w;
    Ints s, d, pads;
    int64_t group;
  } cases[] = {
      {{2, 4, 9}, {6, 2, 3}, {2}, {2}, {1, 2}, 2}, // 1-D
      {{1, 3, 7, 8}, {5, 3, 3, 2}, {2, 3}, {1, 2}, {1, 0, 2, 1}, 1},
      {{1, 4, 6, 6}, {4, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 4}, // dw
      {{1, 2, 4, 5, 3},
       {3, 2, 2, 3, 1},
       {1, 2, 1},
       {2, 1, 1},
       {0, 1, 0, 1, 0, 1},
       1},                                                           // 3-D
      {{1, 6, 5, 7}, {8, 6, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1}, // 1x1
  };
  uint32_t seed = 1;
  for (const Case &c : cases) {
    INFO("x " << shapeToString(c.x) << " w " << shapeToString(c.w));
    Tensor x = noise(c.x, seed++), w = noise(c.w, seed++);
    Tensor b = noise({c.w[0]}, seed++);
    Tensor y = ok("conv",
                  {{"strides", c.s},
                   {"dilations", c.d},
                   {"pads", c.pads},
                   {"group", c.group}},
                  {x, w, b})[0];
    size_t nd = c.s.size();
    Shape want = {c.x[0], c.w[0]};
    for (size_t i = 0; i < nd; ++i)
      want.push_back((c.x[2 + i] + c.pads[i] + c.pads[nd + i] -
                      (c.w[2 + i] - 1) * c.d[i] - 1) /
                         c.s[i] +
                     1);
    REQUIRE(y.shape() == want);
    requireValues(y, naiveConv(x, w, b, c.s, c.d, c.pads, c.group, want), 1e-4);
  }
}

TEST_CASE("nn: conv auto_pad puts the odd pad at the end or the start",
          "[ref][nn][conv]") {
  Tensor x = f32({1, 1, 4}, {1, 2, 3, 4});
  Tensor w = f32({1, 1, 2}, {1, 1});
  requireValues(
      ok("conv", {{"auto_pad", std::string("SAME_UPPER")}}, {x, w})[0],
      {3, 5, 7, 4});
  requireValues(
      ok("conv", {{"auto_pad", std::string("SAME_LOWER")}}, {x, w})[0],
      {1, 3, 5, 7});
  Tensor v =
      ok("conv", {{"auto_pad", std::string("VALID")}, {"pads", Ints{5, 5}}},
         {x, w})[0];
  requireValues(v, {3, 5, 7});
  // SAME with stride 2: ceil(4 / 2) outputs.
  Tensor s = ok("conv",
                {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2}}},
                {x, w})[0];
  requireValues(s, {3, 7});
}

TEST_CASE("nn: conv on f64 and f16", "[ref][nn][conv]") {
  Tensor x = make(DType::F64, {1, 1, 3}, {1, 2, 3});
  Tensor w = make(DType::F64, {1, 1, 2}, {0.5, -1});
  Tensor y = ok("conv", {}, {x, w})[0];
  CHECK(y.dtype() == DType::F64);
  requireValues(y, {0.5 - 2, 1 - 3});
  Tensor xh = make(DType::F16, {1, 1, 3}, {1, 2, 3});
  Tensor wh = make(DType::F16, {1, 1, 2}, {0.5, -1});
  Tensor yh = ok("conv", {}, {xh, wh})[0];
  CHECK(yh.dtype() == DType::F16);
  requireValues(yh, {-1.5, -2});
}

TEST_CASE("nn: conv shapes propagate dynamic dims", "[ref][nn][conv]") {
  auto out = infer(
      "conv", {{"strides", Ints{2, 1}}},
      {{DType::F32, {kDynamic, 3, kDynamic, 10}}, {DType::F32, {8, 3, 3, 3}}});
  CHECK(out[0].dtype == DType::F32);
  CHECK(out[0].shape == Shape{kDynamic, 8, kDynamic, 8});
  // Unknown kernel dims come from kernel_shape.
  auto k = infer("conv", {{"kernel_shape", Ints{5}}},
                 {{DType::F32, {1, 2, 9}}, {DType::F32, {4, 2, kDynamic}}});
  CHECK(k[0].shape == Shape{1, 4, 5});
}

TEST_CASE("nn: conv rejects inconsistent operands", "[ref][nn][conv]") {
  Tensor x = iota({1, 2, 4, 4});
  CHECK_THAT(fails("conv", {}, {x, iota({1, 2, 3})}),
             Catch::Contains("rank 3, expected rank 4"));
  CHECK_THAT(fails("conv", {}, {x, iota({1, 3, 3, 3})}),
             Catch::Contains("channels"));
  CHECK_THAT(fails("conv", {}, {x, iota({1, 2, 5, 5})}),
             Catch::Contains("does not fit"));
  CHECK_THAT(fails("conv", {{"strides", Ints{1}}}, {x, iota({1, 2, 3, 3})}),
             Catch::Contains("strides"));
  CHECK_THAT(fails("conv", {{"auto_pad", std::string("SAME")}},
                   {x, iota({1, 2, 3, 3})}),
             Catch::Contains("auto_pad"));
}

//===----------------------------------------------------------------------===//
// conv_transpose
//===----------------------------------------------------------------------===//

TEST_CASE("nn: conv_transpose scatters each input through the kernel",
          "[ref][nn][conv_transpose]") {
  Tensor x = f32({1, 1, 2}, {1, 2});
  Tensor w = f32({1, 1, 3}, {1, 1, 1});
  // Stride 2: input i covers outputs 2i .. 2i+2.
  Tensor y = ok("conv_transpose", {{"strides", Ints{2}}}, {x, w})[0];
  CHECK(y.shape() == Shape{1, 1, 5});
  requireValues(y, {1, 1, 1 + 2, 2, 2});
  // output_padding adds a zero (plus bias) at the end.
  Tensor yo =
      ok("conv_transpose", {{"strides", Ints{2}}, {"output_padding", Ints{1}}},
         {x, w, f32({1}, {0.5})})[0];
  requireValues(yo, {1.5, 1.5, 3.5, 2.5, 2.5, 0.5});
  // pads trim the full output.
  requireValues(ok("conv_transpose",
                   {{"strides", Ints{2}}, {"pads", Ints{1, 1}}}, {x, w})[0],
                {1, 3, 2});
  // SAME_UPPER: output = input * stride, total pad 1 at the end.
  requireValues(
      ok("conv_transpose",
         {{"strides", Ints{2}}, {"auto_pad", std::string("SAME_UPPER")}},
         {x, w})[0],
      {1, 1, 3, 2});
  // output_shape: a longer output is padded with zeros at the end.
  requireValues(ok("conv_transpose",
                   {{"strides", Ints{2}}, {"output_shape", Ints{6}}},
                   {x, w})[0],
                {1, 1, 3, 2, 2, 0});
}

TEST_CASE("nn: conv_transpose with groups and channels",
          "[ref][nn][conv_transpose]") {
  // Two groups of one channel each, two outputs per group: W [2, 2, 1].
  Tensor x = f32({1, 2, 2}, {1, 2, 3, 4});
  Tensor w = f32({2, 2, 1}, {1, 10, 100, 1000});
  Tensor y = ok("conv_transpose", {{"group", int64_t(2)}}, {x, w})[0];
  CHECK(y.shape() == Shape{1, 4, 2});
  requireValues(y, {1, 2, 10, 20, 300, 400, 3000, 4000});
  CHECK_THAT(fails("conv_transpose", {}, {x, f32({3, 1, 1}, {1, 2, 3})}),
             Catch::Contains("channels"));
}

//===----------------------------------------------------------------------===//
// conv_integer and qlinear_conv
//===----------------------------------------------------------------------===//

TEST_CASE("nn: conv_integer subtracts zero points", "[ref][nn][conv]") {
  Tensor x = make(DType::U8, {1, 1, 1, 3}, {5, 6, 7});
  Tensor w = make(DType::U8, {1, 1, 1, 2}, {1, 2});
  Tensor y = ok("conv_integer", {},
                {x, w, make(DType::U8, {}, {5}), make(DType::U8, {}, {0})})[0];
  CHECK(y.dtype() == DType::I32);
  requireValues(y, {0 * 1 + 1 * 2, 1 * 1 + 2 * 2});
  // Without zero points.
  requireValues(ok("conv_integer", {}, {x, w})[0], {5 + 12, 6 + 14});
}

TEST_CASE("nn: qlinear_conv requantizes half to even and saturates",
          "[ref][nn][conv]") {
  Tensor x = make(DType::U8, {1, 1, 1, 4}, {10, 11, 13, 255});
  Tensor w = make(DType::I8, {1, 1, 1, 1}, {2});
  // real x = (x - 10) * 0.25, real w = 2 * 0.5, y = real / 0.5 + 100:
  // 0, 0.5 -> 0, 1.5 -> 2, 122.5 -> 122 (+100 saturates to 127).
  Tensor y = ok("qlinear_conv", {},
                {x, f32({}, {0.25}), make(DType::U8, {}, {10}), w,
                 f32({}, {0.5}), make(DType::I8, {}, {0}), f32({}, {0.5}),
                 make(DType::I8, {}, {100})})[0];
  CHECK(y.dtype() == DType::I8);
  requireValues(y, {100, 100, 102, 127});
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

TEST_CASE("nn: average_pool counts pads only with count_include_pad",
          "[ref][nn][pool]") {
  Tensor x = iota({1, 1, 3, 3});
  Attrs a{{"kernel_shape", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}};
  Tensor y = ok("average_pool", a, {x})[0];
  CHECK(y.shape() == Shape{1, 1, 4, 4});
  // Top row windows: {0}, {0,1}, {1,2}, {2}.
  CHECK(y.getDouble(0) == Approx(0));
  CHECK(y.getDouble(1) == Approx(0.5));
  CHECK(y.getDouble(2) == Approx(1.5));
  CHECK(y.getDouble(3) == Approx(2));
  CHECK(y.getDouble(5) == Approx((0 + 1 + 3 + 4) / 4.0));
  a.set("count_include_pad", int64_t(1));
  Tensor yi = ok("average_pool", a, {x})[0];
  CHECK(yi.getDouble(0) == Approx(0 / 4.0));
  CHECK(yi.getDouble(1) == Approx(1 / 4.0));
  CHECK(yi.getDouble(3) == Approx(2 / 4.0));
}

TEST_CASE("nn: ceil_mode adds a partial last window", "[ref][nn][pool]") {
  Tensor x = f32({1, 1, 5}, {1, 2, 3, 4, 5});
  Attrs a{{"kernel_shape", Ints{2}}, {"strides", Ints{2}}};
  CHECK(ok("max_pool", a, {x})[0].shape() == Shape{1, 1, 2});
  a.set("ceil_mode", int64_t(1));
  requireValues(ok("max_pool", a, {x})[0], {2, 4, 5});
  requireValues(ok("average_pool", a, {x})[0], {1.5, 3.5, 5});
}

TEST_CASE("nn: max_pool returns indices row- or column-major",
          "[ref][nn][pool]") {
  Tensor x = f32({1, 1, 2, 3}, {1, 5, 2, 4, 3, 6});
  std::vector<Tensor> outs =
      ok("max_pool", {{"kernel_shape", Ints{2, 2}}}, {x}, 2);
  requireValues(outs[0], {5, 6});
  CHECK(outs[1].dtype() == DType::I64);
  requireValues(outs[1], {1, 5});
  // Column-major: h + w * H.
  outs =
      ok("max_pool",
         {{"kernel_shape", Ints{2, 2}}, {"storage_order", int64_t(1)}}, {x}, 2);
  requireValues(outs[1], {0 + 1 * 2, 1 + 2 * 2});
  // A second image offsets the indices by its plane.
  Tensor x2 = f32({2, 1, 1, 2}, {3, 1, 0, 7});
  outs = ok("max_pool", {{"kernel_shape", Ints{1, 2}}}, {x2}, 2);
  requireValues(outs[0], {3, 7});
  requireValues(outs[1], {0, 3});
}

TEST_CASE("nn: max_pool with dilations, pads and u8", "[ref][nn][pool]") {
  Tensor x = make(DType::U8, {1, 1, 6}, {9, 1, 4, 8, 2, 7});
  // Taps i, i+2 over the input padded by 1 in front.
  Tensor y = ok(
      "max_pool",
      {{"kernel_shape", Ints{2}}, {"dilations", Ints{2}}, {"pads", Ints{1, 0}}},
      {x})[0];
  CHECK(y.dtype() == DType::U8);
  requireValues(y, {1, 9, 8, 4, 8});
}

TEST_CASE("nn: lp_pool and the global pools", "[ref][nn][pool]") {
  Tensor x = f32({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -4});
  Tensor avg = ok("global_average_pool", {}, {x})[0];
  CHECK(avg.shape() == Shape{1, 2, 1, 1});
  requireValues(avg, {2.5, -2.5});
  requireValues(ok("global_max_pool", {}, {x})[0], {4, -1});
  requireValues(ok("global_lp_pool", {}, {x})[0],
                {std::sqrt(30.0), std::sqrt(30.0)});
  requireValues(ok("global_lp_pool", {{"p", int64_t(1)}}, {x})[0], {10, 10});
  Tensor lp =
      ok("lp_pool", {{"kernel_shape", Ints{1, 2}}, {"p", int64_t(2)}}, {x})[0];
  CHECK(lp.shape() == Shape{1, 2, 2, 1});
  requireValues(lp, {std::sqrt(5.0), 5, std::sqrt(5.0), 5});
  // An empty batch gives an empty result.
  CHECK(ok("global_average_pool", {}, {f32({0, 3, 2, 2}, {})})[0].shape() ==
        Shape{0, 3, 1, 1});
}

TEST_CASE("nn: pool shapes and errors", "[ref][nn][pool]") {
  auto out = infer("max_pool",
                   {{"kernel_shape", Ints{3, 3}},
                    {"strides", Ints{2, 2}},
                    {"auto_pad", std::string("SAME_UPPER")}},
                   {{DType::F32, {1, 64, kDynamic, 112}}}, 2);
  CHECK(out[0].shape == Shape{1, 64, kDynamic, 56});
  CHECK(out[1].dtype == DType::I64);
  Tensor x = iota({1, 1, 4, 4});
  CHECK_THAT(fails("max_pool", {}, {x}), Catch::Contains("kernel_shape"));
  CHECK_THAT(fails("average_pool", {{"kernel_shape", Ints{2}}}, {x}),
             Catch::Contains("expected 2"));
  CHECK_THAT(fails("average_pool", {{"kernel_shape", Ints{2, 2}}},
                   {make(DType::I32, {1, 1, 2, 2}, {1, 2, 3, 4})}),
             Catch::Contains("float"));
}

TEST_CASE("nn: max_unpool scatters by the indices", "[ref][nn][pool]") {
  Tensor x = f32({1, 1, 2, 2}, {5, 6, 7, 8});
  Tensor i = make(DType::I64, {1, 1, 2, 2}, {5, 7, 13, 15});
  Attrs a{{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}};
  Tensor y = ok("max_unpool", a, {x, i})[0];
  CHECK(y.shape() == Shape{1, 1, 4, 4});
  std::vector<double> want(16, 0);
  want[5] = 5, want[7] = 6, want[13] = 7, want[15] = 8;
  requireValues(y, want);
  // A larger output_shape holds the unpooled 4x4 in its leading corner.
  Tensor y5 =
      ok("max_unpool", a, {x, i, make(DType::I64, {4}, {1, 1, 5, 5})})[0];
  CHECK(y5.shape() == Shape{1, 1, 5, 5});
  CHECK(y5.getDouble(1 * 5 + 1) == 5);
  CHECK(y5.getDouble(3 * 5 + 3) == 8);
  CHECK_THAT(fails("max_unpool", a,
                   {x, make(DType::I64, {1, 1, 2, 2}, {5, 7, 13, 16})}),
             Catch::Contains("out of range"));
}

TEST_CASE("nn: max_roi_pool takes the max of each bin", "[ref][nn][pool]") {
  Tensor x = iota({1, 1, 4, 4});
  Tensor rois = f32({2, 5}, {0, 0, 0, 3, 3, 0, 1, 1, 1, 1});
  Tensor y = ok("max_roi_pool", {{"pooled_shape", Ints{2, 2}}}, {x, rois})[0];
  CHECK(y.shape() == Shape{2, 1, 2, 2});
  // ROI 0: the whole 4x4 in 2x2 bins; ROI 1: the single pixel (1, 1).
  requireValues(y, {5, 7, 13, 15, 5, 5, 5, 5});
}

//===----------------------------------------------------------------------===//
// matmul and gemm
//===----------------------------------------------------------------------===//

TEST_CASE("nn: matmul handles vectors and broadcast batches", "[ref][matmul]") {
  Tensor a = iota({2, 3}, 1), b = iota({3, 2}, 1);
  // [[1,2,3],[4,5,6]] x [[1,2],[3,4],[5,6]]
  requireValues(ok("matmul", {}, {a, b})[0], {22, 28, 49, 64});
  Tensor v = f32({3}, {1, 0, -1});
  Tensor av = ok("matmul", {}, {a, v})[0];
  CHECK(av.shape() == Shape{2});
  requireValues(av, {1 - 3, 4 - 6});
  Tensor va = ok("matmul", {}, {v, b})[0];
  CHECK(va.shape() == Shape{2});
  requireValues(va, {1 - 5, 2 - 6});
  Tensor vv = ok("matmul", {}, {v, v})[0];
  CHECK(vv.shape() == Shape{});
  requireValues(vv, {2});

  // [2, 1, 3, 4] x [3, 4, 5] -> [2, 3, 3, 5]; batch (i, j) uses A[i, 0]
  // and B[j].
  Tensor x = noise({2, 1, 3, 4}, 7), y = noise({3, 4, 5}, 8);
  Tensor z = ok("matmul", {}, {x, y})[0];
  REQUIRE(z.shape() == Shape{2, 3, 3, 5});
  std::vector<double> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 5; ++c) {
          double s = 0;
          for (int k = 0; k < 4; ++k)
            s += x.getDouble(i * 12 + r * 4 + k) *
                 y.getDouble(j * 20 + k * 5 + c);
          want.push_back(s);
        }
  requireValues(z, want);

  // K = 0 gives zeros; integers work.
  requireValues(ok("matmul", {}, {f32({2, 0}, {}), f32({0, 2}, {})})[0],
                {0, 0, 0, 0});
  Tensor ai = make(DType::I64, {1, 2}, {3, -4});
  Tensor bi = make(DType::I64, {2, 1}, {5, 6});
  requireValues(ok("matmul", {}, {ai, bi})[0], {15 - 24});
}

TEST_CASE("nn: matmul shapes and errors", "[ref][matmul]") {
  auto out =
      infer("matmul", {},
            {{DType::F32, {kDynamic, 128, 768}}, {DType::F32, {768, 3072}}});
  CHECK(out[0].shape == Shape{kDynamic, 128, 3072});
  CHECK_THAT(fails("matmul", {}, {iota({2, 3}), iota({2, 3})}),
             Catch::Contains("contracted dim"));
  CHECK_THAT(fails("matmul", {}, {iota({2, 2, 3}), iota({3, 3, 2})}),
             Catch::Contains("broadcast"));
  CHECK_THAT(fails("matmul", {}, {iota({2, 2}), make(DType::I32, {2}, {1, 2})}),
             Catch::Contains("same"));
}

TEST_CASE("nn: gemm with transposes, alpha, beta and broadcast C",
          "[ref][matmul]") {
  Tensor a = iota({2, 3}, 1), b = iota({3, 2}, 1);
  std::vector<double> ab = {22, 28, 49, 64};
  Tensor at = f32({3, 2}, {1, 4, 2, 5, 3, 6});
  Tensor bt = f32({2, 3}, {1, 3, 5, 2, 4, 6});
  requireValues(ok("gemm", {}, {a, b})[0], ab);
  requireValues(ok("gemm", {{"transA", int64_t(1)}}, {at, b})[0], ab);
  requireValues(ok("gemm", {{"transB", int64_t(1)}}, {a, bt})[0], ab);
  requireValues(
      ok("gemm", {{"transA", int64_t(1)}, {"transB", int64_t(1)}}, {at, bt})[0],
      ab);
  // alpha * AB + beta * C with C a scalar, a row, a column.
  Attrs s{{"alpha", 0.5f}, {"beta", 2.0f}};
  requireValues(ok("gemm", s, {a, b, f32({}, {1})})[0],
                {11 + 2, 14 + 2, 24.5 + 2, 32 + 2});
  requireValues(ok("gemm", s, {a, b, f32({2}, {1, -1})})[0],
                {11 + 2, 14 - 2, 24.5 + 2, 32 - 2});
  requireValues(ok("gemm", s, {a, b, f32({2, 1}, {1, -1})})[0],
                {11 + 2, 14 + 2, 24.5 - 2, 32 - 2});
  CHECK_THAT(fails("gemm", {}, {a, b, f32({3}, {1, 2, 3})}),
             Catch::Contains("does not broadcast"));
  CHECK_THAT(fails("gemm", {}, {a, a}), Catch::Contains("gemm: A'"));
}

TEST_CASE("nn: matmul_integer and qlinear_matmul", "[ref][matmul]") {
  Tensor a = make(DType::U8, {2, 2}, {1, 2, 3, 4});
  Tensor b = make(DType::U8, {2, 2}, {1, 0, 0, 1});
  // Per-row zero point of A: rows minus 1 and minus 2.
  Tensor y =
      ok("matmul_integer", {},
         {a, b, make(DType::U8, {2}, {1, 2}), make(DType::U8, {}, {0})})[0];
  CHECK(y.dtype() == DType::I32);
  requireValues(y, {0, 1, 1, 2});
  // Per-column zero point of B: B - zp = [[0, 0], [-1, 1]].
  requireValues(ok("matmul_integer", {},
                   {a, b, Tensor(), make(DType::U8, {2}, {1, 0})})[0],
                {-2, 2, -4, 4});

  // real a = a * 0.5, real b = b * 1, y = real / 0.25 + 1, in u8.
  Tensor q = ok("qlinear_matmul", {},
                {a, f32({}, {0.5}), make(DType::U8, {}, {0}), b, f32({}, {1}),
                 make(DType::U8, {}, {0}), f32({}, {0.25}),
                 make(DType::U8, {}, {1})})[0];
  CHECK(q.dtype() == DType::U8);
  requireValues(q, {1 + 2, 1 + 4, 1 + 6, 1 + 8});
}

//===----------------------------------------------------------------------===//
// einsum
//===----------------------------------------------------------------------===//

TEST_CASE("nn: einsum contractions, diagonals and implicit outputs",
          "[ref][einsum]") {
  Tensor a = iota({2, 3}, 1), b = iota({3, 2}, 1);
  auto eq = [](const char *s) { return Attrs{{"equation", std::string(s)}}; };
  requireValues(ok("einsum", eq("ij,jk->ik"), {a, b})[0], {22, 28, 49, 64});
  // Implicit: letters used once, alphabetically -> "ik".
  requireValues(ok("einsum", eq("ij,jk"), {a, b})[0], {22, 28, 49, 64});
  // "ba" implicitly becomes "ab": a transpose.
  Tensor t = ok("einsum", eq("ba"), {a})[0];
  CHECK(t.shape() == Shape{3, 2});
  requireValues(t, {1, 4, 2, 5, 3, 6});
  requireValues(ok("einsum", eq("ij->i"), {a})[0], {6, 15});
  Tensor all = ok("einsum", eq("ij->"), {a})[0];
  CHECK(all.shape() == Shape{});
  requireValues(all, {21});

  Tensor sq = iota({3, 3});
  requireValues(ok("einsum", eq("ii->i"), {sq})[0], {0, 4, 8});
  requireValues(ok("einsum", eq(" ii "), {sq})[0], {12});
  Tensor v = f32({3}, {1, 2, 3});
  requireValues(ok("einsum", eq("i,i"), {v, v})[0], {14});
  Tensor outer = ok("einsum", eq("i,j->ij"), {v, f32({2}, {1, -1})})[0];
  requireValues(outer, {1, -1, 2, -2, 3, -3});

  // Ellipsis: batched diagonal and batched product with broadcasting.
  Tensor bd = ok("einsum", eq("...ii->...i"), {iota({2, 2, 2})})[0];
  CHECK(bd.shape() == Shape{2, 2});
  requireValues(bd, {0, 3, 4, 7});
  Tensor bm = ok("einsum", eq("...ij,jk->...ik"), {iota({2, 1, 3}), b})[0];
  CHECK(bm.shape() == Shape{2, 1, 2});
  requireValues(bm, {0 + 3 + 10, 0 + 4 + 12, 3 + 12 + 25, 6 + 16 + 30});

  CHECK_THAT(fails("einsum", eq("ij,jk->ik"), {a, a}),
             Catch::Contains("sizes"));
  CHECK_THAT(fails("einsum", eq("ij->ik"), {a}),
             Catch::Contains("does not occur"));
  CHECK_THAT(fails("einsum", eq("ijk"), {a}), Catch::Contains("rank"));
  CHECK_THAT(fails("einsum", eq("i1"), {a}), Catch::Contains("unexpected"));
}
