//===- ElementwiseCast.cpp - Portable lowering of conversions and copies --===//
//
// cast and cast_like between all numeric types and bool (the conversions of
// compiler/Reference/Kernels/Cast.cpp: float to integer toward zero with
// saturation and nan -> 0, integer to integer wrapping, anything to bool
// `!= 0`), identity, and inference-mode dropout.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseUtils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace mlcc::portable {
namespace ew {
namespace {

/// Fails unless result `index` is a tensor of a supported element type.
LogicalResult checkResultType(PortableOp &p, unsigned index) {
  auto shaped = dyn_cast<ShapedType>(p.op->getResult(index).getType());
  Type elem = shaped ? shaped.getElementType() : Type();
  if (!elem || !(isa<IntegerType>(elem) || elem.isF16() || elem.isBF16() ||
                 elem.isF32() || elem.isF64()))
    return p.op->emitError() << "result " << index << " has type "
                             << p.op->getResult(index).getType()
                             << ", expected a tensor of a numeric type or "
                                "bool";
  return success();
}

/// cast and cast_like: the target type is the result's element type.
LogicalResult lowerConvert(PortableOp &p) {
  if (failed(checkPresent(p, 1)) || failed(checkOperandType(p, 0, kAny)) ||
      failed(checkResultType(p, 0)))
    return failure();
  const ElemType from = elemTypeOf(p.op->getOperand(0));
  const ElemType to = elemTypeOf(p.op->getResult(0));
  if (from.tensor == to.tensor) {
    buildCopy(p.b, p.loc, p.operands[0], p.results[0]);
    return success();
  }
  buildElementwise(p.b, p.loc, p.operands[0], p.results[0],
                   [&](Scalar &s, ValueRange in) {
                     Value v = s.convert(from, to, s.load(from, in[0]));
                     return SmallVector<Value>{s.store(to, v)};
                   });
  return success();
}

LogicalResult lowerIdentity(PortableOp &p) {
  if (failed(checkPresent(p, 1)))
    return failure();
  if (!isa<ShapedType>(p.op->getOperand(0).getType()))
    return p.op->emitError()
           << "input of type " << p.op->getOperand(0).getType()
           << " is not a tensor";
  buildCopy(p.b, p.loc, p.operands[0], p.results[0]);
  return success();
}

/// The first element of a constant graph operand as a double, if it is one.
std::optional<double> constantScalar(Value graphValue) {
  Attribute attr;
  if (!graphValue || !matchPattern(graphValue, m_Constant(&attr)))
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense || dense.getNumElements() == 0)
    return std::nullopt;
  Type elem = dense.getElementType();
  if (isa<FloatType>(elem))
    return (*dense.getValues<APFloat>().begin()).convertToDouble();
  if (elem.isInteger(1))
    return *dense.getValues<bool>().begin() ? 1.0 : 0.0;
  if (isa<IntegerType>(elem))
    return static_cast<double>(
        (*dense.getValues<APInt>().begin()).getSExtValue());
  return std::nullopt;
}

// Inference: the output is the input and the mask all true. Training mode
// drops elements at random, which only the ratio 0 makes reproducible; it
// is rejected when training_mode is a constant. A training_mode computed
// at run time is taken as false (the reference would reject a true one
// unless the ratio is 0, where the result is the same).
LogicalResult lowerDropout(PortableOp &p) {
  if (failed(checkPresent(p, 1)) || failed(checkOperandType(p, 0, kFloat)))
    return failure();
  if (p.op->getNumOperands() > 2 && p.operands.size() > 2 && p.operands[2]) {
    std::optional<double> training = constantScalar(p.op->getOperand(2));
    if (training && *training != 0.0) {
      std::optional<double> ratio = 0.5;
      if (p.operands.size() > 1 && p.operands[1])
        ratio = constantScalar(p.op->getOperand(1));
      if (!ratio || *ratio != 0.0)
        return p.op->emitError("training mode with a ratio other than 0 is "
                               "random and not supported");
    }
  }
  buildCopy(p.b, p.loc, p.operands[0], p.results[0]);
  if (p.results.size() > 1 && p.results[1]) {
    Value one = Scalar{p.b, p.loc}.boolCst(true);
    if (cast<MemRefType>(p.results[1].getType()).getNumElements() != 0)
      p.b.create<linalg::FillOp>(p.loc, one, p.results[1]);
  }
  return success();
}

} // namespace

void registerCast(PortableRegistry &registry) {
  registry["graph.cast"] = &lowerConvert;
  registry["graph.cast_like"] = &lowerConvert;
  registry["graph.identity"] = &lowerIdentity;
  registry["graph.dropout"] = &lowerDropout;
}

} // namespace ew
} // namespace mlcc::portable
