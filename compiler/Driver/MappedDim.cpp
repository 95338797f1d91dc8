//===- MappedDim.cpp - Is the model a map over a dim? ---------------------===//
//
// See mlcc/Driver/MappedDim.h. The values of graph `two` are tagged with
// the axis that holds their items (found by comparing each type with its
// twin in graph `one`) and with whether they depend on a mapped input.
//
//===----------------------------------------------------------------------===//

#include "mlcc/Driver/MappedDim.h"

#include "mlcc/Driver/Driver.h"
#include "mlcc/Reference/Kernel.h"
#include "mlcc/Reference/MlirBridge.h"
#include "mlcc/Reference/ReduceAxes.h"

#include "GraphDialect.h"
#include "PatternUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>
#include <random>

using namespace mlir;

namespace mlcc {
namespace {

/// No items along any axis: the value is the same at both extents.
constexpr int64_t kSame = -1;
/// The types differ otherwise than by one axis of twice the extent.
constexpr int64_t kMismatch = -2;

/// The axis along which `two` holds twice what `one` holds.
int64_t itemAxis(Type one, Type two) {
  if (one == two)
    return kSame;
  auto a = dyn_cast<RankedTensorType>(one);
  auto b = dyn_cast<RankedTensorType>(two);
  if (!a || !b || a.getRank() != b.getRank() ||
      a.getElementType() != b.getElementType())
    return kMismatch;
  int64_t axis = kSame;
  for (int64_t d = 0; d < a.getRank(); ++d) {
    if (a.getDimSize(d) == b.getDimSize(d))
      continue;
    if (axis != kSame || b.getDimSize(d) != 2 * a.getDimSize(d))
      return kMismatch;
    axis = d;
  }
  return axis;
}

/// Item `item` (of two) of `whole` along `axis`: the slab with `part`'s
/// extent there.
void forEachItemElement(const ref::Shape &whole, const ref::Shape &part,
                        int64_t axis, int64_t item,
                        llvm::function_ref<void(int64_t w, int64_t p)> fn) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= whole[d];
  for (size_t d = axis + 1; d < whole.size(); ++d)
    inner *= whole[d];
  int64_t n = part[axis];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < n; ++c)
      for (int64_t i = 0; i < inner; ++i)
        fn(((o * whole[axis]) + item * n + c) * inner + i,
           (o * n + c) * inner + i);
}

ref::Tensor randomTensor(ref::DType dtype, const ref::Shape &shape,
                         std::mt19937 &rng) {
  ref::Tensor t(dtype, shape);
  // Small integers: valid indices and counts for most ops that read them.
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  std::uniform_int_distribution<int> small(0, 1);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.setDouble(i, ref::isFloatType(dtype) ? real(rng) : small(rng));
  return t;
}

bool close(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  if (a == b)
    return true;
  return std::fabs(a - b) <= 1e-4 * (1.0 + std::fabs(b));
}

class MappedDimChecker {
public:
  /// With `padded`, proves the weaker property of a range of lengths (see
  /// MappedDim.h): item 0 of graph two is graph one, whatever item 1 holds.
  MappedDimChecker(func::FuncOp one, func::FuncOp two, std::string name,
                   bool padded)
      : one(one), two(two), name(std::move(name)), padded(padded) {}

  /// The axis of the dim in each input, then output (-1: none).
  ref::Status run(std::vector<int64_t> &axes);
  /// With `padded`: the ops of graph two (their indices in its body) that
  /// must be told the run's length, and those whose first result has the
  /// dim, with its axis there.
  std::vector<unsigned> lengthOps;
  std::vector<std::pair<unsigned, int64_t>> rowOps;

private:
  ref::Status checkOp(Operation *o1, Operation *o2);
  ref::Status checkConstant(Operation *o1, Operation *o2);
  /// Whether the op's item axes alone show it computes item by item:
  /// true/false, or nullopt for an op without such a rule.
  std::optional<bool> followsFromAxes(Operation *op);
  ref::Status probe(Operation *o1, Operation *o2);
  ref::Status mixes(Operation *op, const std::string &why);
  /// With `padded`: whether `op` mixes positions only where its lowering
  /// can take the run's length (attention over its keys, a reduction over
  /// the positions).
  bool takesLength(Operation *op);
  /// Items of a value that must agree between the graphs: both when
  /// mapping, the first (the valid positions) when padded.
  int64_t checkedItems() const { return padded ? 1 : 2; }

