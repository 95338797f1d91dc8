//===- ShapeTest.cpp - Tests of the shape and indexing reference kernels --===//
//
// Expected values come from the op definitions, worked out by hand or by a
// formula here, never from the kernels themselves. The shape helpers are
// also run with unknown values and dynamic dims, as shape inference does.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtils.h"
#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <limits>

using namespace mlcc::ref;
using namespace mlcc::ref::test;

namespace {

constexpr int64_t D = kDynamic;

} // namespace

//===----------------------------------------------------------------------===//
// Views and shape producers
//===----------------------------------------------------------------------===//

TEST_CASE("shape: reshape copies 0 dims, infers -1 and shares storage") {
  Tensor x = iota({2, 3, 4});
  Tensor y = ok("reshape", {}, {x, i64({3}, {0, -1, 2})})[0];
  CHECK(y.shape() == Shape{2, 6, 2});
  CHECK(y.raw() == x.raw()); // a view, no copy
  requireValues(y.reshaped({24}), [] {
    std::vector<double> v(24);
    for (int i = 0; i < 24; ++i)
      v[i] = i;
    return v;
  }());
  // allowzero: a 0 is a real zero-size dim.
  Tensor empty(DType::F32, {0, 3});
  Tensor z =
      ok("reshape", {{"allowzero", int64_t(1)}}, {empty, i64({2}, {3, 0})})[0];
  CHECK(z.shape() == Shape{3, 0});
  CHECK(fails("reshape", {}, {x, i64({2}, {5, -1})}).find("reshape") !=
        std::string::npos);
  CHECK(fails("reshape", {}, {x, i64({2}, {-1, -1})}).find("-1") !=
        std::string::npos);
}

TEST_CASE("shape: reshape shape helper with unknown values and dims") {
  Tensor target = i64({3}, {0, -1, 64});
  // Dynamic batch copied through 0; -1 cannot be resolved.
  auto out =
      infer("reshape", {},
            {info(DType::F32, {D, 128, 768}), info(DType::I64, {3}, &target)});
  CHECK(out[0].shape == Shape{D, D, 64});
  // All dims known: -1 resolves.
  out =
      infer("reshape", {},
            {info(DType::F32, {2, 128, 768}), info(DType::I64, {3}, &target)});
  CHECK(out[0].shape == Shape{2, 1536, 64});
  // Target not constant: rank from its length, dims unknown.
  out = infer("reshape", {}, {info(DType::F32, {2, 3}), info(DType::I64, {4})});
  CHECK(out[0].shape == Shape{D, D, D, D});
}

TEST_CASE("shape: BERT-like shape chain folds through the kernels") {
  // x: [batch=2, seq=5, hidden=8] -> Shape -> Gather(0) -> Unsqueeze(0)
  // -> Concat with [-1, 2, 4] -> Reshape to [2, 5, 2, 4].
  Tensor x = iota({2, 5, 8});
  Tensor shape = ok("shape", {}, {x})[0];
  requireInts(shape, {2, 5, 8});
  Tensor batch = ok("gather", {}, {shape, i64({}, {0})})[0];
  CHECK(batch.shape() == Shape{});
  Tensor seq = ok("gather", {}, {shape, i64({}, {-2})})[0];
  Tensor b1 = ok("unsqueeze", {}, {batch, i64({1}, {0})})[0];
  Tensor s1 = ok("unsqueeze", {}, {seq, i64({1}, {0})})[0];
  Tensor target =
      ok("concat", {{"axis", int64_t(0)}}, {b1, s1, i64({2}, {2, 4})})[0];
  requireInts(target, {2, 5, 2, 4});
  Tensor y = ok("reshape", {}, {x, target})[0];
  CHECK(y.shape() == Shape{2, 5, 2, 4});

  // The shape helper of Shape needs only the rank; start/end clamp.
  auto out = infer("shape", {{"start", int64_t(-2)}, {"end", int64_t(100)}},
                   {info(DType::F32, {D, 5, 8})});
  CHECK(out[0].dtype == DType::I64);
  CHECK(out[0].shape == Shape{2});
  requireInts(
      ok("shape", {{"start", int64_t(1)}, {"end", int64_t(-1)}}, {x})[0], {5});
}

