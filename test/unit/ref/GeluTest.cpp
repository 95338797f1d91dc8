//===- GeluTest.cpp - Tests of the graph.gelu reference kernel ------------===//
//
// The kernel against the formulas evaluated in double, and against the
// decomposed groups mlcc-fuse-gelu replaces, run op by op through the
// registry's own kernels: fusing must not change an f32 result.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtils.h"
#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

using namespace mlcc::ref;
using namespace mlcc::ref::test;

namespace {

double geluErf(double x) {
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}
double geluTanh(double x) {
  const double c = std::sqrt(2 / M_PI);
  return 0.5 * x * (1 + std::tanh(c * (x + 0.044715 * x * x * x)));
}

std::vector<double> inputs() {
  std::vector<double> x;
  for (int i = -60; i <= 60; ++i)
    x.push_back(i / 8.0 + 0.01);
  for (double v : {0.0, -0.0, 1e-20, -1e-20, 30.0, -30.0})
    x.push_back(v);
  return x;
}

Tensor scalar(double v) { return f32({}, {v}); }

Tensor run1(const std::string &op, const std::vector<Tensor> &in) {
  return ok(op, {}, in)[0];
}

} // namespace

TEST_CASE("gelu follows its formulas in f32 and f64", "[ref][gelu]") {
  std::vector<double> x = inputs();
  const int64_t n = static_cast<int64_t>(x.size());
  for (DType t : {DType::F32, DType::F64}) {
    for (const char *form : {"none", "tanh"}) {
      INFO(dtypeName(t) << ", approximate = " << form);
      Attrs attrs{{"approximate", std::string(form)}};
      Tensor y = ok("gelu", attrs, {make(t, {n}, x)})[0];
      REQUIRE(y.dtype() == t);
      REQUIRE(y.shape() == Shape{n});
      const bool tanhForm = std::string(form) == "tanh";
      // f32: a few roundings of values up to 8; f64: the same, in double.
      const double tol = t == DType::F32 ? 4e-7 : 1e-15;
      for (int64_t i = 0; i < n; ++i) {
        double want = tanhForm ? geluTanh(x[i]) : geluErf(x[i]);
        INFO("x = " << x[i]);
        CHECK(std::fabs(y.getDouble(i) - want) <=
              tol * std::max(1.0, std::fabs(want)));
      }
    }
  }
}

TEST_CASE("gelu defaults to the erf form and rejects other forms",
          "[ref][gelu]") {
  Tensor x = f32({3}, {-1.0, 0.5, 2.0});
  Tensor byDefault = ok("gelu", {}, {x})[0];
  Tensor none = ok("gelu", {{"approximate", std::string("none")}}, {x})[0];
  REQUIRE(std::memcmp(byDefault.raw(), none.raw(), byDefault.byteSize()) == 0);
  requireValues(byDefault, {geluErf(-1.0), geluErf(0.5), geluErf(2.0)});
  std::string msg = fails("gelu", {{"approximate", std::string("fast")}}, {x});
  CHECK(msg.find("fast") != std::string::npos);
  CHECK(fails("gelu", {}, {i32({1}, {1})}).find("i32") != std::string::npos);
  // f16 computes in f32 and rounds once.
  Tensor h = ok("gelu", {}, {make(DType::F16, {1}, {1.0})})[0];
  CHECK(h.dtype() == DType::F16);
  CHECK(std::fabs(h.getDouble(0) - geluErf(1.0)) < 1e-3);
}

// The groups of FuseGelu.cpp's comment, op by op: the fused kernel gives
// the same f32 bits.
TEST_CASE("gelu gives the decomposed groups' f32 results bit for bit",
          "[ref][gelu]") {
  std::vector<double> xs = inputs();
  const int64_t n = static_cast<int64_t>(xs.size());
  Tensor x = f32({n}, xs);
  // erf: x * (1 + erf(x / 1.4142135)) * 0.5, torch's order.
  Tensor e = run1("erf", {run1("div", {x, scalar(1.4142135381698608)})});
  Tensor erfGroup =
      run1("mul", {run1("mul", {x, run1("add", {e, scalar(1)})}), scalar(0.5)});
  Tensor erfFused = ok("gelu", {}, {x})[0];
  CHECK(std::memcmp(erfGroup.raw(), erfFused.raw(), erfGroup.byteSize()) == 0);
  // tanh: 0.5 * x * (1 + tanh(0.7978846 * (x + 0.044715 * x * x * x))).
  Tensor cube = run1("mul", {run1("mul", {x, x}), x});
  Tensor inner =
      run1("add", {x, run1("mul", {scalar(0.044714998453855515), cube})});
  Tensor th = run1("tanh", {run1("mul", {scalar(0.7978845834732056), inner})});
  Tensor tanhGroup = run1(
      "mul", {run1("mul", {scalar(0.5), x}), run1("add", {scalar(1), th})});
  Tensor tanhFused = ok("gelu", {{"approximate", std::string("tanh")}}, {x})[0];
  CHECK(std::memcmp(tanhGroup.raw(), tanhFused.raw(), tanhGroup.byteSize()) ==
        0);
}
