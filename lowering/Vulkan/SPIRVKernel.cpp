//===- SPIRVKernel.cpp - One gpu.func kernel -> a SPIR-V module
//------------===//
//
// The conversion is our own pass list rather than convert-gpu-to-spirv,
// which leaves math and cf ops out: memory spaces to storage classes, then
// gpu, scf, cf, arith, math, index, memref and func to SPIR-V in one full
// conversion, then the ABI lowering (entry point, bindings (0, i)) and the
// version/capability/extension update, and serialization. Each kernel is a
// module of its own (Metal's SPIRV-Cross route wants that too).
//
//===----------------------------------------------------------------------===//

#include "KernelPreparation.h"
#include "SPIRVMath.h"
#include "VulkanTarget.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Conversion/ArithToSPIRV/ArithToSPIRV.h"
#include "mlir/Conversion/ControlFlowToSPIRV/ControlFlowToSPIRV.h"
#include "mlir/Conversion/FuncToSPIRV/FuncToSPIRV.h"
#include "mlir/Conversion/GPUToSPIRV/GPUToSPIRV.h"
#include "mlir/Conversion/IndexToSPIRV/IndexToSPIRV.h"
#include "mlir/Conversion/MathToSPIRV/MathToSPIRV.h"
#include "mlir/Conversion/MemRefToSPIRV/MemRefToSPIRV.h"
#include "mlir/Conversion/SCFToSPIRV/SCFToSPIRV.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVAttributes.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/Dialect/SPIRV/Transforms/Passes.h"
#include "mlir/Dialect/SPIRV/Transforms/SPIRVConversion.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/SPIRV/Serialization.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace mlcc::vulkan {
namespace {

// Vulkan 1.1 (SPIR-V 1.3) compute with the storage and arithmetic types the
// portable lowerings use; spirv-update-vce keeps only what a kernel needs,
// so a kernel without f64 runs on a device without shaderFloat64.
// With a subgroup size, the subgroup shuffles too (Vulkan 1.1 core).
std::string targetEnv(unsigned subgroupSize) {
  std::string shuffles = subgroupSize
                             ? ", GroupNonUniform, GroupNonUniformShuffle, "
                               "GroupNonUniformShuffleRelative"
                             : "";
  std::string limit =
      subgroupSize ? ", subgroup_size = " + std::to_string(subgroupSize) : "";
  return "#spirv.target_env<#spirv.vce<v1.3, [Shader, Int64, Int16, Int8, "
         "Float64, Float16, StorageBuffer16BitAccess, "
         "StorageBuffer8BitAccess, UniformAndStorageBuffer8BitAccess" +
         shuffles +
         "], [SPV_KHR_storage_buffer_storage_class, SPV_KHR_8bit_storage, "
         "SPV_KHR_16bit_storage]>, #spirv.resource_limits<"
         "max_compute_workgroup_invocations = 1024, "
         "max_compute_workgroup_size = [1024, 1024, 64]" +
         limit + ">>";
}

// Signed 64-bit compares as unsigned compares of the values with their sign
// bits flipped (exact). Mesa 22's lavapipe miscompiles a signed compare of
// a sign-extended 32-bit value with a constant (it answers as if the value
// were above every 32-bit constant); the xor hides the extension from the
// driver's optimiser. Index checks compare such values all the time.
void flipSigned64Compares(ModuleOp module) {
  SmallVector<arith::CmpIOp> compares;
  module.walk([&](arith::CmpIOp cmp) {
    if (cmp.getLhs().getType().isInteger(64))
      compares.push_back(cmp);
  });
  for (arith::CmpIOp cmp : compares) {
    std::optional<arith::CmpIPredicate> unsignedForm;
    switch (cmp.getPredicate()) {
    case arith::CmpIPredicate::slt:
      unsignedForm = arith::CmpIPredicate::ult;
      break;
    case arith::CmpIPredicate::sle:
      unsignedForm = arith::CmpIPredicate::ule;
      break;
    case arith::CmpIPredicate::sgt:
      unsignedForm = arith::CmpIPredicate::ugt;
      break;
    case arith::CmpIPredicate::sge:
      unsignedForm = arith::CmpIPredicate::uge;
      break;
    default:
      continue;
    }
    OpBuilder b(cmp);
    Location loc = cmp.getLoc();
    Value sign = b.create<arith::ConstantIntOp>(loc, INT64_MIN, 64);
    Value lhs = b.create<arith::XOrIOp>(loc, cmp.getLhs(), sign);
    Value rhs = b.create<arith::XOrIOp>(loc, cmp.getRhs(), sign);
    cmp.replaceAllUsesWith(
        b.create<arith::CmpIOp>(loc, *unsignedForm, lhs, rhs).getResult());
    cmp.erase();
  }
}

// Kernel-local arrays (memref.alloca) live in Function storage.
void placeAllocasInFunctionStorage(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  auto function =
      spirv::StorageClassAttr::get(ctx, spirv::StorageClass::Function);
  module.walk([&](memref::AllocaOp alloca) {
    MemRefType t = alloca.getType();
    alloca.getResult().setType(MemRefType::get(t.getShape(), t.getElementType(),
                                               t.getLayout(), function));
  });
}

LogicalResult convertToSPIRV(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  gpu::GPUModuleOp gpuModule;
  module.walk([&](gpu::GPUModuleOp m) { gpuModule = m; });
  spirv::TargetEnvAttr targetAttr = spirv::lookupTargetEnvOrDefault(gpuModule);
  {
    // The gpu dialect's workgroup memory (the hand-structured kernels'
    // slices) is Workgroup storage; MLIR's Vulkan map knows only numbers.
    auto storageClass =
        [](Attribute space) -> std::optional<spirv::StorageClass> {
      if (auto gpuSpace = dyn_cast_or_null<gpu::AddressSpaceAttr>(space))
        if (gpuSpace.getValue() == gpu::AddressSpace::Workgroup)
          return spirv::StorageClass::Workgroup;
      return spirv::mapMemorySpaceToVulkanStorageClass(space);
    };
    spirv::MemorySpaceToStorageClassConverter converter(storageClass);
    spirv::convertMemRefTypesAndAttrs(gpuModule, converter);
  }
  std::unique_ptr<ConversionTarget> target =
      SPIRVConversionTarget::get(targetAttr);
  SPIRVConversionOptions options;
  options.use64bitIndex = false;
  SPIRVTypeConverter typeConverter(targetAttr, options);
  RewritePatternSet patterns(ctx);
  populateGPUToSPIRVPatterns(typeConverter, patterns);
  ScfToSPIRVContext scfContext;
  populateSCFToSPIRVPatterns(typeConverter, scfContext, patterns);
  cf::populateControlFlowToSPIRVPatterns(typeConverter, patterns);
  arith::populateArithToSPIRVPatterns(typeConverter, patterns);
  populateMathToSPIRVPatterns(typeConverter, patterns);
  populateMathExtrasToSPIRV(typeConverter, patterns);
  index::populateIndexToSPIRVPatterns(typeConverter, patterns);
  populateMemRefToSPIRVPatterns(typeConverter, patterns);
  populateFuncToSPIRVPatterns(typeConverter, patterns);
  return applyFullConversion(gpuModule, *target, std::move(patterns));
}

} // namespace

