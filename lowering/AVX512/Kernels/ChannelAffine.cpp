//===- ChannelAffine.cpp - Per-channel scale and shift over NCHW16c -------===//
//
// Registers: rsi src, rdx dst, r8 scale and r9 shift (the plane's block),
// rcx block counter, rax pixel counter; zmm0-7 the pixels of a step (the
// epilogue's scratch above them), zmm30 scale, zmm31 shift.
//
//===----------------------------------------------------------------------===//

#include "ChannelAffine.h"
#include "EltwiseInjector.h"
#include "JitGenerator.h"

#include "KernelABI.h"

#include <cstddef>

namespace mlcc::avx512 {

namespace {

constexpr int kStepPixels = 8;
constexpr int kPixelBytes = 64;

class ChannelAffineKernel : public JitGenerator {
public:
  ChannelAffineKernel(std::vector<uint8_t> &buffer,
                      const ChannelAffineSpec &spec)
      : JitGenerator(buffer), spec_(spec), injector_(*this) {}

  void generate() {
    preamble();
    const int64_t blocks = (spec_.c + 15) / 16;
    if (spec_.n > 0 && blocks > 0 && spec_.pixels > 0) {
      auto field = [&](size_t offset) {
        return ptr[rdi + static_cast<int>(offset)];
      };
      mov(rsi, field(offsetof(mlcc_channel_affine_args, src)));
      mov(rdx, field(offsetof(mlcc_channel_affine_args, dst)));
      Xbyak::Label image;
      mov(r10, spec_.n);
      L(image);
      mov(r8, field(offsetof(mlcc_channel_affine_args, scale)));
      mov(r9, field(offsetof(mlcc_channel_affine_args, shift)));
      Xbyak::Label block;
      mov(rcx, blocks);
      L(block);
      vmovups(zmm30, ptr[r8]);
      vmovups(zmm31, ptr[r9]);
      plane();
      add(r8, kPixelBytes);
      add(r9, kPixelBytes);
      dec(rcx);
      jnz(block, T_NEAR);
      dec(r10);
      jnz(image, T_NEAR);
    }
    postamble();
  }

private:
  const ChannelAffineSpec &spec_;
  EltwiseInjector injector_;

  /// `count` pixels from rsi to rdx, both moved past them.
  void pixels(int count) {
    for (int i = 0; i < count; ++i) {
      Xbyak::Zmm x(i);
      vmovups(x, ptr[rsi + i * kPixelBytes]);
      vfmadd213ps(x, zmm30, zmm31);
    }
    injector_.blockEpilogue(spec_.epilogue, count, 1, nullptr, false, k1);
    for (int i = 0; i < count; ++i)
      vmovups(ptr[rdx + i * kPixelBytes], Xbyak::Zmm(i));
    add(rsi, count * kPixelBytes);
    add(rdx, count * kPixelBytes);
  }

  void plane() {
    const int64_t steps = spec_.pixels / kStepPixels;
    const int rest = static_cast<int>(spec_.pixels % kStepPixels);
    if (steps > 0) {
      Xbyak::Label loop;
      mov(rax, steps);
      L(loop);
      pixels(kStepPixels);
      dec(rax);
      jnz(loop, T_NEAR);
    }
    if (rest)
      pixels(rest);
  }
};

} // namespace

ref::Status generateChannelAffine(const ChannelAffineSpec &spec,
                                  std::vector<uint8_t> &code) {
  code.clear();
  MLCC_CHECK(spec.n >= 0 && spec.c >= 0 && spec.pixels >= 0, spec.name,
             ": negative dims");
  for (const EltwiseOp &op : spec.epilogue)
    MLCC_CHECK(!isBinary(op.kind) &&
                   EltwiseInjector::tempsNeeded(op) <= 30 - kStepPixels,
               spec.name, ": the epilogue takes unary ops only");
  return generateInGrowingBuffer([&](std::vector<uint8_t> &buffer) {
    ChannelAffineKernel kernel(buffer, spec);
    kernel.generate();
    return kernel.finish(spec.name, code);
  });
}

} // namespace mlcc::avx512
