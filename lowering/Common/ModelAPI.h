//===- ModelAPI.h - The model's C API, defined in its object ----*- C++ -*-===//
//
// What the generated header declares, defined in LLVM IR next to the host
// schedule: the constant mlcc_model_desc of runtime/include/mlcc/model.h
// (names, dtypes, dims, arena size, an invoke function) and one-line
// wrappers mlcc_<name>_create/destroy/run/run_with_arena/run_static that
// pass it to the runtime, where the argument checks live.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_MODELAPI_H
#define MLCC_LOWERING_COMMON_MODELAPI_H

#include "HeaderWriter.h"
#include "HostBuilder.h"

#include "llvm/IR/Module.h"

namespace mlcc::lowering {

/// The exported symbol of the model's descriptor.
std::string modelDescriptorSymbol(const ModelInterface &iface);

/// Adds the descriptor and the API functions to `m`, which defines each
/// entry's symbol as i32 (ptr arena, ptr weights, ptr input...,
/// ptr output..., ptr pool). Several entries become the descriptor's
/// variants, with the dims of each entry's own interface.
void addModelAPI(llvm::Module &m, const ModelInterface &iface,
                 llvm::ArrayRef<HostEntry> entries);

} // namespace mlcc::lowering

#endif // MLCC_LOWERING_COMMON_MODELAPI_H