TEST_CASE("shape: flatten, squeeze and unsqueeze with negative axes") {
  Tensor x = iota({2, 1, 3, 1}, 0, DType::I32);
  CHECK(ok("flatten", {{"axis", int64_t(-1)}}, {x})[0].shape() == Shape{6, 1});
  CHECK(ok("flatten", {{"axis", int64_t(0)}}, {x})[0].shape() == Shape{1, 6});
  Tensor sq = ok("squeeze", {}, {x, i64({1}, {-1})})[0];
  CHECK(sq.shape() == Shape{2, 1, 3});
  CHECK(sq.raw() == x.raw());
  CHECK(ok("squeeze", {}, {x, Tensor()})[0].shape() == Shape{2, 3});
  CHECK(ok("unsqueeze", {}, {x, i64({2}, {-1, 0})})[0].shape() ==
        Shape{1, 2, 1, 3, 1, 1});
  CHECK(fails("squeeze", {}, {x, i64({1}, {0})}).find("not 1") !=
        std::string::npos);
  CHECK(fails("unsqueeze", {}, {x, i64({2}, {1, 1})}).find("repeated") !=
        std::string::npos);
  // Unknown axes: rank still known.
  auto out =
      infer("unsqueeze", {}, {info(DType::F32, {D, 3}), info(DType::I64, {2})});
  CHECK(out[0].shape == Shape{D, D, D, D});
  Tensor axes = i64({1}, {1});
  out = infer("squeeze", {},
              {info(DType::F32, {D, 1, 3}), info(DType::I64, {1}, &axes)});
  CHECK(out[0].shape == Shape{D, 3});
}

TEST_CASE("shape: size, constant_of_shape, range and eye_like") {
  requireInts(ok("size", {}, {Tensor(DType::F32, {3, 0, 2})})[0], {0});
  requireInts(ok("size", {}, {Tensor(DType::F32, {3, 4})})[0], {12});

  Attrs cos;
  cos.set("value", Tensor::fromVector(DType::I32, {1}, std::vector<int>{7}));
  Tensor c = ok("constant_of_shape", cos, {i64({2}, {2, 3})})[0];
  CHECK(c.dtype() == DType::I32);
  requireValues(c, std::vector<double>(6, 7.0));
  // Empty shape: a scalar; default value is float 0.
  Tensor s = ok("constant_of_shape", {}, {i64({0}, {})})[0];
  CHECK(s.shape() == Shape{});
  CHECK(s.dtype() == DType::F32);

  // ceil((1 - 10) / -3) = 3 elements: 10, 7, 4.
  Tensor r = ok("range", {}, {i64({}, {10}), i64({}, {1}), i64({}, {-3})})[0];
  requireInts(r, {10, 7, 4});
  Tensor rf =
      ok("range", {}, {f32({}, {0.5}), f32({}, {2.0}), f32({}, {0.5})})[0];
  requireValues(rf, {0.5, 1.0, 1.5});
  CHECK(
      ok("range", {}, {i64({}, {5}), i64({}, {1}), i64({}, {1})})[0].numel() ==
      0);
  CHECK(
      !fails("range", {}, {i64({}, {0}), i64({}, {4}), i64({}, {0})}).empty());
  auto out =
      infer("range", {},
            {info(DType::I64, {}), info(DType::I64, {}), info(DType::I64, {})});
  CHECK(out[0].shape == Shape{D});

  // k = 1: ones at (i, i + 1); dtype 7 = int64.
  Tensor e = ok("eye_like", {{"k", int64_t(1)}, {"dtype", int64_t(7)}},
                {Tensor(DType::F32, {3, 3})})[0];
  CHECK(e.dtype() == DType::I64);
  requireInts(e, {0, 1, 0, 0, 0, 1, 0, 0, 0});
}

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

