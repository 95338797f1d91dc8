//===- Executor.cpp - Reference executor over the graph dialect -----------===//

#include "mlcc/Reference/Executor.h"

#include "GraphDialect.h"
#include "mlcc/Reference/MlirBridge.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace mlcc::ref {

namespace {

/// Text of an op's location for error messages ("node 'conv1'").
std::string describe(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << op->getName();
  if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
    os << " (node '" << loc.getName() << "')";
  return os.str();
}

/// Values live in a chain of scopes: a region's values shadow nothing, but
/// regions read outer-scope values (ONNX subgraph captures).
struct Scope {
  llvm::DenseMap<Value, Tensor> values;
  const Scope *parent = nullptr;

  const Tensor *lookup(Value v) const {
    for (const Scope *s = this; s; s = s->parent) {
      auto it = s->values.find(v);
      if (it != s->values.end())
        return &it->second;
    }
    return nullptr;
  }
};

/// Stacks per-iteration tensors along a new leading axis.
Status stack(const std::vector<Tensor> &parts, Tensor &out) {
  if (parts.empty())
    return Status::error("cannot stack zero iterations: the element shape "
                         "is unknown");
  Shape shape = parts[0].shape();
  for (const Tensor &p : parts)
    MLCC_CHECK(p.shape() == shape && p.dtype() == parts[0].dtype(),
               "scan output changes shape across iterations: ",
               shapeToString(shape), " then ", shapeToString(p.shape()));
  shape.insert(shape.begin(), static_cast<int64_t>(parts.size()));
  out = Tensor(parts[0].dtype(), shape);
  size_t bytes = parts[0].byteSize();
  for (size_t i = 0; i < parts.size(); ++i)
    std::memcpy(out.data<char>() + i * bytes, parts[i].raw(), bytes);
  return Status::success();
}

bool truthy(const Tensor &t) { return t.numel() > 0 && t.getDouble(0) != 0.0; }

} // namespace

struct Executor::Impl {
  func::FuncOp func;
  llvm::DenseMap<Operation *, Attrs> attrCache;
  llvm::DenseMap<Operation *, Tensor> constCache;

