//===- Conv.cpp - AVX-512 f32 direct 2-D and 3-D convolution kernels ------===//
//
// A direct convolution in the manner of oneDNN's jit_avx512_common_conv: a
// block of L output pixels of one row x nb channel blocks (nb zmm vectors
// of 16 output channels each) stays in accumulators while the kernel walks
// the input channel blocks, the kernel rows and columns and the 16 input
// channels of a block; each step loads nb weight vectors and, per pixel,
// broadcasts one input value and issues nb FMAs.
//
// Padding costs nothing at run time: every output row is classified by the
// kernel rows that land inside the input, every block of pixels by the
// (pixel, kernel column) taps that do, and each class gets its own code
// with the outside taps left out. Consecutive rows (blocks) of one class
// share one loop, so a large image has a border row, an interior loop and a
// border row (likewise for the pixel blocks of a row). The input channel
// tail (C % 16) is its own unrolled block too, so X's padding lanes are
// never read.
//
// Depthwise (group == C == OC) uses the same loops with one channel block
// per group and no channel reduction: each tap is one weight vector times
// one whole input vector per pixel; a kernel row loads each input pixel once
// for all the taps that read it (depthwiseRow). A grouped conv runs the
// dense kernel on chunks of groups that fill whole blocks, its weights zero
// between the groups; a chunk of 16 channels whose groups keep within 8
// (pairedGroups) instead keeps each half's sums in a ymm accumulator of its
// own, so no FMA multiplies the zeros between the halves, and joins them
// before the epilogue.
//
// Loops, outer to inner: images, output channel groups (nb blocks; the last
// group may be narrower and masked), row classes, pixel-block classes, input
// channel blocks, kernel rows; kernel columns and input channels are
// unrolled.
//
// A 3-D conv adds output depth planes (classified by the kernel's depth taps
// that land inside the input, as rows are) around the rows, and a loop over
// those depth taps around the input channel blocks: the accumulators stay
// in registers over the whole 3-D window.
//
// A stem conv (few input channels, ConvSpec::plainInput) reads X in plain
// NCHW: the same loops with a pixel step of 4 bytes and a channel step of
// one plane, so the model's input needs no reorder into blocks that would be
// mostly padding (3 of 16 lanes for RGB: 5x the bytes to write and read).
//
// The epilogue, on the accumulators: + bias, + the residual (read from
// args->residual at Y's offsets: the stack keeps residual - dst, so the
// address is Y's pointer plus that), then the elementwise ops.
//
// Register plan (all six callee-saved registers are saved):
//   rdi args           r8  X image           r9  Y channel group
//   r10 W channel group r11 bias group        rsi X row   rdx Y row
//   rax X pixel block   rbp Y pixel block     rbx X channel block
//   r12 W channel block r13 X kernel row      r14 W kernel row
//   rcx kernel-row counter                    r15 channel-block counter
//   [rsp + ...]  image, group, depth, row, block and depth-tap counters,
//                residual - dst
//   k1 mask of the real lanes of the last channel block, k2 epilogue scratch
//   zmm accumulators from 0, then nb weight vectors, then (nb = 2) two
//       broadcast registers; after the loops the registers above the
//       accumulators hold the bias and the epilogue's scratch.
//
//===----------------------------------------------------------------------===//

#include "Conv.h"
#include "EltwiseInjector.h"
#include "JitGenerator.h"

#include "KernelABI.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <numeric>
#include <type_traits>

