//===- RecurrentActivations.h - Activations of the RNN cells ----*- C++ -*-===//
//
// The `activations` attribute of graph.lstm, graph.gru and graph.rnn, with
// activation_alpha and activation_beta, read as the reference kernel reads
// them (mlcc/Reference/RecurrentActivations.h) and emitted as it computes
// them: on f64 values.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_PORTABLE_RECURRENTACTIVATIONS_H
#define MLCC_LOWERING_COMMON_PORTABLE_RECURRENTACTIVATIONS_H

#include "ReductionsSupport.h"
#include "mlcc/Reference/RecurrentActivations.h"

namespace mlcc::portable::rnn {

using ref::rnn::Activation;
using ref::rnn::activationCount;
using ref::rnn::Cell;

/// One Activation per (direction, slot) from the op's `activations`,
/// `activation_alpha` and `activation_beta` (each may be null); emits an
/// error on `op` for an unknown name or a wrong count.
mlir::LogicalResult parseActivations(mlir::Operation *op, Cell kind,
                                     int64_t dirs, mlir::ArrayAttr names,
                                     mlir::ArrayAttr alphas,
                                     mlir::ArrayAttr betas,
                                     std::vector<Activation> &out);

/// std::min(std::max(v, lo), hi) with its nan rule: a nan v passes.
mlir::Value clampLikeStd(red::Builder &b, mlir::Value v, mlir::Value lo,
                         mlir::Value hi);

/// `a` applied to the f64 `x`, formula for formula as the reference.
mlir::Value activate(red::Builder &b, const Activation &a, mlir::Value x);

} // namespace mlcc::portable::rnn

#endif // MLCC_LOWERING_COMMON_PORTABLE_RECURRENTACTIVATIONS_H
