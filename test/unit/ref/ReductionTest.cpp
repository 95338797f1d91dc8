//===- ReductionTest.cpp - Tests of the reduction reference kernels -------===//
//
// Reduce*, ArgMax/ArgMin, CumSum, the softmax family and the
// normalisations. Expected values are worked out by hand or by a formula
// here, never taken from the kernels themselves.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtils.h"
#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace mlcc::ref;
using namespace mlcc::ref::test;

namespace {

// x = [[1, 2, 3], [4, 5, 6]] used by most reduce cases.
Tensor x23() { return f32({2, 3}, {1, 2, 3, 4, 5, 6}); }

} // namespace

//===----------------------------------------------------------------------===//
// Reduce*
//===----------------------------------------------------------------------===//

TEST_CASE("reduce_sum: axes attribute, keepdims default 1", "[ref][reduce]") {
  auto out = ok("reduce_sum", {{"axes", std::vector<int64_t>{1}}}, {x23()});
  REQUIRE(out[0].shape() == Shape{2, 1});
  requireValues(out[0], {6, 15});
}

TEST_CASE("reduce_sum: axes input, negative axis, keepdims=0",
          "[ref][reduce]") {
  auto out =
      ok("reduce_sum", {{"keepdims", int64_t(0)}}, {x23(), i64({1}, {-2})});
  REQUIRE(out[0].shape() == Shape{3});
  requireValues(out[0], {5, 7, 9});
}

TEST_CASE("reduce ops: every kind over axis 1", "[ref][reduce]") {
  Attrs a{{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t(0)}};
  auto r = [&](const char *op) { return ok(op, a, {x23()})[0]; };
  requireValues(r("reduce_mean"), {2, 5});
  requireValues(r("reduce_max"), {3, 6});
  requireValues(r("reduce_min"), {1, 4});
  requireValues(r("reduce_prod"), {6, 120});
  requireValues(r("reduce_l1"), {6, 15});
  requireValues(r("reduce_l2"), {std::sqrt(14.0), std::sqrt(77.0)});
  requireValues(r("reduce_log_sum"), {std::log(6.0), std::log(15.0)});
  requireValues(r("reduce_sum_square"), {14, 77});
  requireValues(r("reduce_log_sum_exp"),
                {std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)),
                 std::log(std::exp(4.0) + std::exp(5.0) + std::exp(6.0))});
}

TEST_CASE("reduce ops: axes given as input for ops other than reduce_sum",
          "[ref][reduce]") {
  // The importer may pass axes as the second input to every Reduce op.
  auto out = ok("reduce_max", {}, {x23(), i64({1}, {0})});
  REQUIRE(out[0].shape() == Shape{1, 3});
  requireValues(out[0], {4, 5, 6});
}

TEST_CASE("reduce_log_sum_exp: large inputs do not overflow", "[ref][reduce]") {
  auto out = ok("reduce_log_sum_exp", {{"keepdims", int64_t(0)}},
                {f32({2}, {1000, 1000})});
  REQUIRE(out[0].shape() == Shape{});
  requireValues(out[0], {1000 + std::log(2.0)}, 1e-3);
}

TEST_CASE("reduce: empty axes reduce all, or nothing with noop",
          "[ref][reduce]") {
  auto all = ok("reduce_sum", {}, {x23()});
  REQUIRE(all[0].shape() == Shape{1, 1});
  requireValues(all[0], {21});

  auto all2 =
      ok("reduce_mean", {{"keepdims", int64_t(0)}}, {x23(), i64({0}, {})});
  REQUIRE(all2[0].shape() == Shape{});
  requireValues(all2[0], {3.5});

  Attrs noop{{"noop_with_empty_axes", int64_t(1)}};
  auto same = ok("reduce_sum", noop, {x23(), i64({0}, {})});
  REQUIRE(same[0].shape() == Shape{2, 3});
  requireValues(same[0], {1, 2, 3, 4, 5, 6});
  // Each element is reduced on its own: the square still applies.
  auto sq = ok("reduce_sum_square", noop, {f32({3}, {-1, 2, -3})});
  requireValues(sq[0], {1, 4, 9});
}

