//===- Winograd.h - Winograd F(m x m, r x r) pieces -------------*- C++ -*-===//
//
// An r x r stride-1 conv as Winograd's minimal filtering F(m x m, r x r)
// (Lavin and Gray, 2015), F(2x2, 3x3), F(4x4, 3x3) or F(2x2, 5x5): each
// m x m block of outputs (a tile) comes from the a x a input patch d around
// it (a = m + r - 1) as
//
//   Y = A^T [ (G g G^T) . (B^T d B) ] A
//
// with . elementwise over the a^2 positions xi. Summed over the input
// channels, position xi is a matrix product: M_xi[tile][oc] =
// sum_c V_xi[tile][c] U_xi[c][oc], a^2 GEMMs. Per output and channel pair
// the direct 3x3 conv does 9 multiply-adds, F(2x2, 3x3) 16 / 4 = 4, F(4x4,
// 3x3) 36 / 16 = 2.25; F(4x4)'s U is 36 / 16 times bigger and its
// transforms' sums are longer (errors a few times F(2x2)'s, still f32
// roundings). F(2x2, 5x5) does 36 / 4 = 9 where the direct 5x5 conv does
// 25, on the same 6x6 patches and B as F(4x4, 3x3). The products
// run on the f32 GEMM kernel (Gemm.h); these are the pieces around them,
// all over NCHW16c:
//
//   input transform   X (blocked) -> V[xi][tile][CP], CP = channels padded
//                     to 16 (the padding is never read: the GEMMs take K = C)
//   weight transform  g [OC][C][r][r] -> U[xi][C][OCP], at compile time
//   output transform  M[xi][tile][OCP] -> Y (blocked), with the conv's
//                     bias, residual and epilogue; Y's padding lanes 0
//
// Tiles are numbered image by image, row-major: tile (n, th, tw) is row
// (n * TH + th) * TW + tw of V and M, TH = ceil(OH / m), TW = ceil(OW / m).
// Input outside the image (the pads, and past the last tile's rows or
// columns) reads as 0; outputs past OH, OW are not stored.
//
// The transforms' signature: void kernel(const mlcc_winograd_args *args)
// (KernelABI.h).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_WINOGRAD_H
#define MLCC_LOWERING_AVX512_KERNELS_WINOGRAD_H

#include "Eltwise.h"

#include "mlcc/Reference/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlcc::avx512 {

struct WinogradSpec {
  std::string name = "winograd";
  /// Input [N, C, H, W], output channels OC; an r x r window, stride 1.
  int64_t n = 1, c = 1, h = 1, w = 1, oc = 1;
  /// Outputs per tile side and window side: F(2x2, 3x3), F(4x4, 3x3) or
  /// F(2x2, 5x5).
  int64_t m = 2, r = 3;
  /// ONNX order: top, left, bottom, right; each 0 to r - 1.
  int64_t pads[4] = {0, 0, 0, 0};
  bool bias = false;
  bool residual = false;
  /// Unary ops after bias and residual (a fused activation).
  std::vector<EltwiseOp> epilogue;
  /// Floats in a row of V (of M); 0: C (OC) padded to 16. A kernel for a
  /// chunk of the channel blocks (one image) has the whole conv's.
  int64_t vRow = 0, mRow = 0;
  /// Floats from one channel block of X (of Y and the residual) to the
  /// next; 0: this spec's own h * w * 16 (outH * outW * 16). A kernel for a
  /// band of rows of the image (WinogradBands.cpp) has the whole image's.
  int64_t xPlane = 0, yPlane = 0;

  int64_t outH() const { return h + pads[0] + pads[2] - (r - 1); }
  int64_t outW() const { return w + pads[1] + pads[3] - (r - 1); }
  /// Side of the transform domain, and its positions: one GEMM each.
  int64_t alpha() const { return m + r - 1; }
  int64_t positions() const { return alpha() * alpha(); }
  int64_t tileRows() const { return (outH() + m - 1) / m; }
  int64_t tileCols() const { return (outW() + m - 1) / m; }
  /// Rows of V and M: every image's tiles.
  int64_t tiles() const { return n * tileRows() * tileCols(); }
  int64_t vRowFloats() const { return vRow ? vRow : (c + 15) / 16 * 16; }
  int64_t mRowFloats() const { return mRow ? mRow : (oc + 15) / 16 * 16; }
  int64_t xPlaneFloats() const { return xPlane ? xPlane : h * w * 16; }
  int64_t yPlaneFloats() const {
    return yPlane ? yPlane : outH() * outW() * 16;
  }
};

/// Fails, naming spec.name, for shapes the transforms do not take.
ref::Status checkWinograd(const WinogradSpec &spec);

/// args->src: X in NCHW16c; args->dst: V, positions() x tiles() x
/// vRowFloats().
ref::Status generateWinogradInput(const WinogradSpec &spec,
                                  std::vector<uint8_t> &code);
/// args->src: M, positions() x tiles() x mRowFloats(); args->bias: OC floats
/// (with spec.bias); args->residual: Z like Y (with spec.residual); args->dst:
/// Y in NCHW16c.
ref::Status generateWinogradOutput(const WinogradSpec &spec,
                                   std::vector<uint8_t> &code);

/// The part of `whole` (one image) that computes its tile rows [r0, r1),
/// as a conv of its own over the input rows they read: pads where those
/// rows are outside the image, the whole image's planes (xPlane, yPlane).
/// `firstRow`: the row of X the part's X starts at; its Y starts at output
/// row r0 * m.
WinogradSpec winogradBand(const WinogradSpec &whole, int64_t r0, int64_t r1,
                          int64_t &firstRow);

/// U = G g G^T of g [OC][C][r][r] for F(m x m, r x r):
/// u[(xi * C + c) * ocp + oc], 0 past OC; u is resized to (m + r - 1)^2 * C
/// * ocp floats.
void transformWinogradWeights(const float *g, int64_t oc, int64_t c,
                              int64_t ocp, int64_t m, int64_t r,
                              std::vector<float> &u);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_WINOGRAD_H
