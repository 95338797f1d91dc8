//===- StencilTest.cpp - graph.stencil reference kernel -------------------===//

#include "KernelTestUtils.h"
#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

using namespace mlcc::ref;
using namespace mlcc::ref::test;

TEST_CASE("stencil: 1-D sum under each padding mode", "[stencil]") {
  // x = [1 2 3 4], window [1 1 1] centred: out[i] = x[i-1] + x[i] + x[i+1].
  Tensor x = f32({4}, {1, 2, 3, 4}), w = f32({3}, {1, 1, 1});
  struct Case {
    const char *padding;
    float first, last; // x[-1] and x[4] resolved by the mode
  };
  auto c = GENERATE(Case{"zero", 0, 0}, Case{"clamp", 1, 4},
                    Case{"reflect", 2, 3}, Case{"mirror", 1, 4});
  Tensor y = ok("stencil", {{"padding", std::string(c.padding)}}, {x, w})[0];
  REQUIRE(y.shape() == Shape{4});
  CHECK(y.getDouble(0) == c.first + 1 + 2);
  CHECK(y.getDouble(1) == 1 + 2 + 3);
  CHECK(y.getDouble(3) == 3 + 4 + c.last);
}

TEST_CASE("stencil: 2-D 5-point Laplacian of a quadratic", "[stencil]") {
  // f(i, j) = i^2 + j^2 has Laplacian 4 everywhere inside the grid.
  Tensor x(DType::F32, {6, 6});
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j)
      x.setDouble(i * 6 + j, i * i + j * j);
  Tensor w = Tensor::fromVector<float>(DType::F32, {3, 3},
                                       {0, 1, 0, 1, -4, 1, 0, 1, 0});
  Tensor y = ok("stencil", {{"padding", std::string("clamp")}}, {x, w})[0];
  for (int i = 1; i < 5; ++i)
    for (int j = 1; j < 5; ++j)
      CHECK(y.getDouble(i * 6 + j) == Approx(4.0));
}

TEST_CASE("stencil: weighted min, max and arg modes", "[stencil]") {
  Tensor x = f32({3}, {5, 1, 7}), w = f32({3}, {1, 2, 1});
  // Centre element 1 of output 1 sees [5, 1*2, 7] -> min 2 at 1, max 7 at 2.
  auto reduce = [&](const char *mode) {
    return ok("stencil", {{"reduction", std::string(mode)}}, {x, w})[0];
  };
  CHECK(reduce("min").getDouble(1) == 2);
  CHECK(reduce("max").getDouble(1) == 7);
  Tensor am = reduce("argmin");
  CHECK(am.dtype() == DType::I64);
  CHECK(am.getInt(1) == 1);
  CHECK(reduce("argmax").getInt(1) == 2);
}

TEST_CASE("stencil: strides shrink the output, offsets move the window",
          "[stencil]") {
  Tensor x = f32({5}, {1, 2, 3, 4, 5}), w = f32({2}, {1, 1});
  Tensor y = ok("stencil",
                {{"strides", std::vector<int64_t>{2}},
                 {"offsets", std::vector<int64_t>{0}}},
                {x, w})[0];
  REQUIRE(y.shape() == Shape{3}); // ceil(5 / 2)
  CHECK(y.getDouble(0) == 1 + 2);
  CHECK(y.getDouble(1) == 3 + 4);
  CHECK(y.getDouble(2) == 5 + 0); // zero padding past the end
}

TEST_CASE("stencil: bad attributes are errors", "[stencil]") {
  const KernelDef *k = KernelRegistry::get().find("stencil");
  std::vector<Tensor> out(1);
  Tensor x = f32({3}, {1, 2, 3}), w = f32({3}, {1, 1, 1});
  CHECK(k->run({{"reduction", std::string("median")}}, {x, w}, out).failed());
  CHECK(k->run({{"strides", std::vector<int64_t>{1, 1}}}, {x, w}, out).failed());
  Tensor w2 = Tensor::fromVector<float>(DType::F32, {1, 3}, {1, 1, 1});
  Status s = k->run({}, {x, w2}, out);
  CHECK(s.failed());
  CHECK(s.message().find("rank") != std::string::npos);
}
