//===- PassChangeReport.cpp - What each pass changed, in op counts --------===//

#include "mlcc/Pipelines/PassChangeReport.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"

#include <map>
#include <string>
#include <vector>

using namespace mlir;

namespace mlcc {
namespace {

using OpCounts = std::map<std::string, int64_t>;

OpCounts countOps(Operation *root) {
  OpCounts counts;
  root->walk([&](Operation *op) {
    if (op != root)
      ++counts[op->getName().getStringRef().str()];
  });
  return counts;
}

/// The fusions that match static shapes only (their kernels are generated
/// for exact sizes): with symbolic dims they leave the ops as they are.
bool fusesStaticShapesOnly(llvm::StringRef pass) {
  return pass == "mlcc-fuse-attention" ||
         pass == "mlcc-fuse-embed-layer-norm" ||
         pass == "mlcc-fuse-skip-layer-norm";
}

/// Ops with a result of symbolic dims.
int64_t countSymbolic(Operation *root) {
  int64_t n = 0;
  root->walk([&](Operation *op) {
    n += llvm::any_of(op->getResultTypes(), [](Type t) {
      auto ranked = dyn_cast<RankedTensorType>(t);
      return ranked && !ranked.hasStaticShape();
    });
  });
  return n;
}

int64_t total(const OpCounts &counts) {
  int64_t n = 0;
  for (const auto &entry : counts)
    n += entry.second;
  return n;
}

class PassChangeReport : public PassInstrumentation {
public:
  explicit PassChangeReport(llvm::raw_ostream &os) : os(os) {}

  void runBeforePass(Pass *pass, Operation *op) override {
    if (isAdaptor(pass))
      return;
    before.push_back(countOps(op));
    if (!headerPrinted) {
      os << "passes (ops before -> after; op kinds that changed):\n";
      headerPrinted = true;
    }
  }

  void runAfterPass(Pass *pass, Operation *op) override { report(pass, op); }
  void runAfterPassFailed(Pass *pass, Operation *op) override {
    report(pass, op);
  }

private:
  // The pass manager's own adaptors (which run nested pipelines) change
  // nothing themselves.
  static bool isAdaptor(Pass *pass) { return pass->getArgument().empty(); }

  void report(Pass *pass, Operation *op) {
    if (isAdaptor(pass) || before.empty())
      return;
    OpCounts old = std::move(before.back());
    before.pop_back();
    OpCounts now = countOps(op);
    os << llvm::format("  %-28s %6lld -> %lld",
                       pass->getArgument().str().c_str(),
                       (long long)total(old), (long long)total(now));
    std::vector<std::string> changes;
    auto note = [&](const std::string &name, int64_t delta) {
      if (delta != 0)
        changes.push_back(name + (delta > 0 ? " +" : " ") +
                          std::to_string(delta));
    };
    // Created kinds first: those are the fusions.
    for (const auto &[name, count] : now)
      if (count > old[name])
        note(name, count - old[name]);
    for (const auto &[name, count] : old)
      if (count > now[name])
        note(name, now[name] - count);
    for (size_t i = 0; i < changes.size(); ++i)
      os << (i == 0 ? ": " : ", ") << changes[i];
    os << "\n";
    if (fusesStaticShapesOnly(pass->getArgument()))
      if (int64_t symbolic = countSymbolic(op))
        os << "    (fuses static shapes only: " << symbolic
           << " ops have symbolic dims, left as they are; --dim NAME=VALUE "
              "fixes the dims)\n";
  }

  llvm::raw_ostream &os;
  std::vector<OpCounts> before; // a stack: passes nest
  bool headerPrinted = false;
};

} // namespace

std::unique_ptr<PassInstrumentation>
createPassChangeReport(llvm::raw_ostream &os) {
  return std::make_unique<PassChangeReport>(os);
}

} // namespace mlcc
