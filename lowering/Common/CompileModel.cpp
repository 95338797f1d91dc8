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

// FNV-1a, 64 bits: identical weights data give the same fingerprint, and a
// file from another compile (other weights, other packing) almost surely
// does not.
static uint64_t fingerprint(const std::vector<uint8_t> &data) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t byte : data) {
    h ^= byte;
    h *= 0x100000001b3ull;
  }
  return h;
}

// The weights file of runtime/include/mlcc/model.h: a 64-byte header
// (magic, header size, data size, fingerprint, model name; little-endian),
// then the data.
static std::string weightsFileImage(const ModelInterface &iface,
                                    const std::vector<uint8_t> &data) {
  std::string image(64, '\0');
  auto put = [&](size_t at, uint64_t v, unsigned bytes) {
    for (unsigned i = 0; i < bytes; ++i)
      image[at + i] = static_cast<char>(v >> (8 * i));
  };
  image.replace(0, 8, "MLCCWGT1");
  put(8, 64, 4);
  put(16, iface.weightsBytes, 8);
  put(24, iface.weightsFingerprint, 8);
  image.replace(32, std::min<size_t>(iface.name.size(), 32), iface.name, 0,
                32);
  image.append(data.begin(), data.end());
  return image;
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
                               {options.profile, options.targetKernels,
                                options.externalWeights},
                               host))) {
      if (errors.empty())
        errors.push_back("lowering to --target " + target.name().str() +
                         " failed");
      return failure();
    }
  }
  if (options.externalWeights) {
    host.interface.externalWeights = true;
    host.interface.weightsBytes = host.weights.size();
    host.interface.weightsFingerprint = fingerprint(host.weights);
    out.weightBytes = host.weights.size();
    out.weightsFile = weightsFileImage(host.interface, host.weights);
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
  out.inPlaceResults = host.inPlaceResults;
  out.numKernels = host.kernels.size();
  out.profiledOps = host.profiledOps;
  return success();
}

} // namespace mlcc::lowering
