//===- ConvRowBands.h - A conv split over threads by rows -------*- C++ -*-===//
//
// How a conv with few output channel blocks is split over the thread pool:
// by bands of output rows, each band computing every channel block of its
// rows (see ConvRowBands.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_CONVROWBANDS_H
#define MLCC_LOWERING_AVX512_CONVROWBANDS_H

#include "Conv.h"
#include "KernelSelection.h"

namespace mlcc::avx512 {

/// True when threads should split this conv (one image, group 1 or
/// depthwise) by bands of rows rather than by chunks of channel blocks.
bool splitsConvByRows(const ConvSpec &spec);

/// On a pool of several threads, calls band kernels over the pool; on one
/// thread, `wholeKernel`. `fields` are mlcc_conv_args': src, weights, bias,
/// dst, residual.
mlir::LogicalResult emitConvRowBands(mlir::Operation *op,
                                     OpLoweringContext &ctx,
                                     const ConvSpec &spec,
                                     llvm::StringRef wholeKernel,
                                     llvm::ArrayRef<mlir::Value> fields);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_CONVROWBANDS_H
