//===- MiscTest.cpp - Tests of the recurrent and misc reference kernels ---===//
//
// Expected values come from the op definitions, worked out by hand or by a
// formula here, never from the kernels themselves.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtils.h"
#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace mlcc::ref;
using namespace mlcc::ref::test;

namespace {

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

} // namespace

//===----------------------------------------------------------------------===//
// Recurrent
//===----------------------------------------------------------------------===//

TEST_CASE("rnn: one step with bias and initial state", "[ref][misc]") {
  // h = tanh(x*W + h0*R + Wb + Rb) with scalars.
  std::vector<Tensor> out =
      ok("rnn", {{"hidden_size", int64_t(1)}},
         {f32({1, 1, 1}, {1}), f32({1, 1, 1}, {0.5}), f32({1, 1, 1}, {2}),
          f32({1, 2}, {0.1, 0.2}), Tensor(), f32({1, 1, 1}, {0.3})},
         2);
  REQUIRE(out[0].shape() == Shape{1, 1, 1, 1});
  REQUIRE(out[1].shape() == Shape{1, 1, 1});
  requireValues(out[0], {std::tanh(0.5 + 0.6 + 0.3)});
  requireValues(out[1], {std::tanh(1.4)});
}

TEST_CASE("rnn: bidirectional runs the reverse direction backwards",
          "[ref][misc]") {
  // Affine(alpha=1, beta=0) is the identity, so h_t = x_t + h_{t-1}:
  // a running sum forwards and backwards.
  Attrs attrs{{"hidden_size", int64_t(1)},
              {"direction", std::string("bidirectional")},
              {"activations", std::vector<std::string>{"Affine", "Affine"}}};
  std::vector<Tensor> out = ok("rnn", attrs,
                               {f32({3, 1, 1}, {1, 2, 4}),
                                f32({2, 1, 1}, {1, 1}), f32({2, 1, 1}, {1, 1})},
                               2);
  REQUIRE(out[0].shape() == Shape{3, 2, 1, 1});
  // Y[t][dir]: forward 1, 3, 7; reverse 7, 6, 4.
  requireValues(out[0], {1, 7, 3, 6, 7, 4});
  requireValues(out[1], {7, 7});
}

TEST_CASE("rnn: layout 1 puts batch first", "[ref][misc]") {
  Attrs attrs{{"layout", int64_t(1)},
              {"activations", std::vector<std::string>{"Affine"}}};
  // X [batch=2, seq=2, input=1]; W = R = 1: running sums per batch row.
  std::vector<Tensor> out = ok("rnn", attrs,
                               {f32({2, 2, 1}, {1, 2, 10, 20}),
                                f32({1, 1, 1}, {1}), f32({1, 1, 1}, {1})},
                               2);
  REQUIRE(out[0].shape() == Shape{2, 2, 1, 1});
  REQUIRE(out[1].shape() == Shape{2, 1, 1});
  requireValues(out[0], {1, 3, 10, 30});
  requireValues(out[1], {3, 30});
}

TEST_CASE("gru: one step, both linear_before_reset forms", "[ref][misc]") {
  const double x = 0.7, h0 = -0.4;
  const double wz = 0.2, wr = -0.3, wh = 0.5, rz = 0.1, rr = 0.4, rh = -0.6;
  const double bias[6] = {0.01, 0.02, 0.03, 0.04, 0.05, 0.06};
  std::vector<Tensor> in = {f32({1, 1, 1}, {x}),
                            f32({1, 3, 1}, {wz, wr, wh}),
                            f32({1, 3, 1}, {rz, rr, rh}),
                            f32({1, 6}, std::vector<double>(bias, bias + 6)),
                            Tensor(),
                            f32({1, 1, 1}, {h0})};
  double z = sigmoid(x * wz + h0 * rz + bias[0] + bias[3]);
  double r = sigmoid(x * wr + h0 * rr + bias[1] + bias[4]);
  for (int64_t lbr : {0, 1}) {
    double hh = lbr ? std::tanh(x * wh + r * (h0 * rh + bias[5]) + bias[2])
                    : std::tanh(x * wh + (r * h0) * rh + bias[5] + bias[2]);
    double want = (1 - z) * hh + z * h0;
    std::vector<Tensor> out = ok("gru", {{"linear_before_reset", lbr}}, in, 2);
    requireValues(out[1], {want});
  }
}

