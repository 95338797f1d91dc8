//===- Reduce.cpp - AVX-512 f32 reduction kernels -------------------------===//
//
// inner == 1: each row of r contiguous elements is read as vectors of 16,
// the last masked (masked lanes are neither read, by EVEX fault
// suppression, nor combined), into up to eight accumulators so that eight
// independent adds are in flight; long rows loop over groups of eight
// vectors. The accumulators are then added as a tree, and the 16 lanes of
// the result halved down to one.
//
// inner > 1: a block of up to eight vectors of consecutive output columns
// (the last masked) steps down the r rows. A block narrower than eight
// gives each vector several partial accumulators, taking the rows in turn,
// so that eight chains are still in flight; they are added at the end.
//
// With a run-time r (ReduceSpec::runTimeR) each slice reduces the first
// args->r rows of its r: inner > 1 takes the rows as above while a round
// of them is left, then one by one into the first partial accumulators;
// inner == 1 reads whole vectors, then one masked by a tail mask made at
// run time, into one accumulator. Mean divides by the run's r.
//
// Sums are in f32 (the reference sums in double): sum of n elements within
// about n * 2^-24 of the sum of |x|. Mean divides the sum by r, once; l2
// takes the square root of the sum of squares, l1 sums |x|.
//
// Max and min: vmaxps / vminps return their second source when either is
// nan, so a nan can be lost. Beside each accumulator runs a nan detector,
// the unsigned max of the bits of |x|, which is above 0x7f800000 (inf)
// exactly when a nan went by; the lanes that saw one are set to nan at the
// end, as the reference's max and min return nan whenever they meet one.
// Between +0 and -0 the reference keeps the one it met first; the kernels
// combine in another order, so the sign of a zero result may differ.
//
// Register plan:
//   rdi  args        rsi  src slice       rdx  dst slice   r8  outer counter
//   r9   src block (inner == 1, run-time r: the tail mask's bits)
//   r10  dst block   r11  block counter
//   rax  row pointer (loops)   rcx  row counter, then scratch of addImm
//   zmm0-zmm7 accumulators   zmm8-zmm15 nan detectors   zmm16-zmm23 loads
//   zmm24 scratch            zmm31 0x7fffffff (max, min, l1)
//   k1 tail mask     k2 lanes that saw a nan
//
//===----------------------------------------------------------------------===//

#include "Reduce.h"
#include "JitGenerator.h"

#include "KernelABI.h"

#include <algorithm>
#include <cstddef>
#include <limits>

namespace mlcc::avx512 {

const char *reduceKindName(ReduceKind kind) {
  switch (kind) {
  case ReduceKind::Sum:
    return "reduce_sum";
  case ReduceKind::Mean:
    return "reduce_mean";
  case ReduceKind::Max:
    return "reduce_max";
  case ReduceKind::Min:
    return "reduce_min";
  case ReduceKind::SumSquare:
    return "reduce_sum_square";
  case ReduceKind::L1:
    return "reduce_l1";
  case ReduceKind::L2:
    return "reduce_l2";
  }
  return "<unknown>";
}

namespace {

using Xbyak::Zmm;

constexpr int kAccs = 8;
constexpr uint32_t kAbsMask = 0x7fffffffu;
constexpr uint32_t kInfBits = 0x7f800000u;
// vpcmpud predicate: greater than.
constexpr uint8_t kCmpGt = 6;

Status validate(const ReduceSpec &spec) {
  const std::string &name = spec.name;
  MLCC_CHECK(spec.kind == ReduceKind::Sum || spec.kind == ReduceKind::Mean ||
                 spec.kind == ReduceKind::Max || spec.kind == ReduceKind::Min ||
                 spec.kind == ReduceKind::SumSquare ||
                 spec.kind == ReduceKind::L1 || spec.kind == ReduceKind::L2,
             name, ": unknown reduction ", static_cast<unsigned>(spec.kind));
  MLCC_CHECK(spec.dtype == DType::F32, name,
             ": reduce kernels take f32 only, not ",
             ref::dtypeName(spec.dtype));
  MLCC_CHECK(spec.outer >= 0 && spec.r >= 0 && spec.inner >= 0, name,
             ": view [", spec.outer, ", ", spec.r, ", ", spec.inner,
             "] has a negative dim");
  MLCC_CHECK(!spec.runTimeR || spec.inner <= INT32_MAX / 4 / kAccs, name,
             ": a run-time r takes rows of at most ", INT32_MAX / 4 / kAccs,
             " elements, not ", spec.inner);
  MLCC_CHECK(
      spec.inner <= kMaxReduceSliceBytes / 4 &&
          (spec.inner == 0 || spec.r <= kMaxReduceSliceBytes / 4 / spec.inner),
      name, ": slice [", spec.r, ", ", spec.inner, "] is too big");
  return Status::success();
}

class ReduceKernel : public JitGenerator {
public:
  ReduceKernel(std::vector<uint8_t> &buffer, const ReduceSpec &spec)
      : JitGenerator(buffer), spec_(spec),
        minMax_(spec.kind == ReduceKind::Max || spec.kind == ReduceKind::Min) {}

