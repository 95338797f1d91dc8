//===- GridSample.cpp - AVX-512 grid_sample kernels -----------------------===//
//
// Per block of 16 output points of one image (the last block masked):
//   1. the 16 (x, y) grid pairs, two vectors, split into x and y
//      (vpermt2ps);
//   2. in two halves of 8 lanes, in double as the reference computes them:
//      the pixel coordinates gx A + B (A = W / 2, or (W - 1) / 2 with
//      align_corners; B = (W - 1) / 2), clipped into the input for border
//      padding (nan to W - 1, as the reference's min(W - 1, max(c, 0)));
//      bilinear: their floors x0, y0 and the four weights (1 - ly)(1 - lx),
//      (1 - ly) lx, ly (1 - lx), ly lx, rounded to f32; nearest: the
//      coordinates rounded to even. The integer taps as int32: a nan, an
//      infinite or a far coordinate becomes 0x80000000, outside the input;
//   3. per tap, the lanes whose tap is inside the input (unsigned compares
//      of x < W and y < H), and its flat index y W + x;
//   4. per channel: each tap's 16 values gathered under its mask (0 where
//      the tap is outside the input, as the reference reads it), weighted
//      and summed in f32, stored.
// The reference sums in double: results agree within a few ulp of
// sum |w x|. A nan or infinite coordinate makes bilinear's weights nan:
// nan in both; nearest reads no tap there: 0 in both.
//
// Register plan:
//   rdi args   rsi the image's planes   rdx grid   r8 the image's output
//   rbx images left   r9 blocks left   r10 the block's offset in an output
//   plane (bytes)   r11 the channel's plane   r12 the channel's output
//   r13 channels left   rax scratch
//   zmm0, zmm1 the grid pairs, then zmm0 y and zmm26 x (f32)
//   zmm2-zmm9 a half in double: coordinates, floors, fractions, 1 - them
//   zmm10-zmm13 tap indices   zmm14-zmm17 tap weights
//   zmm18-zmm21 gathered taps   zmm22 the sum   zmm23 scratch
//   zmm25 0.0   zmm27 scratch (a half)   zmm28, zmm29 A of x and y
//   k1-k4 tap masks   k5 gather mask, scratch   k6 block tail, scratch
//   k7 scratch
//
//===----------------------------------------------------------------------===//

#include "GridSample.h"
#include "JitGenerator.h"

#include "KernelABI.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace mlcc::avx512 {

namespace {

using Xbyak::Ymm;
using Xbyak::Zmm;

constexpr int64_t kMaxPlane = (int64_t(1) << 31) - 1;

// vpcmpud's unsigned less-than; vrndscalepd's modes (precision exceptions
// suppressed).
constexpr uint8_t kCmpLtU = 0x01;
constexpr uint8_t kRoundNearestEven = 0x08;
constexpr uint8_t kRoundFloor = 0x09;

/// The double constants, in pool order.
enum DoubleSlot { kAx, kBx, kAy, kBy, kWMinus1, kHMinus1, kOne, kDoubles };

class GridSampleKernel : public JitGenerator {
public:
  GridSampleKernel(std::vector<uint8_t> &buffer, const GridSampleSpec &spec)
      : JitGenerator(buffer), s_(spec),
        bilinear_(spec.mode == GridSampleMode::Bilinear),
        taps_(bilinear_ ? 4 : 1) {}

  void generate();

private:
  const GridSampleSpec &s_;
  const bool bilinear_;
  const int taps_;
  Xbyak::Label doubles_, deinterleave_;

  const Xbyak::Reg64 regArgs_ = rdi, regSrc_ = rsi, regGrid_ = rdx,
                     regDst_ = r8, regImages_ = rbx, regBlocks_ = r9,
                     regOffset_ = r10, regPlane_ = r11, regOut_ = r12,
                     regChannels_ = r13;
  const Zmm gx_ = zmm26, gy_ = zmm0, zero_ = zmm25, ax_ = zmm28, ay_ = zmm29;
  const Ymm half_ = ymm27;

  Xbyak::Address dbl(DoubleSlot slot) {
    return ptr_b[rip + doubles_ + 8 * static_cast<int>(slot)];
  }
  Zmm tapIndex(int t) const { return Zmm(10 + t); }
  Zmm tapWeight(int t) const { return Zmm(14 + t); }
  Zmm tapValue(int t) const { return Zmm(18 + t); }
  Xbyak::Opmask tapMask(int t) const { return Xbyak::Opmask(1 + t); }
  void setMask(const Xbyak::Opmask &k, uint32_t bits) {
    mov(eax, bits);
    kmovw(k, eax);
  }
  /// dst's 8 lanes from 8h on = src (a ymm's worth): written directly for
  /// h = 0 (which clears the upper half), inserted for h = 1.
  template <typename Convert>
  void intoHalf(const Zmm &dst, int h, Convert convert) {
    if (h == 0) {
      convert(Ymm(dst.getIdx()));
    } else {
      convert(half_);
      vinserti64x4(dst, dst, half_, 1);
    }
  }

