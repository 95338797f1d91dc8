//===- CompiledModelRunner.h - Compile for a target and run here -*- C++ -*-===//
//
// What `mlcc run/bench --target avx512`, the conformance runner and the tests
// share: compile a simplified graph module to an object with a backend, link
// that object into this process, and run it on host tensors through the
// same mlcc_model_* runtime calls an application's generated API makes.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_DRIVER_COMPILEDMODELRUNNER_H
#define MLCC_DRIVER_COMPILEDMODELRUNNER_H

#include "CompileModel.h"
#include "InProcessModel.h"
#include "mlcc/Reference/Status.h"
#include "mlcc/Reference/Tensor.h"
#include "mlcc/runtime.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <string>
#include <vector>

namespace mlcc {

/// Compiles `module` for `target` ("avx512"); errors are one line each.
/// Several modules are one model at several shapes (lowering::compileModel).
ref::Status compileForTarget(llvm::ArrayRef<mlir::ModuleOp> modules,
                             const std::string &target,
                             const lowering::CompileModelOptions &options,
                             lowering::CompiledModel &out);

/// A compiled model linked into this process, with a context (arena) of its
/// own.
class CompiledModelRunner {
public:
  /// `pool` may be null (one thread); it is borrowed.
  static ref::Status load(const lowering::CompiledModel &compiled,
                          mlcc_threadpool *pool,
                          std::unique_ptr<CompiledModelRunner> &out,
                          void (*profileHook)(int32_t) = nullptr);
  /// compileForTarget, then load: what `mlcc run` and the conformance
  /// runner do with a simplified module.
  static ref::Status
  compileAndLoad(mlir::ModuleOp module, const std::string &target,
                 const lowering::CompileModelOptions &options,
                 mlcc_threadpool *pool,
                 std::unique_ptr<CompiledModelRunner> &out);
  ~CompiledModelRunner();

  /// Checks nothing itself: the runtime checks the inputs' dtypes and
  /// shapes, as it does for an application. `outputs` are (re)allocated.
  /// Unless `poisonArena` is off, each run gets a fresh arena filled with
  /// 0xff bytes (NaN as floats) and the outputs are filled the same way,
  /// so code that reads memory it never wrote shows up as wrong results.
  ref::Status run(const std::vector<ref::Tensor> &inputs,
                  std::vector<ref::Tensor> &outputs);
  bool poisonArena = true;

  const mlcc_model_desc *descriptor() const { return model->descriptor(); }
  mlcc_model_context *context() const { return ctx; }

private:
  CompiledModelRunner() = default;
  std::unique_ptr<lowering::InProcessModel> model;
  mlcc_model_context *ctx = nullptr;
  mlcc_threadpool *pool = nullptr;
  std::vector<uint8_t> poisonedArena;
  /// With external weights: the weights file's image (aligned inside) and
  /// its data.
  std::vector<char> weightsImage;
  const void *weights = nullptr;
};

} // namespace mlcc

#endif // MLCC_DRIVER_COMPILEDMODELRUNNER_H