  Status checkInput(BlockArgument arg, const Tensor &t) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      return Status::success();
    std::string name = "input #" + std::to_string(arg.getArgNumber());
    if (auto n = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                   "graph.name"))
      name = "input '" + n.getValue().str() + "'";
    DType want = dtypeFromMlir(type.getElementType());
    MLCC_CHECK(t.dtype() == want, name, " has type ", dtypeName(t.dtype()),
               ", expected ", dtypeName(want));
    MLCC_CHECK(t.rank() == type.getRank(), name, " has rank ", t.rank(),
               ", expected ", type.getRank());
    for (int64_t i = 0; i < type.getRank(); ++i)
      MLCC_CHECK(type.isDynamicDim(i) || type.getDimSize(i) == t.dim(i), name,
                 " has shape ", shapeToString(t.shape()), ", dim ", i,
                 " must be ", type.getDimSize(i));
    return Status::success();
  }

  Status get(const Scope &scope, Value v, Tensor &out) {
    if (isa<NoneType>(v.getType())) {
      out = Tensor();
      return Status::success();
    }
    const Tensor *t = scope.lookup(v);
    MLCC_CHECK(t, "internal error: value used before it was computed");
    out = *t;
    return Status::success();
  }

  Status operands(const Scope &scope, Operation *op, std::vector<Tensor> &in) {
    in.resize(op->getNumOperands());
    for (unsigned i = 0; i < op->getNumOperands(); ++i)
      MLCC_RETURN_IF_ERROR(get(scope, op->getOperand(i), in[i]));
    return Status::success();
  }

  /// Runs `block` with `args` bound to its arguments; returns the
  /// terminator's operands.
  Status runBlock(Block &block, const std::vector<Tensor> &args,
                  const Scope *parent, std::vector<Tensor> &results) {
    Scope scope;
    scope.parent = parent;
    for (auto [arg, t] : llvm::zip(block.getArguments(), args))
      scope.values[arg] = t;
    for (Operation &op : block) {
      if (op.hasTrait<OpTrait::IsTerminator>())
        return operands(scope, &op, results);
      Status s = runOp(scope, &op);
      if (s.failed())
        return Status::error(describe(&op), ": ", s.message());
    }
    return Status::error("block has no terminator");
  }

  Status runOp(Scope &scope, Operation *op) {
    if (auto cst = dyn_cast<graph::ConstantOp>(op)) {
      auto it = constCache.find(op);
      if (it == constCache.end()) {
        Tensor t;
        MLCC_RETURN_IF_ERROR(tensorFromElementsAttr(cst.getValue(), t));
        it = constCache.try_emplace(op, t).first;
      }
      scope.values[cst.getResult()] = it->second;
      return Status::success();
    }
    if (isa<graph::NoneOp>(op))
      return Status::success();
    if (auto dep = dyn_cast<graph::ControlDependencyOp>(op)) {
      // The `after` values were computed before this op by program order.
      for (auto [in, out] : llvm::zip(dep.getValues(), dep.getResults()))
        MLCC_RETURN_IF_ERROR(get(scope, in, scope.values[out]));
      return Status::success();
    }
    if (auto ifOp = dyn_cast<graph::IfOp>(op))
      return runIf(scope, ifOp);
    if (auto forOp = dyn_cast<graph::ForOp>(op))
      return runFor(scope, forOp);
    if (auto whileOp = dyn_cast<graph::WhileOp>(op))
      return runWhile(scope, whileOp);
    return runKernel(scope, op);
  }

  Status runKernel(Scope &scope, Operation *op) {
    llvm::StringRef name = op->getName().getStringRef();
    if (!name.consume_front("graph."))
      return Status::error("the reference executor only runs graph ops");
    const KernelDef *kernel = KernelRegistry::get().find(name.str());
    MLCC_CHECK(kernel && kernel->run, "no reference kernel for graph.",
               name.str());
    auto it = attrCache.find(op);
    if (it == attrCache.end())
      it = attrCache.try_emplace(op, attrsFromOp(op)).first;
    std::vector<Tensor> in, out(op->getNumResults());
    MLCC_RETURN_IF_ERROR(operands(scope, op, in));
    MLCC_RETURN_IF_ERROR(kernel->run(it->second, in, out));
    for (unsigned i = 0; i < op->getNumResults(); ++i) {
      Value r = op->getResult(i);
      if (isa<NoneType>(r.getType()))
        continue;
      MLCC_CHECK(out[i].present(), "kernel did not produce result #", i);
      MLCC_RETURN_IF_ERROR(checkResult(r, out[i], i));
      scope.values[r] = out[i];
    }
    return Status::success();
  }

  /// A kernel result that contradicts the op's declared type is a bug in a
  /// shape helper or the importer: report it rather than run on.
  Status checkResult(Value r, const Tensor &t, unsigned i) {
    auto type = dyn_cast<RankedTensorType>(r.getType());
    if (!type)
      return Status::success();
    DType want = dtypeFromMlir(type.getElementType());
    MLCC_CHECK(t.dtype() == want, "result #", i, " is ", dtypeName(t.dtype()),
               " but the op declares ", dtypeName(want));
    bool match = t.rank() == type.getRank();
    for (int64_t d = 0; match && d < type.getRank(); ++d)
      match = type.isDynamicDim(d) || type.getDimSize(d) == t.dim(d);
    MLCC_CHECK(match, "result #", i, " has shape ", shapeToString(t.shape()),
               " but the op declares a different one");
    return Status::success();
  }

  Status runIf(Scope &scope, graph::IfOp op) {
    Tensor cond;
    MLCC_RETURN_IF_ERROR(get(scope, op.getCond(), cond));
    Region &region = truthy(cond) ? op.getThenRegion() : op.getElseRegion();
    std::vector<Tensor> results;
    MLCC_RETURN_IF_ERROR(runBlock(region.front(), {}, &scope, results));
    for (auto [r, t] : llvm::zip(op.getResults(), results))
      scope.values[r] = t;
    return Status::success();
  }

  Status finishLoop(Scope &scope, Operation *op,
                    const std::vector<Tensor> &carried,
                    const std::vector<std::vector<Tensor>> &scans) {
    for (size_t i = 0; i < carried.size(); ++i)
      scope.values[op->getResult(i)] = carried[i];
    for (size_t j = 0; j < scans.size(); ++j) {
      Value r = op->getResult(carried.size() + j);
      Tensor stacked;
      if (scans[j].empty()) {
        // Zero iterations: an empty stack whose element shape comes from
        // the declared type when it is static.
        auto type = dyn_cast<RankedTensorType>(r.getType());
        MLCC_CHECK(type && type.getRank() >= 1,
                   "scan output of a loop that ran zero times has no known "
                   "shape");
        Shape shape{0};
        for (int64_t d = 1; d < type.getRank(); ++d)
          shape.push_back(type.isDynamicDim(d) ? 0 : type.getDimSize(d));
        stacked = Tensor(dtypeFromMlir(type.getElementType()), shape);
      } else {
        MLCC_RETURN_IF_ERROR(stack(scans[j], stacked));
      }
      scope.values[r] = stacked;
    }
    return Status::success();
  }

  /// Splits a body's yielded values into carried values and scan parts.
  static void splitYield(std::vector<Tensor> &yielded, size_t numCarried,
                         std::vector<Tensor> &carried,
                         std::vector<std::vector<Tensor>> &scans) {
    carried.assign(yielded.begin(), yielded.begin() + numCarried);
    for (size_t j = numCarried; j < yielded.size(); ++j)
      scans[j - numCarried].push_back(yielded[j]);
  }

  Status runFor(Scope &scope, graph::ForOp op) {
    Tensor trip;
    MLCC_RETURN_IF_ERROR(get(scope, op.getTripCount(), trip));
    int64_t n = trip.numel() ? trip.getInt(0) : 0;
    std::vector<Tensor> carried;
    for (Value v : op.getInit())
      MLCC_RETURN_IF_ERROR(get(scope, v, carried.emplace_back()));
    std::vector<std::vector<Tensor>> scans(op.getNumScanOutputs());
    for (int64_t i = 0; i < n; ++i) {
      std::vector<Tensor> args{Tensor::fromVector<int64_t>(DType::I64, {}, {i})};
      args.insert(args.end(), carried.begin(), carried.end());
      std::vector<Tensor> yielded;
      MLCC_RETURN_IF_ERROR(runBlock(op.getBody().front(), args, &scope, yielded));
      splitYield(yielded, carried.size(), carried, scans);
    }
    return finishLoop(scope, op, carried, scans);
  }

  Status runWhile(Scope &scope, graph::WhileOp op) {
    std::vector<Tensor> carried;
    for (Value v : op.getInit())
      MLCC_RETURN_IF_ERROR(get(scope, v, carried.emplace_back()));
    std::vector<std::vector<Tensor>> scans(op.getNumScanOutputs());
    while (true) {
      std::vector<Tensor> condOut;
      MLCC_RETURN_IF_ERROR(
          runBlock(op.getCondRegion().front(), carried, &scope, condOut));
      std::vector<Tensor> forwarded(condOut.begin() + 1, condOut.end());
      if (!truthy(condOut[0])) {
        carried = forwarded;
        break;
      }
      std::vector<Tensor> yielded;
      MLCC_RETURN_IF_ERROR(
          runBlock(op.getBodyRegion().front(), forwarded, &scope, yielded));
      splitYield(yielded, carried.size(), carried, scans);
    }
    return finishLoop(scope, op, carried, scans);
  }
};

Executor::Executor(func::FuncOp func) : impl_(std::make_unique<Impl>()) {
  impl_->func = func;
}
Executor::~Executor() = default;

Status Executor::run(const std::vector<Tensor> &inputs,
                     std::vector<Tensor> &outputs) {
  Block &entry = impl_->func.getBody().front();
  MLCC_CHECK(inputs.size() == entry.getNumArguments(), "the model takes ",
             entry.getNumArguments(), " inputs, got ", inputs.size());
  for (auto [arg, t] : llvm::zip(entry.getArguments(), inputs))
    MLCC_RETURN_IF_ERROR(impl_->checkInput(arg, t));
  return impl_->runBlock(entry, inputs, nullptr, outputs);
}

} // namespace mlcc::ref