TEST_CASE("reduce: an empty reduced set gives the identity", "[ref][reduce]") {
  Attrs a{{"axes", std::vector<int64_t>{1}}};
  Tensor empty = f32({2, 0}, {});
  auto r = [&](const char *op) { return ok(op, a, {empty})[0]; };
  REQUIRE(r("reduce_sum").shape() == Shape{2, 1});
  requireValues(r("reduce_sum"), {0, 0});
  requireValues(r("reduce_prod"), {1, 1});
  requireValues(r("reduce_max"), {-kInf, -kInf});
  requireValues(r("reduce_min"), {kInf, kInf});
  requireValues(r("reduce_log_sum_exp"), {-kInf, -kInf});
  requireValues(r("reduce_mean"), {std::nan(""), std::nan("")});
}

TEST_CASE("reduce: size-1 and scalar inputs", "[ref][reduce]") {
  auto s = ok("reduce_sum", {}, {f32({}, {7})});
  REQUIRE(s[0].shape() == Shape{});
  requireValues(s[0], {7});
  auto one = ok("reduce_l2", {{"axes", std::vector<int64_t>{0}}},
                {f32({1, 2}, {-3, 4})});
  REQUIRE(one[0].shape() == Shape{1, 2});
  requireValues(one[0], {3, 4});
}

TEST_CASE("reduce: integers are exact and keep their type", "[ref][reduce]") {
  int64_t big = (int64_t(1) << 53) + 1; // not representable in double
  auto out = ok("reduce_sum", {}, {i64({2}, {big, 2})});
  REQUIRE(out[0].dtype() == DType::I64);
  CHECK(out[0].getInt(0) == big + 2);
  Tensor i32 = Tensor::fromVector(DType::I32, {3}, std::vector<int>{7, -2, 5});
  auto mx = ok("reduce_min", {{"keepdims", int64_t(0)}}, {i32});
  REQUIRE(mx[0].dtype() == DType::I32);
  CHECK(mx[0].getInt(0) == -2);
  // Integer mean truncates like numpy's astype: 10 / 3 = 3.
  auto mean = ok("reduce_mean", {}, {i64({3}, {7, -2, 5})});
  CHECK(mean[0].getInt(0) == 3);
}

TEST_CASE("reduce: f16 input computes and returns f16", "[ref][reduce]") {
  Tensor h = Tensor::fromVector(DType::F16, {4},
                                std::vector<double>{0.5, 1.5, 2.0, -1.0});
  auto out = ok("reduce_sum", {}, {h});
  REQUIRE(out[0].dtype() == DType::F16);
  requireValues(out[0], {3.0});
}

TEST_CASE("reduce: shape inference with unknown axes and dims",
          "[ref][reduce]") {
  const KernelDef *k = KernelRegistry::get().find("reduce_sum");
  REQUIRE(k);
  std::vector<ValueInfo> out(1);
  // Axes input not constant: each dim is kept or becomes 1.
  REQUIRE(
      k->inferShapes(
           {}, {info(DType::F32, {4, 1, kDynamic}), info(DType::I64, {1})}, out)
          .ok());
  CHECK(out[0].shape == Shape{kDynamic, 1, kDynamic});
  // keepdims=0 with a known number of axes: rank known, dims not.
  REQUIRE(k->inferShapes({{"keepdims", int64_t(0)}},
                         {info(DType::F32, {4, 5, 6}), info(DType::I64, {2})},
                         out)
              .ok());
  CHECK(out[0].shape == Shape{kDynamic});
  // Constant axes: dynamic dims of kept axes stay dynamic.
  Tensor axes = i64({1}, {0});
  REQUIRE(k->inferShapes(
               {},
               {info(DType::F32, {4, kDynamic}), info(DType::I64, {1}, &axes)},
               out)
              .ok());
  CHECK(out[0].shape == Shape{1, kDynamic});
  CHECK(k->inferShapes({{"keepdims", int64_t(0)}},
                       {info(DType::F32, {4, 5}), info(DType::I64, {kDynamic})},
                       out)
            .failed());
}

