//===- PoolBlocked.cpp - AVX-512 pooling over NCHW16c ---------------------===//
//
// In NCHW16c a pixel's 16 channels are one vector, so an output pixel is
// the max (or sum) of its window's pixel vectors: no masks, no gathers, any
// stride. As in Pool.cpp every window is planned here: rows and columns
// whose windows lie inside the input run in loops, border ones are
// straight-line code with only their in-bounds taps.
//
// Each output pixel keeps one accumulator and combines its taps in the
// reference's order (row-major, from 0), so sums round as the reference's;
// the column loop computes kPixels adjacent pixels at once, their taps
// interleaved, to hide the latency of each chain. Max keeps, per pixel, an
// opmask of the lanes that met a NaN (vmaxps may drop one) and sets them
// to NaN at the end, as Pool.cpp does.
//
// Register plan:
//   rsi  src plane       rdx  dst plane       r8   plane counter
//   r9   src row (loop)  r10  dst row (loop)  r11  row counter
//   rax  src pixel       rcx  dst pixel       rdi  args, then column counter
//   zmm0-3 accumulators  zmm4 NaN  k1-k4 NaN lanes per accumulator  k5 tap
//
//===----------------------------------------------------------------------===//

#include "JitGenerator.h"
#include "KernelABI.h"
#include "Pool.h"
#include "PoolWindow.h"

#include <cfloat>
#include <cstddef>
#include <limits>

namespace mlcc::avx512 {

namespace {

using namespace pool;

constexpr int kPixels = 4;          // output pixels per column-loop step
constexpr int64_t kPixelBytes = 64; // one pixel's 16 channels

class BlockedPoolKernel : public JitGenerator {
public:
  BlockedPoolKernel(std::vector<uint8_t> &buffer, const PoolSpec &spec)
      : JitGenerator(buffer), spec_(spec), max_(isMax(spec.kind)),
        rows_(dimOf(spec, 0)), cols_(dimOf(spec, 1)) {}

  Status generate();

private:
  const PoolSpec &spec_;
  const bool max_;
  Dim rows_, cols_;

  const Xbyak::Reg64 regArgs_ = rdi, regSrc_ = rsi, regDst_ = rdx;
  const Xbyak::Reg64 regPlanes_ = r8, regSrcRow_ = r9, regDstRow_ = r10,
                     regRows_ = r11, regSrcPix_ = rax, regDstPix_ = rcx,
                     regCols_ = rdi;
  const Xbyak::Zmm nan_ = zmm4;
  const Xbyak::Opmask kTap_ = k5;

  static Xbyak::Zmm acc(int p) { return Xbyak::Zmm(p); }
  static Xbyak::Opmask nanLanes(int p) { return Xbyak::Opmask(1 + p); }

  void initAcc(int p) {
    if (max_) {
      loadCst(acc(p), -std::numeric_limits<float>::infinity());
      kxorw(nanLanes(p), nanLanes(p), nanLanes(p));
    } else {
      vxorps(acc(p), acc(p), acc(p));
    }
  }
  void combine(int p, const Xbyak::Address &tap) {
    if (!max_) {
      vaddps(acc(p), acc(p), tap);
      return;
    }
    vcmpunordps(kTap_, acc(p), tap);
    korw(nanLanes(p), nanLanes(p), kTap_);
    vmaxps(acc(p), acc(p), tap);
  }
  /// The window's divisor (average) or tap count (max), as Pool.cpp's.
  int64_t countOf(const Taps &th, const Taps &tw) const {
    return spec_.countIncludePad && !max_ ? th.padHi * tw.padHi
                                          : (th.hi - th.lo) * (tw.hi - tw.lo);
  }
  void finishPixel(int p, int64_t count) {
    if (max_ && count == 0) {
      loadCst(acc(p), -FLT_MAX); // the reference's start for no taps
    } else if (max_) {
      vmovaps(acc(p) | nanLanes(p), nan_);
    } else if (count > 1) {
      vdivps(acc(p), acc(p), cst(static_cast<float>(count)));
    }
  }

