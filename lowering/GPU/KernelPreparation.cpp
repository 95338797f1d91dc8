//===- KernelPreparation.cpp - What every GPU API's compile shares --------===//

#include "KernelPreparation.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace mlcc::gpukernels {

gpu::GPUFuncOp describeKernel(ModuleOp module,
                              lowering::DeviceKernelCode &out) {
  gpu::GPUFuncOp fn;
  module.walk([&](gpu::GPUFuncOp f) { fn = f; });
  out.name = fn.getName().str();
  out.numBuffers = fn.getNumArguments() - 1;
  if (DenseI32ArrayAttr known = fn.getKnownBlockSizeAttr())
    for (unsigned i = 0; i < 3; ++i)
      out.workgroupSize[i] = known.asArrayRef()[i];
  return fn;
}

LogicalResult simplifyKernel(ModuleOp module) {
  PassManager pm(module.getContext());
  pm.addPass(createLowerAffinePass());
  arith::ArithExpandOpsPassOptions expand;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  return pm.run(module);
}

} // namespace mlcc::gpukernels