TEST_CASE("reduce: bad axes and types fail with a message", "[ref][reduce]") {
  CHECK_THAT(fails("reduce_sum", {{"axes", std::vector<int64_t>{2}}}, {x23()}),
             Catch::Contains("out of range"));
  CHECK_THAT(
      fails("reduce_mean", {{"axes", std::vector<int64_t>{1, -1}}}, {x23()}),
      Catch::Contains("listed twice"));
  CHECK_THAT(fails("reduce_sum", {}, {Tensor(DType::Bool, {2})}),
             Catch::Contains("bool"));
  CHECK_THAT(fails("reduce_sum", {}, {x23(), f32({1}, {0})}),
             Catch::Contains("axes input has type"));
}

//===----------------------------------------------------------------------===//
// ArgMax, ArgMin, CumSum
//===----------------------------------------------------------------------===//

TEST_CASE("argmax/argmin: ties, select_last_index, keepdims", "[ref][reduce]") {
  Tensor x = f32({2, 3}, {1, 3, 3, 2, 0, 0});
  auto a = ok("argmax", {{"axis", int64_t(1)}}, {x});
  REQUIRE(a[0].dtype() == DType::I64);
  REQUIRE(a[0].shape() == Shape{2, 1});
  CHECK(a[0].getInt(0) == 1);
  CHECK(a[0].getInt(1) == 0);
  auto last = ok("argmax",
                 {{"axis", int64_t(-1)},
                  {"keepdims", int64_t(0)},
                  {"select_last_index", int64_t(1)}},
                 {x});
  REQUIRE(last[0].shape() == Shape{2});
  CHECK(last[0].getInt(0) == 2);
  CHECK(last[0].getInt(1) == 0);
  auto mn = ok("argmin", {{"keepdims", int64_t(0)}}, {x}); // axis 0
  REQUIRE(mn[0].shape() == Shape{3});
  CHECK(mn[0].getInt(0) == 0);
  CHECK(mn[0].getInt(1) == 1);
  CHECK(mn[0].getInt(2) == 1);
  auto mnLast = ok(
      "argmin", {{"axis", int64_t(1)}, {"select_last_index", int64_t(1)}}, {x});
  CHECK(mnLast[0].getInt(1) == 2);
}

TEST_CASE("argmax: errors", "[ref][reduce]") {
  CHECK_THAT(fails("argmax", {{"axis", int64_t(2)}}, {x23()}),
             Catch::Contains("out of range"));
  CHECK_THAT(fails("argmax", {{"axis", int64_t(1)}}, {f32({2, 0}, {})}),
             Catch::Contains("size 0"));
}

TEST_CASE("cumsum: exclusive and reverse along an axis", "[ref][reduce]") {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor ax = i64({}, {1});
  requireValues(ok("cumsum", {}, {x, ax})[0], {1, 3, 6, 4, 9, 15});
  requireValues(ok("cumsum", {{"exclusive", int64_t(1)}}, {x, ax})[0],
                {0, 1, 3, 0, 4, 9});
  requireValues(ok("cumsum", {{"reverse", int64_t(1)}}, {x, ax})[0],
                {6, 5, 3, 15, 11, 6});
  requireValues(ok("cumsum",
                   {{"reverse", int64_t(1)}, {"exclusive", int64_t(1)}},
                   {x, ax})[0],
                {5, 3, 0, 11, 6, 0});
  Tensor ax32 = Tensor::fromVector(DType::I32, {1}, std::vector<int>{-2});
  requireValues(ok("cumsum", {}, {x, ax32})[0], {1, 2, 3, 5, 7, 9});
  auto ints = ok("cumsum", {}, {i64({3}, {5, -1, 2}), i64({}, {0})});
  CHECK(ints[0].dtype() == DType::I64);
  CHECK(ints[0].getInt(2) == 6);
  CHECK_THAT(fails("cumsum", {}, {x, i64({}, {2})}),
             Catch::Contains("out of range"));
}

//===----------------------------------------------------------------------===//
// Softmax family
//===----------------------------------------------------------------------===//