TEST_CASE("lstm: one step with peepholes", "[ref][misc]") {
  const double x = 0.5, h0 = 0.2, c0 = -0.3;
  // Gate order i, o, f, c.
  const double w[4] = {0.1, 0.2, 0.3, 0.4}, r[4] = {-0.1, 0.5, 0.2, 0.3};
  const double p[3] = {0.05, 0.07, 0.11}; // pi, po, pf
  std::vector<Tensor> in = {f32({1, 1, 1}, {x}),
                            f32({1, 4, 1}, std::vector<double>(w, w + 4)),
                            f32({1, 4, 1}, std::vector<double>(r, r + 4)),
                            Tensor(),
                            Tensor(),
                            f32({1, 1, 1}, {h0}),
                            f32({1, 1, 1}, {c0}),
                            f32({1, 3}, std::vector<double>(p, p + 3))};
  double i = sigmoid(x * w[0] + h0 * r[0] + p[0] * c0);
  double f = sigmoid(x * w[2] + h0 * r[2] + p[2] * c0);
  double g = std::tanh(x * w[3] + h0 * r[3]);
  double c = f * c0 + i * g;
  double o = sigmoid(x * w[1] + h0 * r[1] + p[1] * c);
  double h = o * std::tanh(c);
  std::vector<Tensor> out = ok("lstm", {}, in, 3);
  requireValues(out[0], {h});
  requireValues(out[1], {h});
  requireValues(out[2], {c});
}

TEST_CASE("lstm: sequence_lens stops short rows and zero-pads Y",
          "[ref][misc]") {
  // W = R = 0: every gate pre-activation is 0, so i = f = o = 1/2, g = 0
  // and c halves each step from c0 = 1.
  std::vector<Tensor> in = {
      f32({2, 2, 1}, {1, 1, 1, 1}),
      f32({1, 4, 1}, {0, 0, 0, 0}),
      f32({1, 4, 1}, {0, 0, 0, 0}),
      Tensor(),
      Tensor::fromVector(DType::I32, {2}, std::vector<int>{2, 1}),
      Tensor(),
      f32({1, 2, 1}, {1, 1})};
  std::vector<Tensor> out = ok("lstm", {}, in, 3);
  REQUIRE(out[0].shape() == Shape{2, 1, 2, 1});
  double h1 = 0.5 * std::tanh(0.5), h2 = 0.5 * std::tanh(0.25);
  requireValues(out[0], {h1, h1, h2, 0.0});
  requireValues(out[1], {h2, h1});
  requireValues(out[2], {0.25, 0.5});
}

TEST_CASE("lstm: shape inference keeps unknown dims", "[ref][misc]") {
  const KernelDef *k = KernelRegistry::get().find("lstm");
  REQUIRE(k);
  std::vector<ValueInfo> in(3), out(3);
  in[0] = ValueInfo{DType::F32, {kDynamic, kDynamic, 3}, nullptr};
  in[1] = ValueInfo{DType::F32, {1, 20, 3}, nullptr};
  in[2] = ValueInfo{DType::F32, {1, 20, 5}, nullptr};
  REQUIRE(k->inferShapes({}, in, out).ok());
  CHECK(out[0].shape == Shape{kDynamic, 1, kDynamic, 5});
  CHECK(out[2].shape == Shape{1, kDynamic, 5});
}

TEST_CASE("lstm: bad operands fail with a message", "[ref][misc]") {
  std::vector<Tensor> out;
  Status s = run("lstm", {},
                 {f32({1, 1, 1}, {1}), f32({4, 1}, {0, 0, 0, 0}),
                  f32({1, 4, 1}, {0, 0, 0, 0})},
                 out, 3);
  REQUIRE(s.failed());
  CHECK(s.message().find("lstm") != std::string::npos);
  CHECK(s.message().find("W") != std::string::npos);

  s = run("gru", {{"direction", std::string("sideways")}},
          {f32({1, 1, 1}, {1}), f32({1, 3, 1}, {0, 0, 0}),
           f32({1, 3, 1}, {0, 0, 0})},
          out, 2);
  REQUIRE(s.failed());
  CHECK(s.message().find("direction") != std::string::npos);
}