  int64_t axisOf(Value v) const {
    auto it = axes.find(v);
    return it == axes.end() ? kSame : it->second;
  }
  bool batched(Value v) const { return axisOf(v) >= 0; }

  func::FuncOp one, two;
  std::string name;
  bool padded;
  unsigned opIndex = 0;
  /// graph two's value -> its twin in graph one.
  llvm::DenseMap<Value, Value> twin;
  /// graph two's values with items: the axis that holds them.
  llvm::DenseMap<Value, int64_t> axes;
  /// graph two's values computed from a mapped input.
  llvm::DenseSet<Value> dependent;
  std::mt19937 rng{20261202};
};

ref::Status MappedDimChecker::mixes(Operation *op, const std::string &why) {
  if (padded)
    return ref::Status::error(graph::describeOp(op), " ", why,
                              ", so positions past a run's '", name,
                              "' would change the ones before it");
  return ref::Status::error(graph::describeOp(op), " ", why,
                            ", so the model does not compute each '", name,
                            "' item alone");
}

/// The dims a reduce_* op reduces (all for empty axes, none with
/// noop_with_empty_axes), from its `axes` attribute or constant operand;
/// false for another op, or axes not known or not valid.
bool reducedDims(Operation *op, std::vector<bool> &reduced) {
  if (!op->getName().getStringRef().starts_with("graph.reduce_") ||
      op->getNumOperands() < 1 || op->getNumResults() != 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!type)
    return false;
  std::vector<int64_t> axes;
  if (op->getNumOperands() > 1 && !isa<NoneType>(op->getOperand(1).getType())) {
    auto constant = op->getOperand(1).getDefiningOp<graph::ConstantOp>();
    ref::Tensor t;
    if (!constant || !tensorFromElementsAttr(constant.getValue(), t).ok())
      return false;
    for (int64_t i = 0; i < t.numel(); ++i)
      axes.push_back(t.getInt(i));
  } else if (auto attr = op->getAttrOfType<ArrayAttr>("axes")) {
    for (Attribute a : attr)
      axes.push_back(cast<IntegerAttr>(a).getInt());
  }
  auto noop = op->getAttrOfType<IntegerAttr>("noop_with_empty_axes");
  return ref::reducedDimsOf("", axes, type.getRank(),
                            noop && noop.getInt() != 0, reduced)
      .ok();
}

bool MappedDimChecker::takesLength(Operation *op) {
  // A reduction over the positions, and over no other dim of more than
  // one element: its kernel reduces the run's positions only.
  std::vector<bool> reduced;
  if (reducedDims(op, reduced)) {
    int64_t axis = axisOf(op->getOperand(0));
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(op->getOperand(0).getType()).getShape();
    if (axis < 0 || !reduced[axis] || batched(op->getResult(0)))
      return false;
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      if (d != axis && reduced[d] && shape[d] != 1)
        return false;
    return true;
  }
  if (!isa<graph::AttentionOp>(op))
    return false;
  // Q, K, V [B, S, H*D] with the positions in S; the mask's along its last
  // dim (the keys) or none.
  Value mask = op->getOperand(3);
  int64_t maskRank = isa<NoneType>(mask.getType())
                         ? 0
                         : cast<ShapedType>(mask.getType()).getRank();
  return axisOf(op->getOperand(0)) == 1 && axisOf(op->getOperand(1)) == 1 &&
         axisOf(op->getOperand(2)) == 1 && axisOf(op->getResult(0)) == 1 &&
         (!batched(mask) || axisOf(mask) == maskRank - 1);
}

