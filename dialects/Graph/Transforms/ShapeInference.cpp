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

/// Backward, for the broadcasting elementwise ops: where the result's dim is
/// a static 1, every operand's dim there is 1 too (it could not broadcast
/// to 1 otherwise). A loop body's declared output types fix dims this way
/// that the forward walk leaves dynamic (a slice with run-time bounds
/// added to a [1] value). Returns whether a type changed.
static bool refineOperandsFromResult(Operation *op) {
  static const char *const broadcasting[] = {
      "add", "sub", "mul", "div", "pow", "max", "min", "and", "or", "xor",
      "equal", "less", "greater", "less_or_equal", "greater_or_equal",
      "where", "mod", "bitshift", "prelu"};
  if (op->getNumResults() != 1 ||
      !llvm::is_contained(broadcasting, op->getName().stripDialect()))
    return false;
  auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!result)
    return false;
  bool changed = false;
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    // A terminator's operand types are tied to its parent's types.
    if (!type || type.hasStaticShape() || !isa<OpResult>(v) ||
        type.getRank() > result.getRank() ||
        llvm::any_of(v.getUsers(), [](Operation *user) {
          return user->hasTrait<OpTrait::IsTerminator>();
        }))
      continue;
    SmallVector<int64_t> dims(type.getShape());
    int64_t shift = result.getRank() - type.getRank();
    for (int64_t k = 0; k < type.getRank(); ++k)
      if (ShapedType::isDynamic(dims[k]) && result.getDimSize(shift + k) == 1)
        dims[k] = 1;
    if (dims != type.getShape()) {
      v.setType(RankedTensorType::get(dims, type.getElementType()));
      changed = true;
    }
  }
  return changed;
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
    auto forward = [&] {
      return !func
                  .walk<WalkOrder::PreOrder>([](Operation *op) {
                    return failed(refineResultTypes(op))
                               ? WalkResult::interrupt()
                               : WalkResult::advance();
                  })
                  .wasInterrupted();
    };
    if (!forward())
      return signalPassFailure();
    bool changed = false;
    func.walk([&](Operation *op) { changed |= refineOperandsFromResult(op); });
    if (changed && !forward())
      return signalPassFailure();
    updateFunctionType(func);
  }
};

} // namespace
} // namespace mlcc::graph
