//===- JitGenerator.cpp - Base of the AVX-512 kernel generators -----------===//
//
// Constant pool, preamble/postamble and error reporting shared by every
// kernel generator.
//
//===----------------------------------------------------------------------===//

#include "JitGenerator.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace mlcc::avx512 {

uint32_t floatBits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits;
}

JitGenerator::JitGenerator(std::vector<uint8_t> &buffer)
    : Xbyak::CodeGenerator(buffer.size(), buffer.data()) {}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

size_t JitGenerator::poolSlot(uint32_t bits) {
  auto [it, inserted] = poolIndex_.try_emplace(bits, poolValues_.size());
  if (inserted)
    poolValues_.push_back(bits);
  return it->second;
}

Xbyak::Address JitGenerator::poolAddress(uint32_t bits) {
  return dword[rip + pool_ + static_cast<int>(4 * poolSlot(bits))];
}

const Xbyak::Operand &JitGenerator::cstBits(uint32_t bits) {
  auto [use, inserted] = uses_.try_emplace(bits, 0, uses_.size());
  ++use->second.first;
  if (auto reg = preloaded_.find(bits); reg != preloaded_.end())
    return reg->second;
  auto it = poolOperands_.find(bits);
  if (it == poolOperands_.end()) {
    Xbyak::Address a =
        ptr_b[rip + pool_ + static_cast<int>(4 * poolSlot(bits))];
    it = poolOperands_.emplace(bits, a).first;
  }
  return it->second;
}

const Xbyak::Operand &JitGenerator::cst(float v) {
  return cstBits(floatBits(v));
}

Xbyak::Zmm JitGenerator::cstReg(float v, const Xbyak::Zmm &scratch) {
  const Xbyak::Operand &op = cst(v);
  if (op.isZMM())
    return Xbyak::Zmm(op.getIdx());
  vbroadcastss(scratch, poolAddress(floatBits(v)));
  return scratch;
}

void JitGenerator::loadCst(const Xbyak::Zmm &dst, float v) {
  const Xbyak::Operand &op = cst(v);
  if (op.isZMM())
    vmovaps(dst, op);
  else
    vbroadcastss(dst, poolAddress(floatBits(v)));
}

void JitGenerator::loadAtMost(const Xbyak::Reg64 &dst,
                              const Xbyak::Address &field, int64_t most,
                              const Xbyak::Reg64 &scratch) {
  mov(dst, field);
  mov(scratch, most);
  cmp(dst, scratch);
  cmovg(dst, scratch);
}

void JitGenerator::runTimeRowLoop(const Xbyak::Reg64 &rows, int block,
                                  const std::function<void(int)> &emitRows,
                                  const std::function<void()> &advance) {
  Xbyak::Label loop, tails, done;
  L(loop);
  cmp(rows, block);
  jl(tails, T_NEAR);
  emitRows(block);
  advance();
  sub(rows, block);
  jmp(loop, T_NEAR);
  L(tails);
  for (int tail = 1; tail < block; ++tail) {
    Xbyak::Label next;
    cmp(rows, tail);
    jne(next, T_NEAR);
    emitRows(tail);
    jmp(done, T_NEAR);
    L(next);
  }
  L(done); // no rows left (or fewer than none)
}

void JitGenerator::preloadConstants(const std::vector<uint32_t> &constants,
                                    const std::vector<Xbyak::Zmm> &regs) {
  for (size_t i = 0; i < constants.size() && i < regs.size(); ++i) {
    vbroadcastss(regs[i], poolAddress(constants[i]));
    preloaded_.emplace(constants[i], regs[i]);
  }
}

std::vector<uint32_t> JitGenerator::constantsByUse() const {
  std::vector<std::pair<uint32_t, std::pair<int, size_t>>> all(uses_.begin(),
                                                               uses_.end());
  std::sort(all.begin(), all.end(), [](const auto &a, const auto &b) {
    if (a.second.first != b.second.first)
      return a.second.first > b.second.first;
    return a.second.second < b.second.second;
  });
  std::vector<uint32_t> out;
  for (const auto &entry : all)
    out.push_back(entry.first);
  return out;
}

//===----------------------------------------------------------------------===//
// ABI
//===----------------------------------------------------------------------===//

void JitGenerator::preamble(const std::vector<Xbyak::Reg64> &calleeSaved) {
  saved_ = calleeSaved;
  for (const Xbyak::Reg64 &r : saved_)
    push(r);
}

void JitGenerator::postamble() {
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it)
    pop(*it);
  vzeroupper();
  ret();
  if (poolValues_.empty())
    return;
  // int3 padding: nothing jumps here, and a stray jump would trap.
  alignCode(kZmmBytes, /*withNops=*/false);
  L(pool_);
  for (uint32_t bits : poolValues_)
    dd(bits);
}

