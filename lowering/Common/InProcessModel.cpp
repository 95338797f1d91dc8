//===- InProcessModel.cpp - Run a compiled object in this process ---------===//

#include "InProcessModel.h"

#include "mlcc/int8_pack.h"
#include "mlcc/runtime.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"

#include <mutex>

using namespace llvm;
using namespace llvm::orc;

namespace mlcc::lowering {

InProcessModel::~InProcessModel() = default;

// The runtime is linked statically into the tools, so its functions are not
// in the process's dynamic symbol table: name them here. Everything else a
// model calls (libm, memcpy) comes from the process's shared libraries.
static SymbolMap runtimeSymbols(LLJIT &jit) {
  SymbolMap symbols;
  auto add = [&](const char *name, auto *fn) {
    symbols[jit.mangleAndIntern(name)] = {ExecutorAddr::fromPtr(fn),
                                          JITSymbolFlags::Exported |
                                              JITSymbolFlags::Callable};
  };
  add("mlcc_model_create", &mlcc_model_create);
  add("mlcc_model_destroy", &mlcc_model_destroy);
  add("mlcc_model_run", &mlcc_model_run);
  add("mlcc_model_run_pointers", &mlcc_model_run_pointers);
  add("mlcc_model_run_with_arena", &mlcc_model_run_with_arena);
  add("mlcc_model_fail", &mlcc_model_fail);
  add("mlcc_threadpool_parallel_for", &mlcc_threadpool_parallel_for);
  add("mlcc_threadpool_num_threads", &mlcc_threadpool_num_threads);
  add("mlcc_int8_pack_b", &mlcc_int8_pack_b);
  add("mlcc_device_queue_launch", &mlcc_device_queue_launch);
  add("mlcc_device_queue_read", &mlcc_device_queue_read);
  return symbols;
}

Expected<std::unique_ptr<InProcessModel>>
InProcessModel::load(const std::string &object, const std::string &name,
                     void (*profileHook)(int32_t)) {
  static std::once_flag once;
  std::call_once(once, [] {
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
  });
  auto jit = LLJITBuilder().create();
  if (!jit)
    return jit.takeError();
  JITDylib &main = (*jit)->getMainJITDylib();
  SymbolMap symbols = runtimeSymbols(**jit);
  if (profileHook)
    symbols[(*jit)->mangleAndIntern("mlcc_profile_op")] = {
        ExecutorAddr::fromPtr(profileHook),
        JITSymbolFlags::Exported | JITSymbolFlags::Callable};
  if (Error err = main.define(absoluteSymbols(std::move(symbols))))
    return std::move(err);
  auto process = DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!process)
    return process.takeError();
  main.addGenerator(std::move(*process));
  if (Error err = (*jit)->addObjectFile(
          MemoryBuffer::getMemBufferCopy(object, name + ".o")))
    return std::move(err);
  auto address = (*jit)->lookup("mlcc_" + name + "_model");
  if (!address)
    return address.takeError();
  std::unique_ptr<InProcessModel> model(new InProcessModel());
  model->jit = std::move(*jit);
  model->desc = address->toPtr<const mlcc_model_desc *>();
  return model;
}

} // namespace mlcc::lowering