ref::Status MappedDimChecker::checkConstant(Operation *o1, Operation *o2) {
  Value r1 = o1->getResult(0), r2 = o2->getResult(0);
  int64_t axis = itemAxis(r1.getType(), r2.getType());
  if (axis == kSame)
    return ref::Status::success();
  // A constant built from the batch size (a folded Expand of a Shape): the
  // same data for every item, or the model is no map.
  ref::Tensor t1, t2;
  auto c1 = cast<graph::ConstantOp>(o1), c2 = cast<graph::ConstantOp>(o2);
  bool same = axis >= 0 && tensorFromElementsAttr(c1.getValue(), t1).ok() &&
              tensorFromElementsAttr(c2.getValue(), t2).ok();
  for (int64_t item = 0; same && item < checkedItems(); ++item)
    forEachItemElement(t2.shape(), t1.shape(), axis, item,
                       [&](int64_t w, int64_t p) {
                         same &= t2.getDouble(w) == t1.getDouble(p);
                       });
  if (!same)
    return mixes(o2,
                 "is a constant that depends on the extent of '" + name + "'");
  axes[r2] = axis;
  return ref::Status::success();
}

std::optional<bool> MappedDimChecker::followsFromAxes(Operation *op) {
  auto axis = [&](unsigned k) {
    return k < op->getNumOperands() ? axisOf(op->getOperand(k)) : kSame;
  };
  auto rank = [&](unsigned k) {
    return cast<ShapedType>(op->getOperand(k).getType()).getRank();
  };
  auto onlyBatched = [&](std::initializer_list<unsigned> allowed) {
    for (unsigned k = 0; k < op->getNumOperands(); ++k)
      if (batched(op->getOperand(k)) && !llvm::is_contained(allowed, k))
        return false;
    return true;
  };
  Value result = op->getResult(0);
  int64_t resultAxis = axisOf(result);
  int64_t resultRank = cast<ShapedType>(result.getType()).getRank();
  if (graph::isElementwise(op)) {
    // Each operand's items on the result's item axis, or broadcast there.
    for (Value v : op->getOperands()) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type)
        continue;
      int64_t aligned = resultAxis - (resultRank - type.getRank());
      if (batched(v) ? axisOf(v) != aligned
                     : aligned >= 0 && type.getDimSize(aligned) != 1)
        return false;
    }
    return true;
  }
  if (isa<graph::MatMulOp, graph::MatMulIntegerOp, graph::QLinearMatMulOp>(
          op)) {
    unsigned a = 0, b = isa<graph::QLinearMatMulOp>(op) ? 3 : 1;
    if (!onlyBatched({a, b}) || rank(a) < 2 || rank(b) < 2)
      return std::nullopt;
    int64_t aAxis = axis(a), bAxis = axis(b);
    // Items in A's rows, or in a batch dim of either; never along K or N.
    if (aAxis == rank(a) - 1 || bAxis >= rank(b) - 2)
      return false;
    if (aAxis == rank(a) - 2)
      return bAxis == kSame;
    for (auto [k, other] : {std::pair(a, b), std::pair(b, a)}) {
      if (!batched(op->getOperand(k)))
        continue;
      int64_t aligned = axis(k) + (rank(other) - rank(k));
      if (axis(k) + (resultRank - rank(k)) != resultAxis)
        return false;
      auto otherType = cast<ShapedType>(op->getOperand(other).getType());
      if (!batched(op->getOperand(other)) && aligned >= 0 &&
          otherType.getDimSize(aligned) != 1)
        return false;
    }
    return true;
  }
  if (isa<graph::GemmOp>(op)) {
    auto transA = op->getAttrOfType<IntegerAttr>("transA");
    int64_t rows = transA && transA.getInt() ? 1 : 0;
    return onlyBatched({0, 2}) && axis(0) == rows &&
           (axis(2) == kSame || (axis(2) == 0 && rank(2) == 2)) &&
           (axis(2) == 0 || op->getNumOperands() < 3 ||
            isa<NoneType>(op->getOperand(2).getType()) || rank(2) < 2 ||
            cast<ShapedType>(op->getOperand(2).getType()).getDimSize(0) == 1);
  }
  if (isa<graph::FcOp>(op))
    return onlyBatched({0, 3}) && axis(0) >= 0 && axis(0) < rank(0) - 1 &&
           (isa<NoneType>(op->getOperand(3).getType()) ||
            axis(3) == resultAxis);
  if (isa<graph::ConvOp, graph::ConvTransposeOp, graph::ConvIntegerOp,
          graph::QLinearConvOp, graph::FusedConvOp>(op)) {
    bool residual = isa<graph::FusedConvOp>(op);
    return onlyBatched(residual ? std::initializer_list<unsigned>{0, 3}
                                : std::initializer_list<unsigned>{0}) &&
           axis(0) == 0 && resultAxis == 0 &&
           (!residual || isa<NoneType>(op->getOperand(3).getType()) ||
            axis(3) == 0);
  }
  if (isa<graph::AttentionOp>(op)) {
    // Q, K, V [B, S, H*D] with the items in B; the mask's B is the items'
    // or broadcast.
    Value mask = op->getOperand(3);
    bool maskOk =
        isa<NoneType>(mask.getType()) || axis(3) == 0 ||
        (!batched(mask) &&
         (rank(3) < 4 || cast<ShapedType>(mask.getType()).getDimSize(0) == 1));
    return axis(0) == 0 && axis(1) == 0 && axis(2) == 0 && maskOk &&
           resultAxis == 0;
  }
  return std::nullopt;
}

