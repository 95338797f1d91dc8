//===- Targets.cpp - The backends by --target name ------------------------===//

#include "Targets.h"
#include "AVX512Target.h"

namespace mlcc::lowering {

std::vector<std::string> targetNames() { return {"avx512"}; }

std::unique_ptr<Target> createTarget(llvm::StringRef name) {
  if (name == "avx512")
    return avx512::createAVX512Target();
  return nullptr;
}

} // namespace mlcc::lowering
