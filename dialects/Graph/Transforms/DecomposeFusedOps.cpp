//===- DecomposeFusedOps.cpp - fused ops -> their ONNX-level ops ----------===//
//
// Undoes the fusion passes: each op of GraphFusedOps.td becomes the group of
// ops it stands for (decomposeFusedOp). For a backend that has no kernel for
// the fused ops, and to check that a fusion and its inverse agree.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"

#include "FusedOpDecomposition.h"
#include "GraphDialect.h"

namespace mlcc::graph {
#define GEN_PASS_DEF_DECOMPOSEFUSEDOPS
#include "Passes.h.inc"
} // namespace mlcc::graph

using namespace mlir;

namespace mlcc::graph {
namespace {

struct DecomposeFusedOps : impl::DecomposeFusedOpsBase<DecomposeFusedOps> {
  void runOnOperation() override {
    // decomposeFusedOp builds nothing for the ops that are not fused.
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (op->getNumResults() == 1)
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      OpBuilder b(op);
      FailureOr<Value> v = decomposeFusedOp(op, b);
      if (failed(v))
        continue;
      op->getResult(0).replaceAllUsesWith(*v);
      op->erase();
    }
  }
};

} // namespace
} // namespace mlcc::graph
