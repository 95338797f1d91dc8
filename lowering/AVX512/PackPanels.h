//===- PackPanels.h - Packing a run-time matrix for the GEMM kernel -*- C++ -*-===//
//
// The GEMM kernel reads B in column panels of kGemmPanel (packB() in
// Kernels/Gemm.h). A B known only at run time (attention's K^T and V, a
// MatMul's second operand) is packed by host loops emitted here.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_PACKPANELS_H
#define MLCC_LOWERING_AVX512_PACKPANELS_H

#include "mlir/IR/Builders.h"

namespace mlcc::avx512 {

mlir::Value indexConst(mlir::OpBuilder &b, mlir::Location loc, int64_t v);

/// Emits packed[p][r][j] = load(r, kGemmPanel * p + j) (0 past column
/// `cols`), the layout of packB() for a rows x cols matrix whose element
/// `load` reads.
void emitPackedPanels(
    mlir::OpBuilder &b, mlir::Location loc, mlir::Value packed, int64_t rows,
    int64_t cols,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                   mlir::Value, mlir::Value)>
        load);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_PACKPANELS_H