  void pixels(const Taps &th, int64_t ow0, int count, const Xbyak::Reg64 &src,
              int64_t srcDisp, const Xbyak::Reg64 &dst, int64_t dstDisp);
  void row(int64_t oh, const Xbyak::Reg64 &src, int64_t srcDisp,
           const Xbyak::Reg64 &dst, int64_t dstDisp);
  void windowed();
  void global();
};

/// Output pixels (oh, ow0 + p) for p < count of the row whose window rows
/// are `th`. srcDisp addresses input (th.start, 0) from `src`, dstDisp
/// output (oh, ow0) from `dst`.
void BlockedPoolKernel::pixels(const Taps &th, int64_t ow0, int count,
                               const Xbyak::Reg64 &src, int64_t srcDisp,
                               const Xbyak::Reg64 &dst, int64_t dstDisp) {
  Taps tw[kPixels];
  for (int p = 0; p < count; ++p) {
    tw[p] = cols_.at(ow0 + p);
    initAcc(p);
  }
  for (int64_t kh = th.lo; kh < th.hi; ++kh)
    for (int64_t kw = 0; kw < cols_.k; ++kw)
      for (int p = 0; p < count; ++p) {
        if (kw < tw[p].lo || kw >= tw[p].hi)
          continue;
        const int64_t at = kh * rows_.d * cols_.in + tw[p].start + kw * cols_.d;
        combine(p, ptr[src + static_cast<int>(srcDisp + at * kPixelBytes)]);
      }
  for (int p = 0; p < count; ++p) {
    finishPixel(p, countOf(th, tw[p]));
    vmovups(ptr[dst + static_cast<int>(dstDisp + p * kPixelBytes)], acc(p));
  }
}

void BlockedPoolKernel::row(int64_t oh, const Xbyak::Reg64 &src,
                            int64_t srcDisp, const Xbyak::Reg64 &dst,
                            int64_t dstDisp) {
  const Taps th = rows_.at(oh);
  int64_t c0 = 0;
  while (c0 < cols_.out && !cols_.interior(c0))
    ++c0;
  int64_t c1 = c0;
  while (c1 < cols_.out && cols_.interior(c1))
    ++c1;
  const int64_t steps = (c1 - c0) / kPixels;
  if (steps < 2)
    c0 = c1 = cols_.out; // not worth a loop: all straight-line
  else
    c1 = c0 + steps * kPixels;
  auto straight = [&](int64_t begin, int64_t end) {
    for (int64_t ow = begin; ow < end; ow += kPixels)
      pixels(th, ow, static_cast<int>(std::min<int64_t>(kPixels, end - ow)),
             src, srcDisp, dst, dstDisp + ow * kPixelBytes);
  };
  straight(0, c0);
  if (c1 > c0) {
    // The pixel registers point at pixel c0's window start and output;
    // the displacement cancels the column offset pixels() adds.
    const int64_t start = cols_.at(c0).start;
    lea(regSrcPix_, ptr[src + static_cast<int>(srcDisp + start * kPixelBytes)]);
    lea(regDstPix_, ptr[dst + static_cast<int>(dstDisp + c0 * kPixelBytes)]);
    mov(regCols_, steps);
    Xbyak::Label loop;
    alignCode(16, /*withNops=*/true);
    L(loop);
    pixels(th, c0, kPixels, regSrcPix_, -start * kPixelBytes, regDstPix_, 0);
    addImm(regSrcPix_, kPixels * cols_.s * kPixelBytes, rbx);
    add(regDstPix_, kPixels * kPixelBytes);
    dec(regCols_);
    jnz(loop, T_NEAR);
  }
  straight(c1, cols_.out);
}

void BlockedPoolKernel::windowed() {
  const int64_t rowBytes = spec_.w * kPixelBytes,
                outRowBytes = cols_.out * kPixelBytes;
  int64_t r0 = 0;
  while (r0 < rows_.out && !rows_.interior(r0))
    ++r0;
  int64_t r1 = r0;
  while (r1 < rows_.out && rows_.interior(r1))
    ++r1;
  if (r1 - r0 < 2)
    r0 = r1 = rows_.out;
  auto straight = [&](int64_t oh) {
    row(oh, regSrc_, rows_.at(oh).start * rowBytes, regDst_, oh * outRowBytes);
  };
  for (int64_t oh = 0; oh < r0; ++oh)
    straight(oh);
  if (r1 > r0) {
    lea(regSrcRow_,
        ptr[regSrc_ + static_cast<int>(rows_.at(r0).start * rowBytes)]);
    lea(regDstRow_, ptr[regDst_ + static_cast<int>(r0 * outRowBytes)]);
    mov(regRows_, r1 - r0);
    Xbyak::Label loop;
    L(loop);
    row(r0, regSrcRow_, 0, regDstRow_, 0);
    addImm(regSrcRow_, rows_.s * rowBytes, rbx);
    addImm(regDstRow_, outRowBytes, rbx);
    dec(regRows_);
    jnz(loop, T_NEAR);
  }
  for (int64_t oh = r1; oh < rows_.out; ++oh)
    straight(oh);
}

/// One plane: its H * W pixel vectors in order into one accumulator.
void BlockedPoolKernel::global() {
  const int64_t size = spec_.h * spec_.w;
  initAcc(0);
  mov(regSrcPix_, regSrc_);
  if (size > 0) {
    Xbyak::Label loop;
    mov(regCols_, size);
    L(loop);
    combine(0, ptr[regSrcPix_]);
    add(regSrcPix_, kPixelBytes);
    dec(regCols_);
    jnz(loop, T_NEAR);
  }
  finishPixel(0, size);
  vmovups(ptr[regDst_], acc(0));
}

Status BlockedPoolKernel::generate() {
  preamble({rbx});
  int64_t oh = 1, ow = 1;
  MLCC_RETURN_IF_ERROR(poolOutputSize(spec_, oh, ow));
  rows_.out = oh;
  cols_.out = ow;
  const int64_t outPlane = oh * ow;
  MLCC_CHECK(outPlane <= kMaxPlaneBytes / kPixelBytes &&
                 spec_.h * spec_.w <= kMaxPlaneBytes / kPixelBytes,
             spec_.name, ": a blocked plane of ", spec_.h, " x ", spec_.w,
             " is too big");
  const int64_t planes = spec_.n * ((spec_.c + 15) / 16);
  if (planes > 0 && outPlane > 0) {
    if (max_)
      loadCst(nan_, std::numeric_limits<float>::quiet_NaN());
    mov(regSrc_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_pool_args, src))]);
    mov(regDst_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_pool_args, dst))]);
    mov(regPlanes_, planes);
    Xbyak::Label loop;
    L(loop);
    if (isGlobal(spec_.kind))
      global();
    else
      windowed();
    addImm(regSrc_, spec_.h * spec_.w * kPixelBytes, rbx);
    addImm(regDst_, outPlane * kPixelBytes, rbx);
    dec(regPlanes_);
    jnz(loop, T_NEAR);
  }
  postamble();
  return Status::success();
}

} // namespace

Status generateBlockedPool(const PoolSpec &spec, std::vector<uint8_t> &code) {
  code.clear();
  MLCC_RETURN_IF_ERROR(validatePool(spec));
  return generateInGrowingBuffer([&](std::vector<uint8_t> &buffer) {
    BlockedPoolKernel kernel(buffer, spec);
    MLCC_RETURN_IF_ERROR(kernel.generate());
    return kernel.finish(spec.name, code);
  });
}

} // namespace mlcc::avx512