TEST_CASE("shape: transpose matches the index formula for several dtypes") {
  for (DType t : {DType::F32, DType::I64, DType::F16, DType::U8}) {
    Tensor x = iota({2, 3, 4}, 0, t);
    Tensor y =
        ok("transpose", {{"perm", std::vector<int64_t>{1, 2, 0}}}, {x})[0];
    REQUIRE(y.shape() == Shape{3, 4, 2});
    // y[i][j][k] = x[k][i][j] = 12k + 4i + j
    std::vector<double> want;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j)
        for (int k = 0; k < 2; ++k)
          want.push_back(12 * k + 4 * i + j);
    requireValues(y, want);
  }
  // Default perm reverses; rank 0 and size 0 work.
  CHECK(ok("transpose", {}, {iota({2, 3})})[0].shape() == Shape{3, 2});
  requireValues(ok("transpose", {}, {f32({}, {5})})[0], {5});
  CHECK(ok("transpose", {}, {Tensor(DType::F32, {0, 3})})[0].shape() ==
        Shape{3, 0});
  CHECK(!fails("transpose", {{"perm", std::vector<int64_t>{0, 0}}},
               {iota({2, 3})})
             .empty());
}

TEST_CASE("shape: expand and tile") {
  Tensor x = f32({3, 1}, {1, 2, 3});
  Tensor y = ok("expand", {}, {x, i64({3}, {2, 1, 4})})[0];
  REQUIRE(y.shape() == Shape{2, 3, 4});
  std::vector<double> want;
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j)
        want.push_back(i + 1);
  requireValues(y, want);
  CHECK(!fails("expand", {}, {x, i64({2}, {2, 4})}).empty());
  // Unknown target: input dims other than 1 survive.
  auto out =
      infer("expand", {}, {info(DType::F32, {3, 1}), info(DType::I64, {3})});
  CHECK(out[0].shape == Shape{D, 3, D});

  Tensor t = ok("tile", {}, {f32({2, 2}, {1, 2, 3, 4}), i64({2}, {2, 3})})[0];
  REQUIRE(t.shape() == Shape{4, 6});
  want.clear();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j)
      want.push_back(1 + 2 * (i % 2) + (j % 2));
  requireValues(t, want);
}

TEST_CASE("shape: depth_to_space and space_to_depth") {
  // DCR: y[n, c, h*b + i, w*b + j] = x[n, (i*b + j)*C' + c, h, w].
  int b = 2, C = 8, H = 2, W = 3, Cp = C / (b * b);
  Tensor x = iota({1, C, H, W});
  Tensor y = ok("depth_to_space", {{"blocksize", int64_t(b)}}, {x})[0];
  REQUIRE(y.shape() == Shape{1, Cp, H * b, W * b});
  Tensor crd =
      ok("depth_to_space",
         {{"blocksize", int64_t(b)}, {"mode", std::string("CRD")}}, {x})[0];
  for (int c = 0; c < Cp; ++c)
    for (int h = 0; h < H * b; ++h)
      for (int w = 0; w < W * b; ++w) {
        int i = h % b, j = w % b;
        int o = (c * H * b + h) * W * b + w;
        int dcr = (((i * b + j) * Cp + c) * H + h / b) * W + w / b;
        int crdIdx = ((c * b * b + i * b + j) * H + h / b) * W + w / b;
        CHECK(y.getDouble(o) == dcr);
        CHECK(crd.getDouble(o) == crdIdx);
      }
  // space_to_depth inverts DCR depth_to_space.
  Tensor back = ok("space_to_depth", {{"blocksize", int64_t(b)}}, {y})[0];
  REQUIRE(back.shape() == x.shape());
  for (int64_t i = 0; i < x.numel(); ++i)
    CHECK(back.getDouble(i) == i);
  CHECK(!fails("space_to_depth", {{"blocksize", int64_t(4)}}, {y}).empty());
}

//===----------------------------------------------------------------------===//
// Movement
//===----------------------------------------------------------------------===//