namespace mlcc::avx512 {

namespace {

constexpr int kNumZmm = 32;
constexpr int kMaxBlockWidth = 28;
/// The fewest pixels of a block of 2 channel blocks where the block width is
/// chosen narrow (see generateConv).
constexpr int64_t kNarrowBlockWidth = 7;
/// The most pixel blocks per group of output channels, and weight bytes per
/// group, for which the blocks prefetch the next group's weights.
constexpr int64_t kPrefetchBlocks = 32;
constexpr int64_t kPrefetchGroupBytes = 256 * 1024;
/// Byte offsets are 32-bit displacements and immediates.
constexpr int64_t kMaxBytes = int64_t(1) << 31;
constexpr int kBlockBytes = kConvBlock * 4;            // one pixel, 16 ch
constexpr int kTapBytes = kConvBlock * kConvBlock * 4; // 16 i x 16 o

// Stack slots of the loop counters that do not fit in registers.
constexpr int kImageCounter = 0;
constexpr int kGroupCounter = 8;
constexpr int kRowCounter = 16;
constexpr int kBlockCounter = 24;
constexpr int kResidualDelta = 32;
constexpr int kDepthCounter = 40;
constexpr int kDepthTapCounter = 48;
constexpr int kFrameBytes = 64;

/// Registers a block of `width` pixels x `nb` channel blocks needs in the
/// tap loops.
int loopRegisters(int width, int nb) {
  return width * nb + nb + (nb == 2 ? 2 : 0);
}

int64_t outDim(int64_t in, int64_t padBegin, int64_t padEnd, int64_t k,
               int64_t stride, int64_t dilation) {
  int64_t span = (k - 1) * dilation + 1;
  int64_t padded = in + padBegin + padEnd;
  return padded < span ? 0 : (padded - span) / stride + 1;
}

Status validate(const ConvSpec &spec) {
  const std::string &name = spec.name;
  MLCC_CHECK(spec.n >= 0, name, ": batch ", spec.n, " must not be negative");
  MLCC_CHECK(spec.c >= 1 && spec.h >= 1 && spec.w >= 1 && spec.oc >= 1, name,
             ": conv sizes C=", spec.c, " H=", spec.h, " W=", spec.w,
             " OC=", spec.oc, " must be positive");
  MLCC_CHECK(spec.group == 1 || isDepthwiseConv(spec), name, ": group ",
             spec.group,
             " is not supported (only 1, or depthwise: group == "
             "C == OC)");
  MLCC_CHECK(!spec.plainInput || spec.group == 1, name,
             ": a plain NCHW input is supported for group 1 only");
  MLCC_CHECK(!spec.pairedGroups || (spec.group == 1 && spec.c == kConvBlock &&
                                    spec.oc == kConvBlock && !spec.plainInput),
             name,
             ": paired groups need C = OC = 16 on a blocked input, not C=",
             spec.c, " OC=", spec.oc);
  MLCC_CHECK(spec.d >= 1 && spec.depthKernel >= 1 && spec.depthStride >= 1 &&
                 spec.depthDilation >= 1 && spec.depthKernel <= 1024 &&
                 spec.depthStride <= 1024 && spec.depthDilation <= 1024,
             name, ": depth ", spec.d, ", kernel depth ", spec.depthKernel,
             ", depth stride ", spec.depthStride, " and dilation ",
             spec.depthDilation, " must be in [1, 1024] (depth: positive)");
  for (int64_t p : spec.depthPads)
    MLCC_CHECK(p >= 0 && p < (int64_t(1) << 20), name, ": depth pad ", p,
               " is not in [0, 2^20)");
  for (int i = 0; i < 2; ++i) {
    MLCC_CHECK(spec.kernel[i] >= 1, name, ": kernel dim ", spec.kernel[i],
               " must be positive");
    MLCC_CHECK(spec.strides[i] >= 1, name, ": stride ", spec.strides[i],
               " must be positive");
    MLCC_CHECK(spec.dilations[i] >= 1, name, ": dilation ", spec.dilations[i],
               " must be positive");
  }
  for (int64_t p : spec.pads)
    MLCC_CHECK(p >= 0 && p < (int64_t(1) << 20), name, ": pad ", p,
               " is not in [0, 2^20)");
  MLCC_CHECK(spec.kernel[0] <= 1024 && spec.kernel[1] <= 1024 &&
                 spec.strides[0] <= 1024 && spec.strides[1] <= 1024 &&
                 spec.dilations[0] <= 1024 && spec.dilations[1] <= 1024,
             name, ": kernel dims, strides and dilations must be <= 1024");
  // Checked by division so that the products cannot overflow.
  const int64_t maxFloats = kMaxBytes / 4;
  auto fits = [&](std::initializer_list<int64_t> dims) {
    int64_t total = 1;
    for (int64_t d : dims) {
      if (d > 0 && total > maxFloats / d)
        return false;
      total *= d;
    }
    return true;
  };
  const int64_t cb = convBlocks(spec.c), ocb = convBlocks(spec.oc);
  // The padded extent: row pointers may point into the padding.
  MLCC_CHECK(fits({spec.n, cb,
                   spec.d + spec.depthPads[0] + spec.depthPads[1] +
                       spec.depthKernel * spec.depthDilation,
                   spec.h + spec.pads[0] + spec.pads[2] +
                       spec.kernel[0] * spec.dilations[0],
                   spec.w + spec.pads[1] + spec.pads[3] +
                       spec.kernel[1] * spec.dilations[1],
                   kConvBlock}),
             name, ": input is too large (2 GiB at most)");
  MLCC_CHECK(fits({ocb, isDepthwiseConv(spec) ? 1 : cb, spec.depthKernel,
                   spec.kernel[0], spec.kernel[1], kConvBlock, kConvBlock}),
             name, ": packed weights are too large (2 GiB at most)");
  int64_t oh = 0, ow = 0;
  MLCC_RETURN_IF_ERROR(convOutputSize(spec, oh, ow));
  const int64_t od = convOutputDepth(spec);
  MLCC_CHECK(od >= 1, name, ": the ", spec.depthKernel,
             "-deep window (dilated) is deeper than the padded depth ",
             spec.d, ": empty output");
  const bool lattice = spec.dstFrame[0] != 0 || spec.dstFrame[1] != 0;
  if (lattice) {
    MLCC_CHECK(spec.d == 1 && spec.depthKernel == 1, name,
               ": an output lattice is supported for 2-D convs only");
    const int64_t size[2] = {oh, ow};
    for (int i = 0; i < 2; ++i) {
      const int64_t frame = spec.dstFrame[i], stride = spec.dstStrides[i],
                    offset = spec.dstOffsets[i];
      MLCC_CHECK(frame >= 1 && frame <= (int64_t(1) << 20) && stride >= 1 &&
                     stride <= 1024 && offset >= 0 &&
                     offset + (size[i] - 1) * stride < frame,
                 name, ": an output lattice of ", size[i], " at stride ",
                 stride, " from ", offset, " does not fit a frame of ", frame);
    }
  }
  const bool plane2d = spec.d == 1 && spec.depthKernel == 1;
  MLCC_CHECK(spec.srcPlaneRows == 0 ||
                 (plane2d && !spec.plainInput && spec.srcPlaneRows >= spec.h),
             name, ": ", spec.srcPlaneRows,
             " rows per input plane need a 2-D blocked input of at most as "
             "many rows (",
             spec.h, ")");
  MLCC_CHECK(spec.dstPlaneRows == 0 ||
                 (plane2d && !lattice && spec.dstPlaneRows >= oh),
             name, ": ", spec.dstPlaneRows,
             " rows per output plane need a 2-D output (not a lattice) of at "
             "most as many rows (",
             oh, ")");
  MLCC_CHECK(fits({spec.n, cb, std::max(spec.srcPlaneRows, spec.h), spec.w,
                   kConvBlock}),
             name, ": input is too large (2 GiB at most)");
  const int64_t dstRows =
      lattice ? spec.dstFrame[0] : std::max(spec.dstPlaneRows, oh);
  MLCC_CHECK(fits({spec.n, ocb, od, dstRows, lattice ? spec.dstFrame[1] : ow,
                   kConvBlock}),
             name, ": output is too large (2 GiB at most)");
  const bool allRows = spec.rowBand[0] == 0 && spec.rowBand[1] == 0;
  MLCC_CHECK(allRows ||
                 (spec.rowBand[0] >= 0 && spec.rowBand[0] < spec.rowBand[1] &&
                  spec.rowBand[1] <= oh),
             name, ": row band [", spec.rowBand[0], ", ", spec.rowBand[1],
             ") is not a non-empty range of the ", oh, " output rows");
  MLCC_CHECK(spec.blockWidth >= 0 && spec.blockWidth <= kMaxBlockWidth, name,
             ": block width ", spec.blockWidth, " is not in [0, ",
             kMaxBlockWidth, "]");
  for (size_t i = 0; i < spec.epilogue.size(); ++i) {
    const EltwiseOp &op = spec.epilogue[i];
    MLCC_CHECK(static_cast<unsigned>(op.kind) <=
                   static_cast<unsigned>(EltwiseKind::Min),
               name, ": epilogue op ", i, " has unsupported kind ",
               static_cast<unsigned>(op.kind));
    MLCC_CHECK(!isBinary(op.kind) ||
                   op.rhs.kind == EltwiseOperand::Kind::Constant,
               name, ": epilogue op ", i, " (", eltwiseKindName(op.kind),
               ") has a run-time operand; a conv epilogue takes constants "
               "only");
  }
  return Status::success();
}

/// A block of output pixels and which of its taps read the input:
/// valid[i * KW + kw] for pixel i at kernel column kw. Blocks with equal
/// shapes share code.
struct PixelBlock {
  int64_t ow0 = 0;
  int width = 0;
  std::vector<bool> valid;
  bool sameCode(const PixelBlock &o) const {
    return width == o.width && valid == o.valid;
  }
};

/// The kernel depths [kdLo, kdHi) and rows [khLo, khHi) of the taps that
/// land inside the input, for one class of output rows.
struct TapRange {
  int64_t kdLo = 0, kdHi = 1, khLo = 0, khHi = 0;
  bool empty() const { return kdHi <= kdLo || khHi <= khLo; }
};

class ConvKernel : public JitGenerator {
public:
  ConvKernel(std::vector<uint8_t> &buffer, const ConvSpec &spec, int64_t od,
             int64_t oh, int64_t ow, int nb, int width)
      : JitGenerator(buffer), spec_(spec), od_(od), oh_(oh), ow_(ow), nb_(nb),
        width_(width), injector_(*this) {}

