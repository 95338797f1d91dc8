//===- DeadCodeElimination.cpp - remove unused effect-free ops ------------===//

#include "Passes.h"

#include "GraphDialect.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlcc::graph {
#define GEN_PASS_DEF_DEADCODEELIMINATION
#include "Passes.h.inc"
} // namespace mlcc::graph

using namespace mlir;

namespace mlcc::graph {
namespace {

struct DeadCodeElimination
    : impl::DeadCodeEliminationBase<DeadCodeElimination> {
  void runOnOperation() override {
    // Each sweep removes ops that are dead now; repeat until a sweep finds
    // none (a removed user can make its producers dead).
    bool changed = true;
    while (changed) {
      changed = false;
      getOperation().walk(
          [&](Operation *op) {
            if (op != getOperation() && isOpTriviallyDead(op)) {
              op->erase();
              changed = true;
            }
          });
    }
  }
};

} // namespace
} // namespace mlcc::graph