TEST_CASE("shape: concat along a negative axis with an empty input") {
  Tensor a = f32({2, 1}, {1, 2}), b = f32({2, 2}, {3, 4, 5, 6});
  Tensor e(DType::F32, {2, 0});
  Tensor y = ok("concat", {{"axis", int64_t(-1)}}, {a, e, b})[0];
  REQUIRE(y.shape() == Shape{2, 3});
  requireValues(y, {1, 3, 4, 2, 5, 6});
  CHECK(fails("concat", {{"axis", int64_t(0)}}, {a, b}).find("concat") !=
        std::string::npos);
  auto out = infer("concat", {{"axis", int64_t(1)}},
                   {info(DType::F32, {D, 2}), info(DType::F32, {4, D})});
  CHECK(out[0].shape == Shape{4, D});
}

TEST_CASE("shape: split by sizes and into equal parts") {
  Tensor x = iota({2, 5});
  auto parts = ok("split", {{"axis", int64_t(1)}}, {x, i64({2}, {2, 3})}, 2);
  requireValues(parts[0], {0, 1, 5, 6});
  requireValues(parts[1], {2, 3, 4, 7, 8, 9});
  // Without sizes: ceil(5 / 3) = 2, the last part takes the rest.
  parts = ok("split", {{"axis", int64_t(-1)}}, {x, Tensor()}, 3);
  CHECK(parts[0].shape() == Shape{2, 2});
  CHECK(parts[2].shape() == Shape{2, 1});
  requireValues(parts[2], {4, 9});
  CHECK(!fails("split", {}, {x, i64({2}, {1, 2})}, 2).empty());
}

TEST_CASE("shape: slice clamps, steps backwards and takes INT64_MAX ends") {
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  Tensor x = iota({3, 4});
  // Rows 1.., every column backwards from the last.
  Tensor y = ok("slice", {},
                {x, i64({2}, {1, -1}), i64({2}, {kMax, kMin}), i64({2}, {0, 1}),
                 i64({2}, {1, -1})})[0];
  REQUIRE(y.shape() == Shape{2, 4});
  requireValues(y, {7, 6, 5, 4, 11, 10, 9, 8});
  // Start beyond the end: empty; step 2 on a negative axis.
  CHECK(ok("slice", {}, {x, i64({1}, {10}), i64({1}, {20})})[0].shape() ==
        Shape{0, 4});
  Tensor z = ok(
      "slice", {},
      {x, i64({1}, {-100}), i64({1}, {100}), i64({1}, {-1}), i64({1}, {2})})[0];
  requireValues(z, {0, 2, 4, 6, 8, 10});
  CHECK(fails("slice", {},
              {x, i64({1}, {0}), i64({1}, {1}), Tensor(), i64({1}, {0})})
            .find("step") != std::string::npos);
  // Unknown starts with known axes: only that dim is unknown.
  Tensor axes = i64({1}, {1});
  auto out =
      infer("slice", {},
            {info(DType::F32, {3, 4}), info(DType::I64, {1}),
             info(DType::I64, {1}), info(DType::I64, {1}, &axes), ValueInfo()});
  CHECK(out[0].shape == Shape{3, D});
}

TEST_CASE("shape: pad constant, reflect, edge and the axes input") {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor c = ok("pad", {}, {x, i64({4}, {0, 1, 1, 0}), f32({}, {9})})[0];
  REQUIRE(c.shape() == Shape{3, 4});
  requireValues(c, {9, 1, 2, 3, 9, 4, 5, 6, 9, 9, 9, 9});
  Tensor r = ok("pad", {{"mode", std::string("reflect")}},
                {x, i64({4}, {0, 2, 0, 2}), Tensor()})[0];
  requireValues(r, {3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4});
  Tensor e = ok("pad", {{"mode", std::string("edge")}},
                {x, i64({4}, {1, 0, 0, 1}), Tensor()})[0];
  requireValues(e, {1, 2, 3, 3, 1, 2, 3, 3, 4, 5, 6, 6});
  // Pad-18 axes: only axis -1, one column cut at the front.
  Tensor a = ok("pad", {}, {x, i64({2}, {-1, 1}), Tensor(), i64({1}, {-1})})[0];
  REQUIRE(a.shape() == Shape{2, 3});
  requireValues(a, {2, 3, 0, 5, 6, 0});
  CHECK(!fails("pad", {}, {x, i64({2}, {1, 1}), Tensor()}).empty());
}

