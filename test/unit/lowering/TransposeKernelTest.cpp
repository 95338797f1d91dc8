//===- TransposeKernelTest.cpp - Tests of the AVX-512 transpose kernels ---===//
//
// Plans and generates transpose kernels for every permutation of shapes of
// rank 2 to 5 (sizes that are and are not multiples of 16, dims of 1 that
// drop out, dims that merge), maps their bytes executable and runs them
// against the reference Transpose kernel (compiler/Reference): the same
// bits. Input and output end at an unmapped page, so a kernel that touches
// an element past them faults. A transpose that keeps the last dim is not
// planned (the portable lowering copies its rows).
//
//===----------------------------------------------------------------------===//

#include "ExecutableBuffer.h"
#include "KernelABI.h"
#include "KernelTestSupport.h"
#include "Transpose.h"

#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

using namespace mlcc;
using namespace mlcc::avx512;
using namespace mlcc::test;
using ref::DType;

namespace {

std::string describe(const std::vector<int64_t> &shape,
                     const std::vector<int64_t> &perm) {
  std::string s = "[";
  for (int64_t d : shape)
    s += std::to_string(d) + " ";
  s += "] perm [";
  for (int64_t d : perm)
    s += std::to_string(d) + " ";
  return s + "]";
}

/// Runs every permutation of `shape` that the kernels plan; returns how
/// many there were.
int checkAllPermutations(const std::vector<int64_t> &shape, unsigned seed) {
  std::vector<int64_t> perm(shape.size());
  std::iota(perm.begin(), perm.end(), 0);
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::vector<float> x = randomValues(static_cast<size_t>(n), -2.0f, 2.0f,
                                      seed);
  int planned = 0;
  do {
    INFO(describe(shape, perm));
    TransposeSpec spec;
    bool keepsLast = perm.back() == static_cast<int64_t>(shape.size()) - 1;
    if (!planTranspose(shape, perm, spec)) {
      // Only the transposes that keep the last dim (after dims of 1 go)
      // and the identity are left to the portable lowering here.
      int64_t last = -1;
      for (int64_t d : perm)
        if (shape[d] != 1)
          last = d;
      int64_t inputLast = -1;
      for (size_t d = 0; d < shape.size(); ++d)
        if (shape[d] != 1)
          inputLast = static_cast<int64_t>(d);
      CHECK((keepsLast || last == inputLast));
      continue;
    }
    ++planned;
    std::vector<uint8_t> code = generateCode(generateTranspose, spec);
    ExecutableBuffer exec(code);
    REQUIRE(exec.ok());
    GuardedArray<float> src(x), dst(x.size());
    REQUIRE(src.ok());
    REQUIRE(dst.ok());
    mlcc_transpose_args args = {src.data(), dst.data()};
    static CalleeSavedChecker checker;
    CHECK(checker.run(&args, exec.address()) == 0);
    ref::Attrs attrs;
    attrs.set("perm", perm);
    std::vector<float> want = runReference(
        "transpose", attrs,
        {ref::Tensor::fromBytes(DType::F32, shape, x.data())});
    std::vector<float> got = dst.values();
    REQUIRE(got.size() == want.size());
    CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) ==
          0);
  } while (std::next_permutation(perm.begin(), perm.end()));
  return planned;
}

} // namespace

TEST_CASE("transposes that move the last dim match the reference",
          "[avx512][transpose]") {
  MLCC_REQUIRE_AVX512F();
  unsigned seed = 1;
  CHECK(checkAllPermutations({16, 32}, seed++) == 1);
  CHECK(checkAllPermutations({17, 35}, seed++) == 1);
  CHECK(checkAllPermutations({3, 1}, seed++) == 0); // a dim of 1: a copy
  CHECK(checkAllPermutations({5, 18, 33}, seed++) > 0);
  CHECK(checkAllPermutations({2, 16, 7, 20}, seed++) > 0);
  CHECK(checkAllPermutations({2, 3, 1, 17, 5}, seed++) > 0);
  CHECK(checkAllPermutations({2, 3, 4, 5, 6}, seed++) > 0);
  // NHWC <-> NCHW of a feature map; a ViT's tokens.
  checkAllPermutations({1, 9, 11, 48}, seed++);
  checkAllPermutations({1, 192, 50}, seed++);
}

TEST_CASE("transpose specs past the kernel's limits fail",
          "[avx512][transpose]") {
  TransposeSpec spec;
  spec.name = "graph.transpose @3";
  spec.outerSizes = {2, 2, 2, 2};
  spec.outerSrcStrides = spec.outerDstStrides = {1, 1, 1, 1};
  std::vector<uint8_t> code;
  Status s = generateTranspose(spec, code);
  REQUIRE(s.failed());
  CHECK(s.message().find("graph.transpose @3") != std::string::npos);
  spec.outerSizes.clear();
  spec.outerSrcStrides.clear();
  spec.outerDstStrides.clear();
  spec.srcRowStride = int64_t(1) << 30;
  CHECK(generateTranspose(spec, code).failed());
  spec.srcRowStride = 1;
  CHECK(generateTranspose(spec, code).ok());
}
