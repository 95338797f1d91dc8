//===- Normalization.cpp - AVX-512 softmax and layer_norm kernels ---------===//
//
// Each row is worked in passes over its vectors of 16 columns, the last one
// masked when cols % 16 != 0 (masked lanes are neither read, by EVEX fault
// suppression, nor combined, nor written):
//   softmax      max; exp(x - max) stored and summed; dst *= 1 / sum
//   log_softmax  max; sum of exp(x - max); dst = (x - max) - log(sum)
//   layer_norm   sum; sum of (x - mean)^2; (x - mean) * rstd * gamma + beta,
//                all on x - x[0] (see layerNormRow); instance_norm is the
//                same with the row's one gamma and beta (rstd * gamma once,
//                beta broadcast from memory); with a skip input
//                (skip_layer_norm) x = src + skip, formed by the first pass,
//                which stores it to dst for the later passes of long rows
// Subtracting the max first keeps exp's argument <= 0, so no input
// overflows; the two-pass variance does not cancel as E[x^2] - E[x]^2 does.
// log(sum) has no injector op: the kernel splits sum >= 1 into 2^e m with
// vgetmantps/vgetexpps and sums a short atanh series for log(m).
// The sums run in four f32 accumulators of 16 lanes (64 partial sums, so at
// most 64 terms each for a 4096-column row) and are then added as a tree.
//
// Rows of at most kResidentVectors vectors (128 columns: the attention
// scores of BERT-base) are loaded once into registers and every pass works
// there; longer ones are read again by each pass (a 4096-column row is 16
// KiB: it stays in L1) in a loop of four vectors. Run-time cols take the
// loop path one vector at a time, the tail through a mask made from the
// call's cols (empty when they are a multiple of 16).
//
// Register plan:
//   rdi  args        rsi  src row     rdx  dst row    r8   row counter
//   rax  byte offset in the row (the loop of long rows)
//   rcx  gamma       r9   beta        r10  skip row   (layer_norm)
//   r9   bytes of the whole vectors of a row (softmax with run-time cols)
//   zmm0 max or mean (of x - x[0])   zmm1 sum, 1 / sum, log(sum) or rstd
//   zmm2-zmm5 accumulators, then scratch
//   zmm6-zmm17 four exp lanes (value and two temps each)
//   zmm18 layer_norm's pivot, x[0] of the row
//   zmm19-zmm26 the row (short rows)   the rest: preloaded constants
//   k1 tail mask     k2 the exp lanes' scratch mask
//
//===----------------------------------------------------------------------===//

#include "Normalization.h"
#include "EltwiseInjector.h"
#include "JitGenerator.h"

#include "KernelABI.h"

#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>

namespace mlcc::avx512 {

namespace {

using Xbyak::Zmm;

constexpr int kNumZmm = 32;
constexpr int kUnroll = 4;
constexpr int kResidentVectors = 8;
constexpr int kFirstRowReg = 19;
constexpr int kFirstLaneReg = 6;

enum class Kind { Softmax, LogSoftmax, LayerNorm };

/// The spec's dims (the most a call may give when they are run-time).
struct NormShape {
  int64_t rows = 0, cols = 0;
  bool runTimeRows = false, runTimeCols = false;
};

/// One vector of a row: its index, the accumulator and lane it uses, and
/// where it lies (from the loop's rax when `indexed`).
struct Vec {
  int64_t j = 0;
  int u = 0;
  bool tail = false;
  bool indexed = false;
  int disp = 0;
};

class NormKernel : public JitGenerator {
public:
  NormKernel(std::vector<uint8_t> &buffer, Kind kind, const NormShape &shape,
             float epsilon, bool skip, bool rowAffine,
             const std::vector<uint32_t> &preload)
      : JitGenerator(buffer), kind_(kind), rows_(shape.rows), cols_(shape.cols),
        runTimeRows_(shape.runTimeRows), runTimeCols_(shape.runTimeCols),
        epsilon_(epsilon), skip_(skip), rowAffine_(rowAffine),
        vectors_((cols_ + kF32Lanes - 1) / kF32Lanes),
        rem_(static_cast<int>(cols_ % kF32Lanes)),
        resident_(vectors_ <= kResidentVectors && !runTimeCols_),
        preload_(preload), injector_(*this) {}

