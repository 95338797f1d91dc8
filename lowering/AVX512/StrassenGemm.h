//===- StrassenGemm.h - A large GEMM as seven half-size products -*- C++
//-*-===//
//
// One level of Strassen's algorithm, in Winograd's form, for an f32 GEMM
// with constant B: seven products of half-size blocks instead of eight, 7/8
// of the multiply-adds, past the FMA peak that bounds any direct GEMM (see
// StrassenGemm.cpp). `--strassen off` keeps the direct GEMM.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_STRASSENGEMM_H
#define MLCC_LOWERING_AVX512_STRASSENGEMM_H

#include "Eltwise.h"
#include "KernelSelection.h"

#include <string>
#include <vector>

namespace mlcc::avx512 {

/// C [M, N] = epilogue(A [M, K] x B + bias + residual).
struct StrassenGemm {
  std::string name;
  int64_t m = 0, k = 0, n = 0;
  /// B dense, K x N row major, alpha folded in.
  std::vector<float> b;
  std::vector<float> bias; // empty, or N values
  /// Addresses (i64) of A, C and the residual (0: none).
  mlir::Value a, c, residual;
  std::vector<EltwiseOp> epilogue;
};

/// Whether an M x K x N GEMM gains from the seven products: large enough
/// that the sums cost little beside the product saved, the halves of K
/// whole vectors and those of N whole chunks of the kernels' columns (an
/// odd M gets a row of zeros).
bool strassenApplies(int64_t m, int64_t k, int64_t n);

/// Emits the sums, the products and the combination over the thread pool.
/// Fails after reporting on `op` (a generator error).
mlir::LogicalResult emitStrassenGemm(mlir::Operation *op,
                                     OpLoweringContext &ctx,
                                     const StrassenGemm &gemm);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_STRASSENGEMM_H
