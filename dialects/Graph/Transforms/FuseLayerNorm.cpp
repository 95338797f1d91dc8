//===- FuseLayerNorm.cpp - decomposed LayerNormalization -> layer_norm ----===//
//
// ONNX has LayerNormalization only from opset 17; torch exports for older
// opsets (BERT at opset 13) write it out as nine to eleven ops:
//
//   mean = reduce_mean(x, axes = [-1])          keepdims = 1
//   d    = sub(x, mean)
//   var  = reduce_mean(pow(d, 2) or mul(d, d), axes = [-1])
//   std  = sqrt(add(var, eps))                  eps a scalar constant
//   y    = div(d, std)  or  mul(d, reciprocal(std))
//   y    = mul(y, gamma)   optional, a constant per last-axis element
//   y    = add(y, beta)    optional, likewise
//
// That is two reductions and seven full passes over the hidden state where
// graph.layer_norm is one kernel. The fused op takes gamma as its Scale
// (a splat of ones when the group has none: ONNX requires the operand) and
// beta as B (none when absent), normalising the last axis with the group's
// epsilon. Add and mul take their operands either way round; every value
// inside the group must have no user outside it.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"
#include "PatternUtils.h"

#include "GraphDialect.h"
#include "mlcc/Reference/MlirBridge.h"

namespace mlcc::graph {
#define GEN_PASS_DEF_FUSELAYERNORM
#include "Passes.h.inc"
} // namespace mlcc::graph

using namespace mlir;

