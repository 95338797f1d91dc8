//===- Strassen.h - The sums of a one-level Strassen-Winograd GEMM -*- C++
//-*-=//
//
// C = A x B as one level of Strassen's algorithm in Winograd's form: A, B
// and C split into 2 x 2 blocks (A's m x k, B's k x n, C's m x n), seven
// products of blocks instead of eight (StrassenGemm.cpp). Around the GEMM
// kernels that compute the products, two kernels add blocks:
//
// - the sums of A's blocks that four products multiply, in one pass over A:
//     S1 = A21 + A22, S2 = S1 - A11, S3 = A11 - A21, S4 = A12 - S2;
// - a block of C from blocks of partial results: the signed sum of up to
//   four m x n terms, plus a bias row, then the epilogue ops.
//
// Signatures: void kernel(const mlcc_strassen_sums_args *args) and
// void kernel(const mlcc_strassen_combine_args *args) (KernelABI.h).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_STRASSEN_H
#define MLCC_LOWERING_AVX512_KERNELS_STRASSEN_H

#include "Eltwise.h"

#include "mlcc/Reference/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlcc::avx512 {

/// Reads args->rows rows (at most `m`) of A's top blocks from args->a and
/// the same rows of its bottom blocks m rows further; writes S1 to S4, each
/// m x k dense, S(i + 1) m * k floats after S(i), from args->s (the first
/// row's place in S1).
struct StrassenSumsSpec {
  std::string name = "strassen_sums";
  /// A block's rows and columns; A's leading dimension (2k for a whole A).
  int64_t m = 1, k = 16, lda = 32;
};

/// dst = epilogue(sum_i signs[i] * terms[i] + bias) over `rows` x `cols`,
/// every matrix `ld` floats between rows, bias `cols` floats.
struct StrassenCombineSpec {
  std::string name = "strassen_combine";
  int64_t rows = 1, cols = 16, ld = 16;
  /// 1 or -1 for each term, one to four (args->terms[i]); the first must
  /// be 1.
  std::vector<int> signs{1};
  bool bias = false;
  /// Unary ops after the sum (a fused activation).
  std::vector<EltwiseOp> epilogue;
};

/// Fail, naming spec.name, for sizes the kernels do not take: columns not
/// a multiple of 16, byte offsets past 31 bits, binary epilogue ops.
ref::Status generateStrassenSums(const StrassenSumsSpec &spec,
                                 std::vector<uint8_t> &code);
ref::Status generateStrassenCombine(const StrassenCombineSpec &spec,
                                    std::vector<uint8_t> &code);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_STRASSEN_H
