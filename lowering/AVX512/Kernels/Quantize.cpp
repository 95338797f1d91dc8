//===- Quantize.cpp - AVX-512 QuantizeLinear kernels ----------------------===//
//
// Each vector of QuantizeLinear: divide by the scale, clamp to [qmin - zero,
// qmax - zero] (integers, so clamping before rounding gives what saturating
// after it would, and vcvtps2dq never sees a value out of int32's range), round
// (MXCSR's nearest even), add the zero point, narrow. Four vectors per
// loop iteration, then single vectors, then a masked tail.
//
// DequantizeLinear widens instead: per slice of its axis, the slice's scale
// and zero point are broadcast, then each vector of the slice is extended
// to int32, has the zero point subtracted (as integers), is converted and
// scaled: the reference's (q - zero) * scale.
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

/// What both kernels share: f32 in, `dstBytes_` per element out, four
/// vectors per loop iteration, then single vectors, then a masked tail;
/// convert() narrows one vector.
class NarrowingKernel : public JitGenerator {
public:
  /// `n` elements, or `outer` x `channels` slices of `n` each, with
  /// startChannels() before each run of channels and startSlice() before
  /// each slice.
  NarrowingKernel(std::vector<uint8_t> &buffer, int64_t n, int dstBytes,
                  int64_t outer = 1, int64_t channels = 1)
      : JitGenerator(buffer), n_(n), dstBytes_(dstBytes), outer_(outer),
        channels_(channels) {}

  void generate() {
    preamble();
    mov(regSrc_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_eltwise_args, src))]);
    mov(regDst_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_eltwise_args, dst))]);
    prologue();
    if (int rem = static_cast<int>(n_ % kF32Lanes)) {
      mov(eax, (1u << rem) - 1);
      kmovw(kTail_, eax);
    }
    if (outer_ * channels_ == 1) {
      slice();
    } else {
      Xbyak::Label outerLoop, channelLoop;
      mov(regOuter_, outer_);
      L(outerLoop);
      startChannels();
      mov(regChannel_, channels_);
      L(channelLoop);
      startSlice();
      slice();
      dec(regChannel_);
      jnz(channelLoop, T_NEAR);
      dec(regOuter_);
      jnz(outerLoop, T_NEAR);
    }
    postamble();
  }

protected:
  const Xbyak::Opmask kTail_ = k1;
  const Xbyak::Reg64 regArgs_ = rdi;

  /// Before the loop; the vectors use zmm0-3, the slice loops r10, r11.
  virtual void prologue() {}
  virtual void startChannels() {}
  virtual void startSlice() {}

  /// Narrows zmm `z` (loaded) into `dst`, under kTail_ when `masked`.
  virtual void convert(const Xbyak::Zmm &z, const Xbyak::Address &dst,
                       bool masked) = 0;

private:
  const int64_t n_;
  const int dstBytes_;
  const int64_t outer_, channels_;
  const Xbyak::Reg64 regSrc_ = rsi;
  const Xbyak::Reg64 regDst_ = rdx;
  const Xbyak::Reg64 regIter_ = rcx;
  const Xbyak::Reg64 regChannel_ = r10;
  const Xbyak::Reg64 regOuter_ = r11;

  /// The n_ elements at the pointers, which move past them.
  void slice() {
    const int64_t vectors = n_ / kF32Lanes;
    const int64_t iters = vectors / kUnroll;
    if (iters > 0) {
      Xbyak::Label loop;
      mov(regIter_, iters);
      L(loop);
      for (int u = 0; u < kUnroll; ++u)
        vector(u, u, false);
      add(regSrc_, kUnroll * kZmmBytes);
      add(regDst_, kUnroll * kF32Lanes * dstBytes_);
      dec(regIter_);
      jnz(loop, T_NEAR);
    }
    const int64_t left = vectors - iters * kUnroll;
    for (int64_t v = 0; v < left; ++v)
      vector(0, v, false);
    const int rem = static_cast<int>(n_ % kF32Lanes);
    if (rem)
      vector(0, left, true);
    if (outer_ * channels_ > 1 && (left || rem)) {
      add(regSrc_, static_cast<int>((left * kF32Lanes + rem) * 4));
      add(regDst_, static_cast<int>((left * kF32Lanes + rem) * dstBytes_));
    }
  }

  /// Vector `at` (in vectors past the pointers) through zmm `reg`.
  void vector(int reg, int64_t at, bool masked) {
    Xbyak::Zmm z(reg);
    Xbyak::Address src = ptr[regSrc_ + static_cast<int>(at * kZmmBytes)];
    masked ? vmovups(z | kTail_ | T_z, src) : vmovups(z, src);
    convert(z, ptr[regDst_ + static_cast<int>(at * kF32Lanes * dstBytes_)],
            masked);
  }
};

