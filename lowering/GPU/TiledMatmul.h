//===- TiledMatmul.h - A workgroup-tiled matrix product ---------*- C++ -*-===//
//
// C[g, i, j] = sum_k A[g, i, k] B[g, k, j] as one workgroup loop
// (DeviceSchedule.h's kWorkgroupLoopAttr): a workgroup computes one tile
// of C, staging a slice of A's rows and of B's columns in workgroup memory
// per step along k, and each of its threads keeps a register block of the
// tile. The operands are read and the result written through callbacks,
// so fc, matmul and convolution (implicit GEMM: A is the input's im2col
// matrix, its elements computed where they are loaded) share the kernel.
//
// Each thread adds its products in k order from zero, as the reference
// kernels and the portable lowerings do.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_GPU_TILEDMATMUL_H
#define MLCC_LOWERING_GPU_TILEDMATMUL_H

#include "mlir/IR/Builders.h"

#include <functional>

namespace mlcc::gpukernels {

struct MatmulProblem {
  /// g ranges over `groups` independent products of rows x depth times
  /// depth x cols.
  int64_t groups = 1, rows = 0, cols = 0, depth = 0;
  /// A[g, row, k] and B[g, k, col] as f32, for indices in range.
  std::function<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::Value g,
                            mlir::Value row, mlir::Value k)>
      loadA, loadB;
  /// Writes the finished C[g, row, col] (its epilogue applied here).
  std::function<void(mlir::OpBuilder &, mlir::Location, mlir::Value g,
                     mlir::Value row, mlir::Value col, mlir::Value sum)>
      store;
};

constexpr int64_t kMinTiledCols = 4;

/// Emits the loops computing `problem` at `b`: the workgroup loop of tiles,
/// or, for a product of fewer than kMinTiledCols columns (a depthwise
/// conv, a matrix-vector product), whose tiles would leave most threads
/// idle, a parallel loop with a thread per element of C, its sum along k
/// in a loop.
void buildMatmul(mlir::OpBuilder &b, mlir::Location loc,
                 const MatmulProblem &problem);

} // namespace mlcc::gpukernels

#endif // MLCC_LOWERING_GPU_TILEDMATMUL_H
