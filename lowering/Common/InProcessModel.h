//===- InProcessModel.h - Run a compiled object in this process -*- C++ -*-===//
//
// `mlcc run`/`bench --target avx512` and the tests execute exactly the
// object `mlcc compile` writes: its bytes are linked into this process by
// LLVM's ORC JIT linker (no code is generated here, only relocated), with
// the runtime's functions resolved to the copy linked into the tool.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_INPROCESSMODEL_H
#define MLCC_LOWERING_COMMON_INPROCESSMODEL_H

#include "mlcc/model.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm::orc {
class LLJIT;
}

namespace mlcc::lowering {

class InProcessModel {
public:
  /// Links `object` (an mlcc-compiled model named `name`) into this process.
  /// `profileHook`, when given, is what a profiling build's calls to
  /// mlcc_profile_op reach.
  static llvm::Expected<std::unique_ptr<InProcessModel>>
  load(const std::string &object, const std::string &name,
       void (*profileHook)(int32_t) = nullptr);
  ~InProcessModel();

  /// The model's descriptor, to use with the mlcc_model_* functions.
  const mlcc_model_desc *descriptor() const { return desc; }

private:
  InProcessModel() = default;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  const mlcc_model_desc *desc = nullptr;
};

} // namespace mlcc::lowering

#endif // MLCC_LOWERING_COMMON_INPROCESSMODEL_H
