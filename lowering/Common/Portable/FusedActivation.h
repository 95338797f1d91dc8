//===- FusedActivation.h - The activations fused ops apply ------*- C++ -*-===//
//
// The epilogue activation of graph.fc and graph.fused_conv (one of
// graph::fusedActivations(), with its alpha and beta), as scalar f32 ops in
// the order of the reference kernels and of the activations' own
// lowerings: shared by the portable lowering and the GPU kernels.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_PORTABLE_FUSEDACTIVATION_H
#define MLCC_LOWERING_PORTABLE_FUSEDACTIVATION_H

#include "mlir/IR/Builders.h"

namespace mlcc::portable {

/// `name` applied to the f32 `v` ("none" gives `v`).
mlir::Value fusedActivation(mlir::OpBuilder &b, mlir::Location loc,
                            llvm::StringRef name, double alpha, double beta,
                            mlir::Value v);

} // namespace mlcc::portable

#endif // MLCC_LOWERING_PORTABLE_FUSEDACTIVATION_H
