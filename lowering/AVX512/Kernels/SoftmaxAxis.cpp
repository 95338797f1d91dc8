//===- SoftmaxAxis.cpp - AVX-512 softmax over a non-last axis -------------===//
//
// softmax and log_softmax of [outer, len, inner] along `len` with inner > 1
// (a segmentation net's softmax over the channels of [N, C, H, W]): the len
// elements of one softmax are inner apart, and 16 neighbouring softmaxes'
// elements are contiguous. So each vector lane is one softmax: a block of
// four vectors (64 columns) walks the len rows three times, as the row
// kernel walks its row (max; exp(x - max) stored and summed; dst *= 1 / sum,
// or (x - max) - log(sum) for log_softmax), each block's rows staying in
// L1 between the passes. Then single vectors, then the masked tail of the
// columns. Exact for the same reasons as the row kernel: exp's argument is
// <= 0, sums in f32 of len terms (the reference: double).
//
// A kernel computes `columns` of the inner ones (the rest are other
// threads' chunks, at the same strides).
//
// Register plan:
//   rsi src   rdx dst   r8 outer counter   r9 column block counter
//   r10 row counter   r11 the block's src column   rcx its dst column
//   rax scratch   zmm0-3 max   zmm4-7 sum   zmm8-19 exp lanes (x, t0, t1)
//   zmm20-23 log's temporaries   k1 tail mask
//
//===----------------------------------------------------------------------===//

#include "Normalization.h"
#include "EltwiseInjector.h"
#include "JitGenerator.h"

#include "KernelABI.h"

#include <cstddef>
#include <functional>
#include <limits>

namespace mlcc::avx512 {

namespace {

using Xbyak::Zmm;

constexpr int kBlockVectors = 4;

class SoftmaxAxisKernel : public JitGenerator {
public:
  SoftmaxAxisKernel(std::vector<uint8_t> &buffer, const SoftmaxSpec &spec)
      : JitGenerator(buffer), s_(spec), injector_(*this) {}

  void generate();

private:
  const SoftmaxSpec &s_;
  EltwiseInjector injector_;
  const Xbyak::Reg64 regArgs_ = rdi, regSrc_ = rsi, regDst_ = rdx,
                     regOuter_ = r8, regBlocks_ = r9, regRow_ = r10,
                     regSrcCol_ = r11, regDstCol_ = rcx;
  const Xbyak::Opmask kTail_ = k1;

  Zmm max(int u) const { return Zmm(u); }
  Zmm sum(int u) const { return Zmm(4 + u); }
  EltwiseLane lane(int u) const {
    EltwiseLane l;
    l.x = Zmm(8 + 3 * u);
    l.t = {Zmm(9 + 3 * u), Zmm(10 + 3 * u), Zmm(9 + 3 * u), Zmm(10 + 3 * u)};
    l.k = k2;
    return l;
  }
  int64_t rowBytes() const { return 4 * s_.inner; }

