//===- GraphOpVerifiers.cpp - checks the operand types cannot express -----===//
//
// Verifiers of the generated ONNX ops listed in tools/gen_graph_ops.py
// (VERIFIED). They reject what is wrong whatever the data: ranks that do not
// fit, static dims that contradict each other, out-of-range axes. Dynamic
// dims are never an error here.
//
//===----------------------------------------------------------------------===//

#include "GraphDialect.h"

using namespace mlir;
using namespace mlcc::graph;

namespace {

/// The ranked type of `v`, or null (unranked or none).
RankedTensorType ranked(Value v) {
  return v ? dyn_cast<RankedTensorType>(v.getType()) : RankedTensorType();
}

bool bothStatic(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b);
}

/// `axis` must lie in [-rank, rank).
LogicalResult checkAxis(Operation *op, IntegerAttr attr, int64_t rank,
                        int64_t dflt = 0) {
  int64_t axis = attr ? attr.getInt() : dflt;
  if (axis < -rank || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << rank;
  return success();
}

/// An optional per-channel operand: rank 1 of length `channels` if static.
LogicalResult checkChannelVector(Operation *op, Value v, StringRef name,
                                 int64_t channels) {
  RankedTensorType t = ranked(v);
  if (!t)
    return success();
  if (t.getRank() != 1)
    return op->emitOpError() << name << " must have rank 1, got rank "
                             << t.getRank();
  if (bothStatic(t.getDimSize(0), channels) && t.getDimSize(0) != channels)
    return op->emitOpError() << name << " has " << t.getDimSize(0)
                             << " elements, expected " << channels;
  return success();
}

} // namespace

// graph.conv
LogicalResult ConvOp::verify() {
  RankedTensorType x = ranked(getX()), w = ranked(getW());
  if (!x || !w)
    return success();
  if (x.getRank() < 3)
    return emitOpError("input must have rank >= 3 (N, C, spatial...), got ")
           << x.getRank();
  if (w.getRank() != x.getRank())
    return emitOpError("weight has rank ")
           << w.getRank() << ", expected the input's rank " << x.getRank();
  int64_t group = getGroupAttr() ? getGroupAttr().getInt() : 1;
  if (group < 1)
    return emitOpError("group must be >= 1, got ") << group;
  int64_t c = x.getDimSize(1), wc = w.getDimSize(1), m = w.getDimSize(0);
  if (bothStatic(c, wc) && c != wc * group)
    return emitOpError("input has ")
           << c << " channels, but weight expects " << wc << " x group "
           << group << " = " << wc * group;
  if (!ShapedType::isDynamic(m) && m % group != 0)
    return emitOpError("weight's ")
           << m << " output channels are not divisible by group " << group;
  return checkChannelVector(*this, getB(), "bias", m);
}

// graph.matmul
LogicalResult MatMulOp::verify() {
  RankedTensorType a = ranked(getA()), b = ranked(getB());
  if (!a || !b)
    return success();
  if (a.getRank() < 1 || b.getRank() < 1)
    return emitOpError("operands must have rank >= 1");
  int64_t k1 = a.getDimSize(a.getRank() - 1);
  int64_t k2 = b.getDimSize(b.getRank() == 1 ? 0 : b.getRank() - 2);
  if (bothStatic(k1, k2) && k1 != k2)
    return emitOpError("inner dimensions differ: ") << k1 << " vs " << k2;
  return success();
}

// graph.gemm
LogicalResult GemmOp::verify() {
  RankedTensorType a = ranked(getA()), b = ranked(getB());
  if (!a || !b)
    return success();
  if (a.getRank() != 2 || b.getRank() != 2)
    return emitOpError("A and B must have rank 2, got ")
           << a.getRank() << " and " << b.getRank();
  bool ta = getTransAAttr() && getTransAAttr().getInt();
  bool tb = getTransBAttr() && getTransBAttr().getInt();
  int64_t k1 = a.getDimSize(ta ? 0 : 1), k2 = b.getDimSize(tb ? 1 : 0);
  if (bothStatic(k1, k2) && k1 != k2)
    return emitOpError("inner dimensions differ: ") << k1 << " vs " << k2;
  return success();
}

// graph.transpose
LogicalResult TransposeOp::verify() {
  RankedTensorType t = ranked(getData());
  ArrayAttr perm = getPermAttr();
  if (!t || !perm)
    return success();
  if (static_cast<int64_t>(perm.size()) != t.getRank())
    return emitOpError("perm has ")
           << perm.size() << " entries, expected the rank " << t.getRank();
  llvm::SmallVector<bool> seen(t.getRank(), false);
  for (Attribute a : perm) {
    int64_t p = cast<IntegerAttr>(a).getInt();
    if (p < 0 || p >= t.getRank() || seen[p])
      return emitOpError("perm is not a permutation of 0..")
             << t.getRank() - 1;
    seen[p] = true;
  }
  return success();
}

// graph.concat
LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  RankedTensorType first;
  for (Value v : getInputs()) {
    RankedTensorType t = ranked(v);
    if (!t)
      continue;
    if (!first) {
      first = t;
      continue;
    }
    if (t.getRank() != first.getRank())
      return emitOpError("inputs have ranks ")
             << first.getRank() << " and " << t.getRank();
    if (t.getElementType() != first.getElementType())
      return emitOpError("inputs have element types ")
             << first.getElementType() << " and " << t.getElementType();
  }
  if (!first)
    return success();
  if (!getAxisAttr())
    return emitOpError("requires the axis attribute");
  return checkAxis(*this, getAxisAttr(), first.getRank());
}

// graph.reshape
LogicalResult ReshapeOp::verify() {
  RankedTensorType s = ranked(getShape());
  if (s && (s.getRank() != 1 || !s.getElementType().isInteger(64)))
    return emitOpError("shape operand must be a 1-D i64 tensor, got ")
           << s;
  return success();
}

// graph.gather
LogicalResult GatherOp::verify() {
  RankedTensorType d = ranked(getData()), i = ranked(getIndices());
  if (i && !isa<IntegerType>(i.getElementType()))
    return emitOpError("indices must be integers, got ") << i.getElementType();
  if (!d)
    return success();
  if (d.getRank() < 1)
    return emitOpError("data must have rank >= 1");
  return checkAxis(*this, getAxisAttr(), d.getRank());
}

// graph.batch_norm
LogicalResult BatchNormalizationOp::verify() {
  RankedTensorType x = ranked(getX());
  if (!x)
    return success();
  if (x.getRank() < 2)
    return emitOpError("input must have rank >= 2 (N, C, ...), got ")
           << x.getRank();
  int64_t c = x.getDimSize(1);
  for (auto [v, name] : {std::pair{getScale(), "scale"}, {getB(), "bias"},
                         {getInputMean(), "mean"}, {getInputVar(), "var"}})
    if (failed(checkChannelVector(*this, v, name, c)))
      return failure();
  return success();
}

// graph.softmax
LogicalResult SoftmaxOp::verify() {
  RankedTensorType t = ranked(getInput());
  return t ? checkAxis(*this, getAxisAttr(), t.getRank(), -1) : success();
}

// graph.layer_norm
LogicalResult LayerNormalizationOp::verify() {
  RankedTensorType t = ranked(getX());
  return t ? checkAxis(*this, getAxisAttr(), t.getRank(), -1) : success();
}
