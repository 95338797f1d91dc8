//===- GemmInt8Kernel.h - The int8/bf16 GEMM generator's parts -*- C++ -*-===//
//
// Internal to GemmInt8.cpp (the VNNI and AVX512-BF16 kernel) and
// GemmAmx.cpp (the AMX kernel), which shares its K tail, epilogue and
// stores: the register plan is GemmInt8.cpp's header.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_GEMMINT8KERNEL_H
#define MLCC_LOWERING_AVX512_KERNELS_GEMMINT8KERNEL_H

#include "EltwiseInjector.h"
#include "GemmInt8.h"
#include "JitGenerator.h"

namespace mlcc::avx512::int8gemm {

constexpr int kNumZmm = 32;
constexpr int64_t kMaxBytes = int64_t(1) << 31;
constexpr int kGroupBytes = 4; // of A per dot-product lane: 4 u8, 2 bf16
constexpr int kPanelGroupBytes = kInt8Panel * kGroupBytes;
constexpr uint32_t kSignBits = 0x80808080u;
constexpr uint32_t kOnes = 0x01010101u;
constexpr int64_t kBlockK = 16; // k per block of a blocked A

/// k per lane of the dot product, and bytes of one element of A.
inline int kPerGroup(bool bf16) { return bf16 ? 2 : 4; }
inline int aElementBytes(bool bf16) { return bf16 ? 2 : 1; }

inline int64_t groupsOf(int64_t k, bool bf16) {
  return (k + kPerGroup(bf16) - 1) / kPerGroup(bf16);
}

class Int8GemmKernel : public JitGenerator {
public:
  Int8GemmKernel(std::vector<uint8_t> &buffer, const Int8GemmSpec &spec,
                 int64_t lda, int64_t ldc, int rows, int vectors)
      : JitGenerator(buffer), spec_(spec), lda_(lda), ldc_(ldc), rows_(rows),
        vectors_(vectors), perGroup_(kPerGroup(spec.bf16)),
        aBytes_(aElementBytes(spec.bf16)), groups_(groupsOf(spec.k, spec.bf16)),
        injector_(*this) {}

  void generate();

protected:
  const Int8GemmSpec &spec_;
  const int64_t lda_, ldc_;
  const int rows_, vectors_;
  const int perGroup_, aBytes_; // kPerGroup, aElementBytes
  const int64_t groups_;
  EltwiseInjector injector_;

  const Xbyak::Reg64 regArgs_ = rdi;
  const Xbyak::Reg64 regBCol_ = r8;
  const Xbyak::Reg64 regCCol_ = r9;
  const Xbyak::Reg64 regColData_ = r10;
  const Xbyak::Reg64 regARow_ = rsi;
  const Xbyak::Reg64 regCRow_ = rdx;
  const Xbyak::Reg64 regAK_ = rax;
  const Xbyak::Reg64 regBK_ = r11;
  const Xbyak::Reg64 regKIter_ = rcx;
  const Xbyak::Reg64 regRowIter_ = rbx;
  const Xbyak::Reg64 regColIter_ = r12;
  const Xbyak::Reg64 regTail_ = r13;
  const Xbyak::Reg64 regTailByte_ = r14;
  const Xbyak::Reg64 regResidualDelta_ = r15;
  const Xbyak::Opmask kTail_ = k1;

  void columnBlocks(int64_t count, int vectors, bool masked);
  void rowBlocks(int vectors, bool masked);
  void runTimeRowBlocks(int vectors, bool masked);
  void microkernel(int rows, int vectors, bool masked);
  /// One k group (4 bytes of A: 4 u8 or 2 bf16) at `g` groups past the K
  /// pointers; `tailBytes` (1-3) for the last group of a K that is not a
  /// multiple of the group, else 0.
  void groupStep(int rows, int vectors, int64_t g, int tailBytes);
  /// The k loop of a blocked A: 16 k per block, then a jump of
  /// spec_.aBlockStride.
  void blockedK(int rows, int vectors);
  void broadcastA(const Xbyak::Zmm &a, int row, int64_t g, int tailBytes);
  void epilogue(int rows, int vectors, bool masked);
  void store(int rows, int vectors, bool masked);

  static Xbyak::Zmm acc(int i, int j, int vectors) {
    return Xbyak::Zmm(i * vectors + j);
  }
  Xbyak::Zmm rowSum(int rows, int vectors, int i) const {
    return Xbyak::Zmm(rows * vectors + vectors + 2 + i);
  }
  /// Bytes from one 16-column block of C to the next, for elements of
  /// `elementBytes`.
  int64_t columnBlockBytes(int elementBytes) const {
    return (spec_.cBlockStride ? spec_.cBlockStride : kF32Lanes) * elementBytes;
  }
  Xbyak::Address columnData(int j, int field) {
    return ptr[regColData_ +
               static_cast<int>(j * kInt8ColumnDataBytes + field * kZmmBytes)];
  }
};

/// The AMX kernel (GemmAmx.cpp) of a validated spec with spec.amx.
Status generateAmxGemm(const Int8GemmSpec &spec, int64_t lda, int64_t ldc,
                       std::vector<uint8_t> &code);

} // namespace mlcc::avx512::int8gemm

#endif // MLCC_LOWERING_AVX512_KERNELS_GEMMINT8KERNEL_H
