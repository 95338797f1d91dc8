//===- EinsumPlan.h - An einsum equation resolved against shapes -*- C++ -*-===//
//
// One reading of graph.einsum's equation, for the reference kernel and the
// graph pass that rewrites two-operand einsums into matmuls: they must
// agree on which dim carries which label and what the output is. Numpy
// semantics: explicit ("ij,jk->ik") and implicit ("ij,jk") outputs,
// repeated labels within a term (diagonals), '...' for broadcast leading
// dims, labels left out of the output summed.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_REFERENCE_EINSUMPLAN_H
#define MLCC_REFERENCE_EINSUMPLAN_H

#include "mlcc/Reference/Status.h"
#include "mlcc/Reference/Tensor.h"

#include <map>
#include <string>
#include <vector>

namespace mlcc::ref {

/// Labels are 0..51 for letters; the dims an ellipsis covers get
/// kEinsumEllipsisBase + j, j counted in the broadcast ellipsis of all
/// inputs.
constexpr int kEinsumEllipsisBase = 64;

/// Each operand's label per dim, the output's labels, and the size of every
/// label (a dim of 1 broadcasts against the label's size, as in numpy).
struct EinsumPlan {
  std::vector<std::vector<int>> inputs;
  std::vector<int> output;
  std::map<int, int64_t> sizes;
};

/// Resolves `equation` against the operand shapes; fails, naming einsum,
/// for a malformed term, a rank its term does not have, labels of
/// different sizes, or an output label that is repeated or in no input.
Status planEinsum(const std::string &equation, const std::vector<Shape> &shapes,
                  EinsumPlan &plan);

} // namespace mlcc::ref

#endif // MLCC_REFERENCE_EINSUMPLAN_H
