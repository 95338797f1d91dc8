//===- DemoteFloat64.cpp - Kernels for devices without 64-bit floats ------===//

#include "DemoteFloat64.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace mlcc::gpukernels {
namespace {

bool holdsF64(Type t) {
  if (auto shaped = dyn_cast<ShapedType>(t))
    t = shaped.getElementType();
  return t.isF64();
}

// `t` with f32 for f64 (scalars, vectors, memrefs).
Type demoted(Type t) {
  if (!holdsF64(t))
    return t;
  Builder b(t.getContext());
  if (t.isF64())
    return b.getF32Type();
  if (auto memref = dyn_cast<MemRefType>(t))
    return MemRefType::get(memref.getShape(), b.getF32Type(),
                           memref.getLayout(), memref.getMemorySpace());
  if (auto vector = dyn_cast<VectorType>(t))
    return vector.clone(b.getF32Type());
  return t;
}

// What cannot be demoted: reinterpretations of f64 bits, f64 constants
// that are not scalars.
LogicalResult checkDemotable(gpu::GPUFuncOp fn, StringRef device) {
  WalkResult result = fn.walk([&](Operation *op) {
    if (!touchesFloat64(op))
      return WalkResult::advance();
    auto constant = dyn_cast<arith::ConstantOp>(op);
    if (isa<arith::BitcastOp>(op) ||
        (constant && !isa<FloatAttr>(constant.getValue()))) {
      op->emitError() << device << ": " << op->getName()
                      << " on 64-bit floats, which the device does not have";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

} // namespace

bool touchesFloat64(Operation *op) {
  return llvm::any_of(op->getResultTypes(), holdsF64) ||
         llvm::any_of(op->getOperandTypes(), holdsF64);
}

LogicalResult demoteFloat64(ModuleOp kernel, StringRef device,
                            lowering::DeviceKernelCode &out) {
  gpu::GPUFuncOp fn;
  kernel.walk([&](gpu::GPUFuncOp f) { fn = f; });
  if (!fn || failed(checkDemotable(fn, device)))
    return failure();
  out.demotedFloat64 = llvm::any_of(fn.getArgumentTypes(), holdsF64) ||
                       fn.walk([](Operation *op) {
                           return touchesFloat64(op) ? WalkResult::interrupt()
                                                     : WalkResult::advance();
                         }).wasInterrupted();
  if (!out.demotedFloat64)
    return success();
  // Every f64 value becomes f32 in place: the arith and math ops are
  // elementwise on one type, so their operands and results stay
  // consistent, and loop-carried values change with their block arguments.
  SmallVector<Type> arguments;
  for (Type t : fn.getArgumentTypes())
    arguments.push_back(demoted(t));
  fn.setFunctionType(FunctionType::get(fn.getContext(), arguments, {}));
  fn.walk([](Operation *op) {
    for (OpResult r : op->getResults())
      r.setType(demoted(r.getType()));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          arg.setType(demoted(arg.getType()));
  });
  // Then the ops whose attributes or semantics name the types.
  SmallVector<Operation *> ops;
  fn.walk([&](Operation *op) { ops.push_back(op); });
  for (Operation *op : ops) {
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto value = dyn_cast<FloatAttr>(constant.getValue());
      if (!value || !value.getType().isF64())
        continue;
      OpBuilder b(op);
      auto f32 =
          b.getF32FloatAttr(static_cast<float>(value.getValueAsDouble()));
      constant.replaceAllUsesWith(
          b.create<arith::ConstantOp>(op->getLoc(), f32).getResult());
      constant.erase();
      continue;
    }
    // f32 -> f64 -> f32 round trips are now f32 -> f32.
    if (isa<arith::ExtFOp, arith::TruncFOp>(op) &&
        op->getOperand(0).getType() == op->getResult(0).getType()) {
      op->getResult(0).replaceAllUsesWith(op->getOperand(0));
      op->erase();
    }
  }
  return success();
}

} // namespace mlcc::gpukernels
