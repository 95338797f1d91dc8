//===- AVX512Target.h - The AVX-512 CPU backend -----------------*- C++ -*-===//
//
// Lowers the hot ops (gemm/matmul, conv, pooling, elementwise chains,
// softmax, layer norm) to Xbyak kernels generated for each op's exact shapes
// with weights packed now, and leaves the rest to the portable lowering.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_AVX512TARGET_H
#define MLCC_LOWERING_AVX512_AVX512TARGET_H

#include "Target.h"

#include <memory>

namespace mlcc::avx512 {

/// Kernels and host code for `cpu` (lowering::resolveCpu); `bf16` for
/// --precision bf16 (the cpu has AVX512_BF16); Winograd tiles of at most
/// `winogradTile` outputs a side (--winograd: 4, 2, or 0 for none); large
/// GEMMs as Strassen's seven products unless `strassen` is false
/// (--strassen off).
std::unique_ptr<lowering::Target> createAVX512Target(lowering::CpuTarget cpu,
                                                     bool bf16 = false,
                                                     int64_t winogradTile = 4,
                                                     bool strassen = true);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_AVX512TARGET_H