namespace mlcc::graph {
namespace {

/// The value of a one-element float constant.
bool scalarConstant(Value v, double &value) {
  auto c = v ? v.getDefiningOp<ConstantOp>() : ConstantOp();
  ref::Tensor t;
  if (!c || !isa<FloatType>(c.getValue().getElementType()) ||
      c.getValue().getNumElements() != 1 ||
      !tensorFromElementsAttr(c.getValue(), t).ok())
    return false;
  value = t.getDouble(0);
  return true;
}

/// Whether `mean` is reduce_mean over the last axis of `x`, keeping it.
bool isLastAxisMean(ReduceMeanOp mean, Value x) {
  if (!mean || mean.getData() != x)
    return false;
  auto type = dyn_cast<RankedTensorType>(x.getType());
  if (!type || type.getRank() == 0 || mean.getKeepdims().value_or(1) != 1)
    return false;
  std::optional<ArrayAttr> axes = mean.getAxes();
  if (!axes || axes->size() != 1)
    return false;
  int64_t axis = cast<IntegerAttr>((*axes)[0]).getInt();
  return axis == -1 || axis == type.getRank() - 1;
}

/// Whether the constant `c` holds one value per element of the last axis
/// (length `cols`) of a value of rank `rank` and element type `elementType`:
/// shape [cols] or [1, ..., cols], or a single element.
bool isAffineParameter(Value c, int64_t rank, int64_t cols, Type elementType) {
  auto op = c ? c.getDefiningOp<ConstantOp>() : ConstantOp();
  if (!op || op.getValue().getElementType() != elementType)
    return false;
  auto type = cast<ShapedType>(op.getValue().getType());
  if (type.getRank() > rank)
    return false;
  if (type.getNumElements() == 1)
    return true;
  for (int64_t i = 0; i + 1 < type.getRank(); ++i)
    if (type.getDimSize(i) != 1)
      return false;
  return type.getRank() > 0 && type.getDimSize(type.getRank() - 1) == cols;
}

/// A splat constant of `cols` elements.
Value splat(OpBuilder &b, Location loc, Type elementType, int64_t cols,
            double value) {
  auto attr = DenseElementsAttr::get(RankedTensorType::get({cols}, elementType),
                                     b.getFloatAttr(elementType, value));
  return b.create<ConstantOp>(loc, cast<ElementsAttr>(attr));
}

/// The Scale or B operand for an affine parameter: the constant itself when
/// it has one element per column, else its single value splat to [cols].
Value parameterOperand(OpBuilder &b, Value c, Type elementType, int64_t cols) {
  auto type = cast<ShapedType>(c.getType());
  if (type.getNumElements() != 1 || cols == 1)
    return c;
  double value;
  if (!scalarConstant(c, value))
    return nullptr;
  return splat(b, c.getLoc(), elementType, cols, value);
}

/// The matched group.
struct Match {
  Value x;
  double epsilon = 0;
  SmallVector<Operation *> ops; // erased after the rewrite
  Operation *last = nullptr;    // its result becomes the layer_norm's
  Value gamma, beta;            // the affine step's constants, if any
};

/// Takes `op` into the group when it is an OpTy whose result has `type`.
template <typename OpTy> bool take(Match &m, Operation *op, Type type) {
  if (!isa_and_nonnull<OpTy>(op) || op->getResult(0).getType() != type)
    return false;
  m.ops.push_back(op);
  return true;
}

/// pow(d, 2) or mul(d, d).
bool isSquareOf(Operation *op, Value d) {
  double two;
  if (isa<PowOp>(op))
    return op->getOperand(0) == d && scalarConstant(op->getOperand(1), two) &&
           two == 2.0;
  return isa<MulOp>(op) && op->getOperand(0) == d && op->getOperand(1) == d;
}

/// Everything from d = x - mean to y = d / std; `mean` is known to reduce
/// m.x over its last axis.
bool matchNormalization(Match &m, ReduceMeanOp mean) {
  Type xType = m.x.getType(), statType = mean.getType();
  m.ops.push_back(mean);
  Operation *sub = soleUser(mean.getResult());
  if (!take<SubOp>(m, sub, xType) || sub->getOperand(0) != m.x ||
      sub->getOperand(1) != mean.getResult())
    return false;
  Value d = sub->getResult(0);
  Operation *square = nullptr;
  for (Operation *u : d.getUsers())
    if (isSquareOf(u, d))
      square = u;
  if (!take<PowOp>(m, square, xType) && !take<MulOp>(m, square, xType))
    return false;
  auto var = dyn_cast_or_null<ReduceMeanOp>(soleUser(square->getResult(0)));
  if (!var || !isLastAxisMean(var, square->getResult(0)) ||
      !take<ReduceMeanOp>(m, var, statType))
    return false;
  Operation *addEps = soleUser(var.getResult());
  if (!take<AddOp>(m, addEps, statType) ||
      !scalarConstant(otherOperand(addEps, var.getResult()), m.epsilon))
    return false;
  Operation *sqrt = soleUser(addEps->getResult(0));
  if (!take<SqrtOp>(m, sqrt, statType))
    return false;
  Value stddev = sqrt->getResult(0);
  Operation *norm = soleUser(stddev);
  if (take<DivOp>(m, norm, xType)) {
    if (norm->getOperand(0) != d || norm->getOperand(1) != stddev)
      return false;
  } else if (take<ReciprocalOp>(m, norm, statType)) {
    Value inverse = norm->getResult(0);
    norm = soleUser(inverse);
    if (!take<MulOp>(m, norm, xType) || otherOperand(norm, inverse) != d)
      return false;
  } else {
    return false;
  }
  // d feeds the square and the normalisation, nothing else.
  for (Operation *u : d.getUsers())
    if (u != square && u != norm)
      return false;
  m.last = norm;
  return true;
}

/// The optional mul by gamma, then the optional add of beta.
void matchAffine(Match &m, int64_t rank, int64_t cols, Type elementType) {
  Type xType = m.x.getType();
  auto step = [&](Value &param, bool isMul) {
    Value y = m.last->getResult(0);
    Operation *user = soleUser(y);
    // The kind first: the sole user may be the return, which has no
    // result to look at.
    if (!user || !(isMul ? isa<MulOp>(user) : isa<AddOp>(user)) ||
        user->getResult(0).getType() != xType)
      return;
    Value c = otherOperand(user, y);
    if (!isAffineParameter(c, rank, cols, elementType))
      return;
    param = c;
    m.ops.push_back(user);
    m.last = user;
  };
  step(m.gamma, /*isMul=*/true);
  step(m.beta, /*isMul=*/false);
}

/// Replaces the group with graph.layer_norm.
void fuse(Match &m, int64_t cols, Type elementType) {
  OpBuilder b(m.last);
  Location loc = m.last->getLoc();
  Value scale = m.gamma ? parameterOperand(b, m.gamma, elementType, cols)
                        : splat(b, loc, elementType, cols, 1.0);
  Value bias = m.beta ? parameterOperand(b, m.beta, elementType, cols)
                      : b.create<NoneOp>(loc).getResult();
  NamedAttribute attrs[] = {
      b.getNamedAttr("axis", b.getI64IntegerAttr(-1)),
      b.getNamedAttr("epsilon", b.getF32FloatAttr(m.epsilon))};
  Type none = b.getNoneType();
  auto ln =
      b.create<LayerNormalizationOp>(loc, TypeRange{m.x.getType(), none, none},
                                     ValueRange{m.x, scale, bias}, attrs);
  m.last->getResult(0).replaceAllUsesWith(ln.getResult(0));
  eraseGroup(m.ops);
}

/// Fuses the layer norm whose mean is `mean`; the erased ops go into
/// `erased`. False when `mean` does not start one.
bool fuseFrom(ReduceMeanOp mean, DenseSet<Operation *> &erased) {
  Match m;
  m.x = mean.getData();
  auto type = dyn_cast<RankedTensorType>(m.x.getType());
  if (!type || !isa<FloatType>(type.getElementType()) ||
      !isLastAxisMean(mean, m.x) || type.isDynamicDim(type.getRank() - 1))
    return false;
  int64_t cols = type.getShape().back();
  if (!matchNormalization(m, mean))
    return false;
  matchAffine(m, type.getRank(), cols, type.getElementType());
  erased.insert(m.ops.begin(), m.ops.end());
  fuse(m, cols, type.getElementType());
  return true;
}

struct FuseLayerNorm : impl::FuseLayerNormBase<FuseLayerNorm> {
  void runOnOperation() override {
    SmallVector<ReduceMeanOp> means;
    getOperation().walk([&](ReduceMeanOp op) { means.push_back(op); });
    // A fused group takes its variance's reduce_mean with it.
    DenseSet<Operation *> erased;
    for (ReduceMeanOp mean : means)
      if (!erased.count(mean))
        fuseFrom(mean, erased);
  }
};

} // namespace
} // namespace mlcc::graph
