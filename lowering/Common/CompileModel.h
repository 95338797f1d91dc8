//===- CompileModel.h - Graph module -> object + header ---------*- C++ -*-===//
//
// The whole backend in one call: host schedule, kernels, weights, the C API,
// LLVM codegen, and the header text. `mlcc compile` writes the result to
// files; `mlcc run`/`bench` and the tests load the same bytes in-process.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_COMPILEMODEL_H
#define MLCC_LOWERING_COMMON_COMPILEMODEL_H

#include "HeaderWriter.h"
#include "Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mlcc::lowering {

struct CompileModelOptions {
  /// C identifier used in every symbol and in the header.
  std::string name = "model";
  /// When set, the host module is printed here before it is lowered to LLVM
  /// (`mlcc compile --emit host-mlir`), and nothing else is produced.
  llvm::raw_ostream *hostMlir = nullptr;
  /// With a device target: each kernel (a module holding one gpu.func, in
  /// the gpu dialect before the API's conversion) is printed here when it
  /// is first compiled (`mlcc compile --emit kernels`), and nothing else is
  /// produced.
  llvm::raw_ostream *deviceKernels = nullptr;
  /// With a device target whose API has a text form of kernels (PTX, MSL):
  /// each kernel's code in that form is printed here (`mlcc compile --emit
  /// device-asm`), and nothing else is produced.
  llvm::raw_ostream *deviceAssembly = nullptr;
  /// Compile the object, and keep that text in CompiledModel::deviceAssembly
  /// too (for the tests that check every kernel).
  bool keepDeviceAssembly = false;
  /// For the tests that prove the device tests can fail: a fault put into
  /// every kernel.
  DeviceFault deviceFault = DeviceFault::None;
  /// How the target is made (compileForTarget).
  TargetOptions target;
  /// Calls the profile hook (HostBuilder.h) around every graph op, for
  /// `mlcc bench --per-op`.
  bool profile = false;
  /// Off: no target kernels, every op through the portable lowering.
  bool targetKernels = true;
  /// Weights go to CompiledModel::weightsFile instead of the object
  /// (`mlcc compile --weights external`).
  bool externalWeights = false;
  /// A dim the model maps over, compiled as a range: the graphs are the
  /// chunks of it (one of one item), dim 0 of the mapped tensors.
  std::optional<InterfaceRange> range;
  /// A dim compiled as a range of lengths: the graphs are its buckets,
  /// their ops that mix positions along it marked kRunTimeLengthAttr.
  std::optional<InterfacePaddedDim> padded;
};

struct CompiledModel {
  /// The relocatable object (ELF, or Mach-O for an Apple host).
  std::string object;
  /// Its host (Target::hostTriple).
  std::string hostTriple = kLinuxHostTriple;
  /// The C header.
  std::string header;
  ModelInterface interface;
  /// Memory figures: the arena, all intermediates added up, and the most
  /// bytes live at one point of the schedule.
  uint64_t arenaBytes = 0;
  uint64_t intermediateBytes = 0;
  uint64_t arenaLowerBound = 0;
  unsigned inPlaceResults = 0;
  size_t numKernels = 0;
  /// A CPU target's kernel symbols (mlcc_<model>_k<i>_<node>_<kind>).
  std::vector<std::string> kernelSymbols;
  /// A device target's launch sites in the host schedule (those of
  /// one-thread kernels among them) and read-backs of device scalars.
  unsigned launchSites = 0;
  unsigned serialLaunchSites = 0;
  unsigned readBackSites = 0;
  /// The device assembler's resource report of every kernel (registers,
  /// spills), and how many kernels spilt registers.
  std::vector<std::string> kernelReports;
  /// With CompileModelOptions::keepDeviceAssembly: what --emit device-asm
  /// prints.
  std::string deviceAssembly;
  unsigned spillingKernels = 0;
  /// Kernels that compute in f32 what they would in f64 (a device without
  /// 64-bit floats).
  unsigned demotedKernels = 0;
  uint64_t weightBytes = 0;
  /// With external weights: the weights file (runtime/include/mlcc/model.h,
  /// mlcc_weights_header, then the data).
  std::string weightsFile;
  /// With CompileModelOptions::profile: what each profile index stands for.
  std::vector<ProfiledOp> profiledOps;
};

/// Compiles the graph function of `graph` (simplified: static shapes,
/// constants folded). Errors (one line each, naming the node and op) go to
/// `errors`.
mlir::LogicalResult compileModel(mlir::ModuleOp graph, Target &target,
                                 const CompileModelOptions &options,
                                 CompiledModel &out,
                                 std::vector<std::string> &errors);

/// As compileModel for one model given at several shapes (the same graph
/// imported with other --dim values): one object whose descriptor has a
/// variant per graph, chosen at run time by the inputs' dims; the dims that
/// differ are dynamic (-1) in the header.
mlir::LogicalResult compileModel(llvm::ArrayRef<mlir::ModuleOp> variants,
                                 Target &target,
                                 const CompileModelOptions &options,
                                 CompiledModel &out,
                                 std::vector<std::string> &errors);

/// `name` as a C identifier ("resnet-50.v2" -> "resnet_50_v2").
std::string modelIdentifier(llvm::StringRef name);

/// Names a model cannot have because its API (mlcc_<name>_create, ...)
/// would collide with the runtime's (mlcc_model_create, mlcc_arena_create).
bool isReservedModelName(llvm::StringRef name);

} // namespace mlcc::lowering

#endif // MLCC_LOWERING_COMMON_COMPILEMODEL_H
