//===- Gemm.h - AVX-512 f32 GEMM kernels ------------------------*- C++ -*-===//
//
// Generates f32 kernels for C[M,N] = epilogue(A[M,K] * B[K,N] + bias[N] +
// R[M,N]) with M, N and K known when the kernel is generated, or given by
// each call (GemmSpec::runTimeM, runTimeN, runTimeK). A, C and the
// residual R are row major with the spec's leading dimensions (R with C's). B
// is a weight: the compiler packs it once, with packB(), into the layout below,
// and the kernel reads only that.
//
// Packed B layout
// ---------------
// Columns are split into panels of kGemmPanel (16, one zmm) columns; panel
// p holds columns [16p, 16p + 16) of all K rows, row after row:
//
//   packed[(p * K + k) * 16 + j] = B[k][16p + j]   (0 past column N - 1)
//
// so packed.size() == ceil(N / 16) * K * 16 floats. The zero padding lets
// the kernel load whole vectors of B in the last panel; only C and bias are
// masked. The kernel wants the packed array 64-byte aligned for speed, not
// for correctness.
//
// The kernel's signature is that of lowering/Common/KernelABI.h:
//   void kernel(const mlcc_gemm_args *args);
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_GEMM_H
#define MLCC_LOWERING_AVX512_KERNELS_GEMM_H

#include "Eltwise.h"

#include "mlcc/Reference/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlcc::avx512 {

using ref::Status;

/// Columns of one packed-B panel.
constexpr int64_t kGemmPanel = 16;

struct GemmSpec {
  /// Names the kernel in error messages (the graph op it lowers).
  std::string name = "gemm";
  int64_t m = 0, n = 0, k = 0;
  /// Leading dimensions (elements between rows) of A and C; 0 means dense
  /// (k for A, n for C).
  int64_t lda = 0, ldc = 0;
  /// Add args->bias[j] (N elements) to column j before the epilogue.
  bool bias = false;
  /// Then add args->residual[i * ldc + j] (graph.fc's Z) before the
  /// epilogue ops.
  bool residual = false;
  /// Elementwise ops applied to every element of C before it is stored:
  /// unary ops and binary ops with a constant operand (an activation, a
  /// scale). Array or broadcast operands are not supported here.
  std::vector<EltwiseOp> epilogue;
  /// Read the rows of each call from args->m (at most `m`, which sizes
  /// the register block and the offset checks): one kernel for every
  /// extent of a dim known only when the model runs. The row tail is
  /// chosen at run time among the smaller blocks.
  bool runTimeM = false;
  /// Read the K of each call from args->k (at most `k`; B stays packed
  /// for `k` rows, of which a call reads its first): a sum over a dim
  /// known only when the model runs (attention's keys).
  bool runTimeK = false;
  /// Read the N of each call from args->n (at most `n`): the columns past
  /// it are neither read from bias nor written (attention's scores over
  /// the keys of a run-time length).
  bool runTimeN = false;
  /// B is followed in memory by the packed B of the call that comes next
  /// (a Winograd conv's positions, a GEMM each): the row blocks of the last
  /// column block prefetch the next B's first panels rather than their own
  /// lines. With one pass over K only (see kBlock).
  bool prefetchNextB = false;
  /// Register block: rows of A and zmm vectors of C columns per microkernel
  /// call (rows * vectors + vectors + 2 <= 32). 0 picks: 6 x 4; M x 4 for
  /// M of 3 to 5; M x 8 for M <= 2. Tests set them to reach each tail path.
  int blockRows = 0;
  int blockVectors = 0;
  /// K steps per pass over C (a long K is summed in several passes, each
  /// over a slice of K whose B stays in cache; not with runTimeK). 0 picks:
  /// one pass up to K = 1024, else equal passes of at most 768 steps.
  int64_t kBlock = 0;
};

/// Generates the kernel's machine code into `code` (plain bytes, position
/// independent). M or N equal to 0 give a valid kernel that writes nothing;
/// K equal to 0 gives C = epilogue(bias or 0). Fails, naming spec.name, for
/// negative sizes, leading dimensions smaller than a row, sizes whose byte
/// offsets do not fit in 31 bits, and unsupported epilogue ops.
Status generateGemm(const GemmSpec &spec, std::vector<uint8_t> &code);

/// Packs B into the layout above. B is K x N with `ldb` elements between
/// rows, or, when transB, N x K with `ldb` elements between rows (ONNX
/// Gemm's transB = 1, a Linear layer's weight). `packed` is resized.
void packB(const float *b, int64_t k, int64_t n, int64_t ldb, bool transB,
           std::vector<float> &packed);

/// Floats packB() writes for a K x N matrix.
inline int64_t packedBSize(int64_t k, int64_t n) {
  return (n + kGemmPanel - 1) / kGemmPanel * k * kGemmPanel;
}

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_GEMM_H
