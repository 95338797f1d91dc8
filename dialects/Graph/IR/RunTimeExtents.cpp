//===- RunTimeExtents.cpp - Dims known only when the model runs -----------===//

#include "RunTimeExtents.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace mlcc::graph {

SmallVector<int64_t> extentSources(Value v) {
  auto result = dyn_cast<OpResult>(v);
  if (!result)
    return {};
  auto all = result.getOwner()->getAttrOfType<ArrayAttr>(kRunTimeExtentsAttr);
  if (!all || result.getResultNumber() >= all.size())
    return {};
  auto dims = dyn_cast<DenseI64ArrayAttr>(all[result.getResultNumber()]);
  return dims ? SmallVector<int64_t>(dims.asArrayRef())
              : SmallVector<int64_t>();
}

bool hasRunTimeExtents(Value v) {
  return llvm::any_of(extentSources(v),
                      [](int64_t s) { return s != kStaticExtent; });
}

void setExtentSources(Operation *op, unsigned i, ArrayRef<int64_t> sources) {
  Builder b(op->getContext());
  SmallVector<Attribute> all(op->getNumResults(), b.getDenseI64ArrayAttr({}));
  if (auto old = op->getAttrOfType<ArrayAttr>(kRunTimeExtentsAttr))
    for (auto [k, a] : llvm::enumerate(old))
      all[k] = a;
  all[i] = b.getDenseI64ArrayAttr(sources);
  op->setAttr(kRunTimeExtentsAttr, b.getArrayAttr(all));
}

SmallVector<int64_t> runTimeOutputDims(func::FuncOp func, unsigned i) {
  auto dims =
      func.getResultAttrOfType<DenseI64ArrayAttr>(i, kRunTimeExtentsAttr);
  return dims ? SmallVector<int64_t>(dims.asArrayRef())
              : SmallVector<int64_t>();
}

} // namespace mlcc::graph
