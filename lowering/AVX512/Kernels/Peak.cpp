//===- Peak.cpp - Kernels that measure the machine ------------------------===//
//
// Registers: rdi = args, rcx = iterations left, rax = the stream's place,
// rdx = its inner iterations left, rsi = dst minus src (Copy).
//
//===----------------------------------------------------------------------===//

#include "Peak.h"
#include "JitGenerator.h"

#include <cstddef>

namespace mlcc::avx512 {

namespace {

constexpr int kChains = 24; // independent accumulators

class PeakGenerator : public JitGenerator {
public:
  PeakGenerator(std::vector<uint8_t> &buffer, PeakKernel kind)
      : JitGenerator(buffer), kind_(kind) {}

  void generate() {
    preamble();
    mov(rcx, ptr[rdi + static_cast<int>(offsetof(mlcc_peak_args, iterations))]);
    if (kind_ == PeakKernel::Read || kind_ == PeakKernel::Copy)
      stream();
    else
      arithmetic();
    postamble();
  }

private:
  PeakKernel kind_;

  void arithmetic() {
    for (int i = 0; i < kChains; ++i)
      vpxord(Xbyak::Zmm(i), Xbyak::Zmm(i), Xbyak::Zmm(i));
    // Small operands: no denormals, no overflow however long it runs.
    vpxord(zmm30, zmm30, zmm30);
    vpxord(zmm31, zmm31, zmm31);
    Xbyak::Label loop;
    alignCode(32, /*withNops=*/true);
    L(loop);
    for (int i = 0; i < kChains; ++i) {
      Xbyak::Zmm acc(i);
      switch (kind_) {
      case PeakKernel::FmaF32:
        vfmadd231ps(acc, zmm30, zmm31);
        break;
      case PeakKernel::DotInt8:
        vpdpbusd(acc, zmm30, zmm31, Xbyak::EvexEncoding);
        break;
      default:
        vdpbf16ps(acc, zmm30, zmm31);
      }
    }
    dec(rcx);
    jnz(loop, T_NEAR);
  }

  void stream() {
    const bool copy = kind_ == PeakKernel::Copy;
    if (copy) {
      mov(rsi, ptr[rdi + static_cast<int>(offsetof(mlcc_peak_args, dst))]);
      sub(rsi, ptr[rdi + static_cast<int>(offsetof(mlcc_peak_args, src))]);
    } else {
      for (int i = 0; i < 4; ++i)
        vpxord(Xbyak::Zmm(i), Xbyak::Zmm(i), Xbyak::Zmm(i));
    }
    Xbyak::Label pass, inner;
    L(pass);
    mov(rax, ptr[rdi + static_cast<int>(offsetof(mlcc_peak_args, src))]);
    mov(rdx, ptr[rdi + static_cast<int>(offsetof(mlcc_peak_args, bytes))]);
    shr(rdx, 8); // / kPeakStreamBytes
    alignCode(32, /*withNops=*/true);
    L(inner);
    for (int i = 0; i < 4; ++i) {
      Xbyak::Address at = ptr[rax + i * 64];
      if (copy) {
        vmovups(Xbyak::Zmm(i), at);
        vmovups(ptr[rax + rsi + i * 64], Xbyak::Zmm(i));
      } else {
        vpord(Xbyak::Zmm(i), Xbyak::Zmm(i), at);
      }
    }
    add(rax, kPeakStreamBytes);
    dec(rdx);
    jnz(inner, T_NEAR);
    dec(rcx);
    jnz(pass, T_NEAR);
  }
};

static_assert(kPeakStreamBytes == 256, "stream() shifts by 8");

} // namespace

double peakOpsPerIteration(PeakKernel kind) {
  switch (kind) {
  case PeakKernel::FmaF32:
    return 2.0 * 16 * kChains;
  case PeakKernel::DotInt8:
    return 2.0 * 64 * kChains;
  case PeakKernel::DotBf16:
    return 2.0 * 32 * kChains;
  default:
    return 0;
  }
}

Status generatePeakKernel(PeakKernel kind, std::vector<uint8_t> &code) {
  return generateInGrowingBuffer([&](std::vector<uint8_t> &buffer) {
    PeakGenerator generator(buffer, kind);
    generator.generate();
    return generator.finish("peak kernel", code);
  });
}

} // namespace mlcc::avx512