  void generate();

  /// Registers left for constants.
  static int freeRegisters(const NormShape &shape) {
    int64_t vectors = (shape.cols + kF32Lanes - 1) / kF32Lanes;
    return vectors <= kResidentVectors && !shape.runTimeCols
               ? kNumZmm - kFirstRowReg - kResidentVectors
               : kNumZmm - kFirstRowReg;
  }

private:
  const Kind kind_;
  const int64_t rows_, cols_;
  const bool runTimeRows_, runTimeCols_;
  const float epsilon_;
  const bool skip_;
  const bool rowAffine_;
  const int64_t vectors_;
  const int rem_;
  const bool resident_;
  const std::vector<uint32_t> preload_;
  EltwiseInjector injector_;

  const Xbyak::Reg64 regArgs_ = rdi, regSrc_ = rsi, regDst_ = rdx,
                     regRows_ = r8, regOff_ = rax, regGamma_ = rcx,
                     regBeta_ = r9, regSkip_ = r10, regWholeBytes_ = r9;
  const Zmm stat0_ = zmm0, stat1_ = zmm1, pivot_ = zmm18;
  const Xbyak::Opmask kTail_ = k1;

  Zmm acc(int u) const { return Zmm(2 + u); }
  Zmm rowReg(int64_t j) const {
    return Zmm(kFirstRowReg + static_cast<int>(j));
  }
  EltwiseLane lane(int u) const {
    int base = kFirstLaneReg + 3 * u;
    EltwiseLane l;
    l.x = Zmm(base);
    l.t = {Zmm(base + 1), Zmm(base + 2), Zmm(base + 1), Zmm(base + 2)};
    l.k = k2;
    return l;
  }
  Xbyak::Address mem(const Xbyak::Reg64 &base, const Vec &v) {
    return v.indexed ? ptr[base + regOff_ + v.disp] : ptr[base + v.disp];
  }
  /// `r` masked to the row's columns on the tail vector.
  Zmm masked(const Zmm &r, const Vec &v) { return v.tail ? r | kTail_ : r; }
  Zmm zeroMasked(const Zmm &r, const Vec &v) {
    return v.tail ? r | kTail_ | T_z : r;
  }
  /// The vector's input in a register: the row register (short rows, where
  /// the first pass loaded it) or `scratch`, loaded now.
  Zmm input(const Vec &v, const Zmm &scratch) {
    if (resident_)
      return rowReg(v.j);
    vmovups(zeroMasked(scratch, v), mem(regSrc_, v));
    return scratch;
  }
  /// layer_norm: x - x[0] in a register: the row register (short rows) or
  /// `scratch`, computed now from src, or from dst where the first pass
  /// stored src + skip.
  Zmm shifted(const Vec &v, const Zmm &scratch) {
    if (resident_)
      return rowReg(v.j);
    vmovups(zeroMasked(scratch, v), mem(skip_ ? regDst_ : regSrc_, v));
    vsubps(scratch, scratch, pivot_);
    return scratch;
  }
  void store(const Vec &v, const Zmm &value) {
    vmovups(v.tail ? mem(regDst_, v) | kTail_ : mem(regDst_, v), value);
  }

  void forEachVector(const std::function<void(const Vec &)> &body);
  /// forEachVector over the call's cols.
  void forEachRunTimeVector(const std::function<void(const Vec &)> &body);
  /// Loads args->rows (args->cols) into r8 (r9 and the tail mask), clamped
  /// to the spec's.
  void loadRunTimeRows(int offset);
  void loadRunTimeCols(int offset);
  /// Every lane of `dst` = max (or sum) of the lanes of accumulators 0-3.
  void reduce(const Zmm &dst, bool max);
  void initAccs(float v) {
    loadCst(acc(0), v);
    for (int u = 1; u < kUnroll; ++u)
      vmovaps(acc(u), acc(0));
  }
  /// x = log(x) for x >= 1, in every lane; clobbers zmm2-zmm5.
  void log(const Zmm &x);

