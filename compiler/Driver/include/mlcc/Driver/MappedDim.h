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

/// A range of lengths (`mlcc compile --dim seq=1..512`) is compiled for
/// buckets of lengths and runs a shorter length padded to its bucket. That
/// is right when the positions past the length never reach those before it:
/// proved as above from the model at extents n and 2n of the dim, but only
/// the first n positions of each value must be graph one's, and the dim
/// may be any one axis of a value (or none: a result computed from the
/// first positions alone). An op that mixes positions is allowed where its
/// lowering runs over the run's length instead (attention over its keys):
/// `lengthOps` gets its index among the function's ops. The ops whose first
/// result has the dim are in `rowOps`, with its axis there: as no position
/// before the length reads one past it, they may skip those. `axes` holds
/// the dim's axis per input, then per output, or -1.
ref::Status checkPaddedDim(mlir::ModuleOp one, mlir::ModuleOp two,
                           const std::string &name, std::vector<int64_t> &axes,
                           std::vector<unsigned> &lengthOps,
                           std::vector<std::pair<unsigned, int64_t>> &rowOps);

} // namespace mlcc

#endif // MLCC_DRIVER_MAPPEDDIM_H
