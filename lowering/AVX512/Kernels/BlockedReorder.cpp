//===- BlockedReorder.cpp - NCHW <-> NCHW16c reorder kernels --------------===//
//
// One chunk is 16 pixels of one channel block: in the plain layout 16 rows
// (one per channel, 16 consecutive pixels each), in the blocked one 16 rows
// (one per pixel, its 16 channels). Either way the kernel loads 16 rows
// into zmm0-15, transposes them (with zmm16-31 as the halfway registers)
// and stores 16 rows of the other layout. Rows past C (the last block) load
// as 0; the last chunk of a plane, of fewer pixels, loads and stores its
// plain rows under a mask and only its blocked rows.
//
// Registers: r8 plain and r9 blocked pointers at the block, rax and rdx at
// the chunk, r10 image and r11 block counters, rcx chunk counter; k1 the
// pixel mask of a plane's last chunk.
//
//===----------------------------------------------------------------------===//

#include "BlockedReorder.h"
#include "JitGenerator.h"

#include "KernelABI.h"

#include <cstddef>

namespace mlcc::avx512 {

namespace {

constexpr int kLanes = 16;

class BlockedReorderKernel : public JitGenerator {
public:
  BlockedReorderKernel(std::vector<uint8_t> &buffer,
                       const BlockedReorderSpec &spec)
      : JitGenerator(buffer), s_(spec) {}

  void generate();

private:
  const BlockedReorderSpec &s_;

