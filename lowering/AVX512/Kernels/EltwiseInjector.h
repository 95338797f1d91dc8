//===- EltwiseInjector.h - Elementwise ops on zmm registers -----*- C++ -*-===//
//
// Emits the ops of an elementwise chain on values already in registers, as
// oneDNN's eltwise injector does: the eltwise kernel's loop uses it, and so
// can any kernel that fuses an activation into its epilogue (gemm, conv).
// It owns no registers: the caller hands it a lane, the running value plus
// the scratch registers and mask it may clobber.
//
// exp, sigmoid, tanh, erf, gelu, silu, the expm1 of elu, selu and celu,
// log and softplus are polynomial approximations within 4.5e-7 relative
// error, gelu_tanh within 7.8e-7 where its sigmoid argument is moderate
// (EltwiseInjector.cpp has the method and the measured bound of each).
// Everything is AVX-512F: no DQ, BW or VL instruction.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_ELTWISEINJECTOR_H
#define MLCC_LOWERING_AVX512_KERNELS_ELTWISEINJECTOR_H

#include "Eltwise.h"
#include "JitGenerator.h"

#include <array>
#include <vector>

namespace mlcc::avx512 {

/// Scratch registers the costliest op needs.
constexpr int kEltwiseMaxTemps = 4;

/// The registers one vector of a chain works in.
struct EltwiseLane {
  Xbyak::Zmm x; // the running value, updated in place
  std::array<Xbyak::Zmm, kEltwiseMaxTemps> t; // scratch, t[0, tempsNeeded)
  Xbyak::Opmask k;                            // scratch mask, not k0
};

class EltwiseInjector {
public:
  explicit EltwiseInjector(JitGenerator &h) : h_(h) {}

  /// Scratch registers `op` uses, t[0] to t[n - 1]. A binary op's rhs counts:
  /// the caller loads it into t[0] when it must be a register.
  static int tempsNeeded(const EltwiseOp &op);
  /// Whether a binary op needs its rhs in a register (then in t[0]); else
  /// any operand does: a register, memory, or an h.cst() constant.
  static bool rhsInRegister(const EltwiseOp &op);

  /// Emits x = op(x) for a unary op.
  void unary(const EltwiseOp &op, const EltwiseLane &l);
  /// Emits x = x op rhs (rhs op x when swapped) for a binary op.
  void binary(const EltwiseOp &op, const EltwiseLane &l,
              const Xbyak::Operand &rhs);

  /// The fused epilogue of a rows x vectors block of accumulators held in
  /// zmm(i * vectors + j), as the gemm and conv kernels have it. With `bias`,
  /// first adds one vector per column j loaded from [*bias + j * 64], the
  /// last one zero-masked by `tail` when `masked`. Then applies `ops`
  /// op-major, so that the accumulators' independent chains interleave.
  /// Every lane shares the scratch registers above the accumulators, and k2.
  void blockEpilogue(const std::vector<EltwiseOp> &ops, int rows, int vectors,
                     const Xbyak::Reg64 *bias, bool masked,
                     const Xbyak::Opmask &tail);

private:
  JitGenerator &h_;

  // max/min with a constant that keep a nan in `src`, as x < c ? c : x does.
  void maxNan(const Xbyak::Zmm &dst, float c, const Xbyak::Zmm &src,
              const Xbyak::Zmm &scratch);
  void minNan(const Xbyak::Zmm &dst, float c, const Xbyak::Zmm &src,
              const Xbyak::Zmm &scratch);
  /// acc = sum_i coeffs[i] * x^i, by Horner's rule with fma.
  template <size_t N>
  void horner(const Xbyak::Zmm &acc, const Xbyak::Zmm &x,
              const std::array<float, N> &coeffs);

  void exp(const Xbyak::Zmm &x, const Xbyak::Zmm &t0, const Xbyak::Zmm &t1,
           bool clampHigh);
  void silu(const EltwiseLane &l);
  void sigmoid(const Xbyak::Zmm &dst, const Xbyak::Zmm &src,
               const EltwiseLane &l);
  void tanh(const EltwiseLane &l);
  void erf(const EltwiseLane &l);
  void gelu(const EltwiseLane &l);
  void geluTanh(const EltwiseLane &l);
  void hardSwish(const EltwiseLane &l);
  void expm1(const EltwiseLane &l);
  void log1p(const Xbyak::Zmm &dst, const Xbyak::Zmm &f,
             const Xbyak::Zmm &scratch);
  void log(const EltwiseLane &l);
  void softplus(const EltwiseLane &l);
  void expLinear(const EltwiseOp &op, const EltwiseLane &l);
  void pow(float exponent, const EltwiseLane &l);
};

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_ELTWISEINJECTOR_H
