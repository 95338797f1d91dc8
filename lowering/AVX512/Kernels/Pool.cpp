//===- Pool.cpp - AVX-512 2-D pooling kernels -----------------------------===//
//
// Every window's taps are known when the kernel is generated, so each
// output vector of 16 columns is planned here: which taps any of its lanes
// reads, with the mask of lanes for which that tap is inside the input.
// Masked lanes are neither read (EVEX fault suppression) nor combined, which
// is how borders cost nothing in the interior: interior vectors and rows
// have all-ones masks, identical code, and run in loops; border ones are
// straight-line code of their own.
//
// Stride 1 reads each tap as one contiguous (masked) vector. Stride 2 loads
// the 32 elements a tap spans and picks the even (or, for the next tap, the
// odd) ones with vpermt2ps; larger strides gather (vgatherdps). The index
// vectors live in a table after the code. On Zen 4 the ResNet-50 pool
// (1x64x112x112, 3x3 s2) took 770 us gathering, 100 us permuting (the
// reference: 5.8 ms); see PoolKernelTest's [.bench].
//
// Max combines with vmaxps and remembers, in an opmask, the lanes that met
// a NaN, which the reference's max returns and vmaxps may drop.
// Average adds the taps in the reference's order (row-major, from 0) and
// divides by the window count, so it rounds exactly as the reference.
//
// Register plan:
//   rdi  args, then the column-loop counter
//   rsi  src plane        rdx  dst plane        r8   plane counter
//   r9   src row (loop)   r10  dst row (loop)   r11  row counter
//   rax  src vector       rcx  dst vector (column loop)
//   ebx  mask bits (callee-saved: pushed)
//   zmm0 accumulator  zmm1 the tap  zmm2 scratch  zmm3, zmm4 stride-2 loads
//   zmm30, zmm31 even and odd permutes (stride 2) or gather indices (zmm31)
//   k1 gather mask  k2 lane mask  k3 store mask  k6, k7 stride-2 load masks
//   k4 NaN in this tap    k5 NaN in any tap
//
//===----------------------------------------------------------------------===//

#include "Pool.h"
#include "JitGenerator.h"
#include "PoolWindow.h"

#include "KernelABI.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>

namespace mlcc::avx512 {

const char *poolKindName(PoolKind kind) {
  switch (kind) {
  case PoolKind::Max:
    return "max_pool";
  case PoolKind::Average:
    return "average_pool";
  case PoolKind::GlobalMax:
    return "global_max_pool";
  case PoolKind::GlobalAverage:
    return "global_average_pool";
  }
  return "<unknown>";
}

namespace pool {

static Status outputDim(const std::string &name, int64_t in, int64_t k,
                        int64_t s, int64_t d, int64_t pb, int64_t pe,
                        bool ceilMode, int64_t &out) {
  int64_t span = (k - 1) * d + 1;
  int64_t room = in + pb + pe - span;
  MLCC_CHECK(room >= 0, name, ": window of extent ", span,
             " does not fit a dim of size ", in, " plus its pads");
  out = (ceilMode ? ceilDiv(room, s) : room / s) + 1;
  if (ceilMode && (out - 1) * s >= in + pb)
    --out;
  return Status::success();
}

Status validatePool(const PoolSpec &spec) {
  const std::string &name = spec.name;
  MLCC_CHECK(spec.kind == PoolKind::Max || spec.kind == PoolKind::Average ||
                 isGlobal(spec.kind),
             name, ": unknown pool kind ", static_cast<unsigned>(spec.kind));
  MLCC_CHECK(spec.dtype == DType::F32, name,
             ": pool kernels take f32 only, not ", ref::dtypeName(spec.dtype));
  MLCC_CHECK(spec.n >= 0 && spec.c >= 0 && spec.h >= 0 && spec.w >= 0, name,
             ": shape [", spec.n, ", ", spec.c, ", ", spec.h, ", ", spec.w,
             "] has a negative dim");
  MLCC_CHECK(spec.h <= kMaxPlaneBytes && spec.w <= kMaxPlaneBytes &&
                 spec.h * spec.w <= kMaxPlaneBytes / 4,
             name, ": plane ", spec.h, " x ", spec.w, " is too big");
  if (isGlobal(spec.kind))
    return Status::success();
  for (int i = 0; i < 2; ++i) {
    MLCC_CHECK(spec.kernel[i] >= 1 && spec.kernel[i] <= 1024, name,
               ": kernel dim ", i, " is ", spec.kernel[i],
               ", expected in [1, 1024]");
    MLCC_CHECK(spec.strides[i] >= 1 && spec.strides[i] <= (1 << 20), name,
               ": stride ", spec.strides[i], " must be in [1, 2^20]");
    MLCC_CHECK(spec.dilations[i] >= 1 && spec.dilations[i] <= (1 << 20), name,
               ": dilation ", spec.dilations[i], " must be in [1, 2^20]");
  }
  for (int64_t p : spec.pads)
    MLCC_CHECK(p >= 0 && p <= (1 << 20), name, ": pad ", p,
               " must be in [0, 2^20]");
  // Addresses in the padding are formed too (and never read).
  int64_t paddedH = spec.h + spec.pads[0] + spec.pads[2];
  int64_t paddedW = spec.w + spec.pads[1] + spec.pads[3];
  MLCC_CHECK(paddedH * paddedW <= kMaxPlaneBytes / 4, name, ": padded plane ",
             paddedH, " x ", paddedW, " is too big");
  return Status::success();
}

} // namespace pool

namespace {

using namespace pool;

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

class PoolKernel : public JitGenerator {
public:
  PoolKernel(std::vector<uint8_t> &buffer, const PoolSpec &spec)
      : JitGenerator(buffer), spec_(spec), max_(isMax(spec.kind)),
        rows_(dimOf(spec, 0)), cols_(dimOf(spec, 1)) {}

