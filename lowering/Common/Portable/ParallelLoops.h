//===- ParallelLoops.h - Independent iterations as scf.parallel -*- C++ -*-===//
//
// The loops of a portable lowering whose iterations are independent (each
// writes its own result elements and reads only operands) are emitted as
// one scf.parallel nest, not as scf.for. On the CPU the host pipeline lowers
// them to plain loops today and may split them over the thread pool; a GPU
// target maps the same nest onto a gpu.launch (MLIR's parallel-loop
// mapping) without the op's lowering changing. Loops that carry a value or
// write an element twice (reductions, recurrences) stay scf.for.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_PORTABLE_PARALLELLOOPS_H
#define MLCC_LOWERING_COMMON_PORTABLE_PARALLELLOOPS_H

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlcc::portable {

/// One scf.parallel over [0, ubs[d]) for every d, unit steps; body gets the
/// induction variables (index values), outermost first. With no dims the
/// body runs once, straight-line, with no induction variables.
void parallelLoops(
    mlir::ImplicitLocOpBuilder &b, llvm::ArrayRef<int64_t> ubs,
    llvm::function_ref<void(mlir::ImplicitLocOpBuilder &, mlir::ValueRange)>
        body);

} // namespace mlcc::portable

#endif // MLCC_LOWERING_COMMON_PORTABLE_PARALLELLOOPS_H
