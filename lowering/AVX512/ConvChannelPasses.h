//===- ConvChannelPasses.h - A conv summed in passes over channels -*- C++
//-*-===//
//
// A dense conv whose weights per group of output channels do not fit in L2
// runs as several direct convs over slices of its input channels, each
// adding to Y (see ConvChannelPasses.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_CONVCHANNELPASSES_H
#define MLCC_LOWERING_AVX512_CONVCHANNELPASSES_H

#include "Conv.h"
#include "KernelSelection.h"

namespace mlcc::avx512 {

/// Input channel blocks per pass, or 0 when the conv runs in one pass.
int64_t convChannelPassBlocks(const ConvSpec &spec);

/// Emits the passes through emitConvCalls; the arguments are emitConvCalls'.
mlir::LogicalResult
emitConvChannelPasses(mlir::Operation *op, OpLoweringContext &ctx,
                      const ConvSpec &spec, llvm::ArrayRef<float> weights,
                      mlir::Value src, mlir::Value bias, mlir::Value dst,
                      mlir::Value residual);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_CONVCHANNELPASSES_H