  void generate();

private:
  const ConvSpec &spec_;
  const int64_t od_, oh_, ow_;
  const int nb_, width_;
  EltwiseInjector injector_;
  /// Whether each weight load also prefetches the next group's line.
  bool prefetchNextGroup_ = false;

  const Xbyak::Reg64 regArgs_ = rdi;
  const Xbyak::Reg64 regSrcImage_ = r8;
  const Xbyak::Reg64 regDstGroup_ = r9;
  const Xbyak::Reg64 regWGroup_ = r10;
  const Xbyak::Reg64 regBiasGroup_ = r11;
  const Xbyak::Reg64 regSrcRow_ = rsi;
  const Xbyak::Reg64 regDstRow_ = rdx;
  const Xbyak::Reg64 regSrcBlock_ = rax;
  const Xbyak::Reg64 regDstBlock_ = rbp;
  const Xbyak::Reg64 regSrcCb_ = rbx;
  const Xbyak::Reg64 regWCb_ = r12;
  const Xbyak::Reg64 regSrcKh_ = r13;
  const Xbyak::Reg64 regWKh_ = r14;
  const Xbyak::Reg64 regKhIter_ = rcx;
  const Xbyak::Reg64 regCbIter_ = r15;
  const Xbyak::Opmask kTail_ = k1;

  int64_t kh() const { return spec_.kernel[0]; }
  int64_t kw() const { return spec_.kernel[1]; }
  int64_t cb() const { return convBlocks(spec_.c); }
  /// 16 input channels' planes (D of them): a channel block, blocked or
  /// plain.
  int64_t srcPlaneBytes() const {
    const int64_t rows = spec_.srcPlaneRows ? spec_.srcPlaneRows : spec_.h;
    return spec_.d * rows * spec_.w * kBlockBytes;
  }
  /// One input pixel's step and one input channel's within a block.
  int64_t srcPixelBytes() const { return spec_.plainInput ? 4 : kBlockBytes; }
  int64_t srcChannelBytes() const {
    return spec_.plainInput ? spec_.d * spec_.h * spec_.w * 4 : 4;
  }
  int64_t srcRowBytes() const { return spec_.w * srcPixelBytes(); }
  /// One depth plane of a channel block (or channel, plain).
  int64_t srcDepthBytes() const { return spec_.h * srcRowBytes(); }
  int64_t srcImageBytes() const {
    return spec_.plainInput ? spec_.c * spec_.d * spec_.h * spec_.w * 4
                            : cb() * srcPlaneBytes();
  }
  /// Y's planes are the frame's when the output is a lattice in it.
  bool lattice() const { return spec_.dstFrame[0] != 0; }
  int64_t dstHeight() const {
    return lattice()            ? spec_.dstFrame[0]
           : spec_.dstPlaneRows ? spec_.dstPlaneRows
                                : oh_;
  }
  int64_t dstWidth() const { return lattice() ? spec_.dstFrame[1] : ow_; }
  int64_t dstDepthBytes() const {
    return dstHeight() * dstWidth() * kBlockBytes;
  }
  /// Between consecutive output pixels of a row, and rows.
  int64_t dstPixelStep() const { return spec_.dstStrides[1] * kBlockBytes; }
  int64_t dstRowStep() const {
    return spec_.dstStrides[0] * dstWidth() * kBlockBytes;
  }
  int64_t dstPlaneBytes() const { return od_ * dstDepthBytes(); }
  bool depthwise() const { return isDepthwiseConv(spec_); }
  /// Weight bytes of one kernel tap: 16 x 16, or 16 for depthwise.
  int64_t tapBytes() const { return depthwise() ? kBlockBytes : kTapBytes; }
  /// Of one input channel block at one depth tap.
  int64_t wBlockBytes() const { return kh() * kw() * tapBytes(); }
  /// Input channel blocks each output channel block reduces over.
  int64_t reducedBlocks() const { return depthwise() ? 1 : cb(); }
  /// Of one depth tap (every reduced block), and of one output block.
  int64_t wDepthBytes() const { return reducedBlocks() * wBlockBytes(); }
  int64_t wOutBlockBytes() const {
    return spec_.depthKernel * wDepthBytes();
  }

  /// A loop of `count` iterations around `body` with its counter in the
  /// stack slot `slot`; no loop for a single iteration.
  template <typename Body> void stackLoop(int64_t count, int slot, Body body);

  void groups(int64_t count, int nb, bool masked);
  void depthPlanes(int nb, bool masked);
  void rows(int nb, bool masked, int64_t kdLo, int64_t kdHi);
  void pixelBlocks(int nb, bool masked, const TapRange &taps);
  void microkernel(int nb, bool masked, const TapRange &taps,
                   const PixelBlock &b);
  void channelBlocks(int64_t count, int ics, int nb, bool halfLast,
                     int64_t khLo, int64_t khHi, const PixelBlock &b);
  void taps(int ics, int nb, bool halfLast, const PixelBlock &b);
  void depthwiseRow(bool halfLast, const PixelBlock &b);
  void epilogue(int nb, bool masked, int width);

