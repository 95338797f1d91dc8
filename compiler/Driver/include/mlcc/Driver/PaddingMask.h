//===- PaddingMask.h - May an item run at its mask's length? ----*- C++ -*-===//
//
// `mlcc compile --dim batch=1..8 --dim seq=1..512 --trim-padding mask`
// runs each item of a call at the length its mask input gives (up to its
// last nonzero) instead of the call's length, so a batch of short
// sequences padded to a long one costs what the short ones cost. For the
// positions before that length the two runs agree when (a) no position
// past it reaches them other than through attention's keys (checkPaddedDim
// proves that for the range of lengths) and (b) every attention gives the
// keys the mask marks as padding a term of 0: its additive mask is -10000
// or less there (exp of it underflows to 0 in f32, as BERT's exports
// intend), which the attention kernels skip. checkPaddingMask proves (b):
// it computes each attention's mask from the mask input alone, with the
// first p positions ones and the rest zeros for every p, by the reference
// executor.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_DRIVER_PADDINGMASK_H
#define MLCC_DRIVER_PADDINGMASK_H

#include "mlcc/Reference/Status.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlcc {

/// The mask's key term below which a key counts for nothing.
constexpr double kPaddedKeyMask = -10000.0;

/// `module`: the model, simplified and static, with input `input` of the
/// range of lengths along `axis`. The error names the attention (or the
/// input) that does not let a padded key count for nothing.
ref::Status checkPaddingMask(mlir::ModuleOp module, const std::string &input,
                             int64_t axis);

} // namespace mlcc

#endif // MLCC_DRIVER_PADDINGMASK_H