  /// body(row) for each of the len rows, row 0 first: regRow_ walks the
  /// rows' byte offsets.
  void forEachRow(const std::function<void()> &body);
  /// Softmax of `vectors` columns from the block's columns (the last one
  /// masked when `tail`).
  void block(int vectors, bool tail);
};

void SoftmaxAxisKernel::forEachRow(const std::function<void()> &body) {
  Xbyak::Label loop;
  xor_(regRow_, regRow_);
  L(loop);
  body();
  addImm(regRow_, rowBytes(), rax);
  mov(rax, s_.cols * rowBytes());
  cmp(regRow_, rax);
  jne(loop, T_NEAR);
}

void SoftmaxAxisKernel::block(int vectors, bool tail) {
  auto masked = [&](const Zmm &r, int u) {
    return tail && u == vectors - 1 ? r | kTail_ : r;
  };
  auto zeroMasked = [&](const Zmm &r, int u) {
    return tail && u == vectors - 1 ? r | kTail_ | T_z : r;
  };
  auto src = [&](int u) { return ptr[regSrcCol_ + regRow_ + kZmmBytes * u]; };
  auto dst = [&](int u) { return ptr[regDstCol_ + regRow_ + kZmmBytes * u]; };
  auto store = [&](int u, const Zmm &x) {
    if (tail && u == vectors - 1)
      vmovups(dst(u) | kTail_, x);
    else
      vmovups(dst(u), x);
  };
  const bool isLog = s_.log;

  for (int u = 0; u < vectors; ++u)
    loadCst(max(u), -std::numeric_limits<float>::infinity());
  forEachRow([&] {
    for (int u = 0; u < vectors; ++u)
      vmaxps(masked(max(u), u), max(u), src(u));
  });

  for (int u = 0; u < vectors; ++u)
    vpxord(sum(u), sum(u), sum(u));
  const EltwiseOp expOp = EltwiseOp::unary(EltwiseKind::Exp);
  forEachRow([&] {
    for (int u = 0; u < vectors; ++u) {
      EltwiseLane l = lane(u);
      vmovups(zeroMasked(l.x, u), src(u));
      vsubps(l.x, l.x, max(u));
      injector_.unary(expOp, l);
      vaddps(masked(sum(u), u), sum(u), l.x);
      if (!isLog)
        store(u, l.x);
    }
  });

  if (isLog) {
    // sum >= 1 (the max's own term): log of a positive, finite number.
    for (int u = 0; u < vectors; ++u)
      logPositive(sum(u), zmm20, zmm21, zmm22, zmm23);
    forEachRow([&] {
      for (int u = 0; u < vectors; ++u) {
        const Zmm x = lane(u).x;
        // (x - max) - log(sum), rounded twice as the reference does.
        vmovups(zeroMasked(x, u), src(u));
        vsubps(x, x, max(u));
        vsubps(x, x, sum(u));
        store(u, x);
      }
    });
    return;
  }
  for (int u = 0; u < vectors; ++u)
    vdivps(sum(u), cstReg(1.0f, zmm20), sum(u));
  forEachRow([&] {
    for (int u = 0; u < vectors; ++u) {
      const Zmm x = lane(u).x;
      vmulps(zeroMasked(x, u), sum(u), dst(u));
      store(u, x);
    }
  });
}

void SoftmaxAxisKernel::generate() {
  preamble();
  const int64_t columns = s_.columns;
  if (s_.rows > 0 && s_.cols > 0 && columns > 0) {
    mov(regSrc_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_softmax_args, src))]);
    mov(regDst_,
        ptr[regArgs_ + static_cast<int>(offsetof(mlcc_softmax_args, dst))]);
    const int64_t blocks = columns / (kBlockVectors * kF32Lanes);
    const int vectors = static_cast<int>(
        (columns - blocks * kBlockVectors * kF32Lanes) / kF32Lanes);
    const int rem = static_cast<int>(columns % kF32Lanes);
    if (rem) {
      mov(eax, (1u << rem) - 1);
      kmovw(kTail_, eax);
    }
    Xbyak::Label outer;
    mov(regOuter_, s_.rows);
    L(outer);
    mov(regSrcCol_, regSrc_);
    mov(regDstCol_, regDst_);
    if (blocks > 0) {
      Xbyak::Label loop;
      mov(regBlocks_, blocks);
      L(loop);
      block(kBlockVectors, false);
      add(regSrcCol_, kBlockVectors * kZmmBytes);
      add(regDstCol_, kBlockVectors * kZmmBytes);
      dec(regBlocks_);
      jnz(loop, T_NEAR);
    }
    if (vectors + (rem ? 1 : 0) > 0)
      block(vectors + (rem ? 1 : 0), rem != 0);
    addImm(regSrc_, s_.cols * rowBytes(), rax);
    addImm(regDst_, s_.cols * rowBytes(), rax);
    dec(regOuter_);
    jnz(outer, T_NEAR);
  }
  postamble();
}

} // namespace

Status generateSoftmaxAxis(const SoftmaxSpec &spec,
                           std::vector<uint8_t> &code) {
  return generateInGrowingBuffer([&](std::vector<uint8_t> &buffer) {
    SoftmaxAxisKernel kernel(buffer, spec);
    kernel.generate();
    return kernel.finish(spec.name, code);
  });
}

} // namespace mlcc::avx512