TEST_CASE("softmax / log_softmax: last axis and strided axis",
          "[ref][softmax]") {
  Tensor x = f32({2, 3}, {1, 2, 3, 1, 1, 1});
  double s = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  auto sm = ok("softmax", {}, {x});
  requireValues(sm[0], {std::exp(1.0) / s, std::exp(2.0) / s, std::exp(3.0) / s,
                        1 / 3.0, 1 / 3.0, 1 / 3.0});
  auto lsm = ok("log_softmax", {}, {x});
  requireValues(lsm[0], {1 - std::log(s), 2 - std::log(s), 3 - std::log(s),
                         -std::log(3.0), -std::log(3.0), -std::log(3.0)});
  // axis 0: columns [1,1], [2,1], [3,1].
  auto col = ok("softmax", {{"axis", int64_t(0)}}, {x});
  auto sig = [](double d) { return 1 / (1 + std::exp(-d)); };
  requireValues(col[0], {0.5, sig(1), sig(2), 0.5, sig(-1), sig(-2)});
}

TEST_CASE("softmax: large and size-1 inputs", "[ref][softmax]") {
  auto big = ok("softmax", {}, {f32({2}, {10000, 10001})});
  double e = std::exp(1.0);
  requireValues(big[0], {1 / (1 + e), e / (1 + e)});
  auto lbig = ok("log_softmax", {}, {f32({2}, {10000, 10000})});
  requireValues(lbig[0], {-std::log(2.0), -std::log(2.0)});
  auto single =
      ok("softmax", {{"axis", int64_t(1)}}, {f32({2, 1, 2}, {5, 6, 7, 8})});
  requireValues(single[0], {1, 1, 1, 1});
  auto empty = ok("softmax", {}, {f32({0, 3}, {})});
  CHECK(empty[0].shape() == Shape{0, 3});
}

TEST_CASE("hardmax: first maximum along the axis", "[ref][softmax]") {
  Tensor x = f32({2, 3}, {3, 1, 3, 0, 2, 1});
  requireValues(ok("hardmax", {}, {x})[0], {1, 0, 0, 0, 1, 0});
  requireValues(ok("hardmax", {{"axis", int64_t(0)}}, {x})[0],
                {1, 0, 1, 0, 1, 0});
}

TEST_CASE("softmax: errors", "[ref][softmax]") {
  CHECK_THAT(fails("softmax", {}, {i64({2}, {1, 2})}),
             Catch::Contains("float"));
  CHECK_THAT(fails("log_softmax", {{"axis", int64_t(-3)}}, {x23()}),
             Catch::Contains("out of range"));
}

//===----------------------------------------------------------------------===//
// Normalisations
//===----------------------------------------------------------------------===//

TEST_CASE("batch_norm: inference per channel", "[ref][norm]") {
  // N=1, C=2, 2 elements per channel.
  Tensor x = f32({1, 2, 2}, {1, 2, 3, 4});
  auto out = ok("batch_norm", {{"epsilon", 0.0f}},
                {x, f32({2}, {2, 1}), f32({2}, {0.5, -1}), f32({2}, {1, 3}),
                 f32({2}, {4, 1})});
  REQUIRE(out[0].shape() == Shape{1, 2, 2});
  // c0: (x-1)/2*2+0.5, c1: (x-3)/1*1-1.
  requireValues(out[0], {0.5, 1.5, -1, 0});
  CHECK_THAT(fails("batch_norm", {},
                   {x, f32({3}, {1, 1, 1}), f32({2}, {0, 0}), f32({2}, {0, 0}),
                    f32({2}, {1, 1})}),
             Catch::Contains("scale"));
}

TEST_CASE("batch_norm: training mode uses batch statistics", "[ref][norm]") {
  // One channel, values 1..4: mean 2.5, population var 1.25.
  Tensor x = f32({4, 1}, {1, 2, 3, 4});
  auto out =
      ok("batch_norm",
         {{"training_mode", int64_t(1)}, {"epsilon", 0.0f}, {"momentum", 0.5f}},
         {x, f32({1}, {1}), f32({1}, {0}), f32({1}, {1}), f32({1}, {1})}, 3);
  double sd = std::sqrt(1.25);
  requireValues(out[0], {-1.5 / sd, -0.5 / sd, 0.5 / sd, 1.5 / sd});
  requireValues(out[1], {0.5 * 1 + 0.5 * 2.5});
  requireValues(out[2], {0.5 * 1 + 0.5 * 1.25});
}

