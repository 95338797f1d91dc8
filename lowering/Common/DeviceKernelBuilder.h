//===- DeviceKernelBuilder.h - Host ops -> one gpu.func ---------*- C++ -*-===//
//
// Private to DeviceSchedule: builds the kernel of one launch site. The ops
// are cloned into a gpu.func; what they use from the host function becomes
// kernel arguments (flat buffers) or parameter words, or is cloned along
// (constants, index arithmetic, loads the host does not need).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_DEVICEKERNELBUILDER_H
#define MLCC_LOWERING_COMMON_DEVICEKERNELBUILDER_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>

namespace mlcc::lowering::device {

/// What the host passes to one kernel.
struct KernelInterface {
  /// Device memrefs of the host function, bound in this order (bindings
  /// 1..n), each at its address rounded down to the buffer alignment.
  llvm::SmallVector<mlir::Value> buffers;
  /// Host scalars, in this order, after one word per buffer (its element
  /// offset from where it is bound).
  llvm::SmallVector<mlir::Value> scalars;
  /// For a parallel kernel: the number of iterations (a host index value
  /// built by the caller from `scalars` and constants), else null.
  mlir::Value iterations;
};

/// Whether a host value may be cloned into a kernel instead of passed:
/// given by the scheduler (pure ops and loads it keeps off the host).
using ClonablePredicate = std::function<bool(mlir::Operation *)>;

/// Builds the kernel for `ops` (consecutive ops of one host block: one
/// scf.parallel when `parallel`, else any ops, run by one thread) into a new
/// module holding one gpu.module with one gpu.func named `name`. Fills
/// `iface`; host values the host must compute for it (`iface.iterations`)
/// are built with `hostBuilder` before ops.front(). Returns null after
/// emitting an error.
mlir::OwningOpRef<mlir::ModuleOp>
buildKernel(llvm::ArrayRef<mlir::Operation *> ops, bool parallel,
            llvm::StringRef name, const ClonablePredicate &clonable,
            mlir::OpBuilder &hostBuilder, KernelInterface &iface);

/// Appends the parameter words of host scalar `scalar` (what the kernel's
/// parameter loads reassemble): index and 32-bit values one word, wider
/// ones two (low first), narrower ones zero-extended.
void appendHostWords(mlir::OpBuilder &b, mlir::Location loc, mlir::Value scalar,
                     llvm::SmallVectorImpl<mlir::Value> &words);

/// The bytes one element of memref element type `t` takes in device memory.
unsigned storageBytes(mlir::Type t);

} // namespace mlcc::lowering::device

#endif // MLCC_LOWERING_COMMON_DEVICEKERNELBUILDER_H
