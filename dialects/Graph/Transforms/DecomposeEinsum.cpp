//===- DecomposeEinsum.cpp - two-operand einsum -> transposes + matmul ----===//
//
// An einsum of two operands is a batched matrix product once its labels
// are sorted: those in both operands and the output are the batch, those
// in both operands only are summed (K), those of one operand and the
// output are its free dims (M for the first, N for the second):
//
//   a' = reshape(transpose(a, batch + M + K), [B, M, K])
//   b' = reshape(transpose(b, batch + K + N), [B, K, N])
//   y  = transpose(reshape(matmul(a', b'), batch + M + N), output order)
//
// ([M, K] x [K, N] without batch labels, which mlcc-fuse-fc then takes as
// an fc when b is a constant.) The matmul runs on the kernels every target
// has for it; the einsum itself is a loop nest per output element (the
// reference's, and the portable lowering's linalg.generic): "bhqd,bhkd->
// bhqk" of BERT-base's size is ~100x slower that way. Identity transposes
// and shape-keeping reshapes are left out; mlcc-simplify-layout-ops, which
// runs after, cancels what else it can.
//
// Only f32 operands of static shapes, no label repeated within a term (a
// diagonal), none summed within one operand alone, no dim of 1 broadcast
// against a larger one, no empty dim: the rest stays an einsum. The matmul
// sums in f32 where the reference sums in double: a matmul's rounding.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"
#include "PatternUtils.h"

#include "GraphDialect.h"
#include "mlcc/Reference/EinsumPlan.h"

#include "llvm/ADT/STLExtras.h"

namespace mlcc::graph {
#define GEN_PASS_DEF_DECOMPOSEEINSUM
#include "Passes.h.inc"
} // namespace mlcc::graph

using namespace mlir;

namespace mlcc::graph {
namespace {

Value transposed(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> perm) {
  bool identity = true;
  for (size_t d = 0; d < perm.size(); ++d)
    identity &= perm[d] == static_cast<int64_t>(d);
  if (identity)
    return x;
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(type.getDimSize(d));
  return b.create<TransposeOp>(
      loc, RankedTensorType::get(shape, type.getElementType()), x,
      b.getI64ArrayAttr(perm));
}

Value reshaped(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getShape() == shape)
    return x;
  auto shapeType = RankedTensorType::get({static_cast<int64_t>(shape.size())},
                                         b.getI64Type());
  Value dims = b.create<ConstantOp>(
      loc, cast<ElementsAttr>(DenseIntElementsAttr::get(shapeType, shape)));
  return b.create<ReshapeOp>(
      loc, RankedTensorType::get(shape, type.getElementType()), x, dims,
      IntegerAttr());
}

/// Rewrites `op`; false (and nothing changed) when it does not qualify.
bool decompose(EinsumOp op) {
  if (op->getNumOperands() != 2)
    return false;
  Value x[2] = {op->getOperand(0), op->getOperand(1)};
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  auto equation = op->getAttrOfType<StringAttr>("equation");
  if (!out || !out.getElementType().isF32() || !equation)
    return false;
  std::vector<ref::Shape> shapes;
  for (Value v : x) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape() || !t.getElementType().isF32())
      return false;
    shapes.emplace_back(t.getShape().begin(), t.getShape().end());
  }
  ref::EinsumPlan plan;
  if (ref::planEinsum(equation.str(), shapes, plan).failed())
    return false;
  for (int i = 0; i < 2; ++i)
    for (size_t d = 0; d < shapes[i].size(); ++d) {
      int label = plan.inputs[i][d];
      if (shapes[i][d] != plan.sizes[label] || shapes[i][d] == 0 ||
          llvm::count(plan.inputs[i], label) != 1)
        return false;
    }
  auto in = [&](int i, int label) {
    return llvm::is_contained(plan.inputs[i], label);
  };
  SmallVector<int> batch, free[2], summed;
  for (int label : plan.output) {
    if (in(0, label) && in(1, label))
      batch.push_back(label);
    else
      free[in(0, label) ? 0 : 1].push_back(label);
  }
  for (int i = 0; i < 2; ++i)
    for (int label : plan.inputs[i])
      if (!llvm::is_contained(plan.output, label)) {
        if (!in(1 - i, label))
          return false;
        if (i == 0)
          summed.push_back(label);
      }

  auto size = [&](ArrayRef<int> labels) {
    int64_t n = 1;
    for (int label : labels)
      n *= plan.sizes[label];
    return n;
  };
  // Operand i's dims in the order of `groups`' labels.
  auto perm = [&](int i, std::initializer_list<ArrayRef<int>> groups) {
    SmallVector<int64_t> p;
    for (ArrayRef<int> group : groups)
      for (int label : group)
        p.push_back(llvm::find(plan.inputs[i], label) -
                    plan.inputs[i].begin());
    return p;
  };
  // [B, rows, cols], or [rows, cols] without batch labels.
  auto matrix = [&](int64_t rows, int64_t cols) {
    SmallVector<int64_t> s;
    if (!batch.empty())
      s.push_back(size(batch));
    s.append({rows, cols});
    return s;
  };
  OpBuilder b(op);
  Location loc = op->getLoc();
  const int64_t m = size(free[0]), n = size(free[1]), k = size(summed);
  Value a = reshaped(b, loc, transposed(b, loc, x[0], perm(0, {batch, free[0], summed})),
                     matrix(m, k));
  Value c = reshaped(b, loc, transposed(b, loc, x[1], perm(1, {batch, summed, free[1]})),
                     matrix(k, n));
  Value y = b.create<MatMulOp>(
      loc, RankedTensorType::get(matrix(m, n), out.getElementType()), a, c);
  SmallVector<int> labels(batch);
  labels.append(free[0].begin(), free[0].end());
  labels.append(free[1].begin(), free[1].end());
  SmallVector<int64_t> dims, order;
  for (int label : labels)
    dims.push_back(plan.sizes[label]);
  for (int label : plan.output)
    order.push_back(llvm::find(labels, label) - labels.begin());
  y = transposed(b, loc, reshaped(b, loc, y, dims), order);
  op->getResult(0).replaceAllUsesWith(y);
  op->erase();
  return true;
}

struct DecomposeEinsum : impl::DecomposeEinsumBase<DecomposeEinsum> {
  void runOnOperation() override {
    SmallVector<EinsumOp> ops;
    getOperation().walk([&](EinsumOp op) { ops.push_back(op); });
    for (EinsumOp op : ops)
      decompose(op);
  }
};

} // namespace
} // namespace mlcc::graph