  Status generate();

private:
  const PoolSpec &spec_;
  const bool max_;
  Dim rows_, cols_; // out is set by generate()
  Xbyak::Label indexTable_;

  const Xbyak::Reg64 regArgs_ = rdi, regSrc_ = rsi, regDst_ = rdx;
  const Xbyak::Reg64 regPlanes_ = r8, regSrcRow_ = r9, regDstRow_ = r10,
                     regRows_ = r11, regSrcVec_ = rax, regDstVec_ = rcx,
                     regCols_ = rdi;
  const Xbyak::Zmm acc_ = zmm0, tap_ = zmm1, scratch_ = zmm2, pairLo_ = zmm3,
                   pairHi_ = zmm4, indices_ = zmm31, evenIndices_ = zmm30,
                   oddIndices_ = zmm31;
  const Xbyak::Opmask kGather_ = k1, kLanes_ = k2, kStore_ = k3, kIsNan_ = k4,
                      kNan_ = k5, kPairLo_ = k6, kPairHi_ = k7;

  void setMask(const Xbyak::Opmask &k, uint32_t bits) {
    mov(ebx, bits);
    kmovw(k, ebx);
  }
  void initAcc() {
    if (max_) {
      loadCst(acc_, -std::numeric_limits<float>::infinity());
      kxorw(kNan_, kNan_, kNan_);
    } else {
      vxorps(acc_, acc_, acc_);
    }
  }
  /// acc = combine(acc, op) in the lanes of `k` (all lanes when full).
  void combine(const Xbyak::Zmm &acc, const Xbyak::Operand &op, bool full,
               const Xbyak::Opmask &k) {
    Xbyak::Zmm dst = full ? acc : Xbyak::Zmm(acc.getIdx()) | k;
    if (!max_) {
      vaddps(dst, acc, op);
      return;
    }
    // vmaxps returns its second source when either is NaN, so a NaN met
    // early would be lost; the lanes that saw one are kept in kNan_ and
    // set to NaN by fixNan(). (vrangeps does not return NaN operands.)
    if (full)
      vcmpunordps(kIsNan_, acc, op);
    else
      vcmpunordps(kIsNan_ | k, acc, op);
    korw(kNan_, kNan_, kIsNan_);
    vmaxps(dst, acc, op);
  }
  /// Max: NaN in the lanes where combine() met one.
  void fixNan() {
    if (!max_)
      return;
    loadCst(scratch_, std::numeric_limits<float>::quiet_NaN());
    vmovaps(acc_ | kNan_, scratch_);
  }
  /// dst = the lanes `bits` of `a`, zeros elsewhere; reads no other lane.
  void loadPart(const Xbyak::Zmm &dst, uint32_t bits, const Xbyak::Address &a,
                const Xbyak::Opmask &k) {
    if (bits == 0) {
      vxorps(dst, dst, dst);
    } else if (bits == 0xFFFF) {
      vmovups(dst, a);
    } else {
      setMask(k, bits);
      vmovups(dst | k | T_z, a);
    }
  }
  void addImm(const Xbyak::Reg64 &r, int64_t v) {
    JitGenerator::addImm(r, v, rbx);
  }

