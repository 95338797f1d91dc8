//===- CompileModel.cpp - Graph module -> object + header -----------------===//

#include "CompileModel.h"
#include "HostBuilder.h"
#include "HostToLLVM.h"
#include "ModelAPI.h"
#include "ObjectEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"

using namespace mlir;

namespace mlcc::lowering {

std::string modelIdentifier(llvm::StringRef name) {
  std::string id;
  for (char c : name)
    id += llvm::isAlnum(c) ? c : '_';
  if (id.empty() || llvm::isDigit(id.front()))
    id = "m" + id;
  return id;
}

bool isReservedModelName(llvm::StringRef name) {
  return llvm::is_contained({"model", "arena", "threadpool", "tensor", "dtype",
                             "status", "last_error", "parallel"},
                            name);
}

static func::FuncOp findMain(ModuleOp module) {
  func::FuncOp main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    for (auto f : module.getOps<func::FuncOp>())
      return f;
  return main;
}

LogicalResult compileModel(ModuleOp graph, Target &target,
                           const CompileModelOptions &options,
                           CompiledModel &out,
                           std::vector<std::string> &errors) {
  func::FuncOp main = findMain(graph);
  if (!main) {
    errors.push_back("the module has no function to compile");
    return failure();
  }
  if (options.name != modelIdentifier(options.name) ||
      isReservedModelName(options.name)) {
    errors.push_back("'" + options.name +
                     "' cannot name a model: it must be a C identifier and "
                     "not one of the runtime's prefixes (model, arena, "
                     "threadpool, tensor, dtype, status, last_error, "
                     "parallel)");
    return failure();
  }
  HostModule host;
  {
    ScopedDiagnosticHandler handler(graph.getContext(), [&](Diagnostic &d) {
      if (d.getSeverity() == DiagnosticSeverity::Error)
        errors.push_back(d.str());
      return success();
    });
    if (failed(buildHostModule(main, target, options.name,
                               {options.profile, options.targetKernels},
                               host))) {
      if (errors.empty())
        errors.push_back("lowering to --target " + target.name().str() +
                         " failed");
      return failure();
    }
  }
  if (options.hostMlir) {
    host.module->print(*options.hostMlir);
    return success();
  }

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      lowerHostToLLVM(*host.module, llvmContext, errors);
  if (!llvmModule)
    return failure();
  addModelAPI(*llvmModule, host.interface, host.entry);

  std::vector<KernelBlob> kernels;
  for (const NamedBytes &k : host.kernels)
    kernels.push_back({k.name, k.bytes, 64, SymbolScope::Local});
  std::vector<DataBlob> data;
  for (const NamedBytes &d : host.data) {
    data.push_back({d.name, d.bytes, 64, SymbolScope::Local});
    out.weightBytes += d.bytes.size();
  }
  ObjectEmitterOptions emitterOptions;
  emitterOptions.hostCpu = target.hostCpu().str();
  emitterOptions.optimizeHost = true;
  llvm::SmallString<0> object;
  llvm::raw_svector_ostream os(object);
  if (llvm::Error err = emitObject(std::move(llvmModule), kernels, data, os,
                                   emitterOptions)) {
    errors.push_back(llvm::toString(std::move(err)));
    return failure();
  }
  out.object.assign(object.begin(), object.end());
  out.interface = host.interface;
  std::string headerError;
  if (!tryWriteModelHeader(out.interface, out.header, headerError)) {
    errors.push_back(headerError);
    return failure();
  }
  out.arenaBytes = host.interface.arenaBytes;
  out.intermediateBytes = host.intermediateBytes;
  out.arenaLowerBound = host.arenaLowerBound;
  out.numKernels = host.kernels.size();
  out.profiledOps = host.profiledOps;
  return success();
}

} // namespace mlcc::lowering