  void generate();

private:
  const ReduceSpec &spec_;
  const bool minMax_;

  const Xbyak::Reg64 regArgs_ = rdi, regSrc_ = rsi, regDst_ = rdx,
                     regOuter_ = r8, regSrcBlock_ = r9, regDstBlock_ = r10,
                     regBlocks_ = r11, regRow_ = rax, regRows_ = rcx;
  const Zmm scratch_ = zmm24, absMask_ = zmm31;
  const Xbyak::Opmask kTail_ = k1, kNan_ = k2;

  static Zmm acc(int u) { return Zmm(u); }
  static Zmm nanAcc(int u) { return Zmm(8 + u); }
  static Zmm load(int u) { return Zmm(16 + u); }

  void addImm(const Xbyak::Reg64 &r, int64_t v) {
    JitGenerator::addImm(r, v, regRows_);
  }

  void init(int u);
  /// acc(u) (and its nan detector) takes in the vector at `a`, only the
  /// lanes of the tail mask when `tail`.
  void step(int u, const Xbyak::Address &a, bool tail);
  /// acc(d) = combine(acc(d), acc(s)), lane by lane.
  void combine(int d, int s);
  /// Adds accumulators [first, first + count) into `first`, as a tree.
  void combineTree(int first, int count, int stride);
  /// Mean: divides by r; max, min: nan in the lanes whose detector saw one.
  void finishLanes(int u);

  /// dst = the run's r: args->r, at most spec_.r.
  void loadRunRows(const Xbyak::Reg64 &dst, const Xbyak::Reg64 &scratch) {
    loadAtMost(dst,
               ptr[regArgs_ + static_cast<int>(offsetof(mlcc_reduce_args, r))],
               spec_.r, scratch);
  }
  /// scratch_ = the run's r as f32 in every lane (a mean's divisor); uses
  /// rax and rcx.
  void runRowsDivisor();