class QuantizeKernel : public NarrowingKernel {
public:
  QuantizeKernel(std::vector<uint8_t> &buffer, const QuantizeSpec &spec)
      : NarrowingKernel(buffer, spec.n, 1, spec.outer, spec.channels),
        spec_(spec) {}

private:
  const QuantizeSpec &spec_;
  /// Run-time parameters: the scale, zero point and clamping bounds.
  const Xbyak::Zmm scale_ = zmm31, zero_ = zmm30, low_ = zmm29, high_ = zmm28;
  /// Per slice: the next scale and zero point (null: none).
  const Xbyak::Reg64 regScale_ = r8, regZero_ = r9;

  int qmin() const { return spec_.signedOutput ? -128 : 0; }
  int qmax() const { return spec_.signedOutput ? 127 : 255; }
  bool perSlice() const { return spec_.outer * spec_.channels > 1; }

  Xbyak::Address source(int i) {
    return ptr[regArgs_ + static_cast<int>(offsetof(mlcc_eltwise_args, src) +
                                           i * sizeof(void *))];
  }

  void prologue() override {
    if (!spec_.runtimeParameters || perSlice())
      return;
    mov(regScale_, source(1));
    mov(regZero_, source(2));
    loadParameters();
  }
  void startChannels() override {
    mov(regScale_, source(1));
    mov(regZero_, source(2));
  }
  void startSlice() override {
    loadParameters();
    add(regScale_, 4);
    Xbyak::Label none;
    test(regZero_, regZero_);
    jz(none);
    add(regZero_, 1);
    L(none);
  }

  /// The scale at regScale_ and the zero point at regZero_ (0 when it is
  /// null), and the clamping bounds they give.
  void loadParameters() {
    vbroadcastss(scale_, ptr[regScale_]);
    // The zero point, 0 without one, extended by the output's type.
    Xbyak::Label none, loaded;
    test(regZero_, regZero_);
    jz(none);
    spec_.signedOutput ? movsx(eax, byte[regZero_])
                       : movzx(eax, byte[regZero_]);
    jmp(loaded);
    L(none);
    xor_(eax, eax);
    L(loaded);
    vpbroadcastd(zero_, eax);
    // low = qmin - zero, high = qmax - zero, as floats.
    const Xbyak::Zmm zeroFloat = zmm27;
    vcvtdq2ps(zeroFloat, zero_);
    loadCst(low_, static_cast<float>(qmin()));
    vsubps(low_, low_, zeroFloat);
    loadCst(high_, static_cast<float>(qmax()));
    vsubps(high_, high_, zeroFloat);
  }

  void convert(const Xbyak::Zmm &z, const Xbyak::Address &dst,
               bool masked) override {
    if (spec_.runtimeParameters) {
      vdivps(z, z, scale_);
      vmaxps(z, z, low_);
      vminps(z, z, high_);
      vcvtps2dq(z, z);
      vpaddd(z, z, zero_);
    } else {
      vdivps(z, z, cst(spec_.scale));
      vmaxps(z, z, cst(static_cast<float>(qmin() - spec_.zero)));
      vminps(z, z, cst(static_cast<float>(qmax() - spec_.zero)));
      vcvtps2dq(z, z);
      if (spec_.zero != 0)
        vpaddd(z, z, cstBits(static_cast<uint32_t>(spec_.zero)));
    }
    // In range now: the plain narrowing keeps the low bytes.
    masked ? vpmovdb(dst | kTail_, z) : vpmovdb(dst, z);
  }
};

