//===- HostBuilder.h - Graph function -> host schedule ----------*- C++ -*-===//
//
// Turns the simplified graph function into the host module: one function
// `i32 @<prefix>_entry(arena, weights, inputs..., outputs..., pool)` whose
// arguments are static memrefs (passed as bare pointers), with every
// intermediate a view at a planned offset of the arena, and every op lowered
// either by the target's kernels (calls to symbols whose code is in
// `kernels`) or by the portable lowerings (linalg/scf/arith/math in place).
// Weights become memref.global declarations whose bytes are in `data`, or,
// with external weights, views of the `weights` argument.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_HOSTBUILDER_H
#define MLCC_LOWERING_COMMON_HOSTBUILDER_H

#include "HeaderWriter.h"
#include "Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mlcc::lowering {

struct NamedBytes {
  std::string name;
  std::vector<uint8_t> bytes;
};

/// A weight already in the object: its symbol and index in `data`, or its
/// offset in the weights file (`name` empty).
struct StoredWeight {
  std::string name;
  uint64_t offset = 0;
  uint64_t size = 0;
};

/// One entry function of a host module: the model for one set of shapes.
struct HostEntry {
  /// The entry function's symbol.
  std::string symbol;
  /// Names, dtypes and shapes of inputs and outputs, and the arena size.
  ModelInterface interface;
  /// Bytes of all arena buffers added up, and the most live at once.
  uint64_t intermediateBytes = 0;
  uint64_t arenaLowerBound = 0;
  /// Elementwise results written over an operand's buffer.
  unsigned inPlaceResults = 0;
};

/// What one object holds. buildHostModule adds one entry per call, so a
/// model compiled for several shapes (`--dim batch=1,8`) is one module whose
/// entries share kernels and weights with identical bytes.
struct HostModule {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<HostEntry> entries;
  std::vector<NamedBytes> kernels;
  std::vector<NamedBytes> data;
  /// With HostOptions::externalWeights: the data of the weights file, every
  /// weight at a 64-byte aligned offset (and `data` empty).
  std::vector<uint8_t> weights;
  /// With profiling on: the graph op each profile index stands for.
  std::vector<ProfiledOp> profiledOps;

  /// Bookkeeping of the builder, across entries: symbols taken, kernels by
  /// code, weights by a hash of their bytes (the name or weights offset of
  /// each with that hash).
  llvm::StringSet<> symbols;
  unsigned symbolCounter = 0;
  llvm::StringMap<std::string> kernelByCode;
  std::map<uint64_t, std::vector<StoredWeight>> weightsByHash;
};

/// The function a profiling build calls before each graph op (with the
/// op's index into HostModule::profiledOps) and once at the end (with the
/// number of ops): `void mlcc_profile_op(int32_t index)`. Only `mlcc bench
/// --per-op` provides it; objects for applications never call it.
constexpr const char *kProfileHook = "mlcc_profile_op";

/// Marks the scf.if/for/while ops of the graph's control flow (and of the
/// run's status), which stay in the host function of a device target while
/// the loops of the ops become kernels.
constexpr const char *kHostControlAttr = "mlcc.host_control";

/// Registers the dialects the host module uses in `registry`.
void registerHostDialects(mlir::DialectRegistry &registry);

/// Builds the host module of `graph` for `target` (or adds an entry for it
/// to `out.module` when that is set); `modelName` is the C identifier of the
/// model. Problems are emitted as diagnostics on the ops
/// (node name, op, what is unsupported) and give failure.
struct HostOptions {
  /// Call the profile hook around every op (mlcc bench --per-op).
  bool profile = false;
  /// Let the target lower ops with its kernels; off, every op takes the
  /// portable lowering (to test it on the ops kernels usually take).
  bool targetKernels = true;
  /// Address weights in the data the entry gets as its second argument
  /// (HostModule::weights, the weights file) instead of as globals.
  bool externalWeights = false;
  /// The entry runs a variant of a range of lengths: the last 8 bytes of
  /// its arena hold the run's length (OpLoweringContext::runTimeLength).
  bool runTimeLength = false;
  /// Ops estimated to take less than this on one core run on the calling
  /// thread (TargetOptions::minParallelMicros).
  double minParallelMicros = kDefaultMinParallelMicros;
};

mlir::LogicalResult buildHostModule(mlir::func::FuncOp graph, Target &target,
                                    llvm::StringRef modelName,
                                    const HostOptions &options,
                                    HostModule &out);

} // namespace mlcc::lowering

#endif // MLCC_LOWERING_COMMON_HOSTBUILDER_H
