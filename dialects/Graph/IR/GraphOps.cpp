//===- GraphOps.cpp - verifiers and folders of the hand-written ops -------===//

#include "GraphDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlcc::graph;

#define GET_OP_CLASSES
#include "GraphOps.cpp.inc"

//===----------------------------------------------------------------------===//
// graph.constant
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult ConstantOp::verify() {
  if (getValue().getType() != getType())
    return emitOpError("value of type ")
           << getValue().getType() << " does not match result type "
           << getType();
  return success();
}

//===----------------------------------------------------------------------===//
// graph.none
//===----------------------------------------------------------------------===//

OpFoldResult NoneOp::fold(FoldAdaptor) { return UnitAttr::get(getContext()); }

//===----------------------------------------------------------------------===//
// graph.control_dependency
//===----------------------------------------------------------------------===//

LogicalResult ControlDependencyOp::verify() {
  if (getValues().size() != getResults().size())
    return emitOpError("has ") << getValues().size() << " values but "
                               << getResults().size() << " results";
  for (auto [in, out] : llvm::zip(getValues(), getResults()))
    if (in.getType() != out.getType())
      return emitOpError("result type ")
             << out.getType() << " differs from its value's type "
             << in.getType();
  if (getAfter().empty())
    return emitOpError("needs at least one value in 'after'");
  return success();
}

//===----------------------------------------------------------------------===//
// graph.stencil
//===----------------------------------------------------------------------===//

LogicalResult StencilOp::verify() {
  auto in = dyn_cast<RankedTensorType>(getInput().getType());
  auto w = dyn_cast<RankedTensorType>(getWeights().getType());
  if (!in || !w)
    return success();
  if (in.getRank() != w.getRank())
    return emitOpError("weights have rank ")
           << w.getRank() << ", expected the input's rank " << in.getRank();
  llvm::StringRef red = getReduction();
  if (red != "sum" && red != "min" && red != "max" && red != "argmin" &&
      red != "argmax")
    return emitOpError("unknown reduction '")
           << red << "' (expected sum, min, max, argmin or argmax)";
  llvm::StringRef pad = getPadding();
  if (pad != "zero" && pad != "clamp" && pad != "reflect" && pad != "mirror")
    return emitOpError("unknown padding '")
           << pad << "' (expected zero, clamp, reflect or mirror)";
  for (auto [name, attr] :
       {std::pair{"offsets", getOffsetsAttr()}, {"strides", getStridesAttr()},
        {"dilations", getDilationsAttr()}})
    if (attr && static_cast<int64_t>(attr.size()) != in.getRank())
      return emitOpError(name) << " has " << attr.size()
                               << " entries, expected " << in.getRank();
  return success();
}

//===----------------------------------------------------------------------===//
// Region ops
//===----------------------------------------------------------------------===//

/// Region values may be more (or less) static than the op's declared types:
/// shapes can be refined on one side first. Element type and rank must agree
/// and static dims must match.
static bool compatible(Type a, Type b) {
  if (a == b)
    return true;
  auto ta = dyn_cast<ShapedType>(a), tb = dyn_cast<ShapedType>(b);
  if (!ta || !tb || ta.getElementType() != tb.getElementType())
    return false;
  if (!ta.hasRank() || !tb.hasRank())
    return true;
  return succeeded(verifyCompatibleShape(ta, tb));
}

static bool compatible(TypeRange a, TypeRange b) {
  if (a.size() != b.size())
    return false;
  for (auto [x, y] : llvm::zip(a, b))
    if (!compatible(x, y))
      return false;
  return true;
}

/// Checks that `region` ends in a terminator of type TermOp whose operand
/// types are `expected`.
template <typename TermOp>
static LogicalResult verifyRegionEnd(Operation *op, Region &region,
                                     llvm::StringRef regionName,
                                     TypeRange expected) {
  if (region.empty())
    return op->emitOpError() << regionName << " region is empty";
  auto term = dyn_cast<TermOp>(region.front().getTerminator());
  if (!term)
    return op->emitOpError()
           << regionName << " region must end with "
           << TermOp::getOperationName();
  TypeRange got = term->getOperandTypes();
  if constexpr (std::is_same_v<TermOp, ConditionOp>)
    got = got.drop_front();
  if (got.size() != expected.size())
    return op->emitOpError() << regionName << " region yields " << got.size()
                             << " values, expected " << expected.size();
  for (auto [i, pair] : llvm::enumerate(llvm::zip(got, expected)))
    if (!compatible(std::get<0>(pair), std::get<1>(pair)))
      return op->emitOpError()
             << regionName << " region value #" << i << " has type "
             << std::get<0>(pair) << ", expected " << std::get<1>(pair);
  return success();
}