class ToBf16Kernel : public NarrowingKernel {
public:
  ToBf16Kernel(std::vector<uint8_t> &buffer, int64_t n)
      : NarrowingKernel(buffer, n, 2) {}

private:
  void convert(const Xbyak::Zmm &z, const Xbyak::Address &dst,
               bool masked) override {
    Xbyak::Ymm y(z.getIdx());
    vcvtneps2bf16(y, z, Xbyak::EvexEncoding);
    masked ? vmovdqu16(dst | kTail_, y) : vmovdqu16(dst, y);
  }
};

class DequantizeKernel : public JitGenerator {
public:
  DequantizeKernel(std::vector<uint8_t> &buffer, const DequantizeSpec &spec)
      : JitGenerator(buffer), spec_(spec) {}

  void generate() {
    preamble();
    auto field = [&](size_t offset) {
      return ptr[regArgs_ + static_cast<int>(offset)];
    };
    mov(regSrc_, field(offsetof(mlcc_eltwise_args, src)));
    mov(regDst_, field(offsetof(mlcc_eltwise_args, dst)));
    if (int rem = static_cast<int>(spec_.inner % kF32Lanes)) {
      mov(eax, (1u << rem) - 1);
      kmovw(kTail_, eax);
    }
    Xbyak::Label outerLoop, channelLoop;
    mov(regOuter_, spec_.outer);
    L(outerLoop);
    mov(regScale_, field(offsetof(mlcc_eltwise_args, src) + sizeof(void *)));
    if (spec_.hasZero)
      mov(regZero_,
          field(offsetof(mlcc_eltwise_args, src) + 2 * sizeof(void *)));
    mov(regChannel_, spec_.channels);
    L(channelLoop);
    vbroadcastss(scale_, ptr[regScale_]);
    if (spec_.hasZero) {
      switch (spec_.type) {
      case QuantizedType::U8:
        movzx(eax, byte[regZero_]);
        break;
      case QuantizedType::S8:
        movsx(eax, byte[regZero_]);
        break;
      case QuantizedType::I32:
        mov(eax, dword[regZero_]);
        break;
      }
      vpbroadcastd(zero_, eax);
      add(regZero_, elementBytes());
    }
    add(regScale_, 4);
    slice();
    dec(regChannel_);
    jnz(channelLoop, T_NEAR);
    dec(regOuter_);
    jnz(outerLoop, T_NEAR);
    postamble();
  }

private:
  const DequantizeSpec &spec_;
  const Xbyak::Reg64 regArgs_ = rdi;
  const Xbyak::Reg64 regSrc_ = rsi;
  const Xbyak::Reg64 regDst_ = rdx;
  const Xbyak::Reg64 regScale_ = r8;
  const Xbyak::Reg64 regZero_ = r9;
  const Xbyak::Reg64 regChannel_ = r10;
  const Xbyak::Reg64 regOuter_ = r11;
  const Xbyak::Reg64 regIter_ = rcx;
  const Xbyak::Opmask kTail_ = k1;
  const Xbyak::Zmm scale_ = zmm31, zero_ = zmm30;

  int elementBytes() const { return spec_.type == QuantizedType::I32 ? 4 : 1; }

  /// The `inner` elements at regSrc_ to regDst_, both pointers moved past
  /// them: four vectors per iteration, single vectors, a masked tail.
  void slice() {
    const int64_t vectors = spec_.inner / kF32Lanes;
    const int64_t iters = vectors / kUnroll;
    const int vectorBytes = kF32Lanes * elementBytes();
    if (iters > 0) {
      Xbyak::Label loop;
      mov(regIter_, iters);
      L(loop);
      for (int u = 0; u < kUnroll; ++u)
        vector(u, u, false);
      add(regSrc_, kUnroll * vectorBytes);
      add(regDst_, kUnroll * kZmmBytes);
      dec(regIter_);
      jnz(loop, T_NEAR);
    }
    const int64_t left = vectors - iters * kUnroll;
    for (int64_t v = 0; v < left; ++v)
      vector(0, v, false);
    const int rem = static_cast<int>(spec_.inner % kF32Lanes);
    if (rem)
      vector(0, left, true);
    const int64_t tailBytes = left * vectorBytes + rem * elementBytes();
    if (tailBytes)
      add(regSrc_, static_cast<int>(tailBytes));
    if (left || rem)
      add(regDst_, static_cast<int>((left * kF32Lanes + rem) * 4));
  }

