//===- QuantSelection.h - What the int8 selectors share ---------*- C++ -*-===//
//
// Reading quantised operands (int8 tensors, constant zero points and
// scales) and emitting one int8 GEMM (GemmInt8.h) for a planned matmul:
// SelectQuantGemm.cpp (MatMulInteger, QLinearMatMul) and SelectQdqGemm.cpp
// (f32 MatMul/Gemm between DequantizeLinear ops) plan, this emits.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_QUANTSELECTION_H
#define MLCC_LOWERING_AVX512_QUANTSELECTION_H

#include "GemmInt8.h"
#include "KernelSelection.h"

#include <cstdint>
#include <vector>

namespace mlcc::avx512 {

/// A static 8-bit integer tensor (i8, si8 or ui8).
bool isInt8Tensor(mlir::Value v);
bool isUnsignedTensor(mlir::Value v);

/// The values of a constant 8-bit integer operand; `none` gives {0}.
bool constantInts(OpLoweringContext &ctx, mlir::Value v,
                  std::vector<int32_t> &out);

/// A [rows x K] (A's leading dims are rows) x B [K x N] constant, int32
/// accumulators, then the output's epilogue.
struct Int8GemmPlan {
  mlir::Value a, result;
  bool signedA = false;
  int64_t m = 0, n = 0, k = 0;
  std::vector<int32_t> b; // K x N
  bool unsignedB = false;
  std::vector<int32_t> zb; // 1 or N
  int32_t za = 0;
  /// Per column (N), or empty: 1 and 0.
  std::vector<float> scale, bias;
  Int8GemmOutput output = Int8GemmOutput::Int32;
  /// Float output: graph.fc's Z, laid out like the result; or null.
  mlir::Value residual;
  std::vector<EltwiseOp> epilogue;
};

/// Packs B, generates the kernel (and column chunks for the thread pool)
/// and emits the calls. Failed with an error on `op` when generation fails.
TargetLowering emitInt8Gemm(mlir::Operation *op, OpLoweringContext &ctx,
                            Int8GemmPlan &plan);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_QUANTSELECTION_H
