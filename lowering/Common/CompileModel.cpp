//===- CompileModel.cpp - Graph module -> object + header -----------------===//

#include "CompileModel.h"
#include "DeviceSchedule.h"
#include "HostBuilder.h"
#include "HostToLLVM.h"
#include "ModelAPI.h"
#include "ObjectEmitter.h"
#include "Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
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

// "batch=8" for an entry: the value of each dynamic dim of `merged`, by its
// name (or "input 'x' dim 0" when the model did not name it).
static std::string describeShapes(const ModelInterface &entry,
                                  const ModelInterface &merged) {
  std::vector<std::string> parts;
  auto add = [&](const std::vector<InterfaceTensor> &mergedTensors,
                 const std::vector<InterfaceTensor> &entryTensors,
                 const char *kind) {
    for (size_t i = 0; i < mergedTensors.size(); ++i)
      for (size_t d = 0; d < mergedTensors[i].dims.size(); ++d) {
        const InterfaceDim &dim = mergedTensors[i].dims[d];
        if (dim.size >= 0)
          continue;
        std::string name = !dim.symbol.empty()
                               ? dim.symbol
                               : std::string(kind) + " '" +
                                     mergedTensors[i].name + "' dim " +
                                     std::to_string(d);
        std::string part =
            name + "=" + std::to_string(entryTensors[i].dims[d].size);
        if (!llvm::is_contained(parts, part))
          parts.push_back(part);
      }
  };
  add(merged.inputs, entry.inputs, "input");
  std::string text;
  for (const std::string &p : parts)
    text += (text.empty() ? "" : ", ") + p;
  return text;
}

/// Whether some result in `main` has a dim that a data-dependent op (see
/// graph/RunTimeExtents.h) leaves dynamic.
static bool hasDataDependentDims(func::FuncOp main) {
  return main
      .walk([](Operation *op) {
        bool dynamic = llvm::any_of(op->getResultTypes(), [](Type t) {
          auto shaped = dyn_cast<RankedTensorType>(t);
          return shaped && !shaped.hasStaticShape();
        });
        return dynamic ? WalkResult::interrupt() : WalkResult::advance();
      })
      .wasInterrupted();
}

static LogicalResult boundRunTimeExtents(ModuleOp module,
                                         std::vector<std::string> &errors) {
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error)
      errors.push_back(d.str());
    return success();
  });
  PassManager pm(module.getContext());
  pm.addNestedPass<func::FuncOp>(graph::createBoundRunTimeExtents());
  return pm.run(module);
}

static func::FuncOp findMain(ModuleOp module) {
  func::FuncOp main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    for (auto f : module.getOps<func::FuncOp>())
      return f;
  return main;
}

// The interface of a model compiled for several shapes: a dim that differs
// between the entries is -1, named by the ONNX dim_param the importer kept
// (graph.dim_params); the arena is the largest entry's.
static ModelInterface mergeInterfaces(const std::vector<HostEntry> &entries,
                                      func::FuncOp main) {
  ModelInterface merged = entries.front().interface;
  auto merge = [&](std::vector<InterfaceTensor> ModelInterface::*tensors,
                   bool inputs) {
    for (auto [i, tensor] : llvm::enumerate(merged.*tensors)) {
      auto params =
          inputs ? main.getArgAttrOfType<ArrayAttr>(i, "graph.dim_params")
                 : main.getResultAttrOfType<ArrayAttr>(i, "graph.dim_params");
      for (auto [d, dim] : llvm::enumerate(tensor.dims))
        for (const HostEntry &e : entries)
          if ((e.interface.*tensors)[i].dims[d].size != dim.size) {
            dim.size = -1;
            if (params && d < params.size())
              dim.symbol = cast<StringAttr>(params[d]).str();
          }
    }
  };
  merge(&ModelInterface::inputs, true);
  merge(&ModelInterface::outputs, false);
  for (const HostEntry &e : entries)
    merged.arenaBytes = std::max(merged.arenaBytes, e.interface.arenaBytes);
  return merged;
}

static uint64_t align64(uint64_t bytes) { return llvm::alignTo(bytes, 64); }

// A range of lengths in the interface: its dim dynamic in the tensors that
// have it, and an arena that holds every variant's own and its staging
// buffers (the layout ModelPadded.c uses: after the variant's arena, each
// tensor with the dim at the variant's shape, 64-byte aligned).
static LogicalResult describePadded(const InterfacePaddedDim &padded,
                                    DeviceBackend *device,
                                    ArrayRef<HostEntry> entries,
                                    ModelInterface &iface,
                                    std::vector<std::string> &errors) {
  if (device || iface.outputDimsOffset != 0) {
    errors.push_back(device ? "a range of lengths is not compiled for a "
                              "device target yet; give --dim values"
                            : "outputs whose extents depend on the data "
                              "cannot be compiled with a range of lengths "
                              "yet");
    return failure();
  }
  iface.padded = padded;
  size_t numInputs = iface.inputs.size();
  for (auto [i, axis] : llvm::enumerate(padded.axes)) {
    InterfaceTensor &t =
        i < numInputs ? iface.inputs[i] : iface.outputs[i - numInputs];
    if (axis >= 0)
      t.dims[axis] = {-1, padded.name, -1};
  }
  for (const HostEntry &e : entries) {
    uint64_t bytes = align64(e.interface.arenaBytes);
    auto stage = [&](const std::vector<InterfaceTensor> &tensors,
                     size_t first) {
      for (auto [i, t] : llvm::enumerate(tensors)) {
        if (padded.axes[first + i] < 0)
          continue;
        uint64_t size = dtypeByteSize(t.dtype);
        for (const InterfaceDim &d : t.dims)
          size *= static_cast<uint64_t>(d.size);
        bytes += align64(size);
      }
    };
    stage(e.interface.inputs, 0);
    stage(e.interface.outputs, numInputs);
    iface.arenaBytes = std::max(iface.arenaBytes, bytes);
  }
  return success();
}