  void rowToScalar();
  void runTimeRowToScalar();
  /// acc(0)'s lanes to one, finished (mean, l2, nan) and stored at regDst_.
  void lanesToScalar();
  void block(int width, bool tail, const Xbyak::Reg64 &src,
             const Xbyak::Reg64 &dst);
  void slice();
};

void ReduceKernel::init(int u) {
  switch (spec_.kind) {
  case ReduceKind::Max:
    loadCst(acc(u), -std::numeric_limits<float>::infinity());
    break;
  case ReduceKind::Min:
    loadCst(acc(u), std::numeric_limits<float>::infinity());
    break;
  default:
    vxorps(acc(u), acc(u), acc(u));
    break;
  }
  if (minMax_)
    vpxord(nanAcc(u), nanAcc(u), nanAcc(u));
}

void ReduceKernel::step(int u, const Xbyak::Address &a, bool tail) {
  Zmm dst = tail ? acc(u) | kTail_ : acc(u);
  Zmm x = tail ? load(u) | kTail_ | T_z : load(u);
  switch (spec_.kind) {
  case ReduceKind::Sum:
  case ReduceKind::Mean:
    vaddps(dst, acc(u), a);
    break;
  case ReduceKind::SumSquare:
  case ReduceKind::L2:
    vmovups(x, a);
    vfmadd231ps(acc(u), load(u), load(u));
    break;
  case ReduceKind::L1:
    vpandd(x, absMask_, a);
    vaddps(acc(u), acc(u), load(u));
    break;
  case ReduceKind::Max:
  case ReduceKind::Min:
    if (spec_.kind == ReduceKind::Max)
      vmaxps(dst, acc(u), a);
    else
      vminps(dst, acc(u), a);
    vpandd(x, absMask_, a);
    vpmaxud(nanAcc(u), nanAcc(u), load(u));
    break;
  }
}

void ReduceKernel::combine(int d, int s) {
  switch (spec_.kind) {
  case ReduceKind::Max:
    vmaxps(acc(d), acc(d), acc(s));
    break;
  case ReduceKind::Min:
    vminps(acc(d), acc(d), acc(s));
    break;
  default:
    vaddps(acc(d), acc(d), acc(s));
    break;
  }
  if (minMax_)
    vpmaxud(nanAcc(d), nanAcc(d), nanAcc(s));
}

void ReduceKernel::combineTree(int first, int count, int stride) {
  for (int w = count; w > 1;) {
    int half = (w + 1) / 2;
    for (int i = half; i < w; ++i)
      combine(first + (i - half) * stride, first + i * stride);
    w = half;
  }
}

void ReduceKernel::runRowsDivisor() {
  loadRunRows(regRows_, regRow_);
  Xbyak::Xmm x(scratch_.getIdx());
  vcvtsi2ss(x, x, regRows_);
  vbroadcastss(scratch_, x);
}

void ReduceKernel::finishLanes(int u) {
  if (spec_.kind == ReduceKind::Mean && spec_.runTimeR) {
    vdivps(acc(u), acc(u), scratch_); // runRowsDivisor's
  } else if (spec_.kind == ReduceKind::Mean && spec_.r != 1) {
    vdivps(acc(u), acc(u), cst(static_cast<float>(spec_.r)));
  } else if (spec_.kind == ReduceKind::L2) {
    vsqrtps(acc(u), acc(u));
  } else if (minMax_) {
    vpcmpud(kNan_, nanAcc(u), cstBits(kInfBits), kCmpGt);
    Zmm nan = cstReg(std::numeric_limits<float>::quiet_NaN(), scratch_);
    vmovaps(acc(u) | kNan_, nan);
  }
}

/// inner == 1: reduces the row at regSrc_ to the element at regDst_.
void ReduceKernel::rowToScalar() {
  if (spec_.runTimeR) {
    runTimeRowToScalar();
    return;
  }
  const int64_t vectors = spec_.r / kF32Lanes;
  const bool tail = spec_.r % kF32Lanes != 0;
  const int accs =
      static_cast<int>(std::clamp<int64_t>(vectors + tail, 1, kAccs));
  for (int u = 0; u < accs; ++u)
    init(u);
  Xbyak::Reg64 base = regSrc_;
  int64_t done = 0;
  if (vectors >= 2 * accs) {
    const int64_t iters = vectors / accs;
    mov(regRow_, regSrc_);
    mov(regRows_, iters);
    Xbyak::Label loop;
    alignCode(16, /*withNops=*/true);
    L(loop);
    for (int u = 0; u < accs; ++u)
      step(u, ptr[regRow_ + u * kZmmBytes], false);
    add(regRow_, accs * kZmmBytes);
    dec(regRows_);
    jnz(loop, T_NEAR);
    base = regRow_;
    done = iters * accs;
  }
  // Fewer than 2 * kAccs vectors are left: small displacements.
  for (int64_t j = done; j < vectors + tail; ++j)
    step(static_cast<int>(j % accs),
         ptr[base + static_cast<int>((j - done) * kZmmBytes)],
         tail && j == vectors);
  combineTree(0, accs, 1);
  lanesToScalar();
}

void ReduceKernel::runTimeRowToScalar() {
  init(0);
  loadRunRows(regRows_, regRow_);
  mov(regRow_, regSrc_);
  Xbyak::Label loop, tail, done;
  L(loop);
  cmp(regRows_, kF32Lanes);
  jl(tail, T_NEAR);
  step(0, ptr[regRow_], false);
  add(regRow_, kZmmBytes);
  sub(regRows_, kF32Lanes);
  jmp(loop, T_NEAR);
  L(tail);
  test(regRows_, regRows_);
  jz(done, T_NEAR);
  // The tail mask: the low (rows left) bits.
  const Xbyak::Reg32 bits = regSrcBlock_.cvt32();
  mov(bits, 1);
  shlx(bits, bits, regRows_.cvt32());
  dec(bits);
  kmovw(kTail_, bits);
  step(0, ptr[regRow_], true);
  L(done);
  lanesToScalar();
}

void ReduceKernel::lanesToScalar() {
  // Halve the live lanes until one is left; the lanes above are ignored.
  Xbyak::Xmm lo(0), hi(scratch_.getIdx());
  vextractf64x4(Xbyak::Ymm(scratch_.getIdx()), acc(0), 1);
  auto lanes = [&]() {
    if (spec_.kind == ReduceKind::Max)
      vmaxps(acc(0), acc(0), scratch_);
    else if (spec_.kind == ReduceKind::Min)
      vminps(acc(0), acc(0), scratch_);
    else
      vaddps(acc(0), acc(0), scratch_);
  };
  lanes();
  vextractf32x4(hi, acc(0), 1);
  lanes();
  vpermilps(hi, lo, 0x4E);
  lanes();
  vpermilps(hi, lo, 0xB1);
  lanes();
  if (spec_.kind == ReduceKind::Mean && spec_.runTimeR) {
    runRowsDivisor();
    vdivps(acc(0), acc(0), scratch_);
  } else if (spec_.kind == ReduceKind::Mean && spec_.r != 1) {
    vdivps(acc(0), acc(0), cst(static_cast<float>(spec_.r)));
  }
  if (spec_.kind == ReduceKind::L2)
    vsqrtps(acc(0), acc(0));
  if (minMax_) {
    // Any lane of any row vector that saw a nan makes the result nan.
    Xbyak::Label clean;
    vpcmpud(kNan_, nanAcc(0), cstBits(kInfBits), kCmpGt);
    kortestw(kNan_, kNan_);
    jz(clean, T_NEAR);
    loadCst(acc(0), std::numeric_limits<float>::quiet_NaN());
    L(clean);
  }
  vmovss(ptr[regDst_], lo);
}

/// inner > 1: `width` vectors of output columns from `dst`, the last one
/// masked when `tail`; their inputs start at `src`.
void ReduceKernel::block(int width, bool tail, const Xbyak::Reg64 &src,
                         const Xbyak::Reg64 &dst) {
  const int64_t r = spec_.r;
  const int64_t rowBytes = 4 * spec_.inner;
  const int parts = static_cast<int>(
      std::min<int64_t>(kAccs / width, std::max<int64_t>(r, 1)));
  auto id = [&](int b, int p) { return b * parts + p; };
  for (int b = 0; b < width; ++b)
    for (int p = 0; p < parts; ++p)
      init(id(b, p));
  auto row = [&](const Xbyak::Reg64 &base, int64_t disp, int p) {
    for (int b = 0; b < width; ++b)
      step(id(b, p),
           ptr[base + static_cast<int>(disp + int64_t(b) * kZmmBytes)],
           tail && b == width - 1);
  };
  const int64_t iters = r / parts;
  if (spec_.runTimeR) {
    loadRunRows(regRows_, regRow_);
    mov(regRow_, src);
    Xbyak::Label loop, singles, single, done;
    L(loop);
    cmp(regRows_, parts);
    jl(singles, T_NEAR);
    for (int p = 0; p < parts; ++p)
      row(regRow_, p * rowBytes, p);
    add(regRow_, static_cast<int>(parts * rowBytes));
    sub(regRows_, parts);
    jmp(loop, T_NEAR);
    L(singles);
    test(regRows_, regRows_);
    jz(done, T_NEAR);
    L(single);
    row(regRow_, 0, 0);
    add(regRow_, static_cast<int>(rowBytes));
    dec(regRows_);
    jnz(single, T_NEAR);
    L(done);
    if (spec_.kind == ReduceKind::Mean)
      runRowsDivisor();
  } else if (iters >= 2 && r * width > 32) {
    mov(regRow_, src);
    mov(regRows_, iters);
    Xbyak::Label loop;
    alignCode(16, /*withNops=*/true);
    L(loop);
    for (int p = 0; p < parts; ++p)
      row(regRow_, p * rowBytes, p);
    addImm(regRow_, parts * rowBytes);
    dec(regRows_);
    jnz(loop, T_NEAR);
    for (int64_t i = iters * parts; i < r; ++i)
      row(regRow_, (i - iters * parts) * rowBytes, static_cast<int>(i % parts));
  } else {
    for (int64_t i = 0; i < r; ++i)
      row(src, i * rowBytes, static_cast<int>(i % parts));
  }
  for (int b = 0; b < width; ++b) {
    combineTree(id(b, 0), parts, 1);
    finishLanes(id(b, 0));
    int disp = b * kZmmBytes;
    if (tail && b == width - 1)
      vmovups(ptr[dst + disp] | kTail_, acc(id(b, 0)));
    else
      vmovups(ptr[dst + disp], acc(id(b, 0)));
  }
}

/// One [r, inner] slice at regSrc_ to its [inner] outputs at regDst_.
void ReduceKernel::slice() {
  if (spec_.inner == 1) {
    rowToScalar();
    return;
  }
  const int64_t full = spec_.inner / kF32Lanes;
  const bool tail = spec_.inner % kF32Lanes != 0;
  const int64_t vectors = full + tail;
  const int width = static_cast<int>(std::min<int64_t>(kAccs, vectors));
  const int64_t blocks = full / width;
  const int last = static_cast<int>(full % width) + tail;
  if (blocks == 1) {
    block(width, false, regSrc_, regDst_);
  } else if (blocks > 1) {
    mov(regSrcBlock_, regSrc_);
    mov(regDstBlock_, regDst_);
    mov(regBlocks_, blocks);
    Xbyak::Label loop;
    L(loop);
    block(width, false, regSrcBlock_, regDstBlock_);
    add(regSrcBlock_, width * kZmmBytes);
    add(regDstBlock_, width * kZmmBytes);
    dec(regBlocks_);
    jnz(loop, T_NEAR);
  }
  if (last > 0) {
    int off = static_cast<int>(blocks * width * kZmmBytes);
    lea(regSrcBlock_, ptr[regSrc_ + off]);
    lea(regDstBlock_, ptr[regDst_ + off]);
    block(last, tail, regSrcBlock_, regDstBlock_);
  }
}

void ReduceKernel::generate() {
  preamble();
  if (spec_.outer > 0 && spec_.inner > 0) {
    if (minMax_ || spec_.kind == ReduceKind::L1)
      preloadConstants({kAbsMask}, {absMask_});
    const int64_t len = spec_.inner == 1 ? spec_.r : spec_.inner;
    if (len % kF32Lanes && !(spec_.inner == 1 && spec_.runTimeR)) {
      mov(eax, (1u << (len % kF32Lanes)) - 1);
      kmovw(kTail_, eax);
    }
    mov(regSrc_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_reduce_args, src))]);
    mov(regDst_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_reduce_args, dst))]);
    Xbyak::Label loop;
    if (spec_.outer > 1) {
      mov(regOuter_, spec_.outer);
      L(loop);
    }
    slice();
    if (spec_.outer > 1) {
      addImm(regSrc_, 4 * spec_.r * spec_.inner);
      addImm(regDst_, 4 * spec_.inner);
      dec(regOuter_);
      jnz(loop, T_NEAR);
    }
  }
  postamble();
}

} // namespace

Status generateReduce(const ReduceSpec &spec, std::vector<uint8_t> &code) {
  code.clear();
  MLCC_RETURN_IF_ERROR(validate(spec));
  return generateInGrowingBuffer(
      [&](std::vector<uint8_t> &buffer) {
        ReduceKernel kernel(buffer, spec);
        kernel.generate();
        return kernel.finish(spec.name, code);
      });
}

} // namespace mlcc::avx512