ref::Status MappedDimChecker::probe(Operation *o1, Operation *o2) {
  llvm::StringRef opName = o2->getName().getStringRef();
  opName.consume_front("graph.");
  const ref::KernelDef *kernel = ref::KernelRegistry::get().find(opName.str());
  if (!kernel || !kernel->run)
    return mixes(o2, "has no reference kernel to check it with");
  // Elements the check computes; above this the model would take minutes
  // to check, and an op this large on its own is rare outside the heavy
  // ops that have rules.
  constexpr int64_t kMaxProbeElements = int64_t(1) << 25;
  int64_t elements = 0;
  auto count = [&](TypeRange types) {
    for (Type t : types)
      if (auto tensor = dyn_cast<RankedTensorType>(t))
        elements += tensor.getNumElements();
  };
  count(o2->getOperandTypes());
  count(o2->getResultTypes());
  if (elements > kMaxProbeElements)
    return mixes(o2, "is too large to check item by item (" +
                         std::to_string(elements) + " elements)");
  // Random items for the operands that have them, the same data for both
  // items elsewhere; constants as they are.
  std::vector<ref::Tensor> together(o2->getNumOperands());
  std::vector<ref::Tensor> apart[2];
  apart[0].resize(o2->getNumOperands());
  apart[1].resize(o2->getNumOperands());
  for (unsigned k = 0; k < o2->getNumOperands(); ++k) {
    Value v2 = o2->getOperand(k), v1 = o1->getOperand(k);
    if (isa<NoneType>(v2.getType()))
      continue;
    auto c1 = v1.getDefiningOp<graph::ConstantOp>();
    auto c2 = v2.getDefiningOp<graph::ConstantOp>();
    if (c1 && c2) {
      if (!tensorFromElementsAttr(c2.getValue(), together[k]).ok() ||
          !tensorFromElementsAttr(c1.getValue(), apart[0][k]).ok())
        return mixes(o2, "has a constant operand the check cannot read");
      apart[1][k] = apart[0][k];
      continue;
    }
    auto t1 = cast<RankedTensorType>(v1.getType());
    auto t2 = cast<RankedTensorType>(v2.getType());
    ref::DType dtype = dtypeFromMlir(t1.getElementType());
    ref::Shape s1(t1.getShape()), s2(t2.getShape());
    if (!batched(v2)) {
      together[k] = randomTensor(dtype, s2, rng);
      apart[0][k] = apart[1][k] = together[k];
      continue;
    }
    together[k] = ref::Tensor(dtype, s2);
    for (int64_t item = 0; item < 2; ++item) {
      apart[item][k] = randomTensor(dtype, s1, rng);
      forEachItemElement(s2, s1, axisOf(v2), item, [&](int64_t w, int64_t p) {
        together[k].setDouble(w, apart[item][k].getDouble(p));
      });
    }
  }
  std::vector<ref::Tensor> out2(o2->getNumResults());
  std::vector<ref::Tensor> out1[2] = {
      std::vector<ref::Tensor>(o1->getNumResults()),
      std::vector<ref::Tensor>(o1->getNumResults())};
  ref::Attrs attrs1 = attrsFromOp(o1), attrs2 = attrsFromOp(o2);
  if (kernel->run(attrs2, together, out2).failed() ||
      kernel->run(attrs1, apart[0], out1[0]).failed() ||
      kernel->run(attrs1, apart[1], out1[1]).failed())
    return mixes(o2, "fails on random data, which the check needs");
  for (unsigned r = 0; r < o2->getNumResults(); ++r) {
    Value v = o2->getResult(r);
    if (isa<NoneType>(v.getType()))
      continue;
    bool same = true;
    if (!batched(v)) // a result without the dim: from the first item alone
      for (int64_t i = 0; same && i < out2[r].numel(); ++i)
        same = close(out2[r].getDouble(i), out1[0][r].getDouble(i));
    for (int64_t item = 0; batched(v) && same && item < checkedItems(); ++item)
      forEachItemElement(out2[r].shape(), out1[item][r].shape(), axisOf(v),
                         item, [&](int64_t w, int64_t p) {
                           same &= close(out2[r].getDouble(w),
                                         out1[item][r].getDouble(p));
                         });
    if (!same)
      return mixes(o2, padded ? "computes the first positions from the others "
                                "(checked on random data)"
                              : "computes an item from others (checked on "
                                "random data)");
  }
  return ref::Status::success();
}

