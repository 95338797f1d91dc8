//===- WorkgroupReduce.h - Rows reduced by whole workgroups -----*- C++ -*-===//
//
// A workgroup loop (DeviceSchedule.h's kWorkgroupLoopAttr) with one row
// per workgroup: its threads stride along the row, each folding its
// elements in registers, then combine their partials in a tree in
// workgroup memory (log2 of the workgroup size steps, a barrier after
// each; the last steps as shuffles where the target has subgroups of a
// known size), so every thread reads the row's result. softmax and layer
// normalisation are a few such reductions and an elementwise pass.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_GPU_WORKGROUPREDUCE_H
#define MLCC_LOWERING_GPU_WORKGROUPREDUCE_H

#include "mlir/IR/Builders.h"

#include <functional>

namespace mlcc::gpukernels {

/// Inside one row's workgroup: the thread's index and the tree's memory.
class RowGroup {
public:
  using Combine = std::function<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                            mlir::Value, mlir::Value)>;

  /// With `subgroupSize` (a power of two dividing the workgroup size), the
  /// tree's last log2(subgroupSize) steps are shuffles within the first
  /// subgroup (gpu.shuffle xor): the same pairs combined in the same
  /// order, without their barriers.
  RowGroup(mlir::OpBuilder &b, mlir::Location loc, int64_t length,
           unsigned subgroupSize = 0);

  /// combine over the row of element(k) for k in [0, length), starting
  /// from `init` (combine's identity); the same value in every thread.
  mlir::Value
  reduce(mlir::OpBuilder &b, mlir::Value init, const Combine &combine,
         const std::function<mlir::Value(mlir::OpBuilder &, mlir::Value k)>
             &element);
  /// body(k) for the thread's elements k of the row.
  void
  forEach(mlir::OpBuilder &b,
          const std::function<void(mlir::OpBuilder &, mlir::Value k)> &body);
  /// Whether this is the row's first thread (for a per-row store).
  mlir::Value isFirstThread(mlir::OpBuilder &b);

private:
  mlir::Location loc;
  int64_t length;
  unsigned subgroupSize;
  mlir::Value tid, tree;
};

/// Emits a workgroup loop over `rows`; body(b, row) runs in each row's
/// workgroup.
void buildRowLoop(
    mlir::OpBuilder &b, mlir::Location loc, int64_t rows,
    const std::function<void(mlir::OpBuilder &, mlir::Value row)> &body);

} // namespace mlcc::gpukernels

#endif // MLCC_LOWERING_GPU_WORKGROUPREDUCE_H
