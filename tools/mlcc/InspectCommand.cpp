//===- InspectCommand.cpp - mlcc inspect ----------------------------------===//

#include "Commands.h"

#include "mlcc/Driver/CompiledModelRunner.h"
#include "mlcc/Reference/Kernel.h"

#include "GraphDialect.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;

namespace mlcc::cli {

// The arena next to what it is measured against: every intermediate in a
// buffer of its own (no planning), and the most bytes live at one step (no
// plan can do better with this schedule).
static int printMemory(ModuleOp module, const InspectOptions &options) {
  lowering::CompileModelOptions compileOptions;
  compileOptions.name = defaultModelName(options.model.model);
  lowering::CompiledModel compiled;
  ref::Status s =
      compileForTarget(module, options.target, compileOptions, compiled);
  if (s.failed()) {
    printErrors({s.message()});
    return 1;
  }
  auto mib = [](uint64_t bytes) { return bytes / (1024.0 * 1024.0); };
  uint64_t bound = compiled.arenaLowerBound;
  llvm::outs() << llvm::format(
      "memory (--target %s):\n"
      "  arena: %llu bytes (%.2f MiB), %.1f%% over the live peak\n"
      "  live peak (lower bound): %llu bytes (%.2f MiB)\n"
      "  all intermediates added up: %llu bytes (%.2f MiB)\n"
      "  results computed in place: %u\n",
      options.target.c_str(), (unsigned long long)compiled.arenaBytes,
      mib(compiled.arenaBytes),
      bound ? 100.0 * (double(compiled.arenaBytes) - bound) / bound : 0.0,
      (unsigned long long)bound, mib(bound),
      (unsigned long long)compiled.intermediateBytes,
      mib(compiled.intermediateBytes), compiled.inPlaceResults);
  return 0;
}

int runInspect(const InspectOptions &options) {
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module = loadAndSimplify(ctx, options.model);
  if (!module)
    return 1;
  func::FuncOp func = mainFunction(*module);
  // Symbolic dims by name (tensor<batch x 3 x f32>), as the model declares
  // them.
  llvm::outs() << "inputs:\n";
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    llvm::outs() << "  " << inputName(func, i) << ": "
                 << graph::describeType(
                        func.getArgumentTypes()[i],
                        func.getArgAttrOfType<ArrayAttr>(i, "graph.dim_params"))
                 << "\n";
  llvm::outs() << "outputs:\n";
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    llvm::outs() << "  " << outputName(func, i) << ": "
                 << graph::describeType(func.getResultTypes()[i],
                                        func.getResultAttrOfType<ArrayAttr>(
                                            i, "graph.dim_params"))
                 << "\n";

  std::map<std::string, int> histogram;
  std::map<std::string, int> unsupported;
  int64_t weightBytes = 0;
  func.walk([&](Operation *op) {
    if (op == func.getOperation() || isa<func::ReturnOp>(op))
      return;
    std::string name = op->getName().getStringRef().str();
    ++histogram[name];
    if (name == "graph.constant") {
      auto t = cast<ShapedType>(op->getResult(0).getType());
      weightBytes += t.getNumElements() *
                     std::max<int64_t>(1, t.getElementTypeBitWidth() / 8);
      return;
    }
    llvm::StringRef mn(name);
    static const char *kStructural[] = {"graph.none", "graph.if", "graph.for",
                                        "graph.while", "graph.yield",
                                        "graph.condition",
                                        "graph.control_dependency"};
    if (llvm::is_contained(kStructural, mn))
      return;
    mn.consume_front("graph.");
    if (!ref::KernelRegistry::get().find(mn.str()))
      ++unsupported[name];
  });
  llvm::outs() << "ops (after the " << options.model.pipeline
               << " pipeline):\n";
  for (auto &[name, count] : histogram)
    llvm::outs() << "  " << name << ": " << count << "\n";
  llvm::outs() << "constant bytes: " << weightBytes << "\n";
  if (unsupported.empty()) {
    llvm::outs() << "unsupported ops: none\n";
  } else {
    llvm::outs() << "unsupported ops (no reference kernel):\n";
    for (auto &[name, count] : unsupported)
      llvm::outs() << "  " << name << ": " << count << "\n";
  }
  return options.memory ? printMemory(*module, options) : 0;
}

} // namespace mlcc::cli
