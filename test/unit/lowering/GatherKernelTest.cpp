//===- GatherKernelTest.cpp - Tests of the AVX-512 row gather kernels -----===//
//
// Generates gather and gather_nd kernels, maps their bytes executable and
// runs them against the reference kernels (compiler/Reference), the
// oracle: int32 and int64 indices, negative ones, rows of 1, 15, 16, 17,
// 768 and 1000 floats (straight copies, the copy loop, masked tails), rows
// of odd byte counts (u8 elements: the word and byte tails) and of i64
// elements, gathers on inner axes, gather_nd with tuples of 1 to 3 and
// batch dims. Outputs must match byte for byte. Data, indices and outputs
// end at an unmapped page, so a kernel that touches a byte past them
// faults; out-of-range indices (far beyond either end, INT64_MIN and
// INT64_MAX) must be clamped to the first or last row, not followed.
//
//===----------------------------------------------------------------------===//

#include "ExecutableBuffer.h"
#include "Gather.h"
#include "KernelABI.h"
#include "KernelTestSupport.h"

#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace mlcc;
using namespace mlcc::avx512;
using namespace mlcc::test;
using ref::DType;

namespace {

/// Deterministic bytes.
std::vector<uint8_t> randomBytes(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint32_t s = seed * 2654435761u + 7;
  for (uint8_t &x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<uint8_t>(s >> 24);
  }
  return v;
}

/// Indices as the bytes of int32 or int64 elements.
std::vector<uint8_t> indexBytes(const std::vector<int64_t> &idx, int bytes) {
  std::vector<uint8_t> out(idx.size() * bytes);
  for (size_t i = 0; i < idx.size(); ++i) {
    if (bytes == 4) {
      int32_t v = static_cast<int32_t>(idx[i]);
      std::memcpy(out.data() + 4 * i, &v, 4);
    } else {
      std::memcpy(out.data() + 8 * i, &idx[i], 8);
    }
  }
  return out;
}

/// Runs `code` on the given data and indices; returns the output bytes.
std::vector<uint8_t> runKernel(const std::vector<uint8_t> &code,
                               const std::vector<uint8_t> &data,
                               const std::vector<uint8_t> &indices,
                               size_t outBytes, size_t offset = 0) {
  ExecutableBuffer exec(code, offset);
  REQUIRE(exec.ok());
  GuardedArray<uint8_t> src(data), idx(indices), dst(outBytes);
  REQUIRE(src.ok());
  REQUIRE(idx.ok());
  REQUIRE(dst.ok());
  mlcc_gather_args args = {src.data(), idx.data(), dst.data()};
  static CalleeSavedChecker checker;
  CHECK(checker.run(&args, exec.address()) == 0);
  return dst.values();
}

/// The reference kernel's output bytes.
std::vector<uint8_t> reference(const std::string &op, const ref::Attrs &attrs,
                               DType dtype, const ref::Shape &dataShape,
                               const std::vector<uint8_t> &data,
                               DType indexType, const ref::Shape &indexShape,
                               const std::vector<uint8_t> &indices) {
  const ref::KernelDef *k = ref::KernelRegistry::get().find(op);
  REQUIRE(k);
  std::vector<ref::Tensor> out(1);
  ref::Status s =
      k->run(attrs,
             {ref::Tensor::fromBytes(dtype, dataShape, data.data()),
              ref::Tensor::fromBytes(indexType, indexShape, indices.data())},
             out);
  INFO(s.message());
  REQUIRE(s.ok());
  const auto *p = static_cast<const uint8_t *>(out[0].raw());
  return std::vector<uint8_t>(p, p + out[0].byteSize());
}

int64_t product(const ref::Shape &s, size_t first, size_t last) {
  int64_t p = 1;
  for (size_t i = first; i < last; ++i)
    p *= s[i];
  return p;
}

/// gather(data, indices, axis) by the kernel and by the reference.
void checkGather(DType dtype, const ref::Shape &ds, int64_t axis,
                 const ref::Shape &is, const std::vector<int64_t> &idx,
                 int indexSize) {
  const int64_t elem = static_cast<int64_t>(ref::dtypeSize(dtype));
  GatherSpec spec;
  spec.name = "gather_test";
  spec.indexBytes = indexSize;
  spec.outer = product(ds, 0, axis);
  spec.rowBytes = product(ds, axis + 1, ds.size()) * elem;
  spec.outerBytes = ds[axis] * spec.rowBytes;
  spec.tuples = static_cast<int64_t>(idx.size());
  spec.dims = {ds[axis]};
  spec.strides = {1};
  INFO("gather axis " << axis << " rows " << ds[axis] << " of " << spec.rowBytes
                      << " bytes, " << idx.size() << " indices of " << indexSize
                      << " bytes");
  std::vector<uint8_t> data =
      randomBytes(static_cast<size_t>(product(ds, 0, ds.size()) * elem),
                  static_cast<uint32_t>(spec.rowBytes + axis));
  std::vector<uint8_t> indices = indexBytes(idx, indexSize);
  size_t outBytes =
      static_cast<size_t>(spec.outer * spec.tuples * spec.rowBytes);
  std::vector<uint8_t> got =
      runKernel(generateCode(generateGather, spec), data, indices, outBytes);
  ref::Attrs attrs;
  attrs.set("axis", axis);
  std::vector<uint8_t> want =
      reference("gather", attrs, dtype, ds, data,
                indexSize == 4 ? DType::I32 : DType::I64, is, indices);
  REQUIRE(got.size() == want.size());
  CHECK(got == want);
}

/// Indices 0, the last row, negative ones, and a few in between.
std::vector<int64_t> someIndices(int64_t rows, size_t n) {
  std::vector<int64_t> idx;
  for (size_t i = 0; idx.size() < n; ++i) {
    int64_t v = static_cast<int64_t>((i * 7 + 3) % rows);
    if (i == 0)
      v = 0;
    else if (i == 1)
      v = rows - 1;
    else if (i % 3 == 2)
      v -= rows; // the same row, counted from the end
    idx.push_back(v);
  }
  return idx;
}

} // namespace

