//===- ShapeInference.cpp - refine types with the ops' shape helpers ------===//

#include "Passes.h"

#include "GraphDialect.h"
#include "mlcc/Reference/MlirBridge.h"

namespace mlcc::graph {
#define GEN_PASS_DEF_SHAPEINFERENCE
#include "Passes.h.inc"
} // namespace mlcc::graph

using namespace mlir;

namespace mlcc::graph {

/// The more static of two types for one value; null if they contradict.
static Type meet(Type declared, Type inferred) {
  auto d = dyn_cast<RankedTensorType>(declared);
  auto i = dyn_cast<RankedTensorType>(inferred);
  if (!i)
    return declared;
  if (!d)
    return isa<UnrankedTensorType>(declared) ? inferred : Type();
  if (d.getElementType() != i.getElementType() || d.getRank() != i.getRank())
    return nullptr;
  SmallVector<int64_t> dims;
  for (int64_t k = 0; k < d.getRank(); ++k) {
    int64_t a = d.getDimSize(k), b = i.getDimSize(k);
    if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b)
      return nullptr;
    dims.push_back(ShapedType::isDynamic(a) ? b : a);
  }
  return RankedTensorType::get(dims, d.getElementType());
}

LogicalResult refineResultTypes(Operation *op) {
  StringRef name = op->getName().getStringRef();
  if (!name.consume_front("graph."))
    return success();
  const ref::KernelDef *kernel = ref::KernelRegistry::get().find(name.str());
  if (!kernel || !kernel->inferShapes)
    return success();
  std::vector<ref::ValueInfo> in(op->getNumOperands());
  std::vector<ref::Tensor> storage(op->getNumOperands());
  for (unsigned k = 0; k < op->getNumOperands(); ++k) {
    Value v = op->getOperand(k);
    if (isa<UnrankedTensorType>(v.getType()))
      return success(); // nothing to say without ranks
    in[k] = valueInfoOf(v, storage[k]);
  }
  std::vector<ref::ValueInfo> out(op->getNumResults());
  ref::Status s = kernel->inferShapes(attrsFromOp(op), in, out);
  if (s.failed())
    return op->emitOpError() << s.message();
  for (unsigned k = 0; k < op->getNumResults(); ++k) {
    Value r = op->getResult(k);
    if (!out[k].present() || isa<NoneType>(r.getType()))
      continue;
    Type inferred = tensorTypeFor(op->getContext(), out[k].dtype, out[k].shape);
    Type merged = meet(r.getType(), inferred);
    if (!merged)
      return op->emitOpError() << "result #" << k << " is declared "
                               << r.getType() << " but its operands give "
                               << inferred;
    r.setType(merged);
  }
  return success();
}

void updateFunctionType(func::FuncOp func) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                 ret.getOperandTypes()));
}

namespace {

struct ShapeInference : impl::ShapeInferenceBase<ShapeInference> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    WalkResult result = func.walk<WalkOrder::PreOrder>([](Operation *op) {
      return failed(refineResultTypes(op)) ? WalkResult::interrupt()
                                           : WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    updateFunctionType(func);
  }
};

} // namespace
} // namespace mlcc::graph