LogicalResult IfOp::verify() {
  if (failed(verifyRegionEnd<YieldOp>(*this, getThenRegion(), "then",
                                      getResultTypes())) ||
      failed(verifyRegionEnd<YieldOp>(*this, getElseRegion(), "else",
                                      getResultTypes())))
    return failure();
  return success();
}

/// Results of a loop: carried values, then the stacked per-iteration values
/// (one more leading dimension than what the body yields).
static LogicalResult verifyLoopResults(Operation *op, TypeRange carried,
                                       TypeRange yielded, int64_t numScan) {
  if (numScan < 0)
    return op->emitOpError("num_scan_outputs must be >= 0");
  if (yielded.size() != carried.size() + numScan)
    return op->emitOpError("body yields ")
           << yielded.size() << " values, expected " << carried.size()
           << " carried + " << numScan << " scan outputs";
  if (op->getNumResults() != carried.size() + numScan)
    return op->emitOpError("has ") << op->getNumResults()
                                   << " results, expected "
                                   << carried.size() + numScan;
  for (size_t i = 0; i < carried.size(); ++i)
    if (!compatible(op->getResult(i).getType(), carried[i]))
      return op->emitOpError("result #")
             << i << " has type " << op->getResult(i).getType()
             << ", expected the carried type " << carried[i];
  return success();
}

LogicalResult ForOp::verify() {
  Block &body = getBody().front();
  TypeRange init = getInit().getTypes();
  if (body.getNumArguments() != init.size() + 1)
    return emitOpError("body takes ")
           << body.getNumArguments() << " arguments, expected 1 + "
           << init.size() << " (iteration number and carried values)";
  auto iterType = dyn_cast<RankedTensorType>(body.getArgument(0).getType());
  if (!iterType || iterType.getRank() != 0 ||
      !iterType.getElementType().isInteger(64))
    return emitOpError("first body argument must be tensor<i64>");
  for (size_t i = 0; i < init.size(); ++i)
    if (!compatible(body.getArgument(i + 1).getType(), init[i]))
      return emitOpError("body argument #")
             << i + 1 << " has type " << body.getArgument(i + 1).getType()
             << ", expected " << init[i];
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("body must end with graph.yield");
  for (size_t i = 0; i < init.size(); ++i)
    if (!compatible(yield.getValues()[i].getType(), init[i]))
      return emitOpError("body yields type ")
             << yield.getValues()[i].getType() << " for carried value #" << i
             << ", expected " << init[i];
  return verifyLoopResults(*this, init, yield.getValues().getTypes(),
                           getNumScanOutputs());
}

LogicalResult WhileOp::verify() {
  Block &cond = getCondRegion().front();
  Block &body = getBodyRegion().front();
  TypeRange init = getInit().getTypes();
  if (!compatible(cond.getArgumentTypes(), init))
    return emitOpError("cond region arguments must match the init types");
  auto condition = dyn_cast<ConditionOp>(cond.getTerminator());
  if (!condition)
    return emitOpError("cond region must end with graph.condition");
  TypeRange forwarded = condition.getArgs().getTypes();
  if (!compatible(body.getArgumentTypes(), forwarded))
    return emitOpError(
        "body arguments must match the values graph.condition forwards");
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("body region must end with graph.yield");
  TypeRange yielded = yield.getValues().getTypes();
  if (yielded.size() < init.size() ||
      !compatible(yielded.take_front(init.size()), init))
    return emitOpError("body must yield the carried values (types matching "
                       "init) before its scan outputs");
  if (!compatible(forwarded, init))
    return emitOpError("graph.condition must forward values of the init "
                       "types (they become the results)");
  return verifyLoopResults(*this, init, yielded, getNumScanOutputs());
}
