//===- OpWork.h - What a graph op computes and moves ------------*- C++ -*-===//
//
// `mlcc bench --per-op` sets each op's time beside the least time the
// machine could take for it: its arithmetic at the measured peak, or its
// bytes at the measured bandwidth, whichever is longer (a roofline). This
// is the op's side of that: the multiply-adds of the products (counted as
// two operations each, as GFLOP/s usually are) and the bytes of the
// tensors it reads and writes, each once.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_OPWORK_H
#define MLCC_LOWERING_COMMON_OPWORK_H

#include "mlir/IR/Operation.h"

#include <string>

namespace mlcc::lowering {

/// What a kernel computes in: the peak an op is measured against.
enum class WorkPrecision { F32, Int8, Bf16 };

struct OpWork {
  /// Arithmetic operations: 2 per multiply-add of a conv, matmul, gemm,
  /// attention or recurrent cell; 1 per result element for the others.
  double ops = 0;
  /// Bytes of the operands and results as tensors (a weight read once).
  double bytes = 0;
  /// True for the products above: the peak, not only the bandwidth, can
  /// bound them.
  bool product = false;
  WorkPrecision precision = WorkPrecision::F32;
};

/// What `mlcc bench --per-op` reports of one graph op: "node 'x'
/// (graph.conv)" and its work.
struct ProfiledOp {
  std::string what;
  OpWork work;
};

/// The work of `op` at its static shapes (dynamic dims count as 0; ops
/// with regions count their operands and results only).
OpWork estimateOpWork(mlir::Operation *op);

/// The work `op` adds to its producer's kernels when they compute it too:
/// its input 0, the producer's result, is then neither written nor read.
OpWork chainedOpWork(mlir::Operation *op);

} // namespace mlcc::lowering

#endif // MLCC_LOWERING_COMMON_OPWORK_H
