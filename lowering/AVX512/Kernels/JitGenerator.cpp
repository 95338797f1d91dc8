//===- JitGenerator.cpp - Base of the AVX-512 kernel generators -----------===//
//
// Constant pool, preamble/postamble and error reporting shared by every
// kernel generator.
//
//===----------------------------------------------------------------------===//

#include "JitGenerator.h"

#include <algorithm>
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

} // namespace mlcc::avx512