//===----------------------------------------------------------------------===//
// Resize, Upsample
//===----------------------------------------------------------------------===//

TEST_CASE("resize: nearest upsampling repeats elements", "[ref][misc]") {
  std::vector<Tensor> out =
      ok("resize", {{"mode", std::string("nearest")}},
         {f32({1, 2}, {1, 2}), Tensor(), f32({2}, {1, 2})});
  REQUIRE(out[0].shape() == Shape{1, 4});
  requireValues(out[0], {1, 1, 2, 2});
}

TEST_CASE("resize: linear align_corners on sizes", "[ref][misc]") {
  // Corners map to corners: x_orig = x * (4 - 1) / (7 - 1) = x / 2, and the
  // input is the identity ramp, so the output is x / 2.
  std::vector<Tensor> out =
      ok("resize",
         {{"mode", std::string("linear")},
          {"coordinate_transformation_mode", std::string("align_corners")}},
         {f32({4}, {0, 1, 2, 3}), Tensor(), Tensor(), i64({1}, {7})});
  requireValues(out[0], {0, 0.5, 1, 1.5, 2, 2.5, 3});
}

TEST_CASE("resize: linear half_pixel clamps at the edges", "[ref][misc]") {
  // Scale 2: x_orig = (x + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25; the
  // ends clamp to the edge values.
  std::vector<Tensor> out = ok("resize", {{"mode", std::string("linear")}},
                               {f32({2}, {10, 20}), Tensor(), f32({1}, {2})});
  requireValues(out[0], {10, 12.5, 17.5, 20});
}

