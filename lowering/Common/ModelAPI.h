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

/// A device model's program (runtime/include/mlcc/model.h's
/// mlcc_device_program): its kernels' code and its weights are data blobs
/// of the object, named by these symbols.
struct DeviceProgramSymbols {
  struct Kernel {
    std::string name, codeSymbol;
    uint64_t codeBytes = 0;
    uint32_t numBuffers = 0;
    uint32_t workgroupSize[3] = {1, 1, 1};
  };
  uint32_t api = 0;
  std::vector<Kernel> kernels;
  /// Empty with a weights file (its data is what the device gets).
  std::string weightsSymbol;
  uint64_t weightsBytes = 0;
};

/// The exported symbol of the model's descriptor.
std::string modelDescriptorSymbol(const ModelInterface &iface);

/// Adds the descriptor and the API functions to `m`, which defines each
/// entry's symbol as i32 (ptr arena, ptr weights, ptr input...,
/// ptr output..., ptr pool). Several entries become the descriptor's
/// variants, with the dims of each entry's own interface.
void addModelAPI(llvm::Module &m, const ModelInterface &iface,
                 llvm::ArrayRef<HostEntry> entries,
                 const DeviceProgramSymbols *device = nullptr);

} // namespace mlcc::lowering

#endif // MLCC_LOWERING_COMMON_MODELAPI_H