  /// zmm_j[i] = zmm_i[j] for the 16 x 16 in zmm0-15.
  void transpose();
  /// One chunk of `pixels` pixels of a block of `channels` channels.
  void chunk(int channels, int pixels);
  /// Every chunk of one block.
  void block(int channels);
};

void BlockedReorderKernel::transpose() {
  auto z = [](int i) { return Xbyak::Zmm(i); };
  // Pairs of rows interleaved: zmm16 + 2i, + 2i + 1 from rows 2i, 2i + 1.
  for (int i = 0; i < 8; ++i) {
    vunpcklps(z(16 + 2 * i), z(2 * i), z(2 * i + 1));
    vunpckhps(z(17 + 2 * i), z(2 * i), z(2 * i + 1));
  }
  // Quads: zmm(4g + k) holds, in 128-bit lane L, column 4L + k of rows
  // 4g .. 4g + 3.
  for (int g = 0; g < 4; ++g) {
    const int t = 16 + 4 * g;
    vunpcklpd(z(4 * g + 0), z(t), z(t + 2));
    vunpckhpd(z(4 * g + 1), z(t), z(t + 2));
    vunpcklpd(z(4 * g + 2), z(t + 1), z(t + 3));
    vunpckhpd(z(4 * g + 3), z(t + 1), z(t + 3));
  }
  // Lanes gathered: column 4L + k takes lane L of zmm(4g + k), g = 0..3.
  for (int k = 0; k < 4; ++k) {
    const int w = 16 + 4 * k;
    vshuff32x4(z(w + 0), z(k), z(4 + k), 0x44); // g0 L0 L1, g1 L0 L1
    vshuff32x4(z(w + 1), z(k), z(4 + k), 0xEE); // g0 L2 L3, g1 L2 L3
    vshuff32x4(z(w + 2), z(8 + k), z(12 + k), 0x44);
    vshuff32x4(z(w + 3), z(8 + k), z(12 + k), 0xEE);
  }
  for (int k = 0; k < 4; ++k) {
    const int w = 16 + 4 * k;
    vshuff32x4(z(0 + k), z(w + 0), z(w + 2), 0x88);  // L0 of g0..g3
    vshuff32x4(z(4 + k), z(w + 0), z(w + 2), 0xDD);  // L1
    vshuff32x4(z(8 + k), z(w + 1), z(w + 3), 0x88);  // L2
    vshuff32x4(z(12 + k), z(w + 1), z(w + 3), 0xDD); // L3
  }
}

void BlockedReorderKernel::chunk(int channels, int pixels) {
  const int planeBytes = static_cast<int>(s_.pixels * 4);
  const bool masked = pixels < kLanes;
  const Xbyak::Reg64 &plain = rax, &blocked = rdx;
  auto zero = [&](int i) {
    vpxord(Xbyak::Zmm(i), Xbyak::Zmm(i), Xbyak::Zmm(i));
  };
  if (s_.toBlocked) {
    for (int i = 0; i < kLanes; ++i) {
      if (i >= channels) {
        zero(i);
      } else if (masked) {
        vmovups(Xbyak::Zmm(i) | k1 | T_z, ptr[plain + i * planeBytes]);
      } else {
        vmovups(Xbyak::Zmm(i), ptr[plain + i * planeBytes]);
      }
    }
    transpose();
    for (int j = 0; j < pixels; ++j)
      vmovups(ptr[blocked + j * kLanes * 4], Xbyak::Zmm(j));
    return;
  }
  for (int j = 0; j < kLanes; ++j) {
    if (j < pixels)
      vmovups(Xbyak::Zmm(j), ptr[blocked + j * kLanes * 4]);
    else
      zero(j);
  }
  transpose();
  for (int i = 0; i < channels; ++i) {
    if (masked)
      vmovups(ptr[plain + i * planeBytes] | k1, Xbyak::Zmm(i));
    else
      vmovups(ptr[plain + i * planeBytes], Xbyak::Zmm(i));
  }
}

void BlockedReorderKernel::block(int channels) {
  const int64_t full = s_.pixels / kLanes, rest = s_.pixels % kLanes;
  mov(rax, r8);
  mov(rdx, r9);
  if (full > 0) {
    Xbyak::Label loop;
    mov(rcx, full);
    L(loop);
    chunk(channels, kLanes);
    add(rax, kLanes * 4);
    add(rdx, kLanes * kLanes * 4);
    dec(rcx);
    jnz(loop, T_NEAR);
  }
  if (rest > 0)
    chunk(channels, static_cast<int>(rest));
}

void BlockedReorderKernel::generate() {
  preamble();
  const int64_t fullBlocks = s_.c / kLanes, tail = s_.c % kLanes;
  const int64_t planeBytes = s_.pixels * 4;
  if (s_.n > 0) {
    if (s_.pixels % kLanes) {
      mov(eax, (1u << (s_.pixels % kLanes)) - 1);
      kmovw(k1, eax);
    }
    const size_t src = offsetof(mlcc_pool_args, src),
                 dst = offsetof(mlcc_pool_args, dst);
    mov(r8, ptr[rdi + (s_.toBlocked ? src : dst)]);
    mov(r9, ptr[rdi + (s_.toBlocked ? dst : src)]);
    mov(r10, s_.n);
    Xbyak::Label image, blocks;
    L(image);
    auto next = [&](int channels) {
      addImm(r8, channels * planeBytes, rcx);
      addImm(r9, planeBytes * kLanes, rcx);
    };
    if (fullBlocks > 0) {
      mov(r11, fullBlocks);
      L(blocks);
      block(kLanes);
      next(kLanes);
      dec(r11);
      jnz(blocks, T_NEAR);
    }
    if (tail > 0) {
      block(static_cast<int>(tail));
      next(static_cast<int>(tail));
    }
    dec(r10);
    jnz(image, T_NEAR);
  }
  postamble();
}

} // namespace

ref::Status generateBlockedReorder(const BlockedReorderSpec &spec,
                                   std::vector<uint8_t> &code) {
  code.clear();
  const std::string &name = spec.name;
  MLCC_CHECK(spec.n >= 0 && spec.c > 0 && spec.pixels > 0, name,
             ": a reorder needs channels and pixels");
  // Displacements of a block's 16 planes are 32-bit.
  MLCC_CHECK(kLanes * spec.pixels * 4 < (int64_t(1) << 31), name,
             ": planes too big for a reorder kernel");
  return generateInGrowingBuffer([&](std::vector<uint8_t> &buffer) {
    BlockedReorderKernel kernel(buffer, spec);
    kernel.generate();
    return kernel.finish(spec.name, code);
  });
}

} // namespace mlcc::avx512