TEST_CASE("shape: trilu and reverse_sequence") {
  Tensor x = iota({3, 3}, 0, DType::I64);
  requireInts(ok("trilu", {}, {x, Tensor()})[0], {0, 1, 2, 0, 4, 5, 0, 0, 8});
  requireInts(ok("trilu", {{"upper", int64_t(0)}}, {x, i64({}, {-1})})[0],
              {0, 0, 0, 3, 0, 0, 6, 7, 0});

  // time_axis 0, batch_axis 1: column b reverses its first lens[b] rows.
  Tensor s = iota({3, 2});
  Tensor y = ok("reverse_sequence", {}, {s, i64({2}, {3, 2})})[0];
  requireValues(y, {4, 3, 2, 1, 0, 5});
  CHECK(!fails("reverse_sequence", {}, {s, i64({2}, {4, 1})}).empty());
}

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

TEST_CASE("indexing: gather with negative indices and a bad index") {
  Tensor x = iota({3, 2});
  Tensor y = ok("gather", {}, {x, i64({2}, {-1, 0})})[0];
  requireValues(y, {4, 5, 0, 1});
  Tensor z = ok("gather", {{"axis", int64_t(1)}}, {x, i64({2, 1}, {1, -2})})[0];
  REQUIRE(z.shape() == Shape{3, 2, 1});
  requireValues(z, {1, 0, 3, 2, 5, 4});
  CHECK(fails("gather", {}, {x, i64({1}, {3})}).find("out of range") !=
        std::string::npos);
  CHECK(!fails("gather", {}, {x, i64({1}, {-4})}).empty());
  CHECK(!fails("gather", {}, {x, f32({1}, {0})}).empty());
}

TEST_CASE("indexing: gather_elements and gather_nd") {
  Tensor x = f32({2, 2}, {1, 2, 3, 4});
  requireValues(ok("gather_elements", {{"axis", int64_t(1)}},
                   {x, i64({2, 2}, {0, 0, 1, -2})})[0],
                {1, 1, 4, 3});
  CHECK(!fails("gather_elements", {}, {x, i64({1, 2}, {0, 2})}).empty());

  requireValues(ok("gather_nd", {}, {x, i64({2, 2}, {0, 0, -1, 1})})[0],
                {1, 4});
  requireValues(ok("gather_nd", {}, {x, i64({1, 1}, {1})})[0], {3, 4});
  // batch_dims 1: row b picks its own column.
  requireValues(ok("gather_nd", {{"batch_dims", int64_t(1)}},
                   {x, i64({2, 1}, {1, 0})})[0],
                {2, 3});
  CHECK(!fails("gather_nd", {}, {x, i64({1, 2}, {2, 0})}).empty());
}

TEST_CASE("indexing: scatter_elements, scatter and scatter_nd") {
  Tensor x = f32({2, 3}, {0, 0, 0, 0, 0, 0});
  Tensor y = ok("scatter_elements",
                {{"axis", int64_t(1)}, {"reduction", std::string("add")}},
                {x, i64({2, 2}, {0, 0, -1, 1}), f32({2, 2}, {1, 2, 3, 4})})[0];
  requireValues(y, {3, 0, 0, 0, 4, 3});
  requireValues(x, {0, 0, 0, 0, 0, 0}); // data untouched
  Tensor s =
      ok("scatter", {}, {x, i64({1, 2}, {1, 0}), f32({1, 2}, {7, 8})})[0];
  requireValues(s, {0, 8, 0, 7, 0, 0});
  CHECK(fails("scatter_elements", {}, {x, i64({1, 1}, {2}), f32({1, 1}, {1})})
            .find("out of range") != std::string::npos);

  Tensor nd = ok("scatter_nd", {{"reduction", std::string("mul")}},
                 {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({1, 1}, {-1}),
                  f32({1, 3}, {2, 2, 2})})[0];
  requireValues(nd, {1, 2, 3, 8, 10, 12});
  CHECK(!fails("scatter_nd", {}, {x, i64({1, 1}, {2}), f32({1, 3}, {1, 1, 1})})
             .empty());
}

