//===- HostToLLVM.h - Host module -> LLVM IR --------------------*- C++ -*-===//
//
// The host module (func + memref + linalg/scf/arith/math from the portable
// lowerings) goes down through MLIR's own conversions to the LLVM dialect
// and is translated to LLVM IR. Memrefs cross function boundaries as bare
// pointers, so the entry is `i32 entry(ptr arena, ptr in..., ptr out...)`
// and kernels are `void kernel(ptr args)`.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_HOSTTOLLVM_H
#define MLCC_LOWERING_COMMON_HOSTTOLLVM_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/Module.h"

#include <memory>
#include <string>
#include <vector>

namespace mlcc::lowering {

/// Lowers `host` in place to the LLVM dialect and translates it; null with
/// `errors` filled on failure.
std::unique_ptr<llvm::Module>
lowerHostToLLVM(mlir::ModuleOp host, llvm::LLVMContext &llvmContext,
                std::vector<std::string> &errors);

} // namespace mlcc::lowering

#endif // MLCC_LOWERING_COMMON_HOSTTOLLVM_H
