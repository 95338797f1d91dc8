//===- ReduceAxes.h - The dims a Reduce* op reduces -------------*- C++ -*-===//
//
// One reading of a Reduce* op's listed axes, for the reference kernel, the
// portable lowering, the AVX-512 selection and the checks of a range of
// lengths: they must agree on which dims an op reduces. Header only.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_REFERENCE_REDUCEAXES_H
#define MLCC_REFERENCE_REDUCEAXES_H

#include "mlcc/Reference/Status.h"

#include <cstdint>

namespace mlcc::ref {

/// Which of `rank` dims the axes reduce (negative axes count from the end):
/// every dim when no axis is listed, none when noop_with_empty_axes is set.
/// An axis out of range or listed twice is an error naming `op`. `Mask` is a
/// std::vector<bool> or an llvm::SmallVector<bool>.
template <typename Axes, typename Mask>
Status reducedDimsOf(const char *op, const Axes &axes, int64_t rank,
                     bool noopWithEmptyAxes, Mask &reduced) {
  reduced.assign(rank, axes.empty() && !noopWithEmptyAxes);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank)
      return Status::error(op, ": axis ", a, " is out of range for rank ",
                           rank);
    int64_t d = a < 0 ? a + rank : a;
    if (reduced[d])
      return Status::error(op, ": axis ", a, " is listed twice");
    reduced[d] = true;
  }
  return Status::success();
}

} // namespace mlcc::ref

#endif // MLCC_REFERENCE_REDUCEAXES_H