ref::Status MappedDimChecker::checkOp(Operation *o1, Operation *o2) {
  if (o1->getName() != o2->getName() ||
      o1->getNumOperands() != o2->getNumOperands() ||
      o1->getNumResults() != o2->getNumResults())
    return ref::Status::error("the model simplifies to other ops at '", name,
                              "' = 2 than at 1 (", graph::describeOp(o2),
                              " against ", graph::describeOp(o1), ")");
  for (auto [r1, r2] : llvm::zip(o1->getResults(), o2->getResults()))
    twin[r2] = r1;
  if (isa<graph::ConstantOp>(o2))
    return checkConstant(o1, o2);
  if (auto dep = dyn_cast<graph::ControlDependencyOp>(o2)) {
    for (auto [in, out] : llvm::zip(dep.getValues(), dep.getResults())) {
      if (batched(in))
        axes[out] = axisOf(in);
      if (dependent.contains(in))
        dependent.insert(out);
    }
    return ref::Status::success();
  }
  bool fromItems = false, withItems = false;
  o2->walk([&](Operation *inner) {
    for (Value v : inner->getOperands()) {
      fromItems |= dependent.contains(v);
      withItems |= batched(v);
    }
  });
  for (auto [r1, r2] : llvm::zip(o1->getResults(), o2->getResults())) {
    int64_t axis = itemAxis(r1.getType(), r2.getType());
    if (axis == kMismatch)
      return mixes(o2, "has result types that differ otherwise than in "
                       "one dim of its items");
    if (axis >= 0)
      axes[r2] = axis;
    else if (fromItems && !padded && !isa<NoneType>(r2.getType()))
      return mixes(o2, "has a result of the same shape for one and for two "
                       "items");
    if (fromItems)
      dependent.insert(r2);
  }
  if (!withItems) {
    if (llvm::any_of(o2->getResults(), [&](Value r) { return batched(r); }))
      return mixes(o2,
                   "has a result that depends on the extent of '" + name + "'");
    return ref::Status::success();
  }
  if (o2->getNumRegions() != 0)
    return mixes(o2, "is control flow over values with items");
  if (std::optional<bool> follows = followsFromAxes(o2)) {
    if (*follows)
      return ref::Status::success();
    if (padded && takesLength(o2)) {
      lengthOps.push_back(opIndex);
      return ref::Status::success();
    }
    return mixes(o2, padded ? "reads its operands' positions along an axis "
                              "it reduces or mixes"
                            : "reads its operands' items along an axis it "
                              "reduces or mixes");
  }
  if (padded && takesLength(o2)) { // a reduction over the positions
    lengthOps.push_back(opIndex);
    return ref::Status::success();
  }
  return probe(o1, o2);
}

