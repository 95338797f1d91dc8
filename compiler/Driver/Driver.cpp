//===- Driver.cpp - load and simplify models ------------------------------===//

#include "mlcc/Driver/Driver.h"

#include "GraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace mlcc {

void registerDialects(DialectRegistry &registry) {
  registry.insert<graph::GraphDialect, func::FuncDialect>();
}

/// Collects diagnostics as "location: message" lines while alive.
class DiagnosticCollector {
public:
  DiagnosticCollector(MLIRContext &ctx, std::vector<std::string> &errors)
      : handler_(&ctx, [&errors](Diagnostic &diag) {
          if (diag.getSeverity() != DiagnosticSeverity::Error)
            return success();
          std::string line;
          llvm::raw_string_ostream os(line);
          os << diag.getLocation() << ": " << diag;
          errors.push_back(os.str());
          return success();
        }) {}

private:
  ScopedDiagnosticHandler handler_;
};

OwningOpRef<ModuleOp> loadModel(MLIRContext &ctx, const std::string &path,
                                const ImportOptions &options,
                                std::vector<std::string> &errors) {
  llvm::StringRef p(path);
  if (p.ends_with(".mlir")) {
    DiagnosticCollector collect(ctx, errors);
    ctx.loadDialect<graph::GraphDialect, func::FuncDialect>();
    OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(path, &ctx);
    if (module && !mainFunction(*module)) {
      errors.push_back(path + ": no function @main (or single function) "
                              "to use as the model");
      return nullptr;
    }
    if (!module && errors.empty())
      errors.push_back("cannot read '" + path + "'");
    return module;
  }
  DiagnosticCollector collect(ctx, errors);
  return importOnnxModel(&ctx, path, options, errors);
}

LogicalResult runPasses(ModuleOp module, PassManager &pm,
                        std::vector<std::string> &errors) {
  DiagnosticCollector collect(*module.getContext(), errors);
  return pm.run(module);
}

func::FuncOp mainFunction(ModuleOp module) {
  if (auto f = module.lookupSymbol<func::FuncOp>("main"))
    return f;
  auto funcs = module.getOps<func::FuncOp>();
  if (std::distance(funcs.begin(), funcs.end()) == 1)
    return *funcs.begin();
  return nullptr;
}

std::string inputName(func::FuncOp func, unsigned i) {
  if (auto n = func.getArgAttrOfType<StringAttr>(i, "graph.name"))
    return n.getValue().str();
  return "input_" + std::to_string(i);
}

std::string outputName(func::FuncOp func, unsigned i) {
  if (auto n = func.getResultAttrOfType<StringAttr>(i, "graph.name"))
    return n.getValue().str();
  return "output_" + std::to_string(i);
}

} // namespace mlcc
