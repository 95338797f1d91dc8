//===- HostToLLVM.cpp - Host module -> LLVM IR ----------------------------===//

#include "HostToLLVM.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace mlcc::lowering {

static void buildLoweringPipeline(PassManager &pm) {
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertSCFToCFPass());
  // bf16 conversions as integer ops: LLVM would call __truncsfbf2, which
  // neither the runtime nor libgcc on every system has.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Math functions without an LLVM intrinsic (erf, tan, atan, ...) become
  // libm calls; the rest become intrinsics.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

std::unique_ptr<llvm::Module> lowerHostToLLVM(ModuleOp host,
                                              llvm::LLVMContext &llvmContext,
                                              std::vector<std::string> &errors) {
  MLIRContext *ctx = host.getContext();
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  ctx->appendDialectRegistry(registry);

  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error)
      errors.push_back("host lowering: " + d.str());
    return success();
  });
  PassManager pm(ctx);
  buildLoweringPipeline(pm);
  if (failed(pm.run(host))) {
    if (errors.empty())
      errors.push_back("host lowering failed");
    return nullptr;
  }
  std::unique_ptr<llvm::Module> module =
      translateModuleToLLVMIR(host, llvmContext, "mlcc_host");
  if (!module && errors.empty())
    errors.push_back("host lowering: translation to LLVM IR failed");
  return module;
}

} // namespace mlcc::lowering
