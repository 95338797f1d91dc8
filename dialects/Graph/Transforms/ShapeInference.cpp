//===- ShapeInference.cpp - refine types with the ops' shape helpers ------===//

#include "Passes.h"
#include "PatternUtils.h"

#include "GraphDialect.h"
#include "mlcc/Reference/MlirBridge.h"

#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/SetVector.h"

#include <map>
#include <optional>

namespace mlcc::graph {
#define GEN_PASS_DEF_SHAPEINFERENCE
#include "Passes.h.inc"
} // namespace mlcc::graph

using namespace mlir;

namespace mlcc::graph {

/// The more static of two types for one value; null if they contradict.
static Type meet(Type declared, Type inferred) {
  auto d = dyn_cast<RankedTensorType>(declared);
  auto i = dyn_cast<RankedTensorType>(inferred);
  if (!i)
    return declared;
  if (!d)
    return isa<UnrankedTensorType>(declared) ? inferred : Type();
  if (d.getElementType() != i.getElementType() || d.getRank() != i.getRank())
    return nullptr;
  SmallVector<int64_t> dims;
  for (int64_t k = 0; k < d.getRank(); ++k) {
    int64_t a = d.getDimSize(k), b = i.getDimSize(k);
    if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b)
      return nullptr;
    dims.push_back(ShapedType::isDynamic(a) ? b : a);
  }
  return RankedTensorType::get(dims, d.getElementType());
}

LogicalResult refineResultTypes(Operation *op) {
  StringRef name = op->getName().getStringRef();
  if (!name.consume_front("graph."))
    return success();
  const ref::KernelDef *kernel = ref::KernelRegistry::get().find(name.str());
  if (!kernel || !kernel->inferShapes)
    return success();
  std::vector<ref::ValueInfo> in(op->getNumOperands());
  std::vector<ref::Tensor> storage(op->getNumOperands());
  for (unsigned k = 0; k < op->getNumOperands(); ++k) {
    Value v = op->getOperand(k);
    if (isa<UnrankedTensorType>(v.getType()))
      return success(); // nothing to say without ranks
    in[k] = valueInfoOf(v, storage[k]);
  }
  std::vector<ref::ValueInfo> out(op->getNumResults());
  ref::Status s =
      ref::inferShapesChecked(kernel->inferShapes, attrsFromOp(op), in, out);
  if (s.failed())
    return op->emitOpError() << s.message();
  for (unsigned k = 0; k < op->getNumResults(); ++k) {
    Value r = op->getResult(k);
    if (!out[k].present() || isa<NoneType>(r.getType()))
      continue;
    Type inferred = tensorTypeFor(op->getContext(), out[k].dtype, out[k].shape);
    Type merged = meet(r.getType(), inferred);
    if (!merged)
      return op->emitOpError() << "result #" << k << " is declared "
                               << r.getType() << " but its operands give "
                               << inferred;
    r.setType(merged);
  }
  return success();
}

/// Ops whose result has the ONNX (numpy) broadcast of their operands'
/// shapes: the elementwise ops, and the broadcasting ones that are not.
static bool isBroadcasting(Operation *op) {
  static const char *const others[] = {"max",
                                       "min",
                                       "sum",
                                       "mean",
                                       "xor",
                                       "less_or_equal",
                                       "greater_or_equal",
                                       "mod",
                                       "bit_shift",
                                       "prelu"};
  return isElementwise(op) ||
         (op->getNumResults() == 1 &&
          llvm::is_contained(others, op->getName().stripDialect()));
}

/// Whether the backward rules may change `v`'s type: the results of ops,
/// not block arguments (the function's inputs, a body's iteration values),
/// and not the operands of a terminator, whose types are tied to its
/// parent's types.
static bool refinable(Value v) {
  return isa<OpResult>(v) && llvm::none_of(v.getUsers(), [](Operation *user) {
           return user->hasTrait<OpTrait::IsTerminator>();
         });
}

/// Backward, for the broadcasting ops: where the result's dim is a static
/// 1, every operand's dim there is 1 too (it could not broadcast to 1
/// otherwise). A loop body's declared output types fix dims this way that
/// the forward walk leaves dynamic (a slice with run-time bounds added to a
/// [1] value). Returns whether a type changed.
static bool refineOperandsFromResult(Operation *op) {
  if (!isBroadcasting(op))
    return false;
  auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!result)
    return false;
  bool changed = false;
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || type.hasStaticShape() || !refinable(v) ||
        type.getRank() > result.getRank())
      continue;
    SmallVector<int64_t> dims(type.getShape());
    int64_t shift = result.getRank() - type.getRank();
    for (int64_t k = 0; k < type.getRank(); ++k)
      if (ShapedType::isDynamic(dims[k]) && result.getDimSize(shift + k) == 1)
        dims[k] = 1;
    if (dims != type.getShape()) {
      v.setType(RankedTensorType::get(dims, type.getElementType()));
      changed = true;
    }
  }
  return changed;
}

