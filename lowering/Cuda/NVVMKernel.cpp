//===- NVVMKernel.cpp - One gpu.func kernel -> PTX and cubins -------------===//
//
// The kernels are the ones the Vulkan target compiles to SPIR-V; what the
// NVVM lowering needs first differs in three ways, each a step below:
//
//  - Buffers: the bare-pointer ABI (one .u64 pointer per buffer) lowers only
//    memrefs of static shape, so each flat buffer argument (memref<?xT>)
//    gets a static extent no kernel can reach; the kernel never reads it.
//  - Workgroup memory: the hand-structured kernels' memref.alloc in
//    #gpu.address_space<workgroup> would become malloc; here each becomes a
//    workgroup attribution of the gpu.func, a static .shared array (SPIR-V
//    takes the allocs as they are, and attributions fail there).
//  - Index width: index is i64, as NVVM's data layout has it (SPIR-V: i32).
//
// Math functions call libdevice's __nv_* (linked from the toolkit); without
// a toolkit f32 ones are expanded into MLIR's polynomial approximations and
// a kernel that still needs libdevice is refused.
//
//===----------------------------------------------------------------------===//

#include "CudaTarget.h"
#include "KernelPreparation.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

#include "mlcc/device.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"

#include <cstring>

using namespace mlir;

namespace mlcc::cuda {
namespace {

// The static extent given to every buffer argument: more elements than any
// device buffer has, so no index the kernel computes is outside it.
constexpr int64_t kUnboundedExtent = int64_t(1) << 40;

void registerNVVMTranslation(MLIRContext *ctx) {
  DialectRegistry registry;
  registry.insert<NVVM::NVVMDialect, LLVM::LLVMDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  ctx->appendDialectRegistry(registry);
  ctx->getOrLoadDialect<NVVM::NVVMDialect>();
  ctx->getOrLoadDialect<LLVM::LLVMDialect>();
}

void giveBuffersStaticExtents(gpu::GPUFuncOp fn) {
  SmallVector<Type> inputs;
  for (BlockArgument arg : fn.getArguments()) {
    auto type = cast<MemRefType>(arg.getType());
    if (type.getRank() == 1 && type.isDynamicDim(0))
      type = MemRefType::get({kUnboundedExtent}, type.getElementType(),
                             type.getLayout(), type.getMemorySpace());
    arg.setType(type);
    inputs.push_back(type);
  }
  fn.setFunctionType(FunctionType::get(fn.getContext(), inputs, {}));
}

bool isWorkgroupMemory(MemRefType type) {
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
  return space && space.getValue() == gpu::AddressSpace::Workgroup;
}

LogicalResult allocsToWorkgroupAttributions(gpu::GPUFuncOp fn) {
  SmallVector<memref::AllocOp> allocs;
  fn.walk([&](memref::AllocOp alloc) {
    if (isWorkgroupMemory(alloc.getType()))
      allocs.push_back(alloc);
  });
  for (memref::AllocOp alloc : allocs) {
    if (!alloc.getType().hasStaticShape())
      return alloc.emitError("workgroup memory of a dynamic size");
    BlockArgument memory =
        fn.addWorkgroupAttribution(alloc.getType(), alloc.getLoc());
    alloc.getResult().replaceAllUsesWith(memory);
    alloc.erase();
  }
  return success();
}

// copysign(a, b) on the bits: a's magnitude, b's sign (f32 only; the
// approximations leave it, and NVVM's lowering has no pattern for it).
struct ExpandCopySignF32 : OpRewritePattern<math::CopySignOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::CopySignOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!type.isF32())
      return failure();
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type();
    auto bits = [&](Value v) {
      return rewriter.create<arith::BitcastOp>(loc, i32, v);
    };
    auto mask = [&](Value v, uint32_t m) {
      Value c = rewriter.create<arith::ConstantIntOp>(loc, int32_t(m), 32);
      return rewriter.create<arith::AndIOp>(loc, v, c);
    };
    Value magnitude = mask(bits(op.getLhs()), 0x7fffffffu);
    Value sign = mask(bits(op.getRhs()), 0x80000000u);
    Value result = rewriter.create<arith::OrIOp>(loc, magnitude, sign);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, type, result);
    return success();
  }
};

// |a| on the bits, as copysign.
struct ExpandAbsF32 : OpRewritePattern<math::AbsFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::AbsFOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getType().isF32())
      return failure();
    Location loc = op.getLoc();
    Value bits = rewriter.create<arith::BitcastOp>(loc, rewriter.getI32Type(),
                                                   op.getOperand());
    Value c = rewriter.create<arith::ConstantIntOp>(loc, 0x7fffffff, 32);
    Value magnitude = rewriter.create<arith::AndIOp>(loc, bits, c);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), magnitude);
    return success();
  }
};

