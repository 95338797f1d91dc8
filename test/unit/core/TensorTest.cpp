//===- TensorTest.cpp - host tensors, dtype conversions, test data files --===//

#include "mlcc/Import/TensorProto.h"
#include "mlcc/Reference/Tensor.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unistd.h>

using namespace mlcc::ref;

TEST_CASE("half precision round-trips representable values", "[tensor]") {
  // Every finite half value converts to float and back to the same bits.
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    uint16_t h = static_cast<uint16_t>(bits);
    if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu))
      continue; // nan payloads are not preserved bit-exactly
    REQUIRE(floatToHalf(halfToFloat(h)) == h);
  }
}

TEST_CASE("float to half rounds to nearest even and saturates", "[tensor]") {
  CHECK(halfToFloat(floatToHalf(1.0f)) == 1.0f);
  // 1 + 2^-11 lies halfway between 1 and the next half (1 + 2^-10): even is 1.
  CHECK(halfToFloat(floatToHalf(1.0f + std::ldexp(1.0f, -11))) == 1.0f);
  CHECK(halfToFloat(floatToHalf(65504.0f)) == 65504.0f);
  CHECK(std::isinf(halfToFloat(floatToHalf(70000.0f))));
  CHECK(std::isnan(halfToFloat(floatToHalf(std::nanf("")))));
  // Smallest subnormal half is 2^-24.
  CHECK(halfToFloat(floatToHalf(std::ldexp(1.0f, -24))) ==
        std::ldexp(1.0f, -24));
}

TEST_CASE("bfloat16 keeps the float exponent range", "[tensor]") {
  CHECK(bf16ToFloat(floatToBf16(1.0f)) == 1.0f);
  CHECK(bf16ToFloat(floatToBf16(3.0e38f)) == Approx(3.0e38f).epsilon(0.01));
  CHECK(std::isnan(bf16ToFloat(floatToBf16(std::nanf("")))));
}

TEST_CASE("setDouble saturates float to integer conversions", "[tensor]") {
  Tensor t(DType::I8, {3});
  t.setDouble(0, 300.0);
  t.setDouble(1, -300.0);
  t.setDouble(2, std::nan(""));
  CHECK(t.getInt(0) == 127);
  CHECK(t.getInt(1) == -128);
  CHECK(t.getInt(2) == 0);
}

TEST_CASE("shapes, strides and zero-size tensors", "[tensor]") {
  CHECK(numElements({}) == 1);
  CHECK(numElements({2, 0, 3}) == 0);
  CHECK(stridesOf({2, 3, 4}) == std::vector<int64_t>{12, 4, 1});
  Tensor empty(DType::F32, {0, 5});
  CHECK(empty.numel() == 0);
  CHECK(empty.raw() != nullptr);
  Tensor r = Tensor::fromVector<float>(DType::F32, {2, 2}, {1, 2, 3, 4});
  Tensor v = r.reshaped({4});
  v.setDouble(0, 9);
  CHECK(r.getDouble(0) == 9); // reshaped shares storage
  Tensor c = r.clone();
  c.setDouble(0, 1);
  CHECK(r.getDouble(0) == 9); // clone does not
}

TEST_CASE("TensorProto files round-trip every dtype", "[tensorproto]") {
  auto dtype = GENERATE(DType::F32, DType::F64, DType::F16, DType::BF16,
                        DType::I8, DType::U8, DType::I16, DType::U16,
                        DType::I32, DType::U32, DType::I64, DType::U64,
                        DType::Bool);
  Tensor t(dtype, {2, 3});
  for (int64_t i = 0; i < t.numel(); ++i)
    t.setDouble(i, dtype == DType::Bool ? i % 2 : static_cast<double>(i) + 1);
  std::string path = "/tmp/mlcc_tensor_roundtrip_" +
                     std::string(dtypeName(dtype)) + ".pb";
  REQUIRE(mlcc::onnxio::writeTensorFile(path, t, "x").ok());
  Tensor back;
  std::string name;
  REQUIRE(mlcc::onnxio::readTensorFile(path, back, &name).ok());
  std::remove(path.c_str());
  CHECK(name == "x");
  CHECK(back.dtype() == dtype);
  CHECK(back.shape() == t.shape());
  CHECK(std::memcmp(back.raw(), t.raw(), t.byteSize()) == 0);
}

TEST_CASE("a truncated tensor file is an error, not a crash", "[tensorproto]") {
  Tensor t = Tensor::fromVector<float>(DType::F32, {64}, std::vector<float>(64, 1));
  std::string path = "/tmp/mlcc_tensor_truncated.pb";
  REQUIRE(mlcc::onnxio::writeTensorFile(path, t, "x").ok());
  REQUIRE(truncate(path.c_str(), 100) == 0);
  Tensor back;
  Status s = mlcc::onnxio::readTensorFile(path, back);
  std::remove(path.c_str());
  CHECK(s.failed());
  CHECK(s.message().find(path) != std::string::npos);
  CHECK(mlcc::onnxio::readTensorFile("/nonexistent/x.pb", back).failed());
}