LogicalResult compileSPIRVKernel(ModuleOp module,
                                 lowering::DeviceKernelCode &out,
                                 unsigned subgroupSize) {
  MLIRContext *ctx = module.getContext();
  ctx->getOrLoadDialect<spirv::SPIRVDialect>();
  gpu::GPUFuncOp fn = gpukernels::describeKernel(module, out);
  SmallVector<int32_t, 3> size(out.workgroupSize, out.workgroupSize + 3);

  module->setAttr(spirv::getTargetEnvAttrName(),
                  parseAttribute(targetEnv(subgroupSize), ctx));
  fn->setAttr(spirv::getEntryPointABIAttrName(),
              spirv::getEntryPointABIAttr(ctx, size));
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    fn.setArgAttr(i, spirv::getInterfaceVarABIAttrName(),
                  spirv::getInterfaceVarABIAttr(0, i, std::nullopt, ctx));

  if (failed(gpukernels::simplifyKernel(module)) ||
      failed(prepareMathForSPIRV(module)))
    return failure();
  placeAllocasInFunctionStorage(module);
  flipSigned64Compares(module);
  if (failed(convertToSPIRV(module)))
    return failure();

  spirv::ModuleOp spirvModule;
  module.walk([&](spirv::ModuleOp m) { spirvModule = m; });
  {
    PassManager pm(ctx, spirv::ModuleOp::getOperationName());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(spirv::createSPIRVLowerABIAttributesPass());
    pm.addPass(spirv::createSPIRVUpdateVCEPass());
    pm.addPass(createCanonicalizerPass());
    if (failed(pm.run(spirvModule)))
      return failure();
  }
  SmallVector<uint32_t> words;
  if (failed(spirv::serialize(spirvModule, words)))
    return spirvModule.emitError("cannot serialize the SPIR-V module");
  const auto *bytes = reinterpret_cast<const uint8_t *>(words.data());
  out.code.assign(bytes, bytes + words.size() * sizeof(uint32_t));
  return success();
}

} // namespace mlcc::vulkan