  void outputVector(int64_t oh, int64_t ow0, int lanes, const Xbyak::Reg64 &src,
                    int64_t srcDisp, const Xbyak::Reg64 &dst, int64_t dstDisp);
  bool fullVector(int64_t v) const;
  void row(int64_t oh, const Xbyak::Reg64 &src, int64_t srcDisp,
           const Xbyak::Reg64 &dst, int64_t dstDisp);
  void windowed();
  void global();
  bool globalAverageInOrder() const;
  void globalAverage(int64_t planes);
};

/// One vector of `lanes` outputs (oh, ow0 + j). srcDisp addresses input
/// (oh * sh - pt, 0) from `src`, dstDisp output (oh, ow0) from `dst`.
void PoolKernel::outputVector(int64_t oh, int64_t ow0, int lanes,
                              const Xbyak::Reg64 &src, int64_t srcDisp,
                              const Xbyak::Reg64 &dst, int64_t dstDisp) {
  const Taps th = rows_.at(oh);
  const int64_t c0 = ow0 * cols_.s - cols_.pb;
  Taps tw[kF32Lanes];
  for (int j = 0; j < lanes; ++j)
    tw[j] = cols_.at(ow0 + j);
  // The lanes for which column tap kw is inside the input.
  auto lanesIn = [&](int64_t kw) {
    uint32_t bits = 0;
    for (int j = 0; j < lanes; ++j)
      if (kw >= tw[j].lo && kw < tw[j].hi)
        bits |= 1u << j;
    return bits;
  };
  initAcc();
  for (int64_t kh = th.lo; kh < th.hi; ++kh) {
    int64_t pairBase = INT64_MIN; // of the 32 elements in pairLo_, pairHi_
    for (int64_t kw = 0; kw < cols_.k; ++kw) {
      uint32_t bits = lanesIn(kw);
      if (!bits)
        continue;
      bool full = bits == 0xFFFF;
      if (!full)
        setMask(kLanes_, bits);
      const int64_t rowDisp = srcDisp + 4 * kh * rows_.d * spec_.w;
      const int64_t o = c0 + kw * cols_.d; // lane 0's column
      int d32 = static_cast<int>(rowDisp + 4 * o);
      if (cols_.s == 1) {
        combine(acc_, ptr[src + d32], full, kLanes_);
      } else if (cols_.s == 2) {
        // Lane j's element is o + 2j: the even elements of the 32 from o,
        // or the odd ones of the 32 from o - 1, which the previous tap
        // loaded when the dilation is 1.
        bool odd = o == pairBase + 1;
        if (!odd) {
          uint32_t need = 0; // elements [o, o + 32) read by some lane
          for (int j = 0; j < lanes; ++j)
            if (bits >> j & 1)
              need |= 1u << (2 * j);
          if (kw + 1 < cols_.k && cols_.d == 1) {
            uint32_t next = lanesIn(kw + 1);
            for (int j = 0; j < lanes; ++j)
              if (next >> j & 1)
                need |= 1u << (2 * j + 1);
          }
          // Load the span from the first to the last element needed:
          // nothing outside the row, and the same masks for every vector
          // whose lanes are all inside.
          int first = __builtin_ctz(need), last = 31 - __builtin_clz(need);
          uint32_t span =
              static_cast<uint32_t>(((uint64_t(1) << (last + 1)) - 1) &
                                    ~((uint64_t(1) << first) - 1));
          loadPart(pairLo_, span & 0xFFFF, ptr[src + d32], kPairLo_);
          loadPart(pairHi_, span >> 16, ptr[src + d32 + kZmmBytes], kPairHi_);
          pairBase = o;
        }
        vmovaps(tap_, pairLo_);
        vpermt2ps(tap_, odd ? oddIndices_ : evenIndices_, pairHi_);
        combine(acc_, tap_, full, kLanes_);
      } else {
        // The gather clears its mask as it goes: give it a copy.
        if (full)
          kxnorw(kGather_, kGather_, kGather_);
        else
          kmovw(kGather_, kLanes_);
        vgatherdps(tap_ | kGather_, ptr[src + indices_ * 4 + d32]);
        combine(acc_, tap_, full, kLanes_);
      }
    }
  }
  fixNan();
  // Finish each lane as the reference does its window.
  std::map<int64_t, uint32_t> byCount; // divisor or, for max, tap count
  for (int j = 0; j < lanes; ++j) {
    int64_t count = spec_.countIncludePad && !max_
                        ? th.padHi * tw[j].padHi
                        : (th.hi - th.lo) * (tw[j].hi - tw[j].lo);
    byCount[count] |= 1u << j;
  }
  for (auto [count, bits] : byCount) {
    bool full = bits == 0xFFFF;
    if (!full)
      setMask(kLanes_, bits);
    Xbyak::Zmm dstReg = full ? acc_ : acc_ | kLanes_;
    if (max_ && count == 0) {
      // An empty window keeps the reference's starting value.
      loadCst(scratch_, -FLT_MAX);
      vmovaps(dstReg, scratch_);
    } else if (!max_ && count > 1) {
      vdivps(dstReg, acc_, cst(static_cast<float>(count)));
    }
  }
  int d32 = static_cast<int>(dstDisp);
  if (lanes == kF32Lanes) {
    vmovups(ptr[dst + d32], acc_);
  } else {
    setMask(kStore_, (1u << lanes) - 1);
    vmovups(ptr[dst + d32] | kStore_, acc_);
  }
}

/// Whether output vector v has all its taps inside the input, and so code
/// that only differs from its neighbours' in addresses.
bool PoolKernel::fullVector(int64_t v) const {
  if ((v + 1) * kF32Lanes > cols_.out)
    return false;
  for (int j = 0; j < kF32Lanes; ++j)
    if (!cols_.interior(v * kF32Lanes + j))
      return false;
  return true;
}

void PoolKernel::row(int64_t oh, const Xbyak::Reg64 &src, int64_t srcDisp,
                     const Xbyak::Reg64 &dst, int64_t dstDisp) {
  const int64_t vectors = (cols_.out + kF32Lanes - 1) / kF32Lanes;
  int64_t v0 = 0, v1 = 0;
  while (v0 < vectors && !fullVector(v0))
    ++v0;
  v1 = v0;
  while (v1 < vectors && fullVector(v1))
    ++v1;
  if (v1 - v0 < 2)
    v0 = v1 = vectors; // not worth a loop: all straight-line
  auto lanesOf = [&](int64_t v) {
    return static_cast<int>(
        std::min<int64_t>(kF32Lanes, cols_.out - v * kF32Lanes));
  };
  auto straight = [&](int64_t v) {
    int64_t ow0 = v * kF32Lanes;
    outputVector(oh, ow0, lanesOf(v), src, srcDisp, dst, dstDisp + 4 * ow0);
  };
  for (int64_t v = 0; v < v0; ++v)
    straight(v);
  if (v1 > v0) {
    int64_t ow0 = v0 * kF32Lanes;
    lea(regSrcVec_,
        ptr[src + static_cast<int>(srcDisp + 4 * (ow0 * cols_.s - cols_.pb))]);
    lea(regDstVec_, ptr[dst + static_cast<int>(dstDisp + 4 * ow0)]);
    mov(regCols_, v1 - v0);
    Xbyak::Label loop;
    alignCode(16, /*withNops=*/true);
    L(loop);
    // Any full vector stands for all: their masks and counts are the same.
    // The displacement cancels the column offset vector() adds.
    outputVector(oh, ow0, kF32Lanes, regSrcVec_,
                 -4 * (ow0 * cols_.s - cols_.pb), regDstVec_, 0);
    addImm(regSrcVec_, 4 * kF32Lanes * cols_.s);
    add(regDstVec_, 4 * kF32Lanes);
    dec(regCols_);
    jnz(loop, T_NEAR);
  }
  for (int64_t v = v1; v < vectors; ++v)
    straight(v);
}

void PoolKernel::windowed() {
  if (cols_.s == 2) {
    vmovups(evenIndices_, ptr[rip + indexTable_]);
    vmovups(oddIndices_, ptr[rip + indexTable_ + kZmmBytes]);
  } else if (cols_.s != 1) {
    vmovups(indices_, ptr[rip + indexTable_]);
  }
  const int64_t rowBytes = 4 * spec_.w, outRowBytes = 4 * cols_.out;
  int64_t r0 = 0;
  while (r0 < rows_.out && !rows_.interior(r0))
    ++r0;
  int64_t r1 = r0;
  while (r1 < rows_.out && rows_.interior(r1))
    ++r1;
  if (r1 - r0 < 2)
    r0 = r1 = rows_.out;
  auto straight = [&](int64_t oh) {
    row(oh, regSrc_, (oh * rows_.s - rows_.pb) * rowBytes, regDst_,
        oh * outRowBytes);
  };
  for (int64_t oh = 0; oh < r0; ++oh)
    straight(oh);
  if (r1 > r0) {
    lea(regSrcRow_,
        ptr[regSrc_ + static_cast<int>((r0 * rows_.s - rows_.pb) * rowBytes)]);
    lea(regDstRow_, ptr[regDst_ + static_cast<int>(r0 * outRowBytes)]);
    mov(regRows_, r1 - r0);
    Xbyak::Label loop;
    L(loop);
    row(r0, regSrcRow_, 0, regDstRow_, 0);
    addImm(regSrcRow_, rows_.s * rowBytes);
    addImm(regDstRow_, outRowBytes);
    dec(regRows_);
    jnz(loop, T_NEAR);
  }
  for (int64_t oh = r1; oh < rows_.out; ++oh)
    straight(oh);
}

/// One plane: a vector reduction over its H * W contiguous elements, then
/// across the lanes.
void PoolKernel::global() {
  const int64_t size = spec_.h * spec_.w;
  const int64_t vectors = size / kF32Lanes;
  const int rem = static_cast<int>(size % kF32Lanes);
  initAcc();
  mov(regSrcVec_, regSrc_);
  if (vectors == 1) {
    combine(acc_, ptr[regSrcVec_], true, kLanes_);
    add(regSrcVec_, kZmmBytes);
  } else if (vectors > 1) {
    mov(regCols_, vectors);
    Xbyak::Label loop;
    L(loop);
    combine(acc_, ptr[regSrcVec_], true, kLanes_);
    add(regSrcVec_, kZmmBytes);
    dec(regCols_);
    jnz(loop, T_NEAR);
  }
  if (rem) {
    setMask(kLanes_, (1u << rem) - 1);
    combine(acc_, ptr[regSrcVec_], false, kLanes_);
  }
  // Halve the live lanes until one is left; the lanes above are ignored.
  // NaNs are put back after each step, so that the halving carries them
  // down to lane 0 (a stale NaN lane only ever marks a real NaN input).
  fixNan();
  vextractf64x4(Xbyak::Ymm(tap_.getIdx()), acc_, 1);
  combine(acc_, tap_, true, kLanes_);
  fixNan();
  vextractf32x4(Xbyak::Xmm(tap_.getIdx()), acc_, 1);
  combine(acc_, tap_, true, kLanes_);
  fixNan();
  vpermilps(Xbyak::Xmm(tap_.getIdx()), Xbyak::Xmm(acc_.getIdx()), 0x4E);
  combine(acc_, tap_, true, kLanes_);
  fixNan();
  vpermilps(Xbyak::Xmm(tap_.getIdx()), Xbyak::Xmm(acc_.getIdx()), 0xB1);
  combine(acc_, tap_, true, kLanes_);
  fixNan();
  if (!max_ && size > 1)
    vdivps(acc_, acc_, cst(static_cast<float>(size)));
  vmovss(ptr[regDst_], Xbyak::Xmm(acc_.getIdx()));
}

/// Whether the global average sums each plane in the reference's order
/// (globalAverage): when each lane's offset (up to 15 planes) fits the
/// gather's int32 indices.
bool PoolKernel::globalAverageInOrder() const {
  return spec_.kind == PoolKind::GlobalAverage &&
         spec_.h * spec_.w < (int64_t(1) << 31) / kF32Lanes;
}

/// Sixteen planes at a time, one per lane: element i of each is gathered
/// and added in turn, so every plane's sum rounds as the reference's (and
/// as PoolBlocked.cpp's, which adds a channel's pixels in the same order):
/// a model's result does not depend on which layout its pool ran in.
void PoolKernel::globalAverage(int64_t planes) {
  const int64_t size = spec_.h * spec_.w;
  mov(regSrc_, ptr[regArgs_ + static_cast<int>(offsetof(mlcc_pool_args, src))]);
  mov(regDst_, ptr[regArgs_ + static_cast<int>(offsetof(mlcc_pool_args, dst))]);
  // Lane j reads plane j of the group: indices j * size.
  mov(ebx, static_cast<uint32_t>(size));
  vpbroadcastd(indices_, ebx);
  vpmulld(indices_, indices_, ptr[rip + indexTable_]);
  auto group = [&](int lanes) {
    const uint32_t bits = (1u << lanes) - 1;
    vxorps(acc_, acc_, acc_);
    mov(regSrcVec_, regSrc_);
    if (size > 0) {
      mov(regCols_, size);
      Xbyak::Label loop;
      L(loop);
      setMask(kGather_, bits);
      vxorps(tap_, tap_, tap_);
      vgatherdps(tap_ | kGather_, ptr[regSrcVec_ + indices_ * 4]);
      vaddps(acc_, acc_, tap_);
      add(regSrcVec_, 4);
      dec(regCols_);
      jnz(loop, T_NEAR);
    }
    if (size > 1)
      vdivps(acc_, acc_, cst(static_cast<float>(size)));
    setMask(kStore_, bits);
    vmovups(ptr[regDst_] | kStore_, acc_);
  };
  if (const int64_t groups = planes / kF32Lanes) {
    mov(regPlanes_, groups);
    Xbyak::Label loop;
    L(loop);
    group(kF32Lanes);
    addImm(regSrc_, 4 * kF32Lanes * size);
    add(regDst_, kZmmBytes);
    dec(regPlanes_);
    jnz(loop, T_NEAR);
  }
  if (const int rest = static_cast<int>(planes % kF32Lanes))
    group(rest);
}

Status PoolKernel::generate() {
  preamble({rbx});
  int64_t outPlane = 1;
  if (!isGlobal(spec_.kind)) {
    MLCC_RETURN_IF_ERROR(outputDim(spec_.name, rows_.in, rows_.k, rows_.s,
                                   rows_.d, rows_.pb, rows_.pe, spec_.ceilMode,
                                   rows_.out));
    MLCC_RETURN_IF_ERROR(outputDim(spec_.name, cols_.in, cols_.k, cols_.s,
                                   cols_.d, cols_.pb, cols_.pe, spec_.ceilMode,
                                   cols_.out));
    outPlane = rows_.out * cols_.out;
    MLCC_CHECK(outPlane <= kMaxPlaneBytes / 4, spec_.name, ": output plane ",
               rows_.out, " x ", cols_.out, " is too big");
  }
  const int64_t planes = spec_.n * spec_.c;
  if (planes > 0 && globalAverageInOrder()) {
    globalAverage(planes);
  } else if (planes > 0 && outPlane > 0) {
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
    addImm(regSrc_, 4 * spec_.h * spec_.w);
    addImm(regDst_, 4 * outPlane);
    dec(regPlanes_);
    jnz(loop, T_NEAR);
  }
  postamble();
  if (globalAverageInOrder()) {
    alignCode(kZmmBytes, /*withNops=*/false);
    L(indexTable_);
    for (int j = 0; j < kF32Lanes; ++j)
      dd(static_cast<uint32_t>(j));
  } else if (!isGlobal(spec_.kind) && cols_.s != 1) {
    alignCode(kZmmBytes, /*withNops=*/false);
    L(indexTable_);
    // Stride 2: vpermt2ps picks the even, then the odd, of 32 elements.
    for (int parity = 0; parity < (cols_.s == 2 ? 2 : 1); ++parity)
      for (int j = 0; j < kF32Lanes; ++j)
        dd(static_cast<uint32_t>(j * cols_.s + parity));
  }
  return Status::success();
}

} // namespace

Status poolOutputSize(const PoolSpec &spec, int64_t &oh, int64_t &ow) {
  using namespace pool;
  MLCC_RETURN_IF_ERROR(pool::validatePool(spec));
  if (isGlobal(spec.kind)) {
    oh = ow = 1;
    return Status::success();
  }
  MLCC_RETURN_IF_ERROR(outputDim(
      spec.name, spec.h, spec.kernel[0], spec.strides[0], spec.dilations[0],
      spec.pads[0], spec.pads[2], spec.ceilMode, oh));
  return outputDim(spec.name, spec.w, spec.kernel[1], spec.strides[1],
                   spec.dilations[1], spec.pads[1], spec.pads[3], spec.ceilMode,
                   ow);
}

Status generatePool(const PoolSpec &spec, std::vector<uint8_t> &code) {
  code.clear();
  MLCC_RETURN_IF_ERROR(pool::validatePool(spec));
  return generateInGrowingBuffer(
      [&](std::vector<uint8_t> &buffer) {
        PoolKernel kernel(buffer, spec);
        MLCC_RETURN_IF_ERROR(kernel.generate());
        return kernel.finish(spec.name, code);
      });
}

} // namespace mlcc::avx512