ref::Status MappedDimChecker::run(std::vector<int64_t> &mapped) {
  mapped.clear();
  Block &body1 = one.getBody().front(), &body2 = two.getBody().front();
  if (body1.getNumArguments() != body2.getNumArguments())
    return ref::Status::error("the model has other inputs at '", name,
                              "' = 2 than at 1");
  for (auto [a1, a2] : llvm::zip(body1.getArguments(), body2.getArguments())) {
    int64_t axis = itemAxis(a1.getType(), a2.getType());
    if (axis == kMismatch || (axis > 0 && !padded))
      return ref::Status::error("input '", inputName(two, a2.getArgNumber()),
                                "' has '", name,
                                axis == kMismatch ? "' in more than one dim"
                                                  : "' in a dim other "
                                                    "than the first");
    if (axis >= 0) {
      axes[a2] = axis;
      dependent.insert(a2);
    }
    mapped.push_back(axis);
  }
  if (llvm::none_of(mapped, [](int64_t m) { return m >= 0; }))
    return ref::Status::error("no input has '", name, "' in its dims");
  auto ops1 = body1.without_terminator(), ops2 = body2.without_terminator();
  auto it1 = ops1.begin();
  for (Operation &o2 : ops2) {
    if (it1 == ops1.end())
      return ref::Status::error("the model simplifies to more ops at '", name,
                                "' = 2 than at 1");
    MLCC_RETURN_IF_ERROR(checkOp(&*it1++, &o2));
    // Proved: its positions before the length never read those past it, so
    // it need not compute those.
    if (padded && o2.getNumResults() > 0 && batched(o2.getResult(0)) &&
        !isa<graph::ConstantOp>(o2))
      rowOps.push_back({opIndex, axisOf(o2.getResult(0))});
    ++opIndex;
  }
  if (it1 != ops1.end())
    return ref::Status::error("the model simplifies to fewer ops at '", name,
                              "' = 2 than at 1");
  for (auto [i, v] : llvm::enumerate(body2.getTerminator()->getOperands())) {
    int64_t axis = axisOf(v);
    if (!padded && (axis > 0 || (axis == kSame && dependent.contains(v))))
      return ref::Status::error("output '", outputName(two, i),
                                "' does not have its '", name,
                                "' items along its first dim");
    mapped.push_back(std::max<int64_t>(axis, -1));
  }
  return ref::Status::success();
}

} // namespace

ref::Status checkMappedDim(ModuleOp one, ModuleOp two, const std::string &name,
                           std::vector<bool> &mapped) {
  func::FuncOp f1 = mainFunction(one), f2 = mainFunction(two);
  if (!f1 || !f2)
    return ref::Status::error("the module has no function to compile");
  std::vector<int64_t> axes;
  ref::Status s = MappedDimChecker(f1, f2, name, /*padded=*/false).run(axes);
  mapped.clear();
  for (int64_t a : axes)
    mapped.push_back(a == 0);
  return s;
}

ref::Status checkPaddedDim(ModuleOp one, ModuleOp two, const std::string &name,
                           std::vector<int64_t> &axes,
                           std::vector<unsigned> &lengthOps,
                           std::vector<std::pair<unsigned, int64_t>> &rowOps) {
  func::FuncOp f1 = mainFunction(one), f2 = mainFunction(two);
  if (!f1 || !f2)
    return ref::Status::error("the module has no function to compile");
  MappedDimChecker checker(f1, f2, name, /*padded=*/true);
  MLCC_RETURN_IF_ERROR(checker.run(axes));
  lengthOps = checker.lengthOps;
  rowOps = checker.rowOps;
  return ref::Status::success();
}

} // namespace mlcc