  static Xbyak::Zmm acc(int i, int j, int nb) { return Xbyak::Zmm(i * nb + j); }
  /// Paired halves: the high half's accumulator of pixel i (acc(i, 0, 1)
  /// holds the low half's), in a block of `width` pixels.
  static Xbyak::Ymm highAcc(int i, int width) { return Xbyak::Ymm(width + i); }
  bool paired() const { return spec_.pairedGroups; }
  /// Whether the masked last block has at most 8 real channels: its FMAs
  /// then take ymm halves (see taps).
  bool halfTail(bool masked) const {
    const int64_t rem = spec_.oc % kConvBlock;
    return masked && rem != 0 && rem <= kConvBlock / 2;
  }
};

template <typename Body>
void ConvKernel::stackLoop(int64_t count, int slot, Body body) {
  if (count <= 0)
    return;
  Xbyak::Label loop;
  if (count > 1) {
    mov(qword[rsp + slot], static_cast<uint32_t>(count));
    L(loop);
  }
  body();
  if (count > 1) {
    dec(qword[rsp + slot]);
    jnz(loop, T_NEAR);
  }
}

// With halfLast, the last channel block has at most 8 real lanes, and its
// loads and FMAs take ymm registers, the low halves: Zen 4 runs a 512-bit
// FMA as two 256-bit halves, so a ymm FMA costs half of a zmm one there (on
// Intel's two 512-bit FMA units, the same). A ymm write zeroes the upper
// lanes, which the epilogue masks off anyway.
void ConvKernel::taps(int ics, int nb, bool halfLast, const PixelBlock &b) {
  const int width = b.width;
  const int wBase = width * (paired() ? 2 : nb);
  auto half = [&](int j) { return halfLast && j == nb - 1; };
  // acc(i, j) += w * x: x a register, or a vector in memory (or broadcast
  // from it).
  auto fma = [&](int i, int j, const Xbyak::Zmm &w, const auto &x) {
    if (!half(j)) {
      vfmadd231ps(acc(i, j, nb), w, x);
      return;
    }
    const Xbyak::Ymm accHalf(acc(i, j, nb).getIdx()), wHalf(w.getIdx());
    if constexpr (std::is_same_v<std::decay_t<decltype(x)>, Xbyak::Zmm>)
      vfmadd231ps(accHalf, wHalf, Xbyak::Ymm(x.getIdx()));
    else
      vfmadd231ps(accHalf, wHalf, x);
  };
  auto loadWeights = [&](int j, const Xbyak::Address &w) {
    if (half(j))
      vmovups(Xbyak::Ymm(wBase + j), w);
    else
      vmovups(Xbyak::Zmm(wBase + j), w);
  };
  if (depthwise() && width + kw() + 1 <= kNumZmm) {
    depthwiseRow(halfLast, b);
    return;
  }
  int bcast = 0;
  for (int64_t x = 0; x < kw(); ++x) {
    bool any = false;
    for (int i = 0; i < width; ++i)
      any = any || b.valid[i * kw() + x];
    if (!any)
      continue;
    if (depthwise()) {
      // Channel c of Y reads channel c of X: whole vectors, no broadcast.
      // X's padding lanes only reach Y's, which are zeroed.
      loadWeights(0, ptr[regWKh_ + static_cast<int>(x * kBlockBytes)]);
      for (int i = 0; i < width; ++i) {
        if (!b.valid[i * kw() + x])
          continue;
        int64_t col =
            i * spec_.strides[1] - spec_.pads[1] + x * spec_.dilations[1];
        fma(i, 0, Xbyak::Zmm(wBase),
            ptr[regSrcKh_ + static_cast<int>(col * kBlockBytes)]);
      }
      continue;
    }
    if (paired()) {
      // Input channel ic feeds the outputs of its own half only: the low
      // or high half of its weight vector, into that half's accumulators.
      for (int ic = 0; ic < ics; ++ic) {
        const bool high = ic >= kConvBlock / 2;
        const Xbyak::Ymm w(wBase);
        vmovups(
            w,
            ptr[regWKh_ + static_cast<int>((x * kConvBlock + ic) * kBlockBytes +
                                           (high ? kBlockBytes / 2 : 0))]);
        for (int i = 0; i < width; ++i) {
          if (!b.valid[i * kw() + x])
            continue;
          int64_t col =
              i * spec_.strides[1] - spec_.pads[1] + x * spec_.dilations[1];
          vfmadd231ps(
              high ? highAcc(i, width) : Xbyak::Ymm(acc(i, 0, 1).getIdx()), w,
              ptr_b[regSrcKh_ + static_cast<int>(col * kBlockBytes + ic * 4)]);
        }
      }
      continue;
    }
    for (int ic = 0; ic < ics; ++ic) {
      for (int j = 0; j < nb; ++j)
        loadWeights(
            j,
            ptr[regWKh_ + static_cast<int>((x * kConvBlock + ic) * kBlockBytes +
                                           j * wOutBlockBytes())]);
      if (prefetchNextGroup_)
        for (int j = 0; j < nb; ++j)
          prefetcht1(ptr[regWKh_ +
                         static_cast<int>((x * kConvBlock + ic) * kBlockBytes +
                                          (nb + j) * wOutBlockBytes())]);
      for (int i = 0; i < width; ++i) {
        if (!b.valid[i * kw() + x])
          continue;
        int64_t col =
            i * spec_.strides[1] - spec_.pads[1] + x * spec_.dilations[1];
        Xbyak::RegExp src =
            regSrcKh_ +
            static_cast<int>(col * srcPixelBytes() + ic * srcChannelBytes());
        if (nb == 1) {
          fma(i, 0, Xbyak::Zmm(wBase), ptr_b[src]);
          continue;
        }
        // Two broadcast registers alternate so that the next pixel's load
        // does not wait for this one's FMAs to read theirs.
        Xbyak::Zmm a(wBase + nb + bcast++ % 2);
        vbroadcastss(a, ptr[src]);
        for (int j = 0; j < nb; ++j)
          fma(i, j, Xbyak::Zmm(wBase + j), a);
      }
    }
  }
}

// One kernel row of a depthwise conv: the row's kw weight vectors stay in
// registers, and each input pixel the block's taps read is loaded once and
// multiplied into every output pixel whose window covers it (3 of them for
// a 3x3 of stride 1), instead of once per tap as a memory operand: about a
// third of the loads, which bounded the depthwise convs below 75% of the
// FMA peak on Zen 4.
void ConvKernel::depthwiseRow(bool halfLast, const PixelBlock &b) {
  const int width = b.width, wBase = width;
  const Xbyak::Zmm x(wBase + static_cast<int>(kw()));
  auto fma = [&](int i, int tap) {
    if (halfLast)
      vfmadd231ps(Xbyak::Ymm(acc(i, 0, 1).getIdx()), Xbyak::Ymm(wBase + tap),
                  Xbyak::Ymm(x.getIdx()));
    else
      vfmadd231ps(acc(i, 0, 1), Xbyak::Zmm(wBase + tap), x);
  };
  // Input columns (relative to the block's first pixel) and the taps that
  // read each.
  std::map<int64_t, std::vector<std::pair<int, int>>> readers;
  std::vector<bool> used(static_cast<size_t>(kw()), false);
  for (int i = 0; i < width; ++i)
    for (int64_t t = 0; t < kw(); ++t)
      if (b.valid[i * kw() + t]) {
        readers[i * spec_.strides[1] - spec_.pads[1] + t * spec_.dilations[1]]
            .emplace_back(i, static_cast<int>(t));
        used[t] = true;
      }
  for (int64_t t = 0; t < kw(); ++t)
    if (used[t])
      vmovups(Xbyak::Zmm(wBase + static_cast<int>(t)),
              ptr[regWKh_ + static_cast<int>(t * kBlockBytes)]);
  for (const auto &[col, taps] : readers) {
    vmovups(x, ptr[regSrcKh_ + static_cast<int>(col * kBlockBytes)]);
    for (const auto &[i, t] : taps)
      fma(i, t);
  }
}

void ConvKernel::channelBlocks(int64_t count, int ics, int nb, bool halfLast,
                               int64_t khLo, int64_t khHi,
                               const PixelBlock &b) {
  if (count == 0 || ics == 0)
    return;
  const int64_t rowBytes = srcRowBytes();
  const int64_t nkh = khHi - khLo;
  Xbyak::Label cbLoop;
  if (count > 1) {
    mov(regCbIter_, count);
    L(cbLoop);
  }
  lea(regSrcKh_,
      ptr[regSrcCb_ + static_cast<int>(khLo * spec_.dilations[0] * rowBytes)]);
  lea(regWKh_, ptr[regWCb_ + static_cast<int>(khLo * kw() * tapBytes())]);
  Xbyak::Label khLoop;
  if (nkh > 1) {
    mov(regKhIter_, nkh);
    L(khLoop);
  }
  taps(ics, nb, halfLast, b);
  if (nkh > 1) {
    add(regSrcKh_, static_cast<int>(spec_.dilations[0] * rowBytes));
    add(regWKh_, static_cast<int>(kw() * tapBytes()));
    dec(regKhIter_);
    jnz(khLoop, T_NEAR);
  }
  // Also past the last block: the channel tail, if any, comes next.
  add(regSrcCb_, static_cast<int>(srcPlaneBytes()));
  add(regWCb_, static_cast<int>(wBlockBytes()));
  if (count > 1) {
    dec(regCbIter_);
    jnz(cbLoop, T_NEAR);
  }
}

void ConvKernel::epilogue(int nb, bool masked, int width) {
  // The bias is in the accumulators already (see microkernel). The chain is
  // op-major, as in the gemm: the accumulators' chains interleave.
  static_assert(kBlockBytes == kZmmBytes);
  if (spec_.residual) {
    // The tap loops' registers are free here: regSrcKh_ = residual - dst.
    mov(regSrcKh_, qword[rsp + kResidualDelta]);
    for (int i = 0; i < width; ++i)
      for (int j = 0; j < nb; ++j) {
        Xbyak::Address z =
            ptr[regDstBlock_ + regSrcKh_ +
                static_cast<int>(i * dstPixelStep() + j * dstPlaneBytes())];
        // Z's padding lanes are not read (they need not be finite).
        if (masked && j == nb - 1)
          vaddps(acc(i, j, nb) | kTail_, acc(i, j, nb), z);
        else
          vaddps(acc(i, j, nb), acc(i, j, nb), z);
      }
  }
  injector_.blockEpilogue(spec_.epilogue, width, nb, /*bias=*/nullptr, masked,
                          kTail_);
  for (int i = 0; i < width; ++i)
    for (int j = 0; j < nb; ++j) {
      // The padding lanes of Y are written as 0 (the epilogue of 0 may not
      // be), so that they are finite for whoever reads the whole block.
      if (masked && j == nb - 1)
        vmovaps(acc(i, j, nb) | kTail_ | T_z, acc(i, j, nb));
      vmovups(ptr[regDstBlock_ +
                  static_cast<int>(i * dstPixelStep() + j * dstPlaneBytes())],
              acc(i, j, nb));
    }
}

void ConvKernel::microkernel(int nb, bool masked, const TapRange &taps,
                             const PixelBlock &b) {
  // The sums start from the bias (one add per output vector fewer in the
  // epilogue: a tenth of a depthwise 3x3's arithmetic), or from zero. bias
  // has exactly OC elements: the last block's tail is loaded masked.
  const int spare = b.width * (paired() ? 2 : nb);
  for (int j = 0; j < nb; ++j) {
    const Xbyak::Zmm start(spare);
    if (!spec_.bias)
      vpxord(start, start, start);
    else if (masked && j == nb - 1)
      vmovups(start | kTail_ | T_z, ptr[regBiasGroup_ + j * kBlockBytes]);
    else
      vmovups(start, ptr[regBiasGroup_ + j * kBlockBytes]);
    for (int i = 0; i < b.width; ++i)
      vmovaps(acc(i, j, nb), start);
  }
  for (int i = 0; paired() && i < b.width; ++i) {
    // The high half's bias starts its own accumulator (the low one's upper
    // half is replaced before the epilogue).
    Xbyak::Ymm z = highAcc(i, b.width);
    if (spec_.bias)
      vextractf32x8(z, acc(i, 0, 1), 1);
    else
      vpxord(z, z, z);
  }

  if (!taps.empty()) {
    lea(regSrcCb_, ptr[regSrcBlock_ + static_cast<int>(
                                          taps.kdLo * spec_.depthDilation *
                                          srcDepthBytes())]);
    lea(regWCb_, ptr[regWGroup_ + static_cast<int>(taps.kdLo * wDepthBytes())]);
    const int64_t depthTaps = taps.kdHi - taps.kdLo;
    const bool half = halfTail(masked);
    stackLoop(depthTaps, kDepthTapCounter, [&] {
      if (depthwise()) {
        channelBlocks(1, 1, nb, half, taps.khLo, taps.khHi, b);
      } else {
        channelBlocks(spec_.c / kConvBlock, kConvBlock, nb, half, taps.khLo,
                      taps.khHi, b);
        channelBlocks(1, static_cast<int>(spec_.c % kConvBlock), nb, half,
                      taps.khLo, taps.khHi, b);
      }
      // The channel blocks left regSrcCb_ past this depth's last block and
      // regWCb_ at the next depth tap's weights.
      if (depthTaps > 1)
        add(regSrcCb_, static_cast<int>(spec_.depthDilation * srcDepthBytes() -
                                        reducedBlocks() * srcPlaneBytes()));
    });
  }
  // The low half's sums fill the low half of each accumulator (its upper
  // half was zeroed by the ymm writes); the high half's go above them.
  for (int i = 0; paired() && i < b.width; ++i)
    vinsertf32x8(acc(i, 0, 1), acc(i, 0, 1), highAcc(i, b.width), 1);
  epilogue(nb, masked, b.width);
}

void ConvKernel::pixelBlocks(int nb, bool masked, const TapRange &taps) {
  int width = nb == 2 || paired() ? std::min(width_, 14) : width_;
  std::vector<PixelBlock> blocks;
  for (int64_t ow0 = 0; ow0 < ow_; ow0 += width) {
    PixelBlock b;
    b.ow0 = ow0;
    b.width = static_cast<int>(std::min<int64_t>(width, ow_ - ow0));
    b.valid.resize(static_cast<size_t>(b.width * kw()));
    for (int i = 0; i < b.width; ++i)
      for (int64_t x = 0; x < kw(); ++x) {
        int64_t col = (ow0 + i) * spec_.strides[1] - spec_.pads[1] +
                      x * spec_.dilations[1];
        b.valid[i * kw() + x] = col >= 0 && col < spec_.w;
      }
    blocks.push_back(std::move(b));
  }
  for (size_t first = 0; first < blocks.size();) {
    size_t last = first + 1;
    while (last < blocks.size() && blocks[last].sameCode(blocks[first]))
      ++last;
    const PixelBlock &b = blocks[first];
    lea(regSrcBlock_,
        ptr[regSrcRow_ +
            static_cast<int>(b.ow0 * spec_.strides[1] * srcPixelBytes())]);
    lea(regDstBlock_,
        ptr[regDstRow_ + static_cast<int>(b.ow0 * dstPixelStep())]);
    const int64_t count = static_cast<int64_t>(last - first);
    stackLoop(count, kBlockCounter, [&] {
      microkernel(nb, masked, taps, b);
      if (count > 1) {
        add(regSrcBlock_,
            static_cast<int>(b.width * spec_.strides[1] * srcPixelBytes()));
        add(regDstBlock_, static_cast<int>(b.width * dstPixelStep()));
      }
    });
    first = last;
  }
}

void ConvKernel::rows(int nb, bool masked, int64_t kdLo, int64_t kdHi) {
  const int64_t rowBytes = srcRowBytes();
  const bool band = spec_.rowBand[1] != 0;
  const int64_t end = band ? spec_.rowBand[1] : oh_;
  for (int64_t first = band ? spec_.rowBand[0] : 0; first < end;) {
    auto r = convRowTaps(spec_, first);
    int64_t last = first + 1;
    while (last < end && convRowTaps(spec_, last) == r)
      ++last;
    // The row pointer is that of input row y * stride - pad, which may lie
    // above the image; only rows inside it are dereferenced.
    lea(regSrcRow_,
        ptr[regSrcImage_ +
            static_cast<int>((first * spec_.strides[0] - spec_.pads[0]) *
                             rowBytes)]);
    lea(regDstRow_,
        ptr[regDstGroup_ + static_cast<int>(first * dstRowStep() +
                                            (spec_.dstOffsets[0] * dstWidth() +
                                             spec_.dstOffsets[1]) *
                                                kBlockBytes)]);
    const int64_t count = last - first;
    const TapRange taps{kdLo, kdHi, r.first, r.second};
    stackLoop(count, kRowCounter, [&] {
      pixelBlocks(nb, masked, taps);
      if (count > 1) {
        add(regSrcRow_, static_cast<int>(spec_.strides[0] * rowBytes));
        add(regDstRow_, static_cast<int>(dstRowStep()));
      }
    });
    first = last;
  }
}

void ConvKernel::depthPlanes(int nb, bool masked) {
  // Kernel depths [lo, hi) of output plane z that land inside the input.
  auto range = [&](int64_t z) {
    int64_t front = z * spec_.depthStride - spec_.depthPads[0];
    int64_t lo = spec_.depthKernel, hi = 0;
    for (int64_t k = 0; k < spec_.depthKernel; ++k) {
      int64_t plane = front + k * spec_.depthDilation;
      if (plane >= 0 && plane < spec_.d) {
        lo = std::min(lo, k);
        hi = k + 1;
      }
    }
    return lo < hi ? std::make_pair(lo, hi)
                   : std::make_pair(int64_t(0), int64_t(0));
  };
  if (od_ == 1 && spec_.depthPads[0] == 0) {
    auto r = range(0);
    rows(nb, masked, r.first, r.second);
    return;
  }
  // While the rows run, regSrcImage_ points at input plane
  // z * stride - pad (maybe outside the input; only planes inside are
  // read) and regDstGroup_ at output plane z; both are put back after.
  const int64_t srcStep = spec_.depthStride * srcDepthBytes();
  int64_t srcMoved = -spec_.depthPads[0] * srcDepthBytes(), dstMoved = 0;
  if (srcMoved != 0)
    add(regSrcImage_, static_cast<int>(srcMoved));
  for (int64_t first = 0; first < od_;) {
    auto r = range(first);
    int64_t last = first + 1;
    while (last < od_ && range(last) == r)
      ++last;
    const int64_t count = last - first;
    stackLoop(count, kDepthCounter, [&] {
      rows(nb, masked, r.first, r.second);
      add(regSrcImage_, static_cast<int>(srcStep));
      add(regDstGroup_, static_cast<int>(dstDepthBytes()));
    });
    srcMoved += count * srcStep;
    dstMoved += count * dstDepthBytes();
    first = last;
  }
  sub(regSrcImage_, static_cast<int>(srcMoved));
  sub(regDstGroup_, static_cast<int>(dstMoved));
}

void ConvKernel::groups(int64_t count, int nb, bool masked) {
  stackLoop(count, kGroupCounter, [&] {
    depthPlanes(nb, masked);
    // Past the last group too: the narrower tail group comes next.
    add(regDstGroup_, static_cast<int>(nb * dstPlaneBytes()));
    add(regWGroup_, static_cast<int>(nb * wOutBlockBytes()));
    // A depthwise group reads its own input channels.
    if (depthwise())
      add(regSrcImage_, static_cast<int>(nb * srcPlaneBytes()));
    if (spec_.bias)
      add(regBiasGroup_, nb * kBlockBytes);
  });
}

void ConvKernel::generate() {
  // A group's weights come from memory on its first pixel block; when a
  // group has few pixel blocks (ResNet-50's 7x7 layers), that block alone
  // would stream them at the FMA rate. Every block then prefetches the next
  // group's weights as it reads its own, so they arrive over the whole of
  // this group; the blocks after the first find them cached. Groups whose
  // weights leave no room in L2 for the next one's do not prefetch.
  // A kernel of one group (a thread's chunk) prefetches the next chunk's,
  // which its thread most often runs next (nextWeightsFollow): without,
  // ResNet-50's layer4.0 3x3 conv on 2 threads read each chunk's weights
  // from memory as it ran (1.10-1.27 ms, 0.98 with the weights in L3).
  const int64_t blocksPerGroup = od_ * oh_ * ((ow_ + width_ - 1) / width_);
  prefetchNextGroup_ =
      !depthwise() && (convBlocks(spec_.oc) > nb_ || spec_.nextWeightsFollow) &&
      blocksPerGroup <= kPrefetchBlocks &&
      nb_ * wOutBlockBytes() <= kPrefetchGroupBytes;
  preamble({rbx, rbp, r12, r13, r14, r15});
  if (spec_.n == 0) {
    postamble();
    return;
  }
  sub(rsp, kFrameBytes);
  mov(regSrcImage_,
      ptr[regArgs_ + static_cast<int>(offsetof(mlcc_conv_args, src))]);
  mov(regDstGroup_,
      ptr[regArgs_ + static_cast<int>(offsetof(mlcc_conv_args, dst))]);
  if (spec_.residual) {
    mov(rax,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_conv_args, residual))]);
    sub(rax, regDstGroup_);
    mov(qword[rsp + kResidualDelta], rax);
  }
  const int rem = static_cast<int>(spec_.oc % kConvBlock);
  if (rem) {
    mov(eax, (1u << rem) - 1);
    kmovw(kTail_, eax);
  }
  const int64_t ocb = convBlocks(spec_.oc);
  // The masked block ends the last group: a group of its own kind.
  int64_t fullGroups = ocb / nb_;
  int tailBlocks = static_cast<int>(ocb % nb_);
  if (rem && tailBlocks == 0) {
    --fullGroups;
    tailBlocks = nb_;
  }
  // Y's groups are contiguous across images, so regDstGroup_ just runs on.
  stackLoop(spec_.n, kImageCounter, [&] {
    mov(regWGroup_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_conv_args, weights))]);
    if (spec_.bias)
      mov(regBiasGroup_,
          ptr[regArgs_ + static_cast<int>(offsetof(mlcc_conv_args, bias))]);
    groups(fullGroups, nb_, /*masked=*/false);
    if (tailBlocks)
      groups(1, tailBlocks, /*masked=*/rem != 0);
    if (spec_.n > 1 && !depthwise())
      add(regSrcImage_, static_cast<int>(srcImageBytes()));
  });
  add(rsp, kFrameBytes);
  postamble();
}