TEST_CASE("gather kernels copy rows of every length", "[gather]") {
  MLCC_REQUIRE_AVX512F();
  for (int indexSize : {4, 8})
    for (int64_t cols : {1, 15, 16, 17, 768, 1000}) {
      const int64_t rows = 10;
      checkGather(DType::F32, {rows, cols}, 0, {13}, someIndices(rows, 13),
                  indexSize);
    }
}

TEST_CASE("gather kernels take any element size and axis", "[gather]") {
  MLCC_REQUIRE_AVX512F();
  // Bytes: rows of 1, 3, 7, 37 (word and byte tails), 64 and 131 bytes.
  for (int64_t cols : {1, 3, 7, 37, 64, 131})
    checkGather(DType::U8, {9, cols}, 0, {2, 3}, someIndices(9, 6), 8);
  // i64 elements, axis 1 of 3-D data, 2-D indices.
  checkGather(DType::I64, {3, 7, 5}, 1, {2, 3}, someIndices(7, 6), 4);
  // f32, the last axis: rows of one element, outer blocks of 11 x 4.
  checkGather(DType::F32, {11, 4, 6}, 2, {5}, someIndices(6, 5), 8);
  // An embedding lookup: 1000 x 64 table, 2 x 16 ids.
  checkGather(DType::F32, {1000, 64}, 0, {2, 16}, someIndices(1000, 32), 8);
}

TEST_CASE("gather_nd kernels address the leading dims", "[gather]") {
  MLCC_REQUIRE_AVX512F();
  struct Case {
    ref::Shape ds, is;
    int64_t batchDims;
  };
  const Case cases[] = {
      {{4, 5, 6}, {3, 1}, 0},    {{4, 5, 6}, {3, 2}, 0},
      {{4, 5, 6}, {2, 2, 3}, 0}, {{4, 5, 17}, {4, 2}, 0},
      {{2, 5, 6}, {2, 3, 1}, 1}, {{3, 4, 5, 20}, {3, 2, 2}, 1},
  };
  for (const Case &c : cases) {
    const int64_t r = static_cast<int64_t>(c.ds.size());
    const int64_t q = static_cast<int64_t>(c.is.size());
    const int64_t b = c.batchDims, k = c.is[q - 1];
    GatherSpec spec;
    spec.name = "gather_nd_test";
    spec.indexBytes = 8;
    spec.outer = product(c.ds, 0, b);
    spec.outerBytes = product(c.ds, b, r) * 4;
    spec.tuples = product(c.is, b, q - 1);
    spec.tuplesPerOuter = true;
    spec.dims.assign(c.ds.begin() + b, c.ds.begin() + b + k);
    spec.strides.assign(k, 1);
    for (int64_t j = k - 2; j >= 0; --j)
      spec.strides[j] = spec.strides[j + 1] * spec.dims[j + 1];
    spec.rowBytes = product(c.ds, b + k, r) * 4;
    // Component j of tuple t: in range, every other one negative.
    std::vector<int64_t> idx;
    const int64_t n = product(c.is, 0, q);
    for (int64_t i = 0; i < n; ++i) {
      int64_t dim = spec.dims[i % k];
      int64_t v = (i * 5 + 1) % dim;
      idx.push_back(i % 2 ? v - dim : v);
    }
    INFO("gather_nd tuples of " << k << ", batch dims " << b);
    std::vector<uint8_t> data = randomBytes(
        static_cast<size_t>(product(c.ds, 0, r) * 4), static_cast<uint32_t>(k));
    std::vector<uint8_t> indices = indexBytes(idx, 8);
    size_t outBytes =
        static_cast<size_t>(spec.outer * spec.tuples * spec.rowBytes);
    std::vector<uint8_t> got =
        runKernel(generateCode(generateGather, spec), data, indices, outBytes);
    ref::Attrs attrs;
    attrs.set("batch_dims", b);
    std::vector<uint8_t> want = reference("gather_nd", attrs, DType::F32, c.ds,
                                          data, DType::I64, c.is, indices);
    REQUIRE(got.size() == want.size());
    CHECK(got == want);
  }
}

