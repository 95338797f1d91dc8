//===- SelectReduce.cpp - Reductions -> AVX-512 kernels -------------------===//
//
// graph.reduce_{sum,mean,max,min,sum_square,l1,l2} on static f32 tensors with
// constant axes (the `axes` attribute, or the constant axes operand of
// reduce_sum and of the opset-18 forms), when the reduced axes are one
// contiguous block once size-1 dims are left out: the input is then a
// contiguous [outer, r, inner] view and the output [outer, inner], whatever
// keepdims says (the output bytes are the same). Everything else, and empty
// axes with noop_with_empty_axes=1, goes to the portable lowering.
//
// In a variant of a range of lengths, a reduction over the positions
// (graph::kRunTimeLengthAttr: the proof found the padded dim the one
// reduced dim of more than one element) reduces the run's positions only:
// the kernel's run-time r, which is the run's length.
//
//===----------------------------------------------------------------------===//

#include "KernelABI.h"
#include "Reduce.h"
#include "SelectionUtils.h"
#include "mlcc/Reference/ReduceAxes.h"

#include "RunTimeExtents.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// The op's axes as listed (empty when none are given); false when they are
/// not constant.
bool constantAxes(Operation *op, OpLoweringContext &ctx,
                  std::vector<int64_t> &axes) {
  axes.clear();
  if (op->getNumOperands() > 1 && !isa<NoneType>(op->getOperand(1).getType())) {
    ElementsAttr attr = ctx.constantValue(op->getOperand(1));
    ref::Tensor t;
    if (!attr || tensorFromElementsAttr(attr, t).failed() ||
        (t.dtype() != ref::DType::I64 && t.dtype() != ref::DType::I32))
      return false;
    axes = t.toInt64Vector();
    return true;
  }
  axes = intsAttr(op, "axes");
  return true;
}

/// Splits `shape` into the [outer, r, inner] view, or returns false when
/// the reduced dims (size-1 dims aside) are not one contiguous block.
bool mergeAxes(ArrayRef<int64_t> shape, const std::vector<bool> &reduced,
               ReduceSpec &spec) {
  int64_t first = -1, last = -1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (reduced[d] && shape[d] != 1) {
      if (first < 0)
        first = static_cast<int64_t>(d);
      last = static_cast<int64_t>(d);
    }
  spec.outer = spec.r = spec.inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (first < 0 || d < first)
      spec.outer *= shape[d];
    else if (d > last)
      spec.inner *= shape[d];
    else if (reduced[d] || shape[d] == 1)
      spec.r *= shape[d];
    else
      return false; // a kept dim between reduced ones
  }
  // Nothing reduced: one long vector of independent elements.
  if (first < 0) {
    spec.inner = spec.outer;
    spec.outer = 1;
  }
  return true;
}

} // namespace

TargetLowering selectReduce(Operation *op, OpLoweringContext &ctx,
                            SelectionState &) {
  StringRef name = op->getName().stripDialect();
  ReduceSpec spec;
  if (name == "reduce_sum")
    spec.kind = ReduceKind::Sum;
  else if (name == "reduce_mean")
    spec.kind = ReduceKind::Mean;
  else if (name == "reduce_max")
    spec.kind = ReduceKind::Max;
  else if (name == "reduce_min")
    spec.kind = ReduceKind::Min;
  else if (name == "reduce_sum_square")
    spec.kind = ReduceKind::SumSquare;
  else if (name == "reduce_l1")
    spec.kind = ReduceKind::L1;
  else if (name == "reduce_l2")
    spec.kind = ReduceKind::L2;
  else
    return TargetLowering::Declined;
  if (op->getNumOperands() < 1 || op->getNumResults() != 1)
    return TargetLowering::Declined;
  Value x = op->getOperand(0), y = op->getResult(0);
  if (!isF32Tensor(x) || !isF32Tensor(y) || numElements(y) == 0)
    return TargetLowering::Declined;
  std::vector<int64_t> axes;
  if (!constantAxes(op, ctx, axes))
    return TargetLowering::Declined;
  ArrayRef<int64_t> shape = shapeOf(x);
  const int64_t rank = static_cast<int64_t>(shape.size());
  // With noop_with_empty_axes each element is its own reduction: the
  // portable lowering's case, as are invalid axes (it reports them).
  bool noop = intAttr(op, "noop_with_empty_axes", 0) != 0;
  std::vector<bool> reduced;
  if ((axes.empty() && noop) ||
      !ref::reducedDimsOf("", axes, rank, noop, reduced).ok())
    return TargetLowering::Declined;
  if (!mergeAxes(shape, reduced, spec) ||
      numElements(y) != spec.outer * spec.inner)
    return TargetLowering::Declined;
  Value length;
  if (op->hasAttr(graph::kRunTimeLengthAttr)) {
    // The positions are the one reduced dim of more than one element.
    int64_t reducedDims = 0;
    for (int64_t d = 0; d < rank; ++d)
      reducedDims += reduced[d] && shape[d] != 1;
    length = ctx.runTimeLength();
    if (reducedDims != 1 || !length)
      return TargetLowering::Declined;
    spec.runTimeR = true;
  }
  spec.name = nodeName(op);
  std::vector<uint8_t> code;
  if (ref::Status s = generateReduce(spec, code); s.failed())
    return failed(op, s);
  std::string symbol = ctx.addKernel(spec.name, std::move(code));
  // mlcc_reduce_args: src, dst (, r).
  SmallVector<Value> fields{ctx.address(ctx.buffer(x)),
                            ctx.address(ctx.buffer(y))};
  if (length)
    fields.push_back(length);
  ctx.callKernel(symbol, fields);
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
