//===- WinogradBands.h - A Winograd conv in bands of tile rows --*- C++ -*-===//
//
// The whole-image Winograd conv (WinogradConv.cpp) splits each stage over
// the threads its own way: the input transform by channel blocks, the GEMMs
// by positions, the output transform by output channel blocks. V and M then
// cross between the cores twice, and on one core they are bigger than its
// L2 (ResNet-50's 56x56 convs: 1.8 MB each). In bands of tile rows one
// thread runs all three stages of its band, so its part of V and M stays
// in its cache and only U is read by every band: worth it where U is small
// (winogradBandRows).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_WINOGRADBANDS_H
#define MLCC_LOWERING_AVX512_WINOGRADBANDS_H

#include "Gemm.h"
#include "KernelSelection.h"
#include "Winograd.h"

namespace mlcc::avx512 {

/// The GEMM of one position over `spec`'s tiles: V (rows of C padded to
/// 16, whose padding is not read) times U packed, into M (OC padded).
GemmSpec winogradGemm(const WinogradSpec &spec, std::string name);

/// Tile rows per band for `spec`, 0 when it runs on the whole image.
int64_t winogradBandRows(const WinogradSpec &spec);

/// The addresses (i64) a Winograd conv works on: X and Y (and the
/// residual, null without) in NCHW16c, U packed per position (packedFloats
/// each), the bias (null without), the scratch V and M (positions x tiles
/// x channels padded to 16).
struct WinogradOperands {
  mlir::Value x, y, residual, u, bias, v, m;
  int64_t packedFloats = 0;
};

/// Emits `spec` as bands of `rows` tile rows of each image over the threads;
/// false after reporting a kernel generator's failure on `op`.
bool emitWinogradBands(mlir::Operation *op, OpLoweringContext &ctx,
                       const WinogradSpec &spec, int64_t rows,
                       const WinogradOperands &operands);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_WINOGRADBANDS_H