Status emit(const ConvSpec &spec, int64_t od, int64_t oh, int64_t ow, int nb,
            int width, std::vector<uint8_t> &code) {
  return generateInGrowingBuffer(
      [&](std::vector<uint8_t> &buffer) {
        ConvKernel kernel(buffer, spec, od, oh, ow, nb, width);
        kernel.generate();
        return kernel.finish(spec.name, code);
      }, size_t(64) << 10);
}

} // namespace

std::pair<int64_t, int64_t> convRowTaps(const ConvSpec &spec, int64_t y) {
  const int64_t kh = spec.kernel[0];
  int64_t top = y * spec.strides[0] - spec.pads[0];
  int64_t lo = kh, hi = 0;
  for (int64_t r = 0; r < kh; ++r) {
    int64_t row = top + r * spec.dilations[0];
    if (row >= 0 && row < spec.h) {
      lo = std::min(lo, r);
      hi = r + 1;
    }
  }
  return lo < hi ? std::make_pair(lo, hi)
                 : std::make_pair(int64_t(0), int64_t(0));
}

int64_t convDstRowBytes(const ConvSpec &spec) {
  int64_t oh = 0, ow = 0;
  if (convOutputSize(spec, oh, ow).failed())
    return 0;
  return spec.dstFrame[0] != 0
             ? spec.dstStrides[0] * spec.dstFrame[1] * kBlockBytes
             : ow * kBlockBytes;
}

