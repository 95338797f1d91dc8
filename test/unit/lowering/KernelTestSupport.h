//===- KernelTestSupport.h - Helpers the kernel tests share -----*- C++ -*-===//
//
// What every AVX-512 kernel test needs besides ExecutableBuffer.h: skipping
// on hosts without AVX-512F, deterministic input data, and generating a
// kernel that must succeed.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_TEST_UNIT_LOWERING_KERNELTESTSUPPORT_H
#define MLCC_TEST_UNIT_LOWERING_KERNELTESTSUPPORT_H

#include "ExecutableBuffer.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

/// Generating needs no AVX-512, running does. On a host without it the
/// test cases that run kernels say so and stop, rather than die of SIGILL.
#define MLCC_REQUIRE_AVX512F()                                                 \
  do {                                                                         \
    if (!__builtin_cpu_supports("avx512f")) {                                  \
      WARN("this CPU has no AVX-512F: kernels not run");                       \
      return;                                                                  \
    }                                                                          \
  } while (0)

namespace mlcc::test {

/// Deterministic values in [-1, 1), from a linear congruential generator.
inline std::vector<float> randomValues(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (float &x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

/// Deterministic values uniform in [lo, hi), from std::mt19937(seed).
inline std::vector<float> randomValues(size_t n, float lo, float hi,
                                       unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> x(n);
  for (float &v : x)
    v = dist(gen);
  return x;
}

/// The code `gen(spec, code)` writes, REQUIRE'd to succeed and be nonempty.
template <typename Gen, typename Spec>
std::vector<uint8_t> generateCode(Gen gen, const Spec &spec) {
  std::vector<uint8_t> code;
  auto s = gen(spec, code);
  INFO(s.message());
  REQUIRE(s.ok());
  REQUIRE(!code.empty());
  return code;
}

} // namespace mlcc::test

#endif // MLCC_TEST_UNIT_LOWERING_KERNELTESTSUPPORT_H
