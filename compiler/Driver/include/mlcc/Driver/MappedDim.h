//===- MappedDim.h - Is the model a map over a dim? --------------*- C++
//-*-===//
//
// `mlcc compile --dim batch=1..64` compiles the model once for one item of
// the batch (and for any chunk size given beside the range) and runs it on
// each chunk of a call's batch in turn. That is right only when the model
// computes every item alone: item i of each output comes from item i of
// each input, whatever the others hold. checkMappedDim proves it from the
// model as imported at extents 1 and 2 of the dim: both graphs must be the
// same ops, every value that depends on the mapped inputs must have the dim
// (grown from 1 to 2 items along one axis of it, items major), and every op
// on such values must compute each item from the same item of its
// operands. For the heavy ops (matmuls, convs, attention) that follows from
// which operand axis holds the items; every other op is run by the
// reference executor on two random items, together and apart, and the
// results must agree.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_DRIVER_MAPPEDDIM_H
#define MLCC_DRIVER_MAPPEDDIM_H

#include "mlcc/Reference/Status.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlcc {

/// `one` and `two` are the model (simplified, static) with dim `name` set
/// to 1 and to 2. On success, `mapped` holds a flag per input, then per
/// output: whether its dim 0 is the mapped dim (the others do not depend on
/// it). The error names the node and op that mixes items, or the tensor
/// whose items are not along dim 0.
ref::Status checkMappedDim(mlir::ModuleOp one, mlir::ModuleOp two,
                           const std::string &name, std::vector<bool> &mapped);

} // namespace mlcc

#endif // MLCC_DRIVER_MAPPEDDIM_H