int64_t convDstBlockBytes(const ConvSpec &spec) {
  int64_t oh = 0, ow = 0;
  if (convOutputSize(spec, oh, ow).failed())
    return 0;
  const int64_t plane = spec.dstFrame[0] != 0
                            ? spec.dstFrame[0] * spec.dstFrame[1]
                            : std::max(spec.dstPlaneRows, oh) * ow;
  return convOutputDepth(spec) * plane * kBlockBytes;
}

Status convOutputSize(const ConvSpec &spec, int64_t &oh, int64_t &ow) {
  oh = outDim(spec.h, spec.pads[0], spec.pads[2], spec.kernel[0],
              spec.strides[0], spec.dilations[0]);
  ow = outDim(spec.w, spec.pads[1], spec.pads[3], spec.kernel[1],
              spec.strides[1], spec.dilations[1]);
  MLCC_CHECK(oh >= 1 && ow >= 1, spec.name, ": the ", spec.kernel[0], " x ",
             spec.kernel[1], " window (dilated) is larger than the padded ",
             spec.h, " x ", spec.w, " input: empty output");
  return Status::success();
}

int64_t convOutputDepth(const ConvSpec &spec) {
  return outDim(spec.d, spec.depthPads[0], spec.depthPads[1],
                spec.depthKernel, spec.depthStride, spec.depthDilation);
}