TEST_CASE("gather kernels clamp out-of-range indices", "[gather]") {
  MLCC_REQUIRE_AVX512F();
  const int64_t rows = 6, cols = 17;
  std::vector<uint8_t> data = randomBytes(rows * cols * 4, 11);
  const std::vector<int64_t> idx = {rows,
                                    -rows - 1,
                                    1000000,
                                    -1000000,
                                    std::numeric_limits<int64_t>::max(),
                                    std::numeric_limits<int64_t>::min(),
                                    int64_t(1) << 40,
                                    2,
                                    -1};
  // The row each index is clamped to.
  const std::vector<int64_t> want64 = {rows - 1, 0, rows - 1, 0, rows - 1, 0,
                                       rows - 1, 2, rows - 1};
  for (int indexSize : {4, 8}) {
    GatherSpec spec;
    spec.indexBytes = indexSize;
    spec.rowBytes = cols * 4;
    spec.outerBytes = rows * spec.rowBytes;
    spec.tuples = static_cast<int64_t>(idx.size());
    spec.dims = {rows};
    std::vector<uint8_t> got = runKernel(
        generateCode(generateGather, spec), data, indexBytes(idx, indexSize),
        static_cast<size_t>(spec.tuples * spec.rowBytes));
    for (size_t i = 0; i < idx.size(); ++i) {
      // int32 indices see the low 32 bits: INT64_MAX is -1, INT64_MIN and
      // 2^40 are 0.
      int64_t row = want64[i];
      if (indexSize == 4) {
        int64_t low = static_cast<int32_t>(idx[i]);
        row = low < -rows ? 0 : low < 0 ? low + rows : std::min(low, rows - 1);
      }
      INFO("index " << idx[i] << " of " << indexSize << " bytes");
      CHECK(std::memcmp(got.data() + i * spec.rowBytes,
                        data.data() + row * spec.rowBytes,
                        static_cast<size_t>(spec.rowBytes)) == 0);
    }
  }
}

TEST_CASE("gather kernels are position independent", "[gather]") {
  MLCC_REQUIRE_AVX512F();
  GatherSpec spec;
  spec.rowBytes = 1000 * 4 + 6;
  spec.outer = 2;
  spec.outerBytes = 3 * spec.rowBytes;
  spec.tuples = 4;
  spec.dims = {3};
  std::vector<uint8_t> data = randomBytes(2 * spec.outerBytes, 3);
  std::vector<uint8_t> indices = indexBytes({2, 0, -1, 1}, 8);
  std::vector<uint8_t> code = generateCode(generateGather, spec);
  size_t outBytes = static_cast<size_t>(2 * 4 * spec.rowBytes);
  std::vector<uint8_t> a = runKernel(code, data, indices, outBytes, 0);
  std::vector<uint8_t> b = runKernel(code, data, indices, outBytes, 4096 + 13);
  CHECK(a == b);
  // Block 1, tuple 2 (index -1): row 2 of block 1.
  CHECK(std::memcmp(a.data() + 6 * spec.rowBytes,
                    data.data() + 5 * spec.rowBytes,
                    static_cast<size_t>(spec.rowBytes)) == 0);
}

TEST_CASE("gather specs that cannot work are refused", "[gather]") {
  std::vector<uint8_t> code;
  GatherSpec spec;
  spec.rowBytes = 4;
  spec.outerBytes = 40;
  spec.tuples = 1;
  spec.dims = {10};
  CHECK(generateGather(spec, code).ok());
  GatherSpec bad = spec;
  bad.indexBytes = 2;
  CHECK(generateGather(bad, code).failed());
  bad = spec;
  bad.dims = {11}; // row 10 is past the block
  CHECK(generateGather(bad, code).failed());
  bad = spec;
  bad.dims = {0};
  CHECK(generateGather(bad, code).failed());
  bad = spec;
  bad.strides = {1, 1};
  CHECK(generateGather(bad, code).failed());
}
