//===- Targets.h - The backends by --target name ----------------*- C++ -*-===//

#ifndef MLCC_LOWERING_TARGETS_H
#define MLCC_LOWERING_TARGETS_H

#include "Target.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace mlcc::lowering {

/// The compiled targets' names ("avx512").
std::vector<std::string> targetNames();

/// The target called `name` made with `options`; an error for an unknown
/// name or options the target refuses.
llvm::Expected<std::unique_ptr<Target>>
createTarget(llvm::StringRef name, const TargetOptions &options = {});

} // namespace mlcc::lowering

#endif // MLCC_LOWERING_TARGETS_H