  void loadGrid(int points);
  void half(int h);
  void taps();
  void channels(int points);
};

/// zmm26 = the points' x, zmm0 their y; lanes past `points` are 0 (the
/// middle of the input: their taps are safe to gather, and not stored).
void GridSampleKernel::loadGrid(int points) {
  const int floats = 2 * points;
  if (floats >= 2 * kF32Lanes) {
    vmovups(zmm0, ptr[regGrid_]);
    vmovups(zmm1, ptr[regGrid_ + kZmmBytes]);
  } else {
    setMask(k6, (1u << std::min(floats, kF32Lanes)) - 1);
    vmovups(zmm0 | k6 | T_z, ptr[regGrid_]);
    if (floats > kF32Lanes) {
      setMask(k7, (1u << (floats - kF32Lanes)) - 1);
      vmovups(zmm1 | k7 | T_z, ptr[regGrid_ + kZmmBytes]);
    } else {
      vpxord(zmm1, zmm1, zmm1);
    }
  }
  vmovaps(gx_, zmm0);
  vmovups(zmm23, ptr[rip + deinterleave_]);
  vpermt2ps(gx_, zmm23, zmm1);
  vmovups(zmm23, ptr[rip + deinterleave_ + kZmmBytes]);
  vpermt2ps(gy_, zmm23, zmm1);
}

/// Lanes 8h to 8h + 7 of the points: the integer taps into those lanes of
/// zmm10 (x) and zmm11 (y), the bilinear weights into those of zmm14-17.
void GridSampleKernel::half(int h) {
  const Zmm ix = zmm2, iy = zmm3, x0 = zmm4, y0 = zmm5, lx = zmm6, ly = zmm7,
            rx = zmm8, ry = zmm9;
  if (h == 0) {
    vcvtps2pd(ix, Ymm(gx_.getIdx()));
    vcvtps2pd(iy, Ymm(gy_.getIdx()));
  } else {
    vextractf64x4(half_, gx_, 1);
    vcvtps2pd(ix, half_);
    vextractf64x4(half_, gy_, 1);
    vcvtps2pd(iy, half_);
  }
  vfmadd213pd(ix, ax_, dbl(kBx));
  vfmadd213pd(iy, ay_, dbl(kBy));
  if (s_.padding == GridSamplePadding::Border) {
    // max(0, c) keeps a nan (vmaxpd returns its second source on one);
    // min(nan, W - 1) is W - 1 (again the second): the reference's
    // min(W - 1, max(c, 0)).
    vmaxpd(ix, zero_, ix);
    vminpd(ix, ix, dbl(kWMinus1));
    vmaxpd(iy, zero_, iy);
    vminpd(iy, iy, dbl(kHMinus1));
  }
  const uint8_t rounding = bilinear_ ? kRoundFloor : kRoundNearestEven;
  vrndscalepd(x0, ix, rounding);
  vrndscalepd(y0, iy, rounding);
  intoHalf(zmm10, h, [&](const Ymm &y) { vcvttpd2dq(y, x0); });
  intoHalf(zmm11, h, [&](const Ymm &y) { vcvttpd2dq(y, y0); });
  if (!bilinear_)
    return;
  vsubpd(lx, ix, x0);
  vsubpd(ly, iy, y0);
  vbroadcastsd(rx, ptr[rip + doubles_ + 8 * static_cast<int>(kOne)]);
  vmovapd(ry, rx);
  vsubpd(rx, rx, lx);
  vsubpd(ry, ry, ly);
  // Taps (x0, y0), (x0 + 1, y0), (x0, y0 + 1), (x0 + 1, y0 + 1).
  const Zmm factors[4][2] = {{ry, rx}, {ry, lx}, {ly, rx}, {ly, lx}};
  for (int t = 0; t < 4; ++t) {
    vmulpd(zmm23, factors[t][0], factors[t][1]);
    intoHalf(tapWeight(t), h, [&](const Ymm &y) { vcvtpd2ps(y, zmm23); });
  }
}

/// From the integer taps in zmm10 (x0) and zmm11 (y0): each tap's lanes
/// inside the input (k1-k4) and its flat index (zmm10-zmm13).
void GridSampleKernel::taps() {
  const uint32_t w = static_cast<uint32_t>(s_.w),
                 h = static_cast<uint32_t>(s_.h);
  // x < W and y < H as unsigned: negative taps (0x80000000 too) fail.
  vpcmpud(k5, zmm10, cstBits(w), kCmpLtU);
  vpcmpud(k6, zmm11, cstBits(h), kCmpLtU);
  kandw(tapMask(0), k5, k6);
  if (bilinear_) {
    vpaddd(zmm12, zmm10, cstBits(1));
    vpcmpud(k7, zmm12, cstBits(w), kCmpLtU);
    kandw(tapMask(1), k7, k6);
    vpaddd(zmm13, zmm11, cstBits(1));
    vpcmpud(k6, zmm13, cstBits(h), kCmpLtU);
    kandw(tapMask(2), k5, k6);
    kandw(tapMask(3), k7, k6);
  }
  vpmulld(zmm11, zmm11, cstBits(w));
  vpaddd(tapIndex(0), zmm10, zmm11);
  if (bilinear_) {
    vpaddd(tapIndex(1), tapIndex(0), cstBits(1));
    vpaddd(tapIndex(2), tapIndex(0), cstBits(w));
    vpaddd(tapIndex(3), tapIndex(2), cstBits(1));
  }
}

/// Every channel's `points` outputs of the block, from the taps.
void GridSampleKernel::channels(int points) {
  mov(regPlane_, regSrc_);
  lea(regOut_, ptr[regDst_ + regOffset_]);
  if (points < kF32Lanes)
    setMask(k6, (1u << points) - 1);
  mov(regChannels_, s_.c);
  Xbyak::Label loop;
  L(loop);
  for (int t = 0; t < taps_; ++t) {
    // A tap outside the input reads 0; the gather clears its mask.
    vpxord(tapValue(t), tapValue(t), tapValue(t));
    kmovw(k5, tapMask(t));
    vgatherdps(tapValue(t) | k5, ptr[regPlane_ + tapIndex(t) * 4]);
  }
  Zmm result = tapValue(0);
  if (bilinear_) {
    result = zmm22;
    vmulps(result, tapValue(0), tapWeight(0));
    for (int t = 1; t < 4; ++t)
      vfmadd231ps(result, tapValue(t), tapWeight(t));
  }
  if (points == kF32Lanes)
    vmovups(ptr[regOut_], result);
  else
    vmovups(ptr[regOut_] | k6, result);
  addImm(regPlane_, 4 * s_.h * s_.w, rax);
  addImm(regOut_, 4 * s_.ho * s_.wo, rax);
  dec(regChannels_);
  jnz(loop, T_NEAR);
}

void GridSampleKernel::generate() {
  preamble({rbx, r12, r13});
  const int64_t points = s_.ho * s_.wo;
  if (s_.n > 0 && s_.c > 0 && points > 0) {
    mov(regSrc_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_grid_sample_args, src))]);
    mov(regGrid_, ptr[regArgs_ + static_cast<int>(
                                     offsetof(mlcc_grid_sample_args, grid))]);
    mov(regDst_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_grid_sample_args, dst))]);
    vpxord(zero_, zero_, zero_);
    vbroadcastsd(ax_, ptr[rip + doubles_ + 8 * static_cast<int>(kAx)]);
    vbroadcastsd(ay_, ptr[rip + doubles_ + 8 * static_cast<int>(kAy)]);
    auto block = [&](int n) {
      loadGrid(n);
      half(0);
      half(1);
      taps();
      channels(n);
    };
    const int64_t full = points / kF32Lanes;
    const int rest = static_cast<int>(points % kF32Lanes);
    Xbyak::Label image, blocks;
    mov(regImages_, s_.n);
    L(image);
    xor_(regOffset_, regOffset_);
    if (full > 0) {
      mov(regBlocks_, full);
      L(blocks);
      block(kF32Lanes);
      add(regGrid_, 2 * kZmmBytes);
      add(regOffset_, kZmmBytes);
      dec(regBlocks_);
      jnz(blocks, T_NEAR);
    }
    if (rest > 0) {
      block(rest);
      add(regGrid_, 8 * rest);
    }
    addImm(regSrc_, 4 * s_.c * s_.h * s_.w, rax);
    addImm(regDst_, 4 * s_.c * points, rax);
    dec(regImages_);
    jnz(image, T_NEAR);
  }
  postamble();
  alignCode(kZmmBytes, /*withNops=*/false);
  L(deinterleave_);
  for (int odd = 0; odd < 2; ++odd)
    for (int j = 0; j < kF32Lanes; ++j)
      dd(static_cast<uint32_t>(2 * j + odd));
  // Pixel coordinates: c A + B, A = W / 2 (align_corners: (W - 1) / 2),
  // B = (W - 1) / 2; the reference's ((c + 1) W - 1) / 2 and
  // (c + 1) / 2 (W - 1).
  const double w = static_cast<double>(s_.w), h = static_cast<double>(s_.h);
  const double values[kDoubles] = {
      s_.alignCorners ? (w - 1) / 2 : w / 2, (w - 1) / 2,
      s_.alignCorners ? (h - 1) / 2 : h / 2, (h - 1) / 2,
      w - 1, h - 1, 1.0};
  L(doubles_);
  for (double v : values) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    dq(bits);
  }
}

} // namespace

Status generateGridSample(const GridSampleSpec &spec,
                          std::vector<uint8_t> &code) {
  code.clear();
  const std::string &name = spec.name;
  MLCC_CHECK(spec.n >= 0 && spec.c >= 0 && spec.h >= 0 && spec.w >= 0 &&
                 spec.ho >= 0 && spec.wo >= 0,
             name, ": a dim is negative");
  MLCC_CHECK(spec.h * spec.w <= kMaxPlane, name, ": input plane ", spec.h,
             " x ", spec.w, " has 2^31 elements or more");
  return generateInGrowingBuffer([&](std::vector<uint8_t> &buffer) {
    GridSampleKernel kernel(buffer, spec);
    kernel.generate();
    return kernel.finish(name, code);
  });
}

} // namespace mlcc::avx512