LogicalResult compileModel(ModuleOp graph, Target &target,
                           const CompileModelOptions &options,
                           CompiledModel &out,
                           std::vector<std::string> &errors) {
  return compileModel(ArrayRef<ModuleOp>(graph), target, options, out, errors);
}

LogicalResult compileModel(ArrayRef<ModuleOp> variants, Target &target,
                           const CompileModelOptions &options,
                           CompiledModel &out,
                           std::vector<std::string> &errors) {
  if (options.name != modelIdentifier(options.name) ||
      isReservedModelName(options.name)) {
    errors.push_back("'" + options.name +
                     "' cannot name a model: it must be a C identifier and "
                     "not one of the runtime's prefixes (model, arena, "
                     "threadpool, tensor, dtype, status, last_error, "
                     "parallel)");
    return failure();
  }
  DeviceBackend *device = target.device();
  if ((options.deviceKernels || options.deviceAssembly) && !device) {
    errors.push_back("--target " + target.name().str() +
                     " has no device kernels to print");
    return failure();
  }
  if (device && options.profile) {
    errors.push_back("--per-op profiling is not available for --target " +
                     target.name().str() + " yet");
    return failure();
  }
  if (device && variants.size() > 1) {
    errors.push_back("--target " + target.name().str() +
                     " compiles one set of shapes; several --dim values are "
                     "not supported for it yet");
    return failure();
  }
  HostModule host;
  func::FuncOp firstMain;
  SmallVector<OwningOpRef<ModuleOp>> bounded;
  for (ModuleOp graph : variants) {
    func::FuncOp main = findMain(graph);
    if (!main) {
      errors.push_back("the module has no function to compile");
      return failure();
    }
    if (hasDataDependentDims(main)) {
      // Bound shapes for them, on a copy: the caller's graph keeps its
      // types (the reference executor runs it as it is).
      bounded.push_back(graph.clone());
      if (failed(boundRunTimeExtents(*bounded.back(), errors)))
        return failure();
      main = findMain(*bounded.back());
    }
    if (!firstMain)
      firstMain = main;
    ScopedDiagnosticHandler handler(graph.getContext(), [&](Diagnostic &d) {
      if (d.getSeverity() == DiagnosticSeverity::Error)
        errors.push_back(d.str());
      return success();
    });
    // A device's weights are uploaded from one blob (or the weights file).
    if (failed(buildHostModule(main, target, options.name,
                               {options.profile, options.targetKernels,
                                options.externalWeights || device,
                                options.padded.has_value(),
                                options.target.minParallelMicros},
                               host))) {
      if (errors.empty())
        errors.push_back("lowering to --target " + target.name().str() +
                         " failed");
      return failure();
    }
  }
  if (host.entries.size() > 1 &&
      llvm::any_of(host.entries, [](const HostEntry &e) {
        return e.interface.outputDimsOffset != 0;
      })) {
    errors.push_back("outputs whose extents depend on the data cannot be "
                     "compiled with several --dim values yet");
    return failure();
  }
  ModelInterface iface = mergeInterfaces(host.entries, firstMain);
  if (options.range) {
    if (device || iface.outputDimsOffset != 0) {
      errors.push_back(
          device ? "--target " + target.name().str() +
                       " compiles no range of a dim yet; give --dim values"
                 : "outputs whose extents depend on the data cannot be "
                   "compiled with a range of a dim yet");
      return failure();
    }
    iface.range = options.range;
    size_t numInputs = iface.inputs.size();
    for (auto [i, mapped] : llvm::enumerate(options.range->mapped)) {
      InterfaceTensor &t =
          i < numInputs ? iface.inputs[i] : iface.outputs[i - numInputs];
      if (mapped && !t.dims.empty())
        t.dims[0] = {-1, options.range->name, -1};
    }
  }
  if (options.padded && failed(describePadded(*options.padded, device,
                                              host.entries, iface, errors)))
    return failure();
  if (host.entries.size() > 1 || options.range || options.padded)
    for (const HostEntry &e : host.entries)
      iface.variants.push_back(describeShapes(e.interface, iface));
  if (const CpuTarget *cpu = target.cpuTarget()) {
    iface.cpuFeatures = cpu->features;
    iface.cpuName = cpu->name;
  }
  if (options.externalWeights) {
    iface.externalWeights = true;
    iface.weightsBytes = host.weights.size();
    iface.weightsFingerprint = fingerprint(host.weights);
    out.weightBytes = host.weights.size();
    out.weightsFile = weightsFileImage(iface, host.weights);
  }
  DeviceProgram program;
  if (device) {
    ScopedDiagnosticHandler handler(
        host.module->getContext(), [&](Diagnostic &d) {
          if (d.getSeverity() == DiagnosticSeverity::Error)
            errors.push_back(d.str());
          return success();
        });
    if (failed(
            scheduleOnDevice(host, *device, program,
                             {options.deviceKernels, options.deviceFault}))) {
      if (errors.empty())
        errors.push_back("scheduling for --target " + target.name().str() +
                         " failed");
      return failure();
    }
  }
  if (options.deviceKernels)
    return success();
  if (options.deviceAssembly || options.keepDeviceAssembly) {
    llvm::raw_string_ostream os(out.deviceAssembly);
    for (const DeviceKernelCode &k : program.kernels)
      os << "// kernel " << k.name << "\n" << k.assembly;
  }
  if (options.deviceAssembly) {
    *options.deviceAssembly << out.deviceAssembly;
    return success();
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
  std::vector<DataBlob> data;
  for (const NamedBytes &d : host.data) {
    data.push_back({d.name, d.bytes, 64, SymbolScope::Local});
    out.weightBytes += d.bytes.size();
  }
  DeviceProgramSymbols deviceSymbols;
  // The blobs refer to these bytes until the object is written.
  std::vector<uint8_t> deviceWeights;
  if (device) {
    deviceSymbols.api = device->api();
    for (DeviceKernelCode &k : program.kernels) {
      DeviceProgramSymbols::Kernel symbols;
      symbols.name = k.name;
      symbols.codeSymbol = "mlcc_" + options.name + "_" + k.name + "_code";
      symbols.codeBytes = k.code.size();
      symbols.numBuffers = k.numBuffers;
      std::copy(k.workgroupSize, k.workgroupSize + 3, symbols.workgroupSize);
      data.push_back({symbols.codeSymbol, k.code, 64, SymbolScope::Local});
      deviceSymbols.kernels.push_back(std::move(symbols));
      if (!k.report.empty())
        out.kernelReports.push_back(k.report);
      out.spillingKernels += k.spills;
      out.demotedKernels += k.demotedFloat64;
    }
    if (!options.externalWeights) {
      deviceSymbols.weightsSymbol = "mlcc_" + options.name + "_device_weights";
      deviceSymbols.weightsBytes = host.weights.size();
      out.weightBytes += host.weights.size();
      // An empty blob still gets a symbol to point at.
      deviceWeights = std::move(host.weights);
      if (deviceWeights.empty())
        deviceWeights.push_back(0);
      data.push_back(
          {deviceSymbols.weightsSymbol, deviceWeights, 64, SymbolScope::Local});
    }
    out.numKernels = program.kernels.size();
    out.launchSites = program.launchSites;
    out.serialLaunchSites = program.serialSites;
    out.readBackSites = program.readBackSites;
  }
  addModelAPI(*llvmModule, iface, host.entries,
              device ? &deviceSymbols : nullptr);

  std::vector<KernelBlob> kernels;
  for (const NamedBytes &k : host.kernels)
    kernels.push_back({k.name, k.bytes, 64, SymbolScope::Local});
  ObjectEmitterOptions emitterOptions;
  emitterOptions.hostCpu = target.hostCpu().str();
  emitterOptions.hostFeatures = target.hostFeatures().str();
  emitterOptions.triple = target.hostTriple().str();
  emitterOptions.optimizeHost = true;
  llvm::SmallString<0> object;
  llvm::raw_svector_ostream os(object);
  if (llvm::Error err = emitObject(std::move(llvmModule), kernels, data, os,
                                   emitterOptions)) {
    errors.push_back(llvm::toString(std::move(err)));
    return failure();
  }
  out.object.assign(object.begin(), object.end());
  out.hostTriple = emitterOptions.triple;
  out.interface = iface;
  std::string headerError;
  if (!tryWriteModelHeader(out.interface, out.header, headerError)) {
    errors.push_back(headerError);
    return failure();
  }
  // The memory figures of the entry with the largest arena.
  const HostEntry *largest = &host.entries.front();
  for (const HostEntry &e : host.entries)
    if (e.interface.arenaBytes > largest->interface.arenaBytes)
      largest = &e;
  out.arenaBytes = largest->interface.arenaBytes;
  out.intermediateBytes = largest->intermediateBytes;
  out.arenaLowerBound = largest->arenaLowerBound;
  out.inPlaceResults = largest->inPlaceResults;
  if (!device) {
    out.numKernels = host.kernels.size();
    for (const NamedBytes &k : host.kernels)
      out.kernelSymbols.push_back(k.name);
  }
  out.profiledOps = host.profiledOps;
  return success();
}

} // namespace mlcc::lowering