TEST_CASE("instance_norm: per batch and channel", "[ref][norm]") {
  Tensor x = f32({1, 2, 2}, {1, 3, 10, 10});
  // c0: mean 2, variance 1; c1 is constant, so its variance is 0 and only
  // epsilon keeps the division finite.
  auto out = ok("instance_norm", {{"epsilon", 0.0f}},
                {x, f32({2}, {2, 1}), f32({2}, {1, 5})});
  CHECK(out[0].getDouble(0) == Approx(-1));
  CHECK(out[0].getDouble(1) == Approx(3));
  auto eps = ok("instance_norm", {{"epsilon", 1.0f}},
                {x, f32({2}, {2, 1}), f32({2}, {1, 5})});
  requireValues(eps[0],
                {-2 / std::sqrt(2.0) + 1, 2 / std::sqrt(2.0) + 1, 5, 5});
}

TEST_CASE("layer_norm: Y, Mean and InvStdDev", "[ref][norm]") {
  // Rows [1, 3] and [2, 6] normalised over the last axis.
  Tensor x = f32({2, 2}, {1, 3, 2, 6});
  auto out = ok("layer_norm", {{"epsilon", 0.0f}},
                {x, f32({2}, {1, 2}), f32({2}, {0, 1})}, 3);
  requireValues(out[0], {-1, 3, -1, 3});
  REQUIRE(out[1].shape() == Shape{2, 1});
  REQUIRE(out[1].dtype() == DType::F32);
  requireValues(out[1], {2, 4});
  requireValues(out[2], {1, 0.5});
  // axis 0 normalises everything; no bias.
  auto all = ok("layer_norm", {{"axis", int64_t(0)}, {"epsilon", 0.0f}},
                {x, f32({}, {2})}, 3);
  double mean = 3, sd = std::sqrt((4 + 0 + 1 + 9) / 4.0);
  requireValues(all[0], {2 * (1 - mean) / sd, 2 * (3 - mean) / sd,
                         2 * (2 - mean) / sd, 2 * (6 - mean) / sd});
  REQUIRE(all[1].shape() == Shape{1, 1});
  CHECK_THAT(
      fails("layer_norm", {{"stash_type", int64_t(7)}}, {x, f32({2}, {1, 1})}),
      Catch::Contains("stash_type"));
  CHECK_THAT(fails("layer_norm", {}, {x, f32({3}, {1, 1, 1})}),
             Catch::Contains("broadcast"));
}

TEST_CASE("lp_norm: p=1, p=2 and a zero vector", "[ref][norm]") {
  Tensor x = f32({2, 2}, {3, 4, 0, 0});
  requireValues(ok("lp_norm", {}, {x})[0], {0.6, 0.8, 0, 0});
  requireValues(ok("lp_norm", {{"p", int64_t(1)}}, {x})[0],
                {3 / 7.0, 4 / 7.0, 0, 0});
  requireValues(ok("lp_norm", {{"axis", int64_t(0)}}, {x})[0], {1, 1, 0, 0});
  CHECK_THAT(fails("lp_norm", {{"p", int64_t(3)}}, {x}),
             Catch::Contains("expected 1 or 2"));
}

TEST_CASE("mean_variance_norm: default axes [0, 2, 3]", "[ref][norm]") {
  // [1, 2, 1, 2]: channel 0 = {1, 3}, channel 1 = {5, 5}.
  Tensor x = f32({1, 2, 1, 2}, {1, 3, 5, 5});
  requireValues(ok("mean_variance_norm", {}, {x})[0], {-1, 1, 0, 0}, 1e-6);
  CHECK_THAT(fails("mean_variance_norm", {}, {f32({2, 2}, {1, 2, 3, 4})}),
             Catch::Contains("out of range"));
}

TEST_CASE("lrn: window over channels", "[ref][norm]") {
  // C=3, size=2: window of channel c is [c, c+1] (floor(1/2)=0 before,
  // ceil(1/2)=1 after).
  Tensor x = f32({1, 3, 1}, {1, 2, 3});
  Attrs a{
      {"size", int64_t(2)}, {"alpha", 2.0f}, {"beta", 0.5f}, {"bias", 1.0f}};
  auto f = [](double v, double sq) { return v / std::sqrt(1 + 2.0 / 2 * sq); };
  requireValues(ok("lrn", a, {x})[0], {f(1, 5), f(2, 13), f(3, 9)});
  CHECK_THAT(fails("lrn", {}, {x}), Catch::Contains("size"));
}
