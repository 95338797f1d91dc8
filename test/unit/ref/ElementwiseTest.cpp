//===- ElementwiseTest.cpp - Tests of the elementwise reference kernels ---===//
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

//===----------------------------------------------------------------------===//
// Unary math
//===----------------------------------------------------------------------===//

TEST_CASE("unary float functions follow their formulas", "[ref][elementwise]") {
  std::vector<double> x = {0.25, 0.5, 0.75};
  Tensor t = f32({3}, x);
  struct {
    const char *op;
    double (*fn)(double);
  } cases[] = {{"exp", [](double v) { return std::exp(v); }},
               {"log", [](double v) { return std::log(v); }},
               {"sqrt", [](double v) { return std::sqrt(v); }},
               {"reciprocal", [](double v) { return 1 / v; }},
               {"sin", [](double v) { return std::sin(v); }},
               {"acos", [](double v) { return std::acos(v); }},
               {"atanh", [](double v) { return std::atanh(v); }},
               {"tanh", [](double v) { return std::tanh(v); }},
               {"erf", [](double v) { return std::erf(v); }}};
  for (auto &c : cases) {
    INFO(c.op);
    Tensor y = ok(c.op, {}, {t})[0];
    CHECK(y.dtype() == DType::F32);
    CHECK(y.shape() == Shape{3});
    requireValues(y, {c.fn(x[0]), c.fn(x[1]), c.fn(x[2])});
  }
}

TEST_CASE("round goes half to even", "[ref][elementwise]") {
  Tensor y = ok("round", {},
                {f32({8}, {0.5, 1.5, 2.5, -0.5, -2.5, 2.4, 2.6, -3.5})})[0];
  requireValues(y, {0, 2, 2, 0, -2, 2, 3, -4});
}

TEST_CASE("abs, neg and sign on integers and floats", "[ref][elementwise]") {
  requireValues(ok("abs", {}, {i32({3}, {-5, 0, 7})})[0], {5, 0, 7});
  requireValues(ok("neg", {}, {i64({2}, {-5, 7})})[0], {5, -7});
  requireValues(ok("sign", {}, {f32({4}, {-2.5, 0, 3, kNan})})[0],
                {-1, 0, 1, kNan});
  Tensor y = ok("floor", {}, {f32({2}, {-1.5, 1.5})})[0];
  requireValues(y, {-2, 1});
  requireValues(ok("ceil", {}, {f32({2}, {-1.5, 1.5})})[0], {-1, 2});
}

TEST_CASE("unary ops keep empty and scalar shapes", "[ref][elementwise]") {
  Tensor empty = ok("exp", {}, {f32({0, 3}, {})})[0];
  CHECK(empty.shape() == Shape{0, 3});
  Tensor scalar = ok("neg", {}, {f32({}, {2})})[0];
  CHECK(scalar.shape() == Shape{});
  requireValues(scalar, {-2});
}

