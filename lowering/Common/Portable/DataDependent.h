//===- DataDependent.h - Helpers of data-dependent lowerings ----*- C++ -*-===//
//
// Shared by the lowerings of the ops whose result lengths depend on the
// data (DataDependent.cpp, NonMaxSuppression.cpp; see graph/RunTimeExtents.h):
// the stores of a result's actual extents, the padding of a bound-shaped
// result, index arithmetic and the stable sort of an index array.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_PORTABLE_DATADEPENDENT_H
#define MLCC_LOWERING_COMMON_PORTABLE_DATADEPENDENT_H

#include "ReductionsSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlcc::portable::ddep {

using red::Builder;

/// Stores `dims` (index values, one per dim) into result `i`'s run-time
/// extents, if it has them.
void storeExtents(Builder &b, PortableOp &p, unsigned i,
                  llvm::ArrayRef<mlir::Value> dims);

/// Writes zeros into every element of `buf` (one scf.parallel nest).
void zeroFill(Builder &b, mlir::Value buf);

/// Index arithmetic and comparisons.
mlir::Value addI(Builder &b, mlir::Value x, mlir::Value y);
mlir::Value cmpI(Builder &b, mlir::arith::CmpIPredicate pred, mlir::Value x,
                 mlir::Value y);
/// n + 1 where `cond` (i1) holds, n otherwise (index values).
mlir::Value plusIf(Builder &b, mlir::Value n, mlir::Value cond);
/// An index value as i64.
mlir::Value asI64(Builder &b, mlir::Value index);

/// Sorts entries [0, n) of `keys` (memref<? x i64>, n an index value of at
/// most `maxN`) stably by `before(x, y)`, a strict order on two entries
/// (i1): a bottom-up merge sort through `tmp` (same type), O(n log n).
/// Returns the buffer (keys or tmp) that holds the sorted entries.
mlir::Value
mergeSort(Builder &b, mlir::Value keys, mlir::Value tmp, mlir::Value n,
          int64_t maxN,
          llvm::function_ref<mlir::Value(Builder &, mlir::Value, mlir::Value)>
              before);

void registerNonMaxSuppression(PortableRegistry &registry);

} // namespace mlcc::portable::ddep

#endif // MLCC_LOWERING_COMMON_PORTABLE_DATADEPENDENT_H
