//===- OpWork.cpp - What a graph op computes and moves --------------------===//

#include "OpWork.h"

#include <algorithm>

#include "GraphDialect.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace mlcc::lowering {

namespace {

/// Elements of a statically shaped tensor, else 0.
double elementsOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() ? static_cast<double>(t.getNumElements())
                                 : 0.0;
}

double bytesOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.hasStaticShape() || !t.getElementType().isIntOrFloat())
    return 0;
  unsigned bits = t.getElementType().getIntOrFloatBitWidth();
  return static_cast<double>(t.getNumElements()) * ((bits + 7) / 8);
}

ArrayRef<int64_t> shapeOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t ? t.getShape() : ArrayRef<int64_t>();
}

/// The last dim of `v`, the K of a product that reads it as rows.
double lastDim(Value v) {
  ArrayRef<int64_t> s = shapeOf(v);
  return s.empty() || s.back() < 0 ? 0.0 : static_cast<double>(s.back());
}

/// Multiply-adds per output element of a conv with weight `w` [M, C/g,
/// k...]: C/g times the window.
double macsPerOutput(Value w) {
  ArrayRef<int64_t> s = shapeOf(w);
  return s.empty() || s[0] <= 0 ? 0.0 : elementsOf(w) / s[0];
}

/// Multiply-adds of `op` when it is a product, else 0.
double productMacs(Operation *op) {
  Value y = op->getNumResults() ? op->getResult(0) : Value();
  if (isa<graph::ConvOp, graph::FusedConvOp, graph::ConvIntegerOp>(op))
    return elementsOf(y) * macsPerOutput(op->getOperand(1));
  if (isa<graph::QLinearConvOp>(op))
    return elementsOf(y) * macsPerOutput(op->getOperand(3));
  // ConvTranspose's weight is [C, M/g, k...]: each input element meets
  // M/g times the window.
  if (isa<graph::ConvTransposeOp>(op))
    return elementsOf(op->getOperand(0)) * macsPerOutput(op->getOperand(1));
  if (isa<graph::MatMulOp, graph::MatMulIntegerOp, graph::QLinearMatMulOp,
          graph::FcOp>(op))
    return elementsOf(y) * lastDim(op->getOperand(0));
  if (isa<graph::GemmOp>(op)) {
    ArrayRef<int64_t> a = shapeOf(op->getOperand(0));
    auto transA = op->getAttrOfType<IntegerAttr>("transA");
    bool transposed = transA && transA.getInt() != 0;
    return a.size() == 2 ? elementsOf(y) * a[transposed ? 0 : 1] : 0.0;
  }
  // Q K^T and probs V: S x S' x H*D multiply-adds each, per batch.
  if (isa<graph::AttentionOp>(op)) {
    ArrayRef<int64_t> k = shapeOf(op->getOperand(1));
    return k.size() == 3 ? 2.0 * elementsOf(op->getOperand(0)) * k[1] : 0.0;
  }
  // Every step multiplies each batch row by W and R of each direction.
  if (isa<graph::LSTMOp, graph::GRUOp, graph::RNNOp>(op)) {
    ArrayRef<int64_t> x = shapeOf(op->getOperand(0));
    if (x.size() != 3)
      return 0;
    return static_cast<double>(x[0]) * x[1] *
           (elementsOf(op->getOperand(1)) + elementsOf(op->getOperand(2)));
  }
  return 0;
}

} // namespace

OpWork estimateOpWork(Operation *op) {
  OpWork work;
  for (Value v : op->getOperands())
    work.bytes += bytesOf(v);
  for (Value v : op->getResults())
    work.bytes += bytesOf(v);
  double macs = productMacs(op);
  work.product = macs > 0;
  if (work.product)
    work.ops = 2 * macs;
  else if (op->getNumRegions() == 0)
    for (Value v : op->getResults())
      work.ops += elementsOf(v);
  return work;
}

OpWork chainedOpWork(Operation *op) {
  OpWork work = estimateOpWork(op);
  if (op->getNumOperands() > 0)
    work.bytes = std::max(0.0, work.bytes - 2 * bytesOf(op->getOperand(0)));
  return work;
}

} // namespace mlcc::lowering