TEST_CASE("is_nan, is_inf and not give bool", "[ref][elementwise]") {
  Tensor x = f32({4}, {1, kNan, kInf, -kInf});
  Tensor n = ok("is_nan", {}, {x})[0];
  CHECK(n.dtype() == DType::Bool);
  requireValues(n, {0, 1, 0, 0});
  requireValues(ok("is_inf", {}, {x})[0], {0, 0, 1, 1});
  requireValues(ok("is_inf", {{"detect_negative", int64_t(0)}}, {x})[0],
                {0, 0, 1, 0});
  requireValues(ok("not", {}, {boolean({2}, {1, 0})})[0], {0, 1});
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

TEST_CASE("activations follow their formulas", "[ref][elementwise]") {
  std::vector<double> x = {-2, -0.5, 0, 1.5};
  Tensor t = f32({4}, x);
  auto each = [&](double (*fn)(double)) {
    std::vector<double> v;
    for (double e : x)
      v.push_back(fn(e));
    return v;
  };
  requireValues(ok("relu", {}, {t})[0],
                each([](double v) { return v > 0 ? v : 0; }));
  requireValues(ok("leaky_relu", {{"alpha", 0.1f}}, {t})[0],
                each([](double v) { return v > 0 ? v : 0.1 * v; }));
  requireValues(ok("elu", {}, {t})[0],
                each([](double v) { return v > 0 ? v : std::exp(v) - 1; }));
  requireValues(ok("selu", {}, {t})[0], each([](double v) {
                  double a = 1.6732632423543772, g = 1.0507009873554805;
                  return v > 0 ? g * v : g * (a * std::exp(v) - a);
                }));
  requireValues(ok("celu", {{"alpha", 2.0f}}, {t})[0], each([](double v) {
                  return std::max(0.0, v) +
                         std::min(0.0, 2 * (std::exp(v / 2) - 1));
                }));
  requireValues(ok("sigmoid", {}, {t})[0],
                each([](double v) { return 1 / (1 + std::exp(-v)); }));
  requireValues(ok("hard_sigmoid", {}, {t})[0], each([](double v) {
                  return std::max(0.0, std::min(1.0, 0.2 * v + 0.5));
                }));
  requireValues(ok("hard_swish", {}, {t})[0], each([](double v) {
                  return v * std::max(0.0, std::min(1.0, v / 6 + 0.5));
                }));
  requireValues(ok("softsign", {}, {t})[0],
                each([](double v) { return v / (1 + std::fabs(v)); }));
  requireValues(ok("thresholded_relu", {{"alpha", 0.0f}}, {t})[0],
                each([](double v) { return v > 0 ? v : 0; }));
  requireValues(ok("shrink", {{"lambd", 1.0f}, {"bias", 0.5f}}, {t})[0],
                {-1.5, 0, 0, 1});
}

TEST_CASE("softplus does not overflow", "[ref][elementwise]") {
  requireValues(ok("softplus", {}, {f32({3}, {100, 0, -100})})[0],
                {100, std::log(2.0), 0});
}

TEST_CASE("relu on integers", "[ref][elementwise]") {
  requireValues(ok("relu", {}, {i32({3}, {-3, 0, 4})})[0], {0, 0, 4});
}

TEST_CASE("prelu broadcasts the slope", "[ref][elementwise]") {
  Tensor x = f32({2, 2}, {-1, -2, 3, -4});
  requireValues(ok("prelu", {}, {x, f32({2}, {0.5, 0.25})})[0],
                {-0.5, -0.5, 3, -1});
  // PRelu-6 per-channel slope [C] for X [N, C, L].
  Tensor x3 = f32({1, 2, 3}, {-1, -1, 1, -1, -1, 1});
  requireValues(ok("prelu", {}, {x3, f32({2}, {0.1, 0.2})})[0],
                {-0.1, -0.1, 1, -0.2, -0.2, 1});
  std::string msg = fails("prelu", {}, {x3, f32({4}, {1, 2, 3, 4})});
  CHECK(msg.find("prelu") != std::string::npos);
}

TEST_CASE("clip takes optional min and max inputs", "[ref][elementwise]") {
  Tensor x = f32({4}, {-3, -1, 1, 3});
  requireValues(ok("clip", {}, {x, f32({}, {-2}), f32({}, {2})})[0],
                {-2, -1, 1, 2});
  requireValues(ok("clip", {}, {x, Tensor(), f32({}, {0})})[0], {-3, -1, 0, 0});
  requireValues(ok("clip", {}, {x})[0], {-3, -1, 1, 3});
  requireValues(
      ok("clip", {}, {i32({3}, {-5, 5, 50}), i32({1}, {0}), i32({1}, {10})})[0],
      {0, 5, 10});
  std::string msg = fails("clip", {}, {x, f32({2}, {0, 1})});
  CHECK(msg.find("clip: min") != std::string::npos);
}

TEST_CASE("dropout passes the input through in inference",
          "[ref][elementwise]") {
  Tensor x = f32({3}, {1, 2, 3});
  std::vector<Tensor> outs = ok("dropout", {}, {x, f32({}, {0.3})}, 2);
  requireValues(outs[0], {1, 2, 3});
  CHECK(outs[1].dtype() == DType::Bool);
  requireValues(outs[1], {1, 1, 1});
  std::vector<Tensor> out;
  Status s = run("dropout", {}, {x, f32({}, {0.5}), boolean({}, {1})}, out, 2);
  CHECK(s.failed());
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

TEST_CASE("binary arithmetic broadcasts numpy-style", "[ref][elementwise]") {
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y = ok("add", {}, {a, f32({3}, {10, 20, 30})})[0];
  CHECK(y.shape() == Shape{2, 3});
  requireValues(y, {11, 22, 33, 14, 25, 36});
  // [2, 1] - [1, 3] -> [2, 3]
  Tensor z = ok("sub", {}, {f32({2, 1}, {1, 2}), f32({1, 3}, {1, 2, 3})})[0];
  CHECK(z.shape() == Shape{2, 3});
  requireValues(z, {0, -1, -2, 1, 0, -1});
  requireValues(ok("mul", {}, {f32({}, {2}), a})[0], {2, 4, 6, 8, 10, 12});
  // Middle-axis broadcast: [2, 2, 2] * [1, 2, 1].
  Tensor m =
      ok("mul", {},
         {f32({2, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1}), f32({1, 2, 1}, {3, 5})})[0];
  requireValues(m, {3, 3, 5, 5, 3, 3, 5, 5});
  Tensor e = ok("add", {}, {f32({0, 3}, {}), f32({3}, {1, 2, 3})})[0];
  CHECK(e.shape() == Shape{0, 3});
}

TEST_CASE("integer div truncates, mod follows fmod", "[ref][elementwise]") {
  requireValues(
      ok("div", {}, {i32({4}, {7, -7, 7, -7}), i32({4}, {2, 2, -2, -2})})[0],
      {3, -3, -3, 3});
  Tensor a = i32({4}, {7, -7, 7, -7}), b = i32({4}, {3, 3, -3, -3});
  // Sign of the divisor (Python %).
  requireValues(ok("mod", {}, {a, b})[0], {1, 2, -2, -1});
  // Sign of the dividend (C %).
  requireValues(ok("mod", {{"fmod", int64_t(1)}}, {a, b})[0], {1, -1, 1, -1});
  requireValues(ok("mod", {{"fmod", int64_t(1)}},
                   {f32({2}, {5.5, -5.5}), f32({2}, {2, 2})})[0],
                {1.5, -1.5});
  std::string msg = fails("div", {}, {a, i32({4}, {1, 0, 1, 1})});
  CHECK(msg.find("div") != std::string::npos);
}

TEST_CASE("pow with mixed base and exponent types", "[ref][elementwise]") {
  requireValues(
      ok("pow", {}, {f32({3}, {2, 4, 9}), f32({3}, {3, 0.5, 0.5})})[0],
      {8, 2, 3});
  requireValues(ok("pow", {}, {f32({2}, {2, 3}), i64({1}, {2})})[0], {4, 9});
  Tensor y = ok("pow", {}, {i64({3}, {1, 2, 3}), f32({3}, {4, 5, 6})})[0];
  CHECK(y.dtype() == DType::I64);
  requireValues(y, {1, 32, 729});
  requireValues(ok("pow", {}, {i32({3}, {-2, 2, 1}), i32({3}, {3, -1, -5})})[0],
                {-8, 0, 1});
}

TEST_CASE("bit_shift on unsigned integers", "[ref][elementwise]") {
  Tensor x = make(DType::U8, {3}, {16, 4, 1});
  Tensor s = make(DType::U8, {3}, {1, 2, 9});
  requireValues(
      ok("bit_shift", {{"direction", std::string("RIGHT")}}, {x, s})[0],
      {8, 1, 0});
  requireValues(
      ok("bit_shift", {{"direction", std::string("LEFT")}}, {x, s})[0],
      {32, 16, 0});
  std::string msg =
      fails("bit_shift", {{"direction", std::string("UP")}}, {x, s});
  CHECK(msg.find("direction") != std::string::npos);
}

TEST_CASE("comparisons and logic give bool", "[ref][elementwise]") {
  Tensor a = f32({3}, {1, 2, 3}), b = f32({1}, {2});
  Tensor g = ok("greater", {}, {a, b})[0];
  CHECK(g.dtype() == DType::Bool);
  requireValues(g, {0, 0, 1});
  requireValues(ok("less_or_equal", {}, {a, b})[0], {1, 1, 0});
  requireValues(ok("equal", {}, {i64({3}, {1, 2, 3}), i64({}, {2})})[0],
                {0, 1, 0});
  Tensor p = boolean({4}, {0, 0, 1, 1}), q = boolean({4}, {0, 1, 0, 1});
  requireValues(ok("and", {}, {p, q})[0], {0, 0, 0, 1});
  requireValues(ok("or", {}, {p, q})[0], {0, 1, 1, 1});
  requireValues(ok("xor", {}, {p, q})[0], {0, 1, 1, 0});
}

TEST_CASE("where broadcasts all three inputs", "[ref][elementwise]") {
  Tensor cond = boolean({2, 1}, {1, 0});
  Tensor y = ok("where", {}, {cond, f32({1, 3}, {1, 2, 3}), f32({}, {-1})})[0];
  CHECK(y.shape() == Shape{2, 3});
  requireValues(y, {1, 2, 3, -1, -1, -1});
  std::string msg =
      fails("where", {}, {f32({1}, {1}), f32({1}, {1}), f32({1}, {1})});
  CHECK(msg.find("where: input condition") != std::string::npos);
}

TEST_CASE("binary shape errors name the op", "[ref][elementwise]") {
  std::string msg = fails(
      "add", {}, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({4}, {1, 2, 3, 4})});
  CHECK(msg.find("add:") == 0);
  msg = fails("mul", {}, {f32({1}, {1}), i64({1}, {1})});
  CHECK(msg.find("mul:") == 0);
  msg = fails("exp", {}, {i64({1}, {1})});
  CHECK(msg.find("exp:") == 0);
}

TEST_CASE("binary shape helper propagates dynamic dims", "[ref][elementwise]") {
  const KernelDef *k = KernelRegistry::get().find("add");
  REQUIRE(k);
  std::vector<ValueInfo> in(2), out(1);
  in[0].dtype = in[1].dtype = DType::F32;
  in[0].shape = {kDynamic, 3};
  in[1].shape = {1, 3};
  REQUIRE(k->inferShapes({}, in, out).ok());
  CHECK(out[0].shape == Shape{kDynamic, 3});
  in[0].shape = {kDynamic};
  in[1].shape = {4};
  REQUIRE(k->inferShapes({}, in, out).ok());
  CHECK(out[0].shape == Shape{4});
}

//===----------------------------------------------------------------------===//
// Variadic
//===----------------------------------------------------------------------===//

TEST_CASE("sum, mean, max and min over broadcast inputs",
          "[ref][elementwise]") {
  Tensor a = f32({2, 2}, {1, 2, 3, 4});
  Tensor b = f32({2}, {10, 20});
  Tensor c = f32({}, {100});
  requireValues(ok("sum", {}, {a, b, c})[0], {111, 122, 113, 124});
  requireValues(ok("mean", {}, {a, b, c})[0],
                {37, 122.0 / 3, 113.0 / 3, 124.0 / 3});
  requireValues(ok("max", {}, {a, f32({2}, {2, kNan})})[0], {2, kNan, 3, kNan});
  requireValues(ok("min", {}, {a})[0], {1, 2, 3, 4});
  requireValues(ok("max", {}, {i32({2}, {-1, 5}), i32({2}, {3, 2})})[0],
                {3, 5});
  std::string msg = fails("sum", {}, {});
  CHECK(msg.find("sum") != std::string::npos);
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

TEST_CASE("cast between numeric types", "[ref][elementwise]") {
  // ONNX data types: 1 float, 2 uint8, 6 int32, 9 bool, 10 float16,
  // 16 bfloat16.
  Tensor x = f32({5}, {2.7, -2.7, 1e10, -1e10, kNan});
  Tensor y = ok("cast", {{"to", int64_t(6)}}, {x})[0];
  CHECK(y.dtype() == DType::I32);
  requireValues(y, {2, -2, 2147483647.0, -2147483648.0, 0});
  // Integer to integer wraps: 300 mod 256 = 44, -1 -> 255.
  requireValues(ok("cast", {{"to", int64_t(2)}}, {i64({2}, {300, -1})})[0],
                {44, 255});
  requireValues(ok("cast", {{"to", int64_t(9)}}, {f32({3}, {0, -0.5, 2})})[0],
                {0, 1, 1});
  requireValues(ok("cast", {{"to", int64_t(1)}}, {boolean({2}, {1, 0})})[0],
                {1, 0});
  // 1/3 in half: 0x3555 = (1 + 341/1024) / 4.
  Tensor h = ok("cast", {{"to", int64_t(10)}}, {f32({1}, {1.0 / 3})})[0];
  CHECK(h.dtype() == DType::F16);
  CHECK(h.data<uint16_t>()[0] == 0x3555);
  requireValues(h, {(1 + 341.0 / 1024) / 4}, 0);
  // bf16 keeps 7 mantissa bits; ties go to even.
  Tensor bf = ok("cast", {{"to", int64_t(16)}},
                 {f32({2}, {1 + 1.0 / 256, 1 + 3.0 / 256})})[0];
  requireValues(bf, {1, 1 + 4.0 / 256}, 0);
  Tensor like = ok("cast_like", {}, {f32({1}, {3.9}), i64({1}, {0})})[0];
  CHECK(like.dtype() == DType::I64);
  requireValues(like, {3});
  std::string msg = fails("cast", {{"to", int64_t(8)}}, {x});
  CHECK(msg.find("cast:") == 0);
}

TEST_CASE("identity copies any type", "[ref][elementwise]") {
  Tensor x = boolean({2}, {1, 0});
  Tensor y = ok("identity", {}, {x})[0];
  CHECK(y.dtype() == DType::Bool);
  requireValues(y, {1, 0});
  CHECK(y.raw() != x.raw());
}