namespace {

/// Dims known to be equal at run time, in classes. A dynamic dim is the
/// node (value, dim); a static dim is the node (null, size), shared by
/// every dim of that size, so a class that holds one fixes the others.
class EqualDims {
public:
  /// Records what the broadcasting `op` says of its result's dims.
  ///
  /// Result dim k is the broadcast of the operand dims aligned with it
  /// (from the right): all of those that are not 1 are equal, and the
  /// result is that size (1 when there are none). An operand dim that may
  /// be 1 at run time does not have to equal the result's, so a dim is
  /// tied to the result's only where nothing else can decide it: when every
  /// aligned operand dim that is not a static 1 lies in one class (one
  /// operand dim against absent or static-1 ones, as for a unary op or a
  /// scalar operand, or dims already known equal), the result dim joins
  /// that class. Dynamic dims facing a static size > 1, or facing other
  /// dynamic dims not known equal, stay apart: any of them could be 1.
  void addBroadcast(Operation *op) {
    auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!result)
      return;
    SmallVector<std::pair<Value, RankedTensorType>> operands;
    for (Value v : op->getOperands()) {
      if (isa<NoneType>(v.getType()))
        continue;
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type || type.getRank() > result.getRank())
        return;
      operands.push_back({v, type});
    }
    for (int64_t k = 0; k < result.getRank(); ++k) {
      std::optional<Node> tied;
      bool apart = false;
      for (auto [v, type] : operands) {
        int64_t j = k - (result.getRank() - type.getRank());
        if (j < 0 || type.getDimSize(j) == 1)
          continue;
        Node n = node(v, j);
        apart |= tied && !sameClass(n, *tied);
        tied = n;
      }
      if (tied && !apart)
        classes.unionSets(node(op->getResult(0), k), *tied);
    }
  }

  /// Gives each dynamic dim of a refinable value the static size of its
  /// class, where the class holds exactly one. Returns whether a type
  /// changed.
  bool refine() {
    bool changed = false;
    for (Value v : values) {
      auto type = cast<RankedTensorType>(v.getType());
      if (!refinable(v))
        continue;
      SmallVector<int64_t> dims(type.getShape());
      for (int64_t k = 0; k < type.getRank(); ++k)
        if (ShapedType::isDynamic(dims[k]))
          if (std::optional<int64_t> size =
                  staticSize({v.getAsOpaquePointer(), k}))
            dims[k] = *size;
      if (dims != type.getShape()) {
        v.setType(RankedTensorType::get(dims, type.getElementType()));
        changed = true;
      }
    }
    return changed;
  }

private:
  using Node = std::pair<const void *, int64_t>;

  Node node(Value v, int64_t k) {
    int64_t size = cast<RankedTensorType>(v.getType()).getDimSize(k);
    if (!ShapedType::isDynamic(size))
      return {nullptr, size};
    values.insert(v);
    return {v.getAsOpaquePointer(), k};
  }

  bool sameClass(Node a, Node b) {
    auto leader = classes.findLeader(a);
    return a == b ||
           (leader != classes.member_end() && leader == classes.findLeader(b));
  }

  /// The one static size in `n`'s class; none when there is none, or more
  /// than one (the model contradicts itself: leave it to the checks).
  std::optional<int64_t> staticSize(Node n) {
    auto leader = classes.findLeader(n);
    if (leader == classes.member_end())
      return std::nullopt;
    auto [it, inserted] = sizes.try_emplace(*leader);
    if (!inserted)
      return it->second;
    int count = 0;
    for (auto m = leader; m != classes.member_end(); ++m)
      if (!m->first && count++ == 0)
        it->second = m->second;
    if (count > 1)
      it->second = std::nullopt;
    return it->second;
  }

  llvm::EquivalenceClasses<Node> classes;
  /// staticSize by class leader.
  std::map<Node, std::optional<int64_t>> sizes;
  /// The values whose dynamic dims are nodes, in the order met.
  llvm::SetVector<Value> values;
};

} // namespace

/// Backward and forward, for the broadcasting ops: a dynamic dim tied by
/// them to a dim of static size (a declared result type, a graph output)
/// takes that size. A Range whose limit is a graph input, followed by
/// elementwise ops and a cast to the declared output type, gets its
/// static length this way. Returns whether a type changed.
static bool refineEqualDims(func::FuncOp func) {
  EqualDims dims;
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isBroadcasting(op))
      dims.addBroadcast(op);
  });
  return dims.refine();
}

void updateFunctionType(func::FuncOp func) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                 ret.getOperandTypes()));
}

namespace {

struct ShapeInference : impl::ShapeInferenceBase<ShapeInference> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto forward = [&] {
      return !func
                  .walk<WalkOrder::PreOrder>([](Operation *op) {
                    return failed(refineResultTypes(op))
                               ? WalkResult::interrupt()
                               : WalkResult::advance();
                  })
                  .wasInterrupted();
    };
    if (!forward())
      return signalPassFailure();
    bool changed = false;
    func.walk([&](Operation *op) { changed |= refineOperandsFromResult(op); });
    changed |= refineEqualDims(func);
    if (changed && !forward())
      return signalPassFailure();
    updateFunctionType(func);
  }
};

} // namespace
} // namespace mlcc::graph
