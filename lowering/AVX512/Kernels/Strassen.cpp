//===- Strassen.cpp - The sums of a one-level Strassen-Winograd GEMM ------===//
//
// Both kernels stream: each element is loaded once per term and stored
// once, so they run at the bandwidth of the cache the blocks are in. The
// sums read A's four blocks together: one pass over A writes all four S.
//
// Registers, sums: rsi A's row (top left block), rdx S1's row, rcx rows
// left, rax the column's byte offset; zmm0-3 A11, A12, A21, A22, zmm4-7 S1
// to S4.
// Combine: rdx dst, r8 the bias of the group of columns, r9-r12 the terms'
// rows, rcx rows left; zmm0-3 a group of four columns' sums, the
// epilogue's scratch above.
//
//===----------------------------------------------------------------------===//

#include "Strassen.h"
#include "EltwiseInjector.h"
#include "JitGenerator.h"

#include "KernelABI.h"

#include <algorithm>
#include <cstddef>
#include <limits>

namespace mlcc::avx512 {

namespace {

constexpr int kGroupVectors = 4;

bool fitsOffset(int64_t bytes) {
  return bytes >= 0 && bytes <= std::numeric_limits<int32_t>::max();
}

class StrassenSumsKernel : public JitGenerator {
public:
  StrassenSumsKernel(std::vector<uint8_t> &buffer, const StrassenSumsSpec &spec)
      : JitGenerator(buffer), spec_(spec) {}

  void generate() {
    preamble();
    auto field = [&](size_t offset) {
      return ptr[rdi + static_cast<int>(offset)];
    };
    Xbyak::Label done, row, col;
    mov(rsi, field(offsetof(mlcc_strassen_sums_args, a)));
    mov(rdx, field(offsetof(mlcc_strassen_sums_args, s)));
    loadAtMost(rcx, field(offsetof(mlcc_strassen_sums_args, rows)), spec_.m,
               rax);
    test(rcx, rcx);
    jle(done, T_NEAR);
    const int k4 = static_cast<int>(spec_.k * 4);
    const int down = static_cast<int>(spec_.m * spec_.lda * 4);
    const int block = static_cast<int>(spec_.m * spec_.k * 4);
    L(row);
    xor_(eax, eax);
    L(col);
    vmovups(zmm0, ptr[rsi + rax]);
    vmovups(zmm1, ptr[rsi + rax + k4]);
    vmovups(zmm2, ptr[rsi + rax + down]);
    vmovups(zmm3, ptr[rsi + rax + down + k4]);
    vaddps(zmm4, zmm2, zmm3); // S1 = A21 + A22
    vsubps(zmm5, zmm4, zmm0); // S2 = S1 - A11
    vsubps(zmm6, zmm0, zmm2); // S3 = A11 - A21
    vsubps(zmm7, zmm1, zmm5); // S4 = A12 - S2
    for (int s = 0; s < 4; ++s)
      vmovups(ptr[rdx + rax + s * block], Xbyak::Zmm(4 + s));
    add(rax, kZmmBytes);
    cmp(rax, k4);
    jl(col, T_NEAR);
    add(rsi, static_cast<int>(spec_.lda * 4));
    add(rdx, k4);
    dec(rcx);
    jnz(row, T_NEAR);
    L(done);
    postamble();
  }

private:
  const StrassenSumsSpec &spec_;
};

class StrassenCombineKernel : public JitGenerator {
public:
  StrassenCombineKernel(std::vector<uint8_t> &buffer,
                        const StrassenCombineSpec &spec)
      : JitGenerator(buffer), spec_(spec), injector_(*this) {}