  void row();
  void softmaxRow();
  void layerNormRow();
};

void NormKernel::forEachRunTimeVector(
    const std::function<void(const Vec &)> &body) {
  Xbyak::Label loop, tail;
  xor_(eax, eax);
  test(regWholeBytes_, regWholeBytes_);
  jz(tail, T_NEAR);
  L(loop);
  Vec v;
  v.indexed = true;
  body(v);
  add(regOff_, kZmmBytes);
  cmp(regOff_, regWholeBytes_);
  jne(loop, T_NEAR);
  L(tail);
  v.u = 1; // the tail's own accumulator
  v.tail = true;
  body(v);
}

void NormKernel::loadRunTimeRows(int offset) {
  loadAtMost(regRows_, ptr[regArgs_ + offset], rows_, regOff_);
}

void NormKernel::loadRunTimeCols(int offset) {
  loadAtMost(regWholeBytes_, ptr[regArgs_ + offset], cols_, regOff_);
  xor_(eax, eax);
  test(regWholeBytes_, regWholeBytes_);
  cmovl(regWholeBytes_, rax); // fewer than none: none
  // The tail mask, (1 << cols % 16) - 1, then the whole vectors' bytes.
  mov(ecx, Xbyak::Reg32(regWholeBytes_.getIdx()));
  and_(ecx, kF32Lanes - 1);
  mov(eax, 1);
  shl(eax, cl);
  dec(eax);
  kmovw(kTail_, eax);
  and_(regWholeBytes_, -kF32Lanes);
  shl(regWholeBytes_, 2);
}

void NormKernel::forEachVector(const std::function<void(const Vec &)> &body) {
  if (runTimeCols_) {
    forEachRunTimeVector(body);
    return;
  }
  if (resident_) {
    for (int64_t j = 0; j < vectors_; ++j) {
      Vec v;
      v.j = j;
      v.u = static_cast<int>(j % kUnroll);
      v.tail = rem_ && j == vectors_ - 1;
      v.disp = static_cast<int>(j * kZmmBytes);
      body(v);
    }
    return;
  }
  const int64_t full = cols_ / kF32Lanes;
  const int64_t iters = full / kUnroll;
  if (iters > 0) {
    xor_(eax, eax);
    Xbyak::Label loop;
    alignCode(16, /*withNops=*/true);
    L(loop);
    for (int u = 0; u < kUnroll; ++u) {
      Vec v;
      v.u = u;
      v.indexed = true;
      v.disp = u * kZmmBytes;
      body(v);
    }
    add(regOff_, kUnroll * kZmmBytes);
    cmp(regOff_, static_cast<uint32_t>(iters * kUnroll * kZmmBytes));
    jne(loop, T_NEAR);
  }
  for (int64_t j = iters * kUnroll; j < vectors_; ++j) {
    Vec v;
    v.j = j;
    v.u = static_cast<int>(j % kUnroll);
    v.tail = j == full;
    v.disp = static_cast<int>(j * kZmmBytes);
    body(v);
  }
}

void NormKernel::reduce(const Zmm &dst, bool max) {
  auto op = [&](const Zmm &d, const Zmm &a, const Zmm &b) {
    if (max)
      vmaxps(d, a, b);
    else
      vaddps(d, a, b);
  };
  op(acc(0), acc(0), acc(1));
  op(acc(2), acc(2), acc(3));
  op(dst, acc(0), acc(2));
  // Swap halves, then quarters, pairs and neighbours: every lane ends with
  // the total.
  const Zmm t = acc(1);
  vshuff32x4(t, dst, dst, 0x4E);
  op(dst, dst, t);
  vshuff32x4(t, dst, dst, 0xB1);
  op(dst, dst, t);
  vpermilps(t, dst, 0x4E);
  op(dst, dst, t);
  vpermilps(t, dst, 0xB1);
  op(dst, dst, t);
}

void NormKernel::log(const Zmm &x) {
  logPositive(x, zmm2, zmm3, zmm4, zmm5);
}

void NormKernel::softmaxRow() {
  const bool isLog = kind_ == Kind::LogSoftmax;
  initAccs(-std::numeric_limits<float>::infinity());
  forEachVector([&](const Vec &v) {
    if (resident_) {
      vmovups(zeroMasked(rowReg(v.j), v), mem(regSrc_, v));
      vmaxps(masked(acc(v.u), v), acc(v.u), rowReg(v.j));
    } else {
      vmaxps(masked(acc(v.u), v), acc(v.u), mem(regSrc_, v));
    }
  });
  reduce(stat0_, /*max=*/true);

  initAccs(0.0f);
  const EltwiseOp expOp = EltwiseOp::unary(EltwiseKind::Exp);
  forEachVector([&](const Vec &v) {
    EltwiseLane l = lane(v.u);
    if (resident_ && !isLog)
      l.x = rowReg(v.j); // the exponentials replace the row
    vsubps(l.x, input(v, l.x), stat0_);
    injector_.unary(expOp, l);
    vaddps(masked(acc(v.u), v), acc(v.u), l.x);
    if (!resident_ && !isLog)
      store(v, l.x);
  });
  reduce(stat1_, /*max=*/false);

  if (isLog) {
    log(stat1_);
    forEachVector([&](const Vec &v) {
      const Zmm x = lane(v.u).x;
      // (x - max) - log(sum), rounded twice as the reference does: a
      // rounded max + log(sum) would lose the small outputs' digits.
      vsubps(x, input(v, x), stat0_);
      vsubps(x, x, stat1_);
      store(v, x);
    });
    return;
  }
  vdivps(stat1_, cstReg(1.0f, acc(0)), stat1_);
  forEachVector([&](const Vec &v) {
    if (resident_) {
      vmulps(rowReg(v.j), rowReg(v.j), stat1_);
      store(v, rowReg(v.j));
      return;
    }
    const Zmm x = lane(v.u).x;
    vmulps(zeroMasked(x, v), stat1_, mem(regDst_, v));
    store(v, x);
  });
}

void NormKernel::layerNormRow() {
  // Statistics of x - x[0]: the differences are exact or nearly (Sterbenz)
  // and small, so an offset row (x = 80 + noise) keeps its noise's digits,
  // which a mean of 80.xx rounded to f32 would not.
  if (skip_) {
    const Xbyak::Xmm first = Xbyak::Xmm(pivot_.getIdx());
    vmovss(first, ptr[regSrc_]);
    vaddss(first, first, ptr[regSkip_]);
    vbroadcastss(pivot_, first);
  } else {
    vbroadcastss(pivot_, ptr[regSrc_]);
  }
  initAccs(0.0f);
  forEachVector([&](const Vec &v) {
    Zmm d = resident_ ? rowReg(v.j) : lane(v.u).x;
    vmovups(zeroMasked(d, v), mem(regSrc_, v));
    if (skip_) {
      // Rounded once, as the add the op replaces rounds it.
      vaddps(zeroMasked(d, v), d, mem(regSkip_, v));
      if (!resident_)
        store(v, d);
    }
    vsubps(zeroMasked(d, v), d, pivot_); // masked lanes stay 0
    vaddps(acc(v.u), acc(v.u), d);
  });
  reduce(stat0_, /*max=*/false);
  vdivps(stat0_, stat0_, cst(static_cast<float>(cols_)));

  initAccs(0.0f);
  forEachVector([&](const Vec &v) {
    const Zmm d = lane(v.u).x;
    vsubps(d, shifted(v, d), stat0_);
    vfmadd231ps(masked(acc(v.u), v), d, d);
  });
  reduce(stat1_, /*max=*/false);
  vdivps(stat1_, stat1_, cst(static_cast<float>(cols_)));
  vaddps(stat1_, stat1_, cst(epsilon_));
  vsqrtps(stat1_, stat1_);
  vdivps(stat1_, cstReg(1.0f, acc(0)), stat1_);

  if (rowAffine_) {
    vmulps(stat1_, stat1_, ptr_b[regGamma_]);
    forEachVector([&](const Vec &v) {
      EltwiseLane l = lane(v.u);
      vsubps(l.x, shifted(v, l.x), stat0_);
      vfmadd213ps(zeroMasked(l.x, v), stat1_, ptr_b[regBeta_]);
      store(v, l.x);
    });
    return;
  }
  forEachVector([&](const Vec &v) {
    EltwiseLane l = lane(v.u);
    vsubps(l.x, shifted(v, l.x), stat0_);
    vmulps(l.x, l.x, stat1_);
    vmovups(zeroMasked(l.t[0], v), mem(regGamma_, v));
    vfmadd213ps(zeroMasked(l.x, v), l.t[0], mem(regBeta_, v));
    store(v, l.x);
  });
}

void NormKernel::generate() {
  preamble();
  std::vector<Zmm> constRegs;
  for (int r = kNumZmm - 1;
       r >= kNumZmm - freeRegisters({rows_, cols_, false, runTimeCols_}); --r)
    constRegs.push_back(Zmm(r));
  preloadConstants(preload_, constRegs);
  Xbyak::Label done;
  if (rows_ > 0 && cols_ > 0) {
    if (kind_ == Kind::LayerNorm) {
      mov(regSrc_, ptr[regArgs_ +
                       static_cast<int>(offsetof(mlcc_layer_norm_args, src))]);
      mov(regGamma_, ptr[regArgs_ + static_cast<int>(offsetof(
                                        mlcc_layer_norm_args, gamma))]);
      mov(regBeta_, ptr[regArgs_ + static_cast<int>(
                                       offsetof(mlcc_layer_norm_args, beta))]);
      mov(regDst_, ptr[regArgs_ +
                       static_cast<int>(offsetof(mlcc_layer_norm_args, dst))]);
      if (skip_)
        mov(regSkip_, ptr[regArgs_ + static_cast<int>(offsetof(
                                         mlcc_layer_norm_args, skip))]);
    } else {
      mov(regSrc_,
          ptr[regArgs_ + static_cast<int>(offsetof(mlcc_softmax_args, src))]);
      mov(regDst_,
          ptr[regArgs_ + static_cast<int>(offsetof(mlcc_softmax_args, dst))]);
    }
    if (runTimeCols_) {
      loadRunTimeCols(offsetof(mlcc_softmax_args, cols));
    } else if (rem_) {
      mov(eax, (1u << rem_) - 1);
      kmovw(kTail_, eax);
    }
    if (runTimeRows_) {
      loadRunTimeRows(kind_ == Kind::LayerNorm
                          ? offsetof(mlcc_layer_norm_args, rows)
                          : offsetof(mlcc_softmax_args, rows));
      test(regRows_, regRows_);
      jle(done, T_NEAR);
    } else {
      mov(regRows_, rows_);
    }
    Xbyak::Label loop;
    L(loop);
    if (kind_ == Kind::LayerNorm)
      layerNormRow();
    else
      softmaxRow();
    add(regSrc_, static_cast<uint32_t>(4 * cols_));
    add(regDst_, static_cast<uint32_t>(4 * cols_));
    if (skip_)
      add(regSkip_, static_cast<uint32_t>(4 * cols_));
    if (rowAffine_) {
      add(regGamma_, 4);
      add(regBeta_, 4);
    }
    dec(regRows_);
    jnz(loop, T_NEAR);
  }
  L(done);
  postamble();
}

Status validate(const std::string &name, DType dtype, int64_t rows,
                int64_t cols) {
  MLCC_CHECK(dtype == DType::F32, name, ": normalization kernels take f32 ",
             "only, not ", ref::dtypeName(dtype));
  MLCC_CHECK(rows >= 0 && cols >= 0, name, ": shape [", rows, ", ", cols,
             "] has a negative dim");
  MLCC_CHECK(cols <= kMaxNormalizationCols, name, ": rows of ", cols,
             " columns are too long, at most ", kMaxNormalizationCols);
  return Status::success();
}

/// Generates into a scratch buffer, growing it until the code fits. Returns
/// the constants by use when `usage` is set.
Status emit(const std::string &name, Kind kind, const NormShape &shape,
            float epsilon, bool skip, bool rowAffine,
            const std::vector<uint32_t> &preload, std::vector<uint8_t> &code,
            std::vector<uint32_t> *usage) {
  return generateInGrowingBuffer([&](std::vector<uint8_t> &buffer) {
    NormKernel kernel(buffer, kind, shape, epsilon, skip, rowAffine, preload);
    kernel.generate();
    MLCC_RETURN_IF_ERROR(kernel.finish(name, code));
    if (usage)
      *usage = kernel.constantsByUse();
    return Status::success();
  });
}

Status generateNorm(const std::string &name, Kind kind, const NormShape &shape,
                    float epsilon, bool skip, bool rowAffine,
                    std::vector<uint8_t> &code) {
  // First pass: which constants the code asks for, most used (the exp in
  // the loops) first; the second keeps those in the spare registers.
  std::vector<uint32_t> preload;
  std::vector<uint8_t> scratch;
  MLCC_RETURN_IF_ERROR(
      emit(name, kind, shape, epsilon, skip, rowAffine, {}, scratch, &preload));
  size_t spare = static_cast<size_t>(NormKernel::freeRegisters(shape));
  if (preload.size() > spare)
    preload.resize(spare);
  return emit(name, kind, shape, epsilon, skip, rowAffine, preload, code,
              nullptr);
}

} // namespace

// SoftmaxAxis.cpp: the kernel for inner > 1.
Status generateSoftmaxAxis(const SoftmaxSpec &spec, std::vector<uint8_t> &code);

Status generateSoftmax(const SoftmaxSpec &spec, std::vector<uint8_t> &code) {
  code.clear();
  MLCC_RETURN_IF_ERROR(validate(spec.name, spec.dtype, spec.rows, spec.cols));
  if (spec.inner != 1) {
    MLCC_CHECK(spec.inner > 1 && spec.columns >= 0 &&
                   spec.columns <= spec.inner,
               spec.name, ": inner ", spec.inner, " and columns ",
               spec.columns, " are not 1 <= columns <= inner");
    MLCC_CHECK(!spec.runTimeRows && !spec.runTimeCols, spec.name,
               ": a softmax over a non-last axis has static dims");
    MLCC_CHECK(spec.cols * spec.inner <= kMaxNormalizationCols, spec.name,
               ": [", spec.cols, ", ", spec.inner, "] blocks are too big");
    SoftmaxSpec all = spec;
    if (all.columns == 0)
      all.columns = all.inner;
    return generateSoftmaxAxis(all, code);
  }
  return generateNorm(
      spec.name, spec.log ? Kind::LogSoftmax : Kind::Softmax,
      {spec.rows, spec.cols, spec.runTimeRows, spec.runTimeCols}, 0.0f,
      /*skip=*/false, /*rowAffine=*/false, code);
}

Status generateLayerNorm(const LayerNormSpec &spec,
                         std::vector<uint8_t> &code) {
  code.clear();
  MLCC_RETURN_IF_ERROR(validate(spec.name, spec.dtype, spec.rows, spec.cols));
  MLCC_CHECK(std::isfinite(spec.epsilon) && spec.epsilon >= 0.0f, spec.name,
             ": epsilon ", spec.epsilon, " must be finite and >= 0");
  return generateNorm(spec.name, Kind::LayerNorm,
                      {spec.rows, spec.cols, spec.runTimeRows, false},
                      spec.epsilon, spec.skip, spec.rowAffine, code);
}

} // namespace mlcc::avx512