// Without libdevice: f32 math as polynomials and exp/log forms (less exact
// than libdevice: fma becomes a multiply and an add).
LogicalResult expandMathWithoutLibdevice(ModuleOp module) {
  RewritePatternSet patterns(module.getContext());
  populateExpandPowFPattern(patterns);
  populateExpandFPowIPattern(patterns);
  populateExpandTanPattern(patterns);
  populateExpandSinhPattern(patterns);
  populateExpandCoshPattern(patterns);
  populateExpandAsinhPattern(patterns);
  populateExpandAcoshPattern(patterns);
  populateExpandAtanhPattern(patterns);
  populateExpandExp2FPattern(patterns);
  populateMathPolynomialApproximationPatterns(patterns);
  // convert-gpu-to-nvvm calls libdevice even for these (and refuses the
  // LLVM intrinsics): the approximations use them, so expand them too.
  populateExpandFloorFPattern(patterns);
  populateExpandCeilFPattern(patterns);
  populateExpandRoundFPattern(patterns);
  populateExpandRoundEvenPattern(patterns);
  populateExpandFmaFPattern(patterns);
  patterns.add<ExpandCopySignF32, ExpandAbsF32>(module.getContext());
  return applyPatternsAndFoldGreedily(module, std::move(patterns));
}

// The math ops MLIR 19's convert-gpu-to-nvvm leaves behind: roundeven,
// round and trunc as LLVM's intrinsics (cvt.rni, ...), the others as calls of
// libdevice's functions
// (__nv_acosf for f32, __nv_acos for f64), as the pass does for the rest.
LogicalResult lowerLeftoverMath(gpu::GPUModuleOp gpuModule) {
  SmallVector<Operation *> leftovers;
  gpuModule.walk([&](Operation *op) {
    if (isa<math::MathDialect>(op->getDialect()))
      leftovers.push_back(op);
  });
  for (Operation *op : leftovers) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value intrinsic;
    if (auto round = dyn_cast<math::RoundEvenOp>(op))
      intrinsic = b.create<LLVM::RoundEvenOp>(loc, round.getOperand());
    else if (auto round = dyn_cast<math::RoundOp>(op))
      intrinsic = b.create<LLVM::RoundOp>(loc, round.getOperand());
    else if (auto trunc = dyn_cast<math::TruncOp>(op))
      intrinsic = b.create<LLVM::FTruncOp>(loc, trunc.getOperand());
    if (intrinsic) {
      op->getResult(0).replaceAllUsesWith(intrinsic);
      op->erase();
      continue;
    }
    static const llvm::StringSet<> viaLibdevice = {
        "acos", "asin", "acosh", "asinh", "atanh", "cosh", "sinh"};
    StringRef name = op->getName().stripDialect();
    Type type = op->getNumResults() == 1 ? op->getResult(0).getType() : Type();
    if (!viaLibdevice.contains(name) || op->getNumOperands() != 1 || !type ||
        !(type.isF32() || type.isF64()))
      return op->emitError() << "the cuda target cannot lower " << op->getName()
                             << " of " << type;
    std::string callee = ("__nv_" + name + (type.isF32() ? "f" : "")).str();
    auto fn = gpuModule.lookupSymbol<LLVM::LLVMFuncOp>(callee);
    if (!fn) {
      OpBuilder top = OpBuilder::atBlockBegin(gpuModule.getBody());
      fn = top.create<LLVM::LLVMFuncOp>(
          loc, callee, LLVM::LLVMFunctionType::get(type, {type}));
    }
    auto call = b.create<LLVM::CallOp>(loc, fn, op->getOperands());
    op->getResult(0).replaceAllUsesWith(call.getResult());
    op->erase();
  }
  return success();
}

// A libdevice function the lowered kernel calls, or "".
std::string libdeviceCall(gpu::GPUModuleOp gpuModule) {
  std::string name;
  gpuModule.walk([&](LLVM::LLVMFuncOp f) {
    if (f.isExternal() && f.getName().starts_with("__nv_"))
      name = f.getName().str();
  });
  return name;
}

