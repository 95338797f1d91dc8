//===- KernelTestUtils.h - Helpers for reference kernel tests ---*- C++ -*-===//
//
// The plumbing every reference kernel unit test needs: build small tensors
// from literal values, run a kernel from the registry by mnemonic and require
// that it succeeds or fails, run a shape helper alone, and compare results
// with a tolerance. One copy here keeps the suites' failure reports and
// comparison rules the same, so a tolerance means the same thing everywhere.
//
// Everything is inline: each test file includes this header into its own
// translation unit, and all of them link into one binary.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_TEST_UNIT_REF_KERNELTESTUTILS_H
#define MLCC_TEST_UNIT_REF_KERNELTESTUTILS_H

#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace mlcc::ref::test {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

//===----------------------------------------------------------------------===//
// Building tensors
//===----------------------------------------------------------------------===//

/// Tensor of any dtype from values written as doubles, converted as
/// setDouble converts them (so 1 and 0 make a Bool true and false). Exact for
/// every value a test writes, except 64-bit integers beyond 2^53: use i64.
inline Tensor make(DType t, Shape shape, const std::vector<double> &v) {
  return Tensor::fromVector(t, std::move(shape), v);
}
inline Tensor f32(Shape shape, const std::vector<double> &v) {
  return make(DType::F32, std::move(shape), v);
}
inline Tensor i32(Shape shape, const std::vector<double> &v) {
  return make(DType::I32, std::move(shape), v);
}
inline Tensor boolean(Shape shape, const std::vector<double> &v) {
  return make(DType::Bool, std::move(shape), v);
}
/// Stores through setInt rather than a double, so index and shape data near
/// the int64 limits arrive exactly.
inline Tensor i64(Shape shape, const std::vector<int64_t> &v) {
  Tensor t(DType::I64, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i)
    t.setInt(static_cast<int64_t>(i), v[i]);
  return t;
}
/// Tensor holding start, start + 1, ... in row-major order: every element
/// distinct, so a misplaced element shows in the comparison.
inline Tensor iota(Shape shape, double start = 0, DType t = DType::F32) {
  Tensor x(t, std::move(shape));
  for (int64_t i = 0; i < x.numel(); ++i)
    x.setDouble(i, start + static_cast<double>(i));
  return x;
}

/// A ValueInfo for shape inference: dims may be kDynamic, value optional.
inline ValueInfo info(DType t, Shape shape, const Tensor *value = nullptr) {
  ValueInfo v;
  v.dtype = t;
  v.shape = std::move(shape);
  v.value = value;
  return v;
}

//===----------------------------------------------------------------------===//
// Running kernels
//===----------------------------------------------------------------------===//

/// The registered kernel for `op`; a missing registration fails the test
/// case here, with the mnemonic, instead of crashing on a null pointer.
inline const KernelDef &kernel(const std::string &op) {
  const KernelDef *k = KernelRegistry::get().find(op);
  INFO(op);
  REQUIRE(k);
  return *k;
}

/// Runs `op` with `nOut` result slots and returns its status unchecked, for
/// tests that inspect a failure themselves.
inline Status run(const std::string &op, const Attrs &attrs,
                  const std::vector<Tensor> &in, std::vector<Tensor> &out,
                  size_t nOut = 1) {
  out.assign(nOut, Tensor());
  return kernel(op).run(attrs, in, out);
}

/// Runs `op` and requires success; returns all `nOut` outputs. A failure
/// reports the kernel's message, which usually says what went wrong.
inline std::vector<Tensor> ok(const std::string &op, const Attrs &attrs,
                              const std::vector<Tensor> &in, size_t nOut = 1) {
  std::vector<Tensor> out;
  Status s = run(op, attrs, in, out, nOut);
  INFO(op << ": " << s.message());
  REQUIRE(s.ok());
  return out;
}

/// Runs `op` and requires failure; returns the message so the caller can
/// check that it names the problem.
inline std::string fails(const std::string &op, const Attrs &attrs,
                         const std::vector<Tensor> &in, size_t nOut = 1) {
  std::vector<Tensor> out;
  Status s = run(op, attrs, in, out, nOut);
  INFO(op);
  REQUIRE(s.failed());
  return s.message();
}

/// Runs the shape helper of `op` alone, on shapes that may hold kDynamic,
/// as shape inference does; requires success.
inline std::vector<ValueInfo> infer(const std::string &op, const Attrs &attrs,
                                    const std::vector<ValueInfo> &in,
                                    size_t nOut = 1) {
  std::vector<ValueInfo> out(nOut);
  Status s = kernel(op).inferShapes(attrs, in, out);
  INFO(op << ": " << s.message());
  REQUIRE(s.ok());
  return out;
}

//===----------------------------------------------------------------------===//
// Comparing results
//===----------------------------------------------------------------------===//

/// Requires `t` to hold `want`, element by element, read as doubles. An
/// element passes within the absolute `tol` or within a relative 1e-6, so
/// large results are not held to an absolute bound meant for values near 1.
/// A NaN wants a NaN (Approx never matches one) and an infinity the same
/// infinity. Tol 0 leaves only the relative bound, for results that must be
/// exact up to rounding.
inline void requireValues(const Tensor &t, const std::vector<double> &want,
                          double tol = 1e-5) {
  REQUIRE(t.numel() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    double got = t.getDouble(static_cast<int64_t>(i));
    if (std::isnan(want[i]))
      CHECK(std::isnan(got));
    else if (std::isinf(want[i]))
      CHECK(got == want[i]);
    else
      CHECK(got == Approx(want[i]).margin(tol).epsilon(1e-6));
  }
}

/// Requires an integer tensor to hold `want` exactly, read through getInt so
/// that values beyond 2^53 compare exactly too.
inline void requireInts(const Tensor &t, const std::vector<int64_t> &want) {
  REQUIRE(t.numel() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    CHECK(t.getInt(static_cast<int64_t>(i)) == want[i]);
  }
}

} // namespace mlcc::ref::test

#endif // MLCC_TEST_UNIT_REF_KERNELTESTUTILS_H
