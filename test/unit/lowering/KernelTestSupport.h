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
#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <xbyak/xbyak.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <sys/syscall.h>
#include <unistd.h>

/// For kernels of an extension (avx512vnni, avx512bf16, or AVX-512F
/// itself): on a CPU without it the test program exits with 77, which
/// CTest reports as skipped (SKIP_RETURN_CODE; catch_discover_tests runs
/// each case alone), never as passed.
#define MLCC_SKIP_WITHOUT(feature, name)                                       \
  do {                                                                         \
    if (!__builtin_cpu_supports(feature)) {                                    \
      std::printf("SKIPPED: this CPU lacks " name "\n");                       \
      std::exit(77);                                                           \
    }                                                                          \
  } while (0)

/// For AMX kernels: the CPU has `feature` ("amx-int8", "amx-bf16") and
/// Linux grants this process the tile state (arch_prctl
/// ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), else exit 77 (skipped).
#define MLCC_SKIP_WITHOUT_AMX(feature, name)                                   \
  do {                                                                         \
    MLCC_SKIP_WITHOUT(feature, name);                                          \
    if (syscall(SYS_arch_prctl, 0x1023, 18) != 0) {                            \
      std::printf("SKIPPED: Linux refused the AMX tile state\n");             \
      std::exit(77);                                                           \
    }                                                                          \
  } while (0)

/// Generating needs no AVX-512, running does: a case that runs kernels is
/// skipped on a host without AVX-512F rather than die of SIGILL.
#define MLCC_REQUIRE_AVX512F() MLCC_SKIP_WITHOUT("avx512f", "AVX-512F")

namespace mlcc::test {

/// uint64_t wrapper(const void *args, kernel): fills the SysV
/// callee-saved registers with known values, calls the kernel and returns
/// the OR of (value ^ expected) over them, and of rsp before ^ after: 0
/// when the kernel kept them all.
class CalleeSavedCheck : public Xbyak::CodeGenerator {
public:
  explicit CalleeSavedCheck(std::vector<uint8_t> &buffer)
      : Xbyak::CodeGenerator(buffer.size(), buffer.data()) {
    const Xbyak::Reg64 regs[] = {rbx, rbp, r12, r13, r14, r15};
    for (const Xbyak::Reg64 &r : regs)
      push(r);
    for (int i = 0; i < 6; ++i)
      mov(regs[i], magic(i));
    mov(r8, rsp); // rsp must come back too
    push(r8);     // six pushes + this one: 16-byte aligned for the call
    call(rsi);
    pop(r8);
    xor_(eax, eax);
    xor_(r8, rsp);
    or_(rax, r8);
    for (int i = 0; i < 6; ++i) {
      mov(rcx, magic(i));
      xor_(rcx, regs[i]);
      or_(rax, rcx);
    }
    for (int i = 5; i >= 0; --i)
      pop(regs[i]);
    ret();
  }
  static uint64_t magic(int i) { return 0x0123456789abcdefull + 0x1111 * i; }
};

/// Runs a kernel through CalleeSavedCheck: run(args, kernel) is 0 when the
/// kernel kept every callee-saved register and rsp.
class CalleeSavedChecker {
public:
  CalleeSavedChecker() {
    std::vector<uint8_t> buffer(4096);
    Xbyak::ClearError();
    CalleeSavedCheck wrapper(buffer);
    REQUIRE(Xbyak::GetError() == 0);
    exec_ = std::make_unique<ExecutableBuffer>(std::vector<uint8_t>(
        wrapper.getCode(), wrapper.getCode() + wrapper.getSize()));
    REQUIRE(exec_->ok());
  }
  uint64_t run(const void *args, const void *kernel) const {
    using Fn = uint64_t (*)(const void *, const void *);
    return exec_->function<Fn>()(args, kernel);
  }

private:
  std::unique_ptr<ExecutableBuffer> exec_;
};

/// The fastest of `n` runs of body(), in microseconds (the [.bench] cases).
template <typename Body> double bestMicros(Body &&body, int n) {
  double t = 1e30;
  for (int r = 0; r < n; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    body();
    std::chrono::duration<double, std::micro> dt =
        std::chrono::steady_clock::now() - t0;
    t = std::min(t, dt.count());
  }
  return t;
}

/// Two bodies timed in interleaved rounds (each round's best of `n` calls
/// of each): the medians over the rounds, in microseconds, so that the
/// machine's drift touches both alike.
template <typename A, typename B>
std::pair<double, double> interleavedMedianMicros(A &&a, B &&b, int rounds,
                                                  int n) {
  std::vector<double> ta, tb;
  for (int r = 0; r < rounds; ++r) {
    ta.push_back(bestMicros(a, n));
    tb.push_back(bestMicros(b, n));
  }
  std::sort(ta.begin(), ta.end());
  std::sort(tb.begin(), tb.end());
  return {ta[ta.size() / 2], tb[tb.size() / 2]};
}

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

/// Runs reference kernel `name` (the tests' oracle) and returns its first
/// output as floats; fails the test case if the kernel rejects the inputs.
inline std::vector<float> runReference(const std::string &name,
                                       const ref::Attrs &attrs,
                                       const std::vector<ref::Tensor> &in) {
  const ref::KernelDef *k = ref::KernelRegistry::get().find(name);
  INFO(name);
  REQUIRE(k);
  std::vector<ref::Tensor> out(1);
  ref::Status s = k->run(attrs, in, out);
  INFO(s.message());
  REQUIRE(s.ok());
  const float *p = out[0].data<float>();
  return std::vector<float>(p, p + out[0].numel());
}

} // namespace mlcc::test

#endif // MLCC_TEST_UNIT_LOWERING_KERNELTESTSUPPORT_H