Status generateConv(const ConvSpec &spec, std::vector<uint8_t> &code) {
  code.clear();
  MLCC_RETURN_IF_ERROR(validate(spec));
  int64_t oh = 0, ow = 0;
  MLCC_RETURN_IF_ERROR(convOutputSize(spec, oh, ow));
  // Two channel blocks per pixel halve the input broadcasts per FMA; with
  // 14 pixels they fill 28 accumulators. One block takes up to 28 pixels.
  // The width is spread evenly over the blocks of a row, so that the last
  // block is not a sliver.
  // Depthwise has no input channels to share a broadcast: one block.
  // Stride-2 and 1x1 stride-1 convs over a blocked input take blocks of 7
  // to 13 pixels (as many blocks of at least 7 as fit): ResNet-50's stride-2
  // convs ran 3 to 8% faster than with 14 (each conv alone, fastest of 200
  // runs, three processes each), the 1x1 ones made ResNet-50 0.95 and
  // DenseNet-121 0.93 of before on one thread (Zen 5). Blocks of fewer
  // pixels lose: DenseNet's 8-wide convs split 4 + 4 ran 20% slower.
  const int nb = convGroupBlocks(spec);
  int width = spec.blockWidth;
  if (width == 0) {
    const bool pointwise = spec.kernel[0] == 1 && spec.kernel[1] == 1 &&
                           spec.strides[0] == 1 && spec.strides[1] == 1;
    int64_t blocks = 0;
    if (nb == 2 && !spec.plainInput && (spec.strides[1] == 2 || pointwise))
      blocks = std::max<int64_t>(1, ow / kNarrowBlockWidth);
    else {
      int64_t most = nb == 2 || spec.pairedGroups ? 14 : kMaxBlockWidth;
      // A depthwise row keeps its kw weights and one input pixel beside
      // the accumulators (see depthwiseRow).
      if (isDepthwiseConv(spec))
        most = std::clamp<int64_t>(kNumZmm - 1 - spec.kernel[1], 1, most);
      blocks = (ow + most - 1) / most;
    }
    width = static_cast<int>((ow + blocks - 1) / blocks);
  }
  // Paired groups keep two (ymm) accumulators a pixel, as two blocks do.
  const int perPixel = spec.pairedGroups ? 2 : nb;
  const int nbWidth = perPixel == 2 ? std::min(width, 14) : width;
  int temps = 0;
  for (const EltwiseOp &op : spec.epilogue)
    temps = std::max(temps, EltwiseInjector::tempsNeeded(op));
  MLCC_CHECK(loopRegisters(nbWidth, perPixel) <= kNumZmm &&
                 nbWidth * nb + std::max(temps, spec.bias ? nb : 0) <= kNumZmm,
             spec.name, ": a block of ", nbWidth, " pixels x ", nb,
             " channel blocks needs more than ", kNumZmm, " zmm registers");
  return emit(spec, convOutputDepth(spec), oh, ow, nb, width, code);
}