// log(x) = e ln2 + log(m) with x = 2^e m, m in [3/4, 3/2) from vgetmantps;
// log(m) = 2 atanh(f), f = (m - 1) / (m + 1), |f| <= 0.2, where the series
// 2 (f + f^3/3 + ... + f^13/13) is within 5e-12 of it. ln2 is split in two
// so that e ln2 + log(m) rounds once.
void JitGenerator::logPositive(const Xbyak::Zmm &x, const Xbyak::Zmm &m,
                               const Xbyak::Zmm &e, const Xbyak::Zmm &f,
                               const Xbyak::Zmm &f2) {
  constexpr float kLn2Hi = 6.93147182e-01f;
  constexpr float kLn2Lo = -1.90465430e-09f;
  constexpr uint8_t kMantThreeQuarters = 0x03; // [3/4, 3/2), x's sign
  vgetmantps(m, x, kMantThreeQuarters);
  vdivps(e, x, m); // 2^e exactly: m has x's mantissa bits
  vgetexpps(e, e);
  vsubps(f, m, cst(1.0f));
  vaddps(m, m, cst(1.0f));
  vdivps(f, f, m);
  vmulps(f2, f, f);
  // 2/13 + f2 (2/11 + ... f2 (2/3 + f2 ...)), then * f2 + 2, then * f.
  const float coeffs[] = {2.0f / 11, 2.0f / 9, 2.0f / 7,
                          2.0f / 5,  2.0f / 3, 2.0f};
  loadCst(m, 2.0f / 13);
  for (float c : coeffs)
    vfmadd213ps(m, f2, cst(c));
  vmulps(m, m, f);
  vfmadd231ps(m, e, cst(kLn2Lo));
  loadCst(f, kLn2Hi);
  vfmadd213ps(e, f, m);
  vmovaps(x, e);
}

void JitGenerator::addImm(const Xbyak::Reg64 &r, int64_t v,
                          const Xbyak::Reg64 &scratch) {
  if (v == 0)
    return;
  if (v >= INT32_MIN && v <= INT32_MAX) {
    add(r, static_cast<uint32_t>(v));
  } else {
    mov(scratch, v);
    add(r, scratch);
  }
}

void JitGenerator::alignCode(size_t alignment, bool withNops) {
  size_t pad = (alignment - getSize() % alignment) % alignment;
  if (withNops)
    nop(pad);
  else
    for (size_t i = 0; i < pad; ++i)
      db(0xCC);
}

Status JitGenerator::finish(const std::string &what,
                            std::vector<uint8_t> &code) const {
  if (int err = Xbyak::GetError())
    return Status::error(
        what, ": code generation failed: ", Xbyak::ConvertErrorToString(err));
  if (hasUndefinedLabel())
    return Status::error(what, ": code generation failed: undefined label");
  code.assign(getCode(), getCode() + getSize());
  return Status::success();
}

// Four rounds of shuffles (the 32-bit, 64-bit and two 128-bit interleaves),
// renaming registers instead of moving them.
void JitGenerator::transpose16x16(std::array<int, 16> &r, int &spare) {
  using Xbyak::Zmm;
  // 32-bit interleave of pixel pairs.
  for (int k = 0; k < 8; ++k) {
    int a = r[2 * k], b = r[2 * k + 1];
    vunpcklps(Zmm(spare), Zmm(a), Zmm(b));
    vunpckhps(Zmm(b), Zmm(a), Zmm(b));
    r[2 * k] = spare;
    spare = a;
  }
  // 64-bit interleave: s[m][q] lane L = channel 4L + q, pixels 4m..4m+3.
  int s[4][4];
  for (int m = 0; m < 4; ++m) {
    int a0 = r[4 * m], b0 = r[4 * m + 1], a1 = r[4 * m + 2], b1 = r[4 * m + 3];
    vunpcklpd(Zmm(spare), Zmm(a0), Zmm(a1));
    vunpckhpd(Zmm(a1), Zmm(a0), Zmm(a1));
    vunpcklpd(Zmm(a0), Zmm(b0), Zmm(b1));
    vunpckhpd(Zmm(b1), Zmm(b0), Zmm(b1));
    s[m][0] = spare;
    s[m][1] = a1;
    s[m][2] = a0;
    s[m][3] = b1;
    spare = b0;
  }
  // 4 x 4 transposes of 128-bit blocks: channel 4L + q gets, as its block
  // m, block L of s[m][q].
  for (int q = 0; q < 4; ++q) {
    int a = s[0][q], b = s[1][q], c = s[2][q], d = s[3][q];
    int t = spare;
    vshuff32x4(Zmm(t), Zmm(a), Zmm(b), 0x44);
    vshuff32x4(Zmm(b), Zmm(a), Zmm(b), 0xEE);
    vshuff32x4(Zmm(a), Zmm(c), Zmm(d), 0x44);
    vshuff32x4(Zmm(d), Zmm(c), Zmm(d), 0xEE);
    vshuff32x4(Zmm(c), Zmm(t), Zmm(a), 0x88);
    vshuff32x4(Zmm(a), Zmm(t), Zmm(a), 0xDD);
    vshuff32x4(Zmm(t), Zmm(b), Zmm(d), 0x88);
    vshuff32x4(Zmm(d), Zmm(b), Zmm(d), 0xDD);
    r[q] = c;
    r[4 + q] = a;
    r[8 + q] = t;
    r[12 + q] = d;
    spare = b;
  }
}


} // namespace mlcc::avx512
