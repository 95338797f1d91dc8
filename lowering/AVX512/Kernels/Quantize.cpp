//===- Quantize.cpp - AVX-512 QuantizeLinear kernels ----------------------===//
//
// Each vector: divide by the scale, clamp to [qmin - zero, qmax - zero]
// (integers, so clamping before rounding gives what saturating after it
// would, and vcvtps2dq never sees a value out of int32's range), round
// (MXCSR's nearest even), add the zero point, narrow. Four vectors per
// loop iteration, then single vectors, then a masked tail.
//
//===----------------------------------------------------------------------===//

#include "Quantize.h"
#include "JitGenerator.h"

#include "KernelABI.h"

#include <cmath>
#include <cstddef>

namespace mlcc::avx512 {

namespace {

constexpr int64_t kMaxBytes = int64_t(1) << 31;
constexpr int kUnroll = 4;

class QuantizeKernel : public JitGenerator {
public:
  QuantizeKernel(std::vector<uint8_t> &buffer, const QuantizeSpec &spec)
      : JitGenerator(buffer), spec_(spec) {}

  void generate() {
    preamble();
    mov(regSrc_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_eltwise_args, src))]);
    mov(regDst_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_eltwise_args, dst))]);
    const int64_t vectors = spec_.n / kF32Lanes;
    const int64_t iters = vectors / kUnroll;
    if (iters > 0) {
      Xbyak::Label loop;
      mov(regIter_, iters);
      L(loop);
      for (int u = 0; u < kUnroll; ++u)
        vector(u, u, false);
      add(regSrc_, kUnroll * kZmmBytes);
      add(regDst_, kUnroll * kF32Lanes);
      dec(regIter_);
      jnz(loop, T_NEAR);
    }
    for (int64_t v = iters * kUnroll; v < vectors; ++v)
      vector(0, v - iters * kUnroll, false);
    if (int rem = static_cast<int>(spec_.n % kF32Lanes)) {
      mov(eax, (1u << rem) - 1);
      kmovw(kTail_, eax);
      vector(0, vectors - iters * kUnroll, true);
    }
    postamble();
  }

private:
  const QuantizeSpec &spec_;
  const Xbyak::Reg64 regArgs_ = rdi;
  const Xbyak::Reg64 regSrc_ = rsi;
  const Xbyak::Reg64 regDst_ = rdx;
  const Xbyak::Reg64 regIter_ = rcx;
  const Xbyak::Opmask kTail_ = k1;

  /// Vector `at` (in vectors past the pointers) through zmm `reg`.
  void vector(int reg, int64_t at, bool masked) {
    Xbyak::Zmm z(reg);
    const int qmin = spec_.signedOutput ? -128 : 0;
    const int qmax = spec_.signedOutput ? 127 : 255;
    Xbyak::Address src = ptr[regSrc_ + static_cast<int>(at * kZmmBytes)];
    Xbyak::Address dst = ptr[regDst_ + static_cast<int>(at * kF32Lanes)];
    masked ? vmovups(z | kTail_ | T_z, src) : vmovups(z, src);
    vdivps(z, z, cst(spec_.scale));
    vmaxps(z, z, cst(static_cast<float>(qmin - spec_.zero)));
    vminps(z, z, cst(static_cast<float>(qmax - spec_.zero)));
    vcvtps2dq(z, z);
    if (spec_.zero != 0)
      vpaddd(z, z, cstBits(static_cast<uint32_t>(spec_.zero)));
    // In range now: the plain narrowing keeps the low bytes.
    masked ? vpmovdb(dst | kTail_, z) : vpmovdb(dst, z);
  }
};

class ToBf16Kernel : public JitGenerator {
public:
  ToBf16Kernel(std::vector<uint8_t> &buffer, int64_t n)
      : JitGenerator(buffer), n_(n) {}

  void generate() {
    preamble();
    mov(rsi, ptr[rdi + static_cast<int>(offsetof(mlcc_eltwise_args, src))]);
    mov(rdx, ptr[rdi + static_cast<int>(offsetof(mlcc_eltwise_args, dst))]);
    const int64_t vectors = n_ / kF32Lanes;
    const int64_t iters = vectors / kUnroll;
    if (iters > 0) {
      Xbyak::Label loop;
      mov(rcx, iters);
      L(loop);
      for (int u = 0; u < kUnroll; ++u)
        vector(u, u, false);
      add(rsi, kUnroll * kZmmBytes);
      add(rdx, kUnroll * kZmmBytes / 2);
      dec(rcx);
      jnz(loop, T_NEAR);
    }
    for (int64_t v = iters * kUnroll; v < vectors; ++v)
      vector(0, v - iters * kUnroll, false);
    if (int rem = static_cast<int>(n_ % kF32Lanes)) {
      mov(eax, (1u << rem) - 1);
      kmovw(k1, eax);
      vector(0, vectors - iters * kUnroll, true);
    }
    postamble();
  }

private:
  const int64_t n_;

  void vector(int reg, int64_t at, bool masked) {
    Xbyak::Zmm z(reg);
    Xbyak::Ymm y(reg);
    Xbyak::Address src = ptr[rsi + static_cast<int>(at * kZmmBytes)];
    Xbyak::Address dst = ptr[rdx + static_cast<int>(at * kZmmBytes / 2)];
    masked ? vmovups(z | k1 | T_z, src) : vmovups(z, src);
    vcvtneps2bf16(y, z, Xbyak::EvexEncoding);
    masked ? vmovdqu16(dst | k1, y) : vmovdqu16(dst, y);
  }
};

} // namespace

ref::Status generateToBf16(const std::string &name, int64_t n,
                           std::vector<uint8_t> &code) {
  code.clear();
  MLCC_CHECK(n >= 0 && n <= kMaxBytes / 4, name, ": bf16 conversion of ", n,
             " elements: 0 to 2^29 supported");
  return generateInGrowingBuffer([&](std::vector<uint8_t> &buffer) {
    ToBf16Kernel kernel(buffer, n);
    kernel.generate();
    return kernel.finish(name, code);
  });
}

ref::Status generateQuantize(const QuantizeSpec &spec,
                             std::vector<uint8_t> &code) {
  code.clear();
  const int qmin = spec.signedOutput ? -128 : 0;
  const int qmax = spec.signedOutput ? 127 : 255;
  MLCC_CHECK(spec.n >= 0 && spec.n <= kMaxBytes / 4, spec.name,
             ": quantize of ", spec.n, " elements: 0 to 2^29 supported");
  MLCC_CHECK(std::isfinite(spec.scale) && spec.scale != 0.0f, spec.name,
             ": quantize scale ", spec.scale, " must be finite and not 0");
  MLCC_CHECK(spec.zero >= qmin && spec.zero <= qmax, spec.name, ": zero point ",
             spec.zero, " is outside ", qmin, "..", qmax);
  return generateInGrowingBuffer([&](std::vector<uint8_t> &buffer) {
    QuantizeKernel kernel(buffer, spec);
    kernel.generate();
    return kernel.finish(spec.name, code);
  });
}

} // namespace mlcc::avx512
