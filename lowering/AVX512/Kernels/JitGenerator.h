//===- JitGenerator.h - Base of the AVX-512 kernel generators ---*- C++ -*-===//
//
// What every Xbyak kernel generator of this backend shares, in the manner of
// oneDNN's jit_generator: it writes into plain memory (the bytes end up in an
// object file, so nothing here is ever made executable), keeps the code
// position independent (constants in a pool after the code, reached
// RIP-relative), wraps the SysV preamble and postamble, and turns Xbyak's
// error code into a Status.
//
// Xbyak is built with XBYAK_NO_EXCEPTION: a failing instruction records the
// first error in a thread-local code and generation carries on, so the code
// is only checked once, in finish().
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_JITGENERATOR_H
#define MLCC_LOWERING_AVX512_KERNELS_JITGENERATOR_H

#ifndef XBYAK_NO_EXCEPTION
#define XBYAK_NO_EXCEPTION
#endif
#include <xbyak/xbyak.h>

#include "mlcc/Reference/Status.h"
#include "mlcc/Reference/Tensor.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mlcc::avx512 {

using ref::DType;
using ref::Status;

/// Bytes of one zmm register and f32 lanes in it.
constexpr int kZmmBytes = 64;
constexpr int kF32Lanes = 16;

class JitGenerator : public Xbyak::CodeGenerator {
public:
  /// Generates into `buffer`, which must outlive the generator; its size is
  /// the most code that fits (see codeTooBig()).
  explicit JitGenerator(std::vector<uint8_t> &buffer);

  //===--------------------------------------------------------------------===//
  // Constants
  //===--------------------------------------------------------------------===//

  /// The 32-bit constant `bits` in every lane, as an instruction's last
  /// source operand: the register it was preloaded into, or an embedded
  /// broadcast ({1to16}) from the constant pool.
  const Xbyak::Operand &cstBits(uint32_t bits);
  const Xbyak::Operand &cst(float v);
  /// The constant in a register, for operands that must be one: the
  /// preloaded register, or `scratch` after broadcasting into it.
  Xbyak::Zmm cstReg(float v, const Xbyak::Zmm &scratch);
  /// Writes the constant to every lane of `dst`.
  void loadCst(const Xbyak::Zmm &dst, float v);

  /// x = log(x) in every lane, for finite x > 0 (within 5e-12 of the
  /// series' limit, then rounded once); clobbers the four temporaries.
  void logPositive(const Xbyak::Zmm &x, const Xbyak::Zmm &t0,
                   const Xbyak::Zmm &t1, const Xbyak::Zmm &t2,
                   const Xbyak::Zmm &t3);

  /// dst = the i64 at `field`, at most `most` (through `scratch`): a
  /// call's run-time extent, never past the one the code was made for.
  void loadAtMost(const Xbyak::Reg64 &dst, const Xbyak::Address &field,
                  int64_t most, const Xbyak::Reg64 &scratch);

  /// The row loop of a kernel with a run-time row count in `rows` (counted
  /// down): blocks of `block` rows while that many are left, each
  /// `emitRows(block)` then `advance()` (the pointers to the next block),
  /// then one block of the 1 to block - 1 rows left, if any.
  void runTimeRowLoop(const Xbyak::Reg64 &rows, int block,
                      const std::function<void(int)> &emitRows,
                      const std::function<void()> &advance);

  /// Broadcasts constants[i] into regs[i] here, and makes cst() answer with
  /// that register from then on. Call in the preamble, outside loops.
  void preloadConstants(const std::vector<uint32_t> &constants,
                        const std::vector<Xbyak::Zmm> &regs);
  /// Every constant asked for so far, most used first (ties in order of first
  /// use). A first generation pass uses it to choose what a second one
  /// preloads into spare registers.
  std::vector<uint32_t> constantsByUse() const;

  /// Transposes the 16 x 16 block in the zmm registers numbered regs
  /// (regs[p] lane c: row p, column c): afterwards regs[c] lane p holds row
  /// p, column c. Renames instead of moving: `spare` is a free register,
  /// and one again (another) afterwards.
  void transpose16x16(std::array<int, 16> &regs, int &spare);

  //===--------------------------------------------------------------------===//
  // ABI
  //===--------------------------------------------------------------------===//

  /// Saves the callee-saved registers the kernel will use (SysV: rbx, rbp,
  /// r12-r15); postamble() restores them.
  void preamble(const std::vector<Xbyak::Reg64> &calleeSaved = {});
  /// Restores what preamble() saved, clears the upper vector state and
  /// returns; then lays out the constant pool after the code.
  void postamble();

  /// r += v: an immediate when v fits in 32 bits, else through `scratch`.
  void addImm(const Xbyak::Reg64 &r, int64_t v, const Xbyak::Reg64 &scratch);

  /// Pads with `fill` bytes to a multiple of `alignment` from the start of
  /// the code. Xbyak's align() pads to an absolute address, which would
  /// make the bytes depend on where the buffer happened to be allocated.
  void alignCode(size_t alignment, bool withNops);

  /// True when the code outgrew the buffer: generate again with a bigger
  /// one.
  static bool codeTooBig() {
    return Xbyak::GetError() == Xbyak::ERR_CODE_IS_TOO_BIG;
  }
  /// Copies the generated bytes into `code`, or fails, naming `what`, with
  /// Xbyak's error.
  Status finish(const std::string &what, std::vector<uint8_t> &code) const;

private:
  Xbyak::Label pool_;
  std::vector<uint32_t> poolValues_;     // in pool order
  std::map<uint32_t, size_t> poolIndex_; // bits -> slot
  std::map<uint32_t, Xbyak::Zmm> preloaded_;
  std::map<uint32_t, Xbyak::Address> poolOperands_;
  std::map<uint32_t, std::pair<int, size_t>> uses_; // bits -> (count, order)
  std::vector<Xbyak::Reg64> saved_;

  size_t poolSlot(uint32_t bits);
  /// The pool slot as a plain 32-bit memory operand (for vbroadcastss).
  Xbyak::Address poolAddress(uint32_t bits);
};

/// Runs `attempt(buffer)` (construct a generator on the buffer, generate,
/// finish) with a scratch buffer that starts at `initialBytes` and grows 4x,
/// up to 64 MiB, while the code does not fit; returns the last attempt's
/// status.
template <typename Attempt>
Status generateInGrowingBuffer(Attempt &&attempt,
                               size_t initialBytes = size_t(16) << 10) {
  constexpr size_t kMaxCode = size_t(64) << 20;
  for (size_t size = initialBytes;; size *= 4) {
    std::vector<uint8_t> buffer(size);
    // Xbyak keeps the first error of the thread: start clean.
    Xbyak::ClearError();
    Status status = attempt(buffer);
    if (!JitGenerator::codeTooBig() || size >= kMaxCode)
      return status;
  }
}

/// The bits of an f32, the key of the constant pool.
uint32_t floatBits(float v);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_JITGENERATOR_H
