//===- BoundRunTimeExtents.cpp - Bound shapes for data-dependent dims -----===//
//
// A compiled target needs static buffers. A data-dependent op's result dim
// (NonZero's count, ...) is given its bound, the most the op can give for
// its operands' static shapes, and the op computes the actual extent at run
// time. The ops after it that only move elements around without mixing them
// along such a dim (elementwise ops, gathers, transposes, reshapes that keep
// the dim) compute over the whole bound, and their result dims take the
// extent of the operand dim they come from; which one is found by asking
// the op's shape helper what changes when that operand dim grows by one.
// Any other use of such a value (a reduction over it, Shape, a loop) is an
// error naming the op: its result would depend on the padding.
// See graph/RunTimeExtents.h for what is recorded.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"
#include "PatternUtils.h"

#include "GraphDialect.h"
#include "RunTimeExtents.h"
#include "mlcc/Reference/MlirBridge.h"

namespace mlcc::graph {
#define GEN_PASS_DEF_BOUNDRUNTIMEEXTENTS
#include "Passes.h.inc"
} // namespace mlcc::graph

using namespace mlir;

namespace mlcc::graph {
namespace {

RankedTensorType staticType(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() ? t : RankedTensorType();
}

/// A data-dependent op's result: its bound shape, and the dims whose extent
/// the op computes at run time.
struct ResultBound {
  SmallVector<int64_t> shape, runTimeDims;
};
using Bounds = SmallVector<ResultBound>;

/// The bounds of a data-dependent op's results; nullopt if `op` is no such
/// op. Fails (with an error) when an operand it needs is not static.
FailureOr<std::optional<Bounds>> dataDependentBounds(Operation *op) {
  StringRef name = op->getName().stripDialect();
  if (name != "nonzero" && name != "compress" && name != "unique" &&
      name != "non_max_suppression")
    return std::optional<Bounds>();
  for (Value v : op->getOperands())
    if (!isa<NoneType>(v.getType()) && !staticType(v))
      return op->emitError()
             << describeOp(op) << ": operand of type " << v.getType()
             << " is not static; the bound of its result "
                "cannot be known";
  ArrayRef<int64_t> in = staticType(op->getOperand(0)).getShape();
  int64_t numel = staticType(op->getOperand(0)).getNumElements();
  auto axisAttr = op->getAttrOfType<IntegerAttr>("axis");
  auto axisOf = [&](int64_t rank) {
    int64_t a = axisAttr.getInt();
    return a < 0 ? a + rank : a;
  };
  Bounds bounds;
  if (name == "nonzero") {
    bounds.push_back({{static_cast<int64_t>(in.size()), numel}, {1}});
  } else if (name == "compress") {
    int64_t conditions = staticType(op->getOperand(1)).getNumElements();
    if (axisAttr) {
      int64_t axis = axisOf(in.size());
      SmallVector<int64_t> shape(in);
      shape[axis] = std::min(conditions, shape[axis]);
      bounds.push_back({shape, {axis}});
    } else {
      bounds.push_back({{std::min(conditions, numel)}, {0}});
    }
  } else if (name == "unique") {
    // Y, indices, inverse_indices (static), counts.
    int64_t slices = numel;
    SmallVector<int64_t> y{numel};
    SmallVector<int64_t> yBounded{0};
    if (axisAttr) {
      int64_t axis = axisOf(in.size());
      slices = in[axis];
      y.assign(in.begin(), in.end());
      yBounded = {axis};
    }
    bounds.push_back({y, yBounded});
    bounds.push_back({{slices}, {0}});
    bounds.push_back({{slices}, {}});
    bounds.push_back({{slices}, {0}});
  } else {
    // non_max_suppression: at most min(boxes, max_output_boxes_per_class)
    // per batch and class.
    ArrayRef<int64_t> scores = staticType(op->getOperand(1)).getShape();
    if (scores.size() != 3)
      return op->emitError() << describeOp(op) << ": scores must have rank 3";
    int64_t perClass = scores[2];
    if (op->getNumOperands() > 2 && !isa<NoneType>(op->getOperand(2).getType()))
      if (auto c = op->getOperand(2).getDefiningOp<ConstantOp>())
        if (auto v = dyn_cast<DenseIntElementsAttr>(c.getValue());
            v && v.getNumElements() == 1)
          perClass =
              std::clamp<int64_t>((*v.begin()).getSExtValue(), 0, perClass);
    bounds.push_back({{scores[0] * scores[1] * perClass, 3}, {0}});
  }
  for (auto [k, r] : llvm::enumerate(op->getResults())) {
    if (isa<NoneType>(r.getType()))
      continue; // an optional output left out
    auto t = dyn_cast<RankedTensorType>(r.getType());
    if (k >= bounds.size() || !t ||
        t.getRank() != static_cast<int64_t>(bounds[k].shape.size()))
      return op->emitError() << describeOp(op) << ": result #" << k
                             << " has an unexpected type " << r.getType();
    // A declared static dim is the bound (the data must fit in it).
    for (auto [d, size] : llvm::enumerate(t.getShape()))
      if (!ShapedType::isDynamic(size))
        bounds[k].shape[d] = size;
  }
  return std::optional<Bounds>(bounds);
}

/// Ops whose result elements each come from operand elements at the
/// matching place along every dim that has a run-time extent: computing
/// them over the bound gives the right elements inside the extent.
bool movesElementsOnly(Operation *op) {
  return isElementwise(op) ||
         isa<ModOp, MaxOp, MinOp, XorOp, LessOrEqualOp, GreaterOrEqualOp,
             GatherOp, GatherNDOp, GatherElementsOp, TransposeOp, SqueezeOp,
             UnsqueezeOp, ReshapeOp, FlattenOp>(op);
}

/// Result shapes from the op's shape helper with dim `dim` of operand
/// `operand` one larger than its type says (none: leave every operand).
FailureOr<SmallVector<ref::Shape>>
probeShapes(Operation *op, std::optional<unsigned> operand, unsigned dim) {
  StringRef name = op->getName().getStringRef();
  name.consume_front("graph.");
  const ref::KernelDef *kernel = ref::KernelRegistry::get().find(name.str());
  if (!kernel || !kernel->inferShapes)
    return failure();
  std::vector<ref::ValueInfo> in(op->getNumOperands());
  std::vector<ref::Tensor> storage(op->getNumOperands());
  for (unsigned k = 0; k < op->getNumOperands(); ++k)
    in[k] = valueInfoOf(op->getOperand(k), storage[k]);
  if (operand)
    ++in[*operand].shape[dim];
  std::vector<ref::ValueInfo> out(op->getNumResults());
  if (kernel->inferShapes(attrsFromOp(op), in, out).failed())
    return failure();
  SmallVector<ref::Shape> shapes;
  for (const ref::ValueInfo &v : out)
    shapes.push_back(v.shape);
  return shapes;
}

/// For an op that moves elements only: each result dim's source, found by
/// growing each operand dim with a run-time extent by one.
LogicalResult traceExtents(Operation *op) {
  FailureOr<SmallVector<ref::Shape>> base = probeShapes(op, std::nullopt, 0);
  if (failed(base))
    return op->emitError() << describeOp(op)
                           << ": the shapes of its results are unknown";
  SmallVector<SmallVector<int64_t>> sources;
  for (Value r : op->getResults())
    sources.emplace_back(cast<ShapedType>(r.getType()).getRank(),
                         kStaticExtent);
  for (auto [k, v] : llvm::enumerate(op->getOperands())) {
    for (auto [j, s] : llvm::enumerate(extentSources(v))) {
      if (s == kStaticExtent)
        continue;
      FailureOr<SmallVector<ref::Shape>> grown = probeShapes(op, k, j);
      bool traced = false;
      for (unsigned r = 0; succeeded(grown) && r < grown->size(); ++r)
        for (size_t d = 0; d < (*grown)[r].size(); ++d) {
          int64_t delta = (*grown)[r][d] - (*base)[r][d];
          if (delta == 0)
            continue;
          if (delta != 1 || sources[r][d] != kStaticExtent) {
            traced = false;
            r = grown->size();
            break;
          }
          sources[r][d] = operandExtent(k, j);
          traced = true;
        }
      // A dim that merges with others (a reshape of [n, 4] to [4n]) or
      // whose extent does not reach the result (a gather along it).
      if (!traced && !isa<GatherOp, GatherNDOp, GatherElementsOp>(op))
        return op->emitError()
               << describeOp(op) << ": dim " << j << " of operand #" << k
               << " has an extent known only at run time, which this op "
                  "does not keep as a dim of its result; --target compiles "
                  "no such use yet";
    }
  }
  for (auto [r, s] : llvm::enumerate(sources))
    if (llvm::any_of(s, [](int64_t v) { return v != kStaticExtent; }))
      setExtentSources(op, r, s);
  return success();
}

LogicalResult boundOp(Operation *op) {
  FailureOr<std::optional<Bounds>> bounds = dataDependentBounds(op);
  if (failed(bounds))
    return failure();
  if (*bounds) {
    for (auto [k, r] : llvm::enumerate(op->getResults())) {
      if (isa<NoneType>(r.getType()))
        continue;
      const ResultBound &bound = (**bounds)[k];
      auto t = cast<RankedTensorType>(r.getType());
      r.setType(RankedTensorType::get(bound.shape, t.getElementType()));
      SmallVector<int64_t> sources(bound.shape.size(), kStaticExtent);
      for (int64_t d : bound.runTimeDims)
        sources[d] = kOwnExtent;
      if (!bound.runTimeDims.empty())
        setExtentSources(op, k, sources);
    }
    return success();
  }
  // Ops in a region read values of the enclosing block too.
  Value extentOperand;
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (hasRunTimeExtents(v))
        extentOperand = v;
  });
  if (!extentOperand)
    return success();
  if (op->getNumRegions() != 0 || !movesElementsOnly(op)) {
    Operation *from = extentOperand.getDefiningOp();
    return op->emitError()
           << describeOp(op) << ": an operand has a dim whose extent is known "
           << "only at run time (from " << describeOp(from)
           << "); --target compiles only elementwise ops, gathers, "
              "transposes and reshapes of such values yet";
  }
  if (failed(refineResultTypes(op)))
    return failure();
  for (Value r : op->getResults())
    if (!staticType(r))
      return op->emitError() << describeOp(op) << ": result type "
                             << r.getType() << " is not static";
  return traceExtents(op);
}

struct BoundRunTimeExtents
    : impl::BoundRunTimeExtentsBase<BoundRunTimeExtents> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    Block &body = func.getBody().front();
    for (Operation &op : body.without_terminator())
      if (failed(boundOp(&op)))
        return signalPassFailure();
    updateFunctionType(func);
    Operation *ret = body.getTerminator();
    for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
      SmallVector<int64_t> dims;
      for (auto [d, s] : llvm::enumerate(extentSources(v)))
        if (s != kStaticExtent)
          dims.push_back(d);
      if (!dims.empty())
        func.setResultAttr(
            i, kRunTimeExtentsAttr,
            Builder(func.getContext()).getDenseI64ArrayAttr(dims));
    }
  }
};

} // namespace
} // namespace mlcc::graph