TEST_CASE("indexing: one_hot, compress and nonzero") {
  // depth 3, axis -1; -1 means 2; 5 is out of range: all off.
  Tensor oh = ok("one_hot", {},
                 {i64({3}, {0, -1, 5}), f32({}, {3}), f32({2}, {-1, 1})})[0];
  REQUIRE(oh.shape() == Shape{3, 3});
  requireValues(oh, {1, -1, -1, -1, -1, 1, -1, -1, -1});
  Tensor oh0 = ok("one_hot", {{"axis", int64_t(0)}},
                  {i64({2}, {1, 0}), i64({}, {2}), i64({2}, {0, 1})})[0];
  requireInts(oh0, {0, 1, 1, 0});

  Tensor x = iota({2, 3});
  Tensor cond = Tensor::fromVector(DType::Bool, {2}, std::vector<int>{0, 1});
  Tensor c = ok("compress", {{"axis", int64_t(1)}}, {x, cond})[0];
  REQUIRE(c.shape() == Shape{2, 1});
  requireValues(c, {1, 4});
  requireValues(ok("compress", {}, {x, cond})[0], {1});
  auto out =
      infer("compress", {}, {info(DType::F32, {2, 3}), info(DType::Bool, {2})});
  CHECK(out[0].shape == Shape{D});

  Tensor nz = ok("nonzero", {}, {f32({2, 2}, {0, 3, 2, 0})})[0];
  REQUIRE(nz.shape() == Shape{2, 2});
  requireInts(nz, {0, 1, 1, 0});
  CHECK(ok("nonzero", {}, {Tensor(DType::F32, {0})})[0].shape() == Shape{1, 0});
}

TEST_CASE("indexing: unique sorted, unsorted and along an axis") {
  Tensor x = f32({6}, {2, 1, 1, 3, 4, 3});
  auto u = ok("unique", {{"sorted", int64_t(0)}}, {x}, 4);
  requireValues(u[0], {2, 1, 3, 4});
  requireInts(u[1], {0, 1, 3, 4});
  requireInts(u[2], {0, 1, 1, 2, 3, 2});
  requireInts(u[3], {1, 2, 2, 1});
  u = ok("unique", {}, {x}, 4);
  requireValues(u[0], {1, 2, 3, 4});
  requireInts(u[1], {1, 0, 3, 4});
  requireInts(u[2], {1, 0, 0, 2, 3, 2});
  // Columns of [[1, 0, 1], [2, 5, 2]]: (1,2), (0,5), (1,2).
  Tensor m = f32({2, 3}, {1, 0, 1, 2, 5, 2});
  u = ok("unique", {{"axis", int64_t(-1)}}, {m}, 4);
  REQUIRE(u[0].shape() == Shape{2, 2});
  requireValues(u[0], {0, 1, 5, 2});
  requireInts(u[2], {1, 0, 1});
  requireInts(u[3], {1, 2});
}

TEST_CASE("indexing: topk breaks ties by the lower index") {
  Tensor x = f32({2, 4}, {1, 3, 3, 2, 5, 4, 5, 0});
  auto t = ok("topk", {}, {x, i64({1}, {2})}, 2);
  REQUIRE(t[0].shape() == Shape{2, 2});
  requireValues(t[0], {3, 3, 5, 5});
  requireInts(t[1], {1, 2, 0, 2});
  t = ok("topk", {{"largest", int64_t(0)}, {"axis", int64_t(0)}},
         {x, i64({1}, {1})}, 2);
  requireValues(t[0], {1, 3, 3, 0});
  requireInts(t[1], {0, 0, 0, 1});
  CHECK(fails("topk", {}, {x, i64({1}, {5})}, 2).find("K") !=
        std::string::npos);
  auto out =
      infer("topk", {}, {info(DType::F32, {2, 4}), info(DType::I64, {1})}, 2);
  CHECK(out[0].shape == Shape{2, D});
  CHECK(out[1].dtype == DType::I64);
}
