//===- ConstantFold.cpp - evaluate constant subgraphs ---------------------===//

#include "Passes.h"

#include "GraphDialect.h"
#include "mlcc/Reference/MlirBridge.h"

#include "mlir/IR/Builders.h"

namespace mlcc::graph {
#define GEN_PASS_DEF_FOLDCONSTANTS
#include "Passes.h.inc"
} // namespace mlcc::graph

using namespace mlir;

namespace mlcc::graph {
namespace {

bool isConstantOperand(Value v) {
  return v.getDefiningOp<ConstantOp>() || v.getDefiningOp<NoneOp>();
}

/// graph.shape and graph.size depend only on their operand's type.
bool dependsOnlyOnTypes(Operation *op) { return isa<ShapeOp, SizeOp>(op); }

bool hasStaticType(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape();
}

/// The DequantizeLinear of a constant weight that a matmul or conv reads:
/// kept, so that a target's int8 kernels read the quantised values
/// (lowering/AVX512/SelectQdqGemm.cpp) instead of f32 ones.
bool isQuantizedWeight(Operation *op) {
  return isa<DequantizeLinearOp>(op) &&
         llvm::any_of(op->getResult(0).getUsers(), [](Operation *user) {
           return isa<MatMulOp, GemmOp, FcOp, ConvOp, FusedConvOp>(user);
         });
}

/// Folding needs a kernel, constant operands (or, for shape and size, a
/// static operand type) and static result types; region ops, ordering
/// ops and quantised weights are never folded.
bool isFoldable(Operation *op, int64_t maxBytes) {
  if (isa<ConstantOp, NoneOp, ControlDependencyOp>(op) ||
      isQuantizedWeight(op) || op->getNumRegions() ||
      !op->getName().getStringRef().starts_with("graph."))
    return false;
  if (dependsOnlyOnTypes(op) ? !hasStaticType(op->getOperand(0))
                             : !llvm::all_of(op->getOperands(),
                                             isConstantOperand))
    return false;
  int64_t bytes = 0;
  for (Type t : op->getResultTypes()) {
    if (isa<NoneType>(t))
      continue;
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt || !rt.hasStaticShape())
      return false;
    ref::DType d = dtypeFromMlir(rt.getElementType());
    if (d == ref::DType::Undefined)
      return false;
    bytes += rt.getNumElements() * static_cast<int64_t>(ref::dtypeSize(d));
  }
  return bytes <= maxBytes;
}

} // namespace

LogicalResult foldConstantOp(Operation *op, int64_t maxBytes,
                             SmallVectorImpl<Value> *replacements) {
  if (replacements)
    replacements->assign(op->result_begin(), op->result_end());
  if (!isFoldable(op, maxBytes))
    return success();
  StringRef name = op->getName().getStringRef().drop_front(strlen("graph."));
  const ref::KernelDef *kernel = ref::KernelRegistry::get().find(name.str());
  if (!kernel || !kernel->run)
    return success();
  std::vector<ref::Tensor> in(op->getNumOperands());
  if (dependsOnlyOnTypes(op)) {
    // These kernels read only the dims, so a one-element buffer viewed with
    // the operand's shape stands in for the (possibly huge) real value.
    // The view's storage is smaller than its shape: never pass it to a
    // kernel that reads data.
    auto t = cast<RankedTensorType>(op->getOperand(0).getType());
    ref::Tensor scalar(dtypeFromMlir(t.getElementType()), {});
    in[0] = scalar.reshaped(ref::Shape(t.getShape().begin(), t.getShape().end()));
  }
  for (unsigned k = 0; k < op->getNumOperands(); ++k)
    if (auto c = op->getOperand(k).getDefiningOp<ConstantOp>()) {
      ref::Status s = tensorFromElementsAttr(c.getValue(), in[k]);
      if (s.failed())
        return success(); // e.g. an element type we cannot fold
    }
  std::vector<ref::Tensor> out(op->getNumResults());
  ref::Status s = kernel->run(attrsFromOp(op), in, out);
  if (s.failed())
    return op->emitOpError() << "cannot be evaluated: " << s.message();
  OpBuilder b(op);
  for (unsigned k = 0; k < op->getNumResults(); ++k) {
    Value r = op->getResult(k);
    if (isa<NoneType>(r.getType()))
      continue;
    if (!out[k].present())
      return op->emitOpError() << "kernel produced no result #" << k;
    auto folded = b.create<ConstantOp>(
        op->getLoc(), elementsAttrFromTensor(op->getContext(), out[k]));
    if (folded.getType() != r.getType())
      return op->emitOpError()
             << "folded result #" << k << " has type " << folded.getType()
             << ", declared " << r.getType();
    r.replaceAllUsesWith(folded.getResult());
    if (replacements)
      (*replacements)[k] = folded.getResult();
  }
  op->erase();
  return success();
}

namespace {

struct FoldConstants : impl::FoldConstantsBase<FoldConstants> {
  using FoldConstantsBase::FoldConstantsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<Operation *> order;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) { order.push_back(op); });
    for (Operation *op : order) {
      if (failed(refineResultTypes(op)))
        return signalPassFailure();
      if (failed(foldConstantOp(op, maxBytes)))
        return signalPassFailure();
    }
    updateFunctionType(func);
  }
};

} // namespace
} // namespace mlcc::graph