  /// Vector `at` (in vectors past the pointers) through zmm `reg`.
  void vector(int reg, int64_t at, bool masked) {
    Xbyak::Zmm z(reg);
    Xbyak::Address src =
        ptr[regSrc_ + static_cast<int>(at * kF32Lanes * elementBytes())];
    switch (spec_.type) {
    case QuantizedType::U8:
      masked ? vpmovzxbd(z | kTail_ | T_z, src) : vpmovzxbd(z, src);
      break;
    case QuantizedType::S8:
      masked ? vpmovsxbd(z | kTail_ | T_z, src) : vpmovsxbd(z, src);
      break;
    case QuantizedType::I32:
      masked ? vmovdqu32(z | kTail_ | T_z, src) : vmovdqu32(z, src);
      break;
    }
    // Subtracted as integers: exact for int32 too, then one rounding.
    if (spec_.hasZero)
      vpsubd(z, z, zero_);
    vcvtdq2ps(z, z);
    vmulps(z, z, scale_);
    Xbyak::Address dst = ptr[regDst_ + static_cast<int>(at * kZmmBytes)];
    masked ? vmovups(dst | kTail_, z) : vmovups(dst, z);
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

ref::Status generateDequantize(const DequantizeSpec &spec,
                               std::vector<uint8_t> &code) {
  code.clear();
  MLCC_CHECK(spec.outer >= 1 && spec.channels >= 1 && spec.inner >= 0,
             spec.name, ": dequantize of ", spec.outer, " x ", spec.channels,
             " x ", spec.inner, " elements");
  MLCC_CHECK(spec.inner <= kMaxBytes / 4 / spec.channels / spec.outer,
             spec.name, ": dequantize of ", spec.outer, " x ", spec.channels,
             " x ", spec.inner, " elements: 0 to 2^29 supported");
  return generateInGrowingBuffer([&](std::vector<uint8_t> &buffer) {
    DequantizeKernel kernel(buffer, spec);
    kernel.generate();
    return kernel.finish(spec.name, code);
  });
}

ref::Status generateQuantize(const QuantizeSpec &spec,
                             std::vector<uint8_t> &code) {
  code.clear();
  const int qmin = spec.signedOutput ? -128 : 0;
  const int qmax = spec.signedOutput ? 127 : 255;
  MLCC_CHECK(spec.n >= 0 && spec.outer >= 1 && spec.channels >= 1 &&
                 spec.n <= kMaxBytes / 4 / spec.outer / spec.channels,
             spec.name, ": quantize of ", spec.outer * spec.channels, " x ",
             spec.n, " elements: 0 to 2^29 supported");
  MLCC_CHECK(spec.outer * spec.channels == 1 || spec.runtimeParameters,
             spec.name, ": a quantize per slice reads its scales at run time");
  MLCC_CHECK(spec.runtimeParameters ||
                 (std::isfinite(spec.scale) && spec.scale != 0.0f),
             spec.name, ": quantize scale ", spec.scale,
             " must be finite and not 0");
  MLCC_CHECK(spec.runtimeParameters || (spec.zero >= qmin && spec.zero <= qmax),
             spec.name, ": zero point ", spec.zero, " is outside ", qmin, "..",
             qmax);
  return generateInGrowingBuffer([&](std::vector<uint8_t> &buffer) {
    QuantizeKernel kernel(buffer, spec);
    kernel.generate();
    return kernel.finish(spec.name, code);
  });
}

} // namespace mlcc::avx512