TEST_CASE("resize: tf_crop_and_resize extrapolates outside the roi",
          "[ref][misc]") {
  // roi [0.5, 1.5] of a length-3 axis: x_orig = 1 + x * 2 / 2 = 1, 2, 3;
  // 3 is past the last index 2.
  std::vector<Tensor> out =
      ok("resize",
         {{"mode", std::string("linear")},
          {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
          {"extrapolation_value", -1.0f}},
         {f32({3}, {5, 6, 7}), f32({2}, {0.5, 1.5}), Tensor(), i64({1}, {3})});
  requireValues(out[0], {6, 7, -1});
}

TEST_CASE("resize: nearest copies integer data exactly", "[ref][misc]") {
  int64_t big = (int64_t(1) << 60) + 1; // not representable in double
  Tensor x(DType::I64, {2});
  x.setInt(0, big);
  x.setInt(1, -big);
  std::vector<Tensor> out =
      ok("resize", {}, {x, Tensor(), Tensor(), i64({1}, {4})});
  REQUIRE(out[0].dtype() == DType::I64);
  CHECK(out[0].data<int64_t>()[0] == big);
  CHECK(out[0].data<int64_t>()[3] == -big);
}

TEST_CASE("resize: shape inference", "[ref][misc]") {
  const KernelDef *k = KernelRegistry::get().find("resize");
  REQUIRE(k);
  Tensor scales = f32({3}, {1, 2.5, 0.5});
  std::vector<ValueInfo> in(4), out(1);
  in[0] = ValueInfo{DType::F32, {kDynamic, 4, 5}, nullptr};
  in[2] = ValueInfo{DType::F32, {3}, &scales};
  REQUIRE(k->inferShapes({}, in, out).ok());
  CHECK(out[0].shape == Shape{kDynamic, 10, 2});
  in[2].value = nullptr; // scales not constant: nothing is known
  REQUIRE(k->inferShapes({}, in, out).ok());
  CHECK(out[0].shape == Shape{kDynamic, kDynamic, kDynamic});
}

TEST_CASE("resize: errors", "[ref][misc]") {
  std::vector<Tensor> out;
  Status s =
      run("resize", {},
          {f32({2}, {1, 2}), Tensor(), f32({1}, {2}), i64({1}, {4})}, out);
  REQUIRE(s.failed());
  CHECK(s.message().find("both") != std::string::npos);
  s = run("resize", {{"mode", std::string("bogus")}},
          {f32({2}, {1, 2}), Tensor(), f32({1}, {2})}, out);
  REQUIRE(s.failed());
  CHECK(s.message().find("mode") != std::string::npos);
  s = run("resize", {}, {f32({2}, {1, 2}), Tensor(), f32({2}, {2, 2})}, out);
  REQUIRE(s.failed());
}

TEST_CASE("upsample: nearest floors, linear is asymmetric", "[ref][misc]") {
  Tensor x = f32({1, 3}, {0, 3, 6});
  Tensor scales = f32({2}, {1, 2});
  requireValues(ok("upsample", {}, {x, scales})[0], {0, 0, 3, 3, 6, 6});
  // x_orig = x / 2; the last points clamp to the edge.
  requireValues(
      ok("upsample", {{"mode", std::string("linear")}}, {x, scales})[0],
      {0, 1.5, 3, 4.5, 6, 6});
}

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

TEST_CASE("quantize_linear: rounds half to even and saturates", "[ref][misc]") {
  Tensor x = f32({6}, {1.0, 3.0, 5.0, -2.0, 600.0, -600.0});
  Tensor zp = Tensor::fromVector(DType::U8, {}, std::vector<int>{10});
  std::vector<Tensor> out = ok("quantize", {}, {x, f32({}, {2}), zp});
  REQUIRE(out[0].dtype() == DType::U8);
  // 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -1 -> -1; plus 10, clamped to [0, 255].
  requireValues(out[0], {10, 12, 12, 9, 255, 0});
}

TEST_CASE("quantize_linear: per axis with a negative axis", "[ref][misc]") {
  Tensor x = f32({2, 2}, {4, 4, -4, -4});
  Tensor scale = f32({2}, {1, 4});
  Tensor zp = Tensor::fromVector(DType::I8, {2}, std::vector<int>{0, -128});
  std::vector<Tensor> out =
      ok("quantize", {{"axis", int64_t(-1)}}, {x, scale, zp});
  REQUIRE(out[0].dtype() == DType::I8);
  requireValues(out[0], {4, -127, -4, -128});
}

TEST_CASE("dequantize_linear: per tensor and per axis", "[ref][misc]") {
  Tensor x =
      Tensor::fromVector(DType::U8, {2, 2}, std::vector<int>{0, 10, 20, 255});
  Tensor zp = Tensor::fromVector(DType::U8, {}, std::vector<int>{10});
  requireValues(ok("dequantize", {}, {x, f32({}, {0.5}), zp})[0],
                {-5, 0, 5, 122.5});
  Tensor zpAxis = Tensor::fromVector(DType::U8, {2}, std::vector<int>{0, 20});
  requireValues(ok("dequantize", {{"axis", int64_t(0)}},
                   {x, f32({2}, {1, 2}), zpAxis})[0],
                {0, 10, 0, 470});
}

TEST_CASE("dequantize_linear: scale length must match the axis",
          "[ref][misc]") {
  Tensor x = Tensor::fromVector(DType::U8, {2, 3}, std::vector<int>(6, 1));
  std::vector<Tensor> out;
  Status s = run("dequantize", {}, {x, f32({2}, {1, 2})}, out);
  REQUIRE(s.failed());
  CHECK(s.message().find("dequantize") != std::string::npos);
}

TEST_CASE("dynamic_quantize_linear: range includes zero", "[ref][misc]") {
  // min 0 (adjusted), max 2.55: scale 0.01, zero point 0.
  std::vector<Tensor> out =
      ok("dynamic_quantize_linear", {}, {f32({3}, {0.5, 2.55, 1.0})}, 3);
  CHECK(out[1].getDouble(0) == Approx(0.01));
  CHECK(out[2].getDouble(0) == 0);
  requireValues(out[0], {50, 255, 100});
  // Negative values only: min -2.55, max 0 (adjusted): zero point 255.
  out = ok("dynamic_quantize_linear", {}, {f32({2}, {-2.55, -1.0})}, 3);
  CHECK(out[2].getDouble(0) == 255);
  requireValues(out[0], {0, 155});
}

//===----------------------------------------------------------------------===//
// Signal
//===----------------------------------------------------------------------===//

TEST_CASE("dft: impulse and constant", "[ref][misc]") {
  // DFT of an impulse is all ones; of a constant, n at bin 0.
  std::vector<Tensor> out = ok("dft", {}, {f32({1, 4, 1}, {1, 0, 0, 0})});
  REQUIRE(out[0].shape() == Shape{1, 4, 2});
  requireValues(out[0], {1, 0, 1, 0, 1, 0, 1, 0});
  out = ok("dft", {{"onesided", int64_t(1)}}, {f32({1, 4, 1}, {2, 2, 2, 2})});
  REQUIRE(out[0].shape() == Shape{1, 3, 2});
  requireValues(out[0], {8, 0, 0, 0, 0, 0});
}

TEST_CASE("dft: dft_length pads, inverse undoes", "[ref][misc]") {
  // x = [1, 1] padded to 4: X_k = 1 + e^{-i pi k / 2} = 2, 1-i, 0, 1+i.
  std::vector<Tensor> out =
      ok("dft", {}, {f32({1, 2, 1}, {1, 1}), i64({}, {4})});
  requireValues(out[0], {2, 0, 1, -1, 0, 0, 1, 1});
  std::vector<Tensor> back = ok("dft", {{"inverse", int64_t(1)}}, {out[0]});
  requireValues(back[0], {1, 0, 1, 0, 0, 0, 0, 0});
}

TEST_CASE("stft: frames of a cosine", "[ref][misc]") {
  // cos(pi n / 2) has period 4: every 4-point frame starting at an even
  // offset has its energy at bin 1, with sign (-1)^(start / 2).
  std::vector<double> sig(10);
  for (int n = 0; n < 10; ++n)
    sig[n] = std::cos(M_PI * n / 2);
  std::vector<Tensor> out = ok(
      "stft", {}, {f32({1, 10, 1}, sig), i64({}, {2}), Tensor(), i64({}, {4})});
  REQUIRE(out[0].shape() == Shape{1, 4, 3, 2});
  for (int f = 0; f < 4; ++f) {
    double sign = f % 2 ? -1 : 1;
    CHECK(out[0].getDouble((f * 3 + 0) * 2) == Approx(0).margin(1e-5));
    CHECK(out[0].getDouble((f * 3 + 1) * 2) == Approx(2 * sign));
    CHECK(out[0].getDouble((f * 3 + 2) * 2) == Approx(0).margin(1e-5));
  }
}

TEST_CASE("windows: closed forms", "[ref][misc]") {
  Tensor four = i64({}, {4});
  requireValues(ok("hann_window", {}, {four})[0], {0, 0.5, 1, 0.5});
  // Symmetric hann of 3: N = 2, cos(pi n) -> 0, 1, 0.
  requireValues(
      ok("hann_window", {{"periodic", int64_t(0)}}, {i64({}, {3})})[0],
      {0, 1, 0});
  double a0 = 25.0 / 46, a1 = 21.0 / 46;
  requireValues(ok("hamming_window", {}, {four})[0],
                {a0 - a1, a0, a0 + a1, a0});
  requireValues(
      ok("blackman_window", {}, {four})[0],
      {0.42 - 0.5 + 0.08, 0.42 - 0.08, 0.42 + 0.5 + 0.08, 0.42 - 0.08});
  std::vector<Tensor> d =
      ok("hann_window", {{"output_datatype", int64_t(11)}}, {i64({}, {0})});
  CHECK(d[0].dtype() == DType::F64);
  CHECK(d[0].numel() == 0);
}

TEST_CASE("mel_weight_matrix: shape and peaks", "[ref][misc]") {
  Tensor bins = i64({}, {4}), len = i64({}, {32}), rate = i64({}, {16000});
  std::vector<Tensor> out =
      ok("mel_weight_matrix", {},
         {bins, len, rate, f32({}, {0}), f32({}, {8000})});
  REQUIRE(out[0].shape() == Shape{17, 4});
  // Each filter is a triangle peaking at exactly 1.
  for (int m = 0; m < 4; ++m) {
    double peak = 0;
    for (int r = 0; r < 17; ++r)
      peak = std::max(peak, out[0].getDouble(r * 4 + m));
    CHECK(peak == Approx(1.0));
  }
}

//===----------------------------------------------------------------------===//
// GridSample, RoiAlign, NonMaxSuppression, Det
//===----------------------------------------------------------------------===//

TEST_CASE("grid_sample: identity grid with align_corners", "[ref][misc]") {
  // With align_corners, -1 and 1 are the centres of the corner pixels.
  Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor grid = f32({1, 2, 2, 2}, {-1, -1, 1, -1, -1, 1, 1, 1});
  for (const char *mode : {"bilinear", "nearest", "bicubic"}) {
    INFO(mode);
    requireValues(
        ok("grid_sample",
           {{"align_corners", int64_t(1)}, {"mode", std::string(mode)}},
           {x, grid})[0],
        {1, 2, 3, 4});
  }
  // The centre point is the mean of the four pixels.
  requireValues(ok("grid_sample", {}, {x, f32({1, 1, 1, 2}, {0, 0})})[0],
                {2.5});
}

TEST_CASE("grid_sample: padding modes outside the input", "[ref][misc]") {
  Tensor x = f32({1, 1, 1, 2}, {10, 20});
  // x = 3 (align_corners=0): pixel coordinate ((3 + 1) * 2 - 1) / 2 = 3.5.
  Tensor grid = f32({1, 1, 1, 2}, {3, 0});
  requireValues(ok("grid_sample", {}, {x, grid})[0], {0});
  requireValues(ok("grid_sample", {{"padding_mode", std::string("border")}},
                   {x, grid})[0],
                {20});
  // Reflected about -0.5 and 1.5: 3.5 -> -0.5 -> clipped to 0.
  requireValues(ok("grid_sample", {{"padding_mode", std::string("reflection")}},
                   {x, grid})[0],
                {10});
}

TEST_CASE("roi_align: constant map gives the constant", "[ref][misc]") {
  Tensor x = f32({1, 2, 4, 4}, std::vector<double>(32, 3.0));
  Tensor rois = f32({1, 4}, {0.5, 0.5, 3, 3});
  Tensor idx = i64({1}, {0});
  std::vector<Tensor> out =
      ok("roi_align",
         {{"output_height", int64_t(2)}, {"output_width", int64_t(3)}},
         {x, rois, idx});
  REQUIRE(out[0].shape() == Shape{1, 2, 2, 3});
  requireValues(out[0], std::vector<double>(12, 3.0));
}

TEST_CASE("non_max_suppression: overlap and score threshold", "[ref][misc]") {
  // Box 1 overlaps box 0 with IoU 0.81 / 1 > 0.5; box 2 is far away
  // but under the score threshold.
  Tensor boxes = f32({1, 3, 4}, {0, 0, 1, 1, 0.1, 0.1, 1, 1, 5, 5, 6, 6});
  Tensor scores = f32({1, 1, 3}, {0.9, 0.95, 0.1});
  std::vector<Tensor> out =
      ok("non_max_suppression", {},
         {boxes, scores, i64({1}, {10}), f32({1}, {0.5}), f32({1}, {0.2})});
  REQUIRE(out[0].shape() == Shape{1, 3});
  CHECK(out[0].getInt(2) == 1);
  // Without a score threshold box 2 is kept too; max 0 keeps none.
  out = ok("non_max_suppression", {},
           {boxes, scores, i64({1}, {10}), f32({1}, {0.5})});
  CHECK(out[0].shape() == Shape{2, 3});
  out = ok("non_max_suppression", {}, {boxes, scores});
  CHECK(out[0].shape() == Shape{0, 3});
}

TEST_CASE("det: small matrices and batches", "[ref][misc]") {
  std::vector<Tensor> out = ok("det", {}, {f32({2, 2}, {1, 2, 3, 4})});
  REQUIRE(out[0].shape().empty());
  requireValues(out[0], {1 * 4 - 2 * 3});
  // A row swap is needed (zero pivot); det of a permutation matrix is -1.
  requireValues(ok("det", {},
                   {f32({2, 3, 3}, {0, 1, 0, 1, 0, 0, 0, 0, 1, 2, 0, 0, 0, 3, 0,
                                    0, 0, 4})})[0],
                {-1, 24});
  out = ok("det", {}, {f32({0, 2, 2}, {})});
  CHECK(out[0].shape() == Shape{0});
  std::vector<Tensor> bad;
  Status s = run("det", {}, {f32({2, 3}, {1, 2, 3, 4, 5, 6})}, bad);
  REQUIRE(s.failed());
  CHECK(s.message().find("det") != std::string::npos);
}