void packConv3dWeights(const float *w, int64_t oc, int64_t c, int64_t kd,
                       int64_t kh, int64_t kw, std::vector<float> &packed) {
  packed.assign(
      static_cast<size_t>(kd * packedConvWeightsSize(oc, c, kh, kw)), 0.0f);
  const int64_t icb = convBlocks(c);
  for (int64_t o = 0; o < oc; ++o)
    for (int64_t i = 0; i < c; ++i)
      for (int64_t z = 0; z < kd; ++z)
        for (int64_t y = 0; y < kh; ++y)
          for (int64_t x = 0; x < kw; ++x) {
            int64_t block =
                ((o / kConvBlock) * kd + z) * icb + i / kConvBlock;
            int64_t at = ((block * kh + y) * kw + x) * kConvBlock * kConvBlock +
                         (i % kConvBlock) * kConvBlock + o % kConvBlock;
            packed[at] = w[(((o * c + i) * kd + z) * kh + y) * kw + x];
          }
}

int64_t groupedConvChunk(int64_t c, int64_t oc, int64_t group,
                         int64_t maxGroupsPerChunk) {
  if (group < 2 || c % group != 0 || oc % group != 0)
    return 0;
  int64_t cg = c / group, ocg = oc / group;
  int64_t k = std::lcm(kConvBlock / std::gcd(kConvBlock, cg),
                       kConvBlock / std::gcd(kConvBlock, ocg));
  k = std::min(k, group);
  return k <= maxGroupsPerChunk ? k : 0;
}

void packGroupedConvWeights(const float *w, int64_t oc, int64_t c, int64_t kh,
                            int64_t kw, int64_t group, int64_t groupsPerChunk,
                            std::vector<float> &packed) {
  const int64_t cg = c / group, ocg = oc / group, taps = kh * kw;
  packed.clear();
  std::vector<float> dense, part;
  for (int64_t first = 0; first < group; first += groupsPerChunk) {
    int64_t groups = std::min(groupsPerChunk, group - first);
    int64_t chunkC = groups * cg, chunkOC = groups * ocg;
    dense.assign(static_cast<size_t>(chunkOC * chunkC * taps), 0.0f);
    for (int64_t o = 0; o < chunkOC; ++o) {
      // Output channel o of the chunk reads input channels (o / ocg) * cg..
      const float *src = w + (first * ocg + o) * cg * taps;
      std::copy(src, src + cg * taps,
                dense.begin() + (o * chunkC + (o / ocg) * cg) * taps);
    }
    packConvWeights(dense.data(), chunkOC, chunkC, kh, kw, part);
    packed.insert(packed.end(), part.begin(), part.end());
  }
}

void packDepthwiseConv3dWeights(const float *w, int64_t c, int64_t kd,
                                int64_t kh, int64_t kw,
                                std::vector<float> &packed) {
  packed.assign(
      static_cast<size_t>(kd * packedDepthwiseConvWeightsSize(c, kh, kw)),
      0.0f);
  const int64_t taps = kd * kh * kw;
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t t = 0; t < taps; ++t)
      packed[((ch / kConvBlock) * taps + t) * kConvBlock + ch % kConvBlock] =
          w[ch * taps + t];
}

void reorderNCHWtoNCHW16c(const float *src, int64_t n, int64_t c, int64_t h,
                          int64_t w, float *dst) {
  const int64_t cb = convBlocks(c), plane = h * w;
  std::fill(dst, dst + blockedSize(n, c, h, w), 0.0f);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p)
        dst[((b * cb + ch / kConvBlock) * plane + p) * kConvBlock +
            ch % kConvBlock] = src[(b * c + ch) * plane + p];
}

void reorderNCHW16cToNCHW(const float *src, int64_t n, int64_t c, int64_t h,
                          int64_t w, float *dst) {
  const int64_t cb = convBlocks(c), plane = h * w;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p)
        dst[(b * c + ch) * plane + p] =
            src[((b * cb + ch / kConvBlock) * plane + p) * kConvBlock +
                ch % kConvBlock];
}

} // namespace mlcc::avx512