LogicalResult lowerToNVVM(ModuleOp module, const CudaOptions &options,
                          gpu::GPUModuleOp gpuModule) {
  MLIRContext *ctx = module.getContext();
  if (failed(gpukernels::simplifyKernel(module)))
    return failure();
  if (options.toolkit.root.empty() &&
      failed(expandMathWithoutLibdevice(module)))
    return failure();
  PassManager pm(ctx);
  OpPassManager &nested = pm.nest<gpu::GPUModuleOp>();
  nested.addPass(createConvertSCFToCFPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  nested.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  nested.addPass(createCanonicalizerPass());
  nested.addPass(createReconcileUnrealizedCastsPass());
  if (failed(pm.run(module)) || failed(lowerLeftoverMath(gpuModule)))
    return failure();
  if (options.toolkit.root.empty()) {
    std::string call = libdeviceCall(gpuModule);
    if (!call.empty())
      return gpuModule.emitError()
             << "this kernel calls " << call
             << ", which only libdevice has, and no CUDA toolkit was "
                "found: install one or give --cuda-path";
  }
  return success();
}

// The PTX of the lowered module for sm_`arch`.
FailureOr<std::string> writePtx(gpu::GPUModuleOp gpuModule,
                                const CudaOptions &options, unsigned arch) {
  MLIRContext *ctx = gpuModule.getContext();
  unsigned ptx = ptxVersionFor(arch);
  auto target = NVVM::NVVMTargetAttr::get(
      ctx, /*optLevel=*/3, "nvptx64-nvidia-cuda", "sm_" + std::to_string(arch),
      "+ptx" + std::to_string(ptx));
  gpu::TargetOptions targetOptions(options.toolkit.root, {}, "",
                                   gpu::CompilationTarget::Assembly);
  std::optional<SmallVector<char, 0>> text;
  {
    // Without a toolkit the serializer still says that it found no
    // libdevice; lowerToNVVM has made sure that nothing needs it.
    ScopedDiagnosticHandler quiet(ctx, [&](Diagnostic &d) {
      std::string message = d.str();
      bool noToolkit = options.toolkit.root.empty() &&
                       (StringRef(message).contains("LibDevice path") ||
                        StringRef(message).contains("CUDA path"));
      return success(noToolkit);
    });
    text = cast<gpu::TargetAttrInterface>(target).serializeToObject(
        gpuModule, targetOptions);
  }
  if (!text)
    return gpuModule.emitError() << "cannot write PTX for sm_" << arch;
  std::string out(text->begin(), text->end());
  // The serializer's PTX may end in a NUL, which ptxas refuses.
  while (!out.empty() && out.back() == '\0')
    out.pop_back();
  return out;
}

void appendBytes(std::vector<uint8_t> &out, const void *data, size_t bytes) {
  const auto *p = static_cast<const uint8_t *>(data);
  out.insert(out.end(), p, p + bytes);
}

// The bundle: header, image table, then each image 16-byte aligned.
std::vector<uint8_t>
writeBundle(ArrayRef<std::pair<mlcc_cuda_image, std::vector<uint8_t>>> images) {
  std::vector<uint8_t> out;
  mlcc_cuda_bundle_header header{};
  std::memcpy(header.magic, MLCC_CUDA_BUNDLE_MAGIC, sizeof(header.magic));
  header.num_images = images.size();
  appendBytes(out, &header, sizeof(header));
  uint64_t offset = sizeof(header) + images.size() * sizeof(mlcc_cuda_image);
  for (const auto &[entry, bytes] : images) {
    offset = (offset + 15) / 16 * 16;
    mlcc_cuda_image e = entry;
    e.offset = offset;
    e.bytes = bytes.size();
    appendBytes(out, &e, sizeof(e));
    offset += bytes.size();
  }
  for (const auto &[entry, bytes] : images) {
    out.resize((out.size() + 15) / 16 * 16, 0);
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  return out;
}

} // namespace

LogicalResult compileCudaKernel(ModuleOp module, const CudaOptions &options,
                                lowering::DeviceKernelCode &out) {
  MLIRContext *ctx = module.getContext();
  registerNVVMTranslation(ctx);
  gpu::GPUFuncOp fn = gpukernels::describeKernel(module, out);
  gpu::GPUModuleOp gpuModule = fn->getParentOfType<gpu::GPUModuleOp>();

  giveBuffersStaticExtents(fn);
  if (failed(allocsToWorkgroupAttributions(fn)) ||
      failed(lowerToNVVM(module, options, gpuModule)))
    return failure();

  std::vector<std::pair<mlcc_cuda_image, std::vector<uint8_t>>> images;
  for (unsigned arch : options.archs) {
    FailureOr<std::string> ptx = writePtx(gpuModule, options, arch);
    if (failed(ptx))
      return failure();
    if (arch == options.archs.front())
      out.assembly = *ptx;
    if (!options.toolkit.ptxas.empty()) {
      llvm::Expected<Assembled> cubin =
          assemblePtx(options.toolkit.ptxas, *ptx, arch);
      if (!cubin)
        return gpuModule.emitError() << "kernel " << out.name << ": "
                                     << llvm::toString(cubin.takeError());
      out.report += (out.report.empty() ? "" : "\n") + out.name + " sm_" +
                    std::to_string(arch) + ": " + cubin->resources;
      out.spills |= cubin->spills;
      images.push_back(
          {{MLCC_CUDA_IMAGE_CUBIN, arch, 0, 0}, std::move(cubin->cubin)});
    }
    std::vector<uint8_t> text(ptx->begin(), ptx->end());
    text.push_back(0); // cuModuleLoadData takes PTX as a C string
    images.push_back({{MLCC_CUDA_IMAGE_PTX, arch, 0, 0}, std::move(text)});
  }
  out.code = writeBundle(images);
  return success();
}

} // namespace mlcc::cuda