  void generate() {
    preamble({r12});
    auto field = [&](size_t offset) {
      return ptr[rdi + static_cast<int>(offset)];
    };
    const int terms = static_cast<int>(spec_.signs.size());
    mov(rdx, field(offsetof(mlcc_strassen_combine_args, dst)));
    for (int t = 0; t < terms; ++t)
      mov(term(t), field(offsetof(mlcc_strassen_combine_args, terms) + t * 8));
    Xbyak::Label row;
    mov(rcx, spec_.rows);
    L(row);
    mov(r8, field(offsetof(mlcc_strassen_combine_args, bias)));
    const int64_t vectors = spec_.cols / kF32Lanes;
    for (int64_t first = 0; first < vectors; first += kGroupVectors) {
      const int count =
          static_cast<int>(std::min<int64_t>(kGroupVectors, vectors - first));
      for (int j = 0; j < count; ++j) {
        const int offset = static_cast<int>((first + j) * kZmmBytes);
        Xbyak::Zmm x(j);
        vmovups(x, ptr[term(0) + offset]);
        for (int t = 1; t < terms; ++t)
          if (spec_.signs[t] > 0)
            vaddps(x, x, ptr[term(t) + offset]);
          else
            vsubps(x, x, ptr[term(t) + offset]);
      }
      injector_.blockEpilogue(spec_.epilogue, 1, count,
                              spec_.bias ? &r8 : nullptr, false, k1);
      for (int j = 0; j < count; ++j)
        vmovups(ptr[rdx + static_cast<int>((first + j) * kZmmBytes)],
                Xbyak::Zmm(j));
      if (spec_.bias)
        add(r8, count * kZmmBytes);
    }
    const int ld4 = static_cast<int>(spec_.ld * 4);
    add(rdx, ld4);
    for (int t = 0; t < terms; ++t)
      add(term(t), ld4);
    dec(rcx);
    jnz(row, T_NEAR);
    postamble();
  }

private:
  const StrassenCombineSpec &spec_;
  EltwiseInjector injector_;

  static Xbyak::Reg64 term(int t) {
    static const Xbyak::Reg64 regs[] = {
        Xbyak::Reg64(Xbyak::Operand::R9), Xbyak::Reg64(Xbyak::Operand::R10),
        Xbyak::Reg64(Xbyak::Operand::R11), Xbyak::Reg64(Xbyak::Operand::R12)};
    return regs[t];
  }
};

} // namespace

ref::Status generateStrassenSums(const StrassenSumsSpec &spec,
                                 std::vector<uint8_t> &code) {
  code.clear();
  MLCC_CHECK(spec.m > 0 && spec.k > 0 && spec.k % kF32Lanes == 0 &&
                 spec.lda >= 2 * spec.k,
             spec.name, ": blocks of ", spec.m, " x ", spec.k, " (lda ",
             spec.lda, ") are not whole vectors of A's halves");
  MLCC_CHECK(fitsOffset(2 * spec.m * spec.lda * 4) &&
                 fitsOffset(4 * spec.m * spec.k * 4),
             spec.name, ": the blocks are too large for 31-bit offsets");
  return generateInGrowingBuffer([&](std::vector<uint8_t> &buffer) {
    StrassenSumsKernel kernel(buffer, spec);
    kernel.generate();
    return kernel.finish(spec.name, code);
  });
}

ref::Status generateStrassenCombine(const StrassenCombineSpec &spec,
                                    std::vector<uint8_t> &code) {
  code.clear();
  const size_t terms = spec.signs.size();
  MLCC_CHECK(spec.rows > 0 && spec.cols > 0 && spec.cols % kF32Lanes == 0 &&
                 spec.ld >= spec.cols && fitsOffset(spec.ld * 4) &&
                 fitsOffset(spec.cols * 4),
             spec.name, ": ", spec.rows, " x ", spec.cols, " (ld ", spec.ld,
             ") is not a block of whole vectors");
  MLCC_CHECK(terms >= 1 && terms <= 4 && spec.signs[0] == 1, spec.name,
             ": one to four terms, the first added");
  for (const EltwiseOp &op : spec.epilogue)
    MLCC_CHECK(!isBinary(op.kind) &&
                   EltwiseInjector::tempsNeeded(op) <= 32 - kGroupVectors,
               spec.name, ": the epilogue takes unary ops only");
  return generateInGrowingBuffer([&](std::vector<uint8_t> &buffer) {
    StrassenCombineKernel kernel(buffer, spec);
    kernel.generate();
    return kernel.finish(spec.name, code);
  });
}

} // namespace mlcc::avx512
