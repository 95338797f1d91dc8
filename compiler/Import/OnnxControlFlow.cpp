//===- OnnxControlFlow.cpp - If / Loop / Scan -> region ops ---------------===//
//
// ONNX subgraphs become regions of graph.if, graph.for and graph.while. Names
// in a subgraph resolve first in the subgraph, then in the enclosing graphs
// (outer-scope captures), which MLIR regions express directly: the region
// ops are not isolated from above.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"

#include "GraphDialect.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace mlcc::onnximport {

namespace {

const onnx::GraphProto *graphAttr(const onnx::NodeProto &node,
                                  llvm::StringRef name) {
  for (const auto &a : node.attribute())
    if (a.name() == name && a.type() == onnx::AttributeProto::GRAPH)
      return &a.g();
  return nullptr;
}

int64_t intAttr(const onnx::NodeProto &node, llvm::StringRef name,
                int64_t dflt) {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return a.i();
  return dflt;
}

std::vector<int64_t> intsAttr(const onnx::NodeProto &node,
                              llvm::StringRef name) {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return {a.ints().begin(), a.ints().end()};
  return {};
}

RankedTensorType scalarOf(Type elt) {
  return RankedTensorType::get({}, elt);
}

/// The type of a loop's stacked output: one more leading dim of `n` (or ?).
Type stackedType(Type element, int64_t n) {
  auto t = dyn_cast<RankedTensorType>(element);
  if (!t)
    return element;
  SmallVector<int64_t> dims{n};
  dims.append(t.getShape().begin(), t.getShape().end());
  return RankedTensorType::get(dims, t.getElementType());
}

/// Empty when every loop-carried value the body yields has its initial
/// value's type (as graph.for and graph.while require; a shape may be less
/// known on one side); else what differs, for the node's error.
std::string carriedTypeMismatch(ValueRange init, ValueRange yielded) {
  for (size_t i = 0; i < init.size(); ++i) {
    Type from = init[i].getType(), to = yielded[i].getType();
    if (getElementTypeOrSelf(from) == getElementTypeOrSelf(to) &&
        succeeded(verifyCompatibleShape(from, to)))
      continue;
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "loop-carried value " << i << " starts as " << from
       << " but the body yields " << to;
    return text;
  }
  return {};
}

} // namespace

Value GraphImporter::controlScalar(const onnx::NodeProto &node, Value v,
                                   Type element, const char *what) {
  auto type = cast<TensorType>(v.getType());
  if (type.getElementType() != element ||
      (type.hasStaticShape() && type.getNumElements() != 1)) {
    std::string shown;
    llvm::raw_string_ostream os(shown);
    os << "the " << what << " must hold one "
       << (element.isInteger(1) ? "bool" : "int64") << ", it is " << type;
    nodeError(node, os.str());
    return {};
  }
  RankedTensorType scalar = scalarOf(element);
  if (type == scalar)
    return v;
  return builder()
      .create<graph::ReshapeOp>(locOf(node), scalar, v, constI64({}),
                                IntegerAttr())
      .getResult();
}

bool GraphImporter::importIf(const onnx::NodeProto &node, NameScope &scope) {
  const onnx::GraphProto *thenG = graphAttr(node, "then_branch");
  const onnx::GraphProto *elseG = graphAttr(node, "else_branch");
  if (!thenG || !elseG || node.input_size() != 1) {
    nodeError(node, "If needs one condition input and then/else branches");
    return false;
  }
  Value cond = scope.lookup(node.input(0));
  if (!cond) {
    nodeError(node, "condition '" + node.input(0) + "' is not defined");
    return false;
  }
  cond = controlScalar(node, cond, builder().getI1Type(), "condition");
  if (!cond)
    return false;
  OpBuilder::InsertPoint outer = builder().saveInsertionPoint();
  Location loc = locOf(node);

  // Import each branch into a detached block, then build the op around them.
  auto importBranch = [&](const onnx::GraphProto &g, Block *block,
                          SmallVectorImpl<Value> &yielded) {
    NameScope inner;
    inner.parent = &scope;
    builder().setInsertionPointToStart(block);
    if (!importNodes(g, inner))
      return false;
    for (const auto &out : g.output()) {
      Value v = inner.lookup(out.name());
      if (!v) {
        nodeError(node, "branch output '" + out.name() + "' is not defined");
        return false;
      }
      yielded.push_back(v);
    }
    builder().create<graph::YieldOp>(loc, yielded);
    return true;
  };
  auto thenBlock = std::make_unique<Block>();
  auto elseBlock = std::make_unique<Block>();
  SmallVector<Value> thenVals, elseVals;
  bool imported = importBranch(*thenG, thenBlock.get(), thenVals) &&
                  importBranch(*elseG, elseBlock.get(), elseVals);
  builder().restoreInsertionPoint(outer);
  if (!imported)
    return false;
  if (thenVals.size() != elseVals.size() ||
      static_cast<int>(thenVals.size()) != node.output_size()) {
    nodeError(node, "then and else branches must yield one value per output");
    return false;
  }
  // Results: where the branches disagree on a dim, the result dim is dynamic.
  SmallVector<Type> resultTypes;
  for (auto [a, b] : llvm::zip(thenVals, elseVals)) {
    auto ta = dyn_cast<RankedTensorType>(a.getType());
    auto tb = dyn_cast<RankedTensorType>(b.getType());
    if (ta && tb && ta.getRank() == tb.getRank() &&
        ta.getElementType() == tb.getElementType()) {
      SmallVector<int64_t> dims;
      for (int64_t d = 0; d < ta.getRank(); ++d)
        dims.push_back(ta.getDimSize(d) == tb.getDimSize(d)
                           ? ta.getDimSize(d)
                           : ShapedType::kDynamic);
      resultTypes.push_back(RankedTensorType::get(dims, ta.getElementType()));
    } else if (a.getType() == b.getType()) {
      resultTypes.push_back(a.getType());
    } else {
      nodeError(node, "branches yield values of different element type or "
                      "rank; only tensors of one type can be merged");
      return false;
    }
  }
  builder().restoreInsertionPoint(outer);
  auto ifOp = builder().create<graph::IfOp>(loc, resultTypes, cond);
  ifOp.getThenRegion().push_back(thenBlock.release());
  ifOp.getElseRegion().push_back(elseBlock.release());
  bindOutputs(node, ifOp, scope);
  return true;
}

bool GraphImporter::importLoop(const onnx::NodeProto &node, NameScope &scope) {
  const onnx::GraphProto *body = graphAttr(node, "body");
  if (!body || node.input_size() < 2 ||
      body->input_size() != node.input_size() ||
      body->output_size() < node.input_size() - 1 ||
      node.output_size() > body->output_size() - 1) {
    nodeError(node, "Loop needs inputs (M, cond, v...), a body taking "
                    "(iter, cond, v...) and returning (cond, v..., scans...), "
                    "and at most one output per v and scan");
    return false;
  }
  Location loc = locOf(node);
  OpBuilder &b = builder();
  auto i64 = scalarOf(b.getI64Type());
  auto i1 = scalarOf(b.getI1Type());
  auto lookup = [&](const std::string &name) -> Value {
    return name.empty() ? Value() : scope.lookup(name);
  };
  Value tripCount = lookup(node.input(0));
  Value cond = lookup(node.input(1));
  if ((!node.input(0).empty() && !tripCount) ||
      (!node.input(1).empty() && !cond)) {
    nodeError(node, "trip count or condition input is not defined");
    return false;
  }
  SmallVector<Value> init;
  for (int i = 2; i < node.input_size(); ++i) {
    Value v = lookup(node.input(i));
    if (!v) {
      nodeError(node, "loop-carried input '" + node.input(i) +
                          "' is not defined");
      return false;
    }
    init.push_back(v);
  }
  size_t numCarried = init.size();
  size_t numScan = body->output_size() - 1 - numCarried;
  if (!tripCount && !cond) {
    nodeError(node, "Loop without trip count and condition never ends");
    return false;
  }
  if (!cond)
    cond = constant(ref::Tensor::fromVector<int>(ref::DType::Bool, {}, {1}));
  cond = controlScalar(node, cond, b.getI1Type(), "condition");
  if (tripCount)
    tripCount = controlScalar(node, tripCount, b.getI64Type(), "trip count");
  if (!cond || (node.input(0).size() && !tripCount))
    return false;

  // graph.while over (iter, cond, v...): runs while cond && iter < M.
  SmallVector<Value> whileInit{constI64({0}, /*scalar=*/true), cond};
  whileInit.append(init.begin(), init.end());
  SmallVector<Type> carriedTypes;
  for (Value v : whileInit)
    carriedTypes.push_back(v.getType());

  auto condBlock = std::make_unique<Block>();
  auto bodyBlock = std::make_unique<Block>();
  SmallVector<Location> locs(carriedTypes.size(), loc);
  condBlock->addArguments(carriedTypes, locs);
  bodyBlock->addArguments(carriedTypes, locs);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(condBlock.get());
    Value pred = condBlock->getArgument(1);
    if (tripCount) {
      Value less = b.create<graph::LessOp>(loc, i1, condBlock->getArgument(0),
                                           tripCount);
      pred = b.create<graph::AndOp>(loc, i1, pred, less);
    }
    b.create<graph::ConditionOp>(loc, pred, condBlock->getArguments());

    b.setInsertionPointToStart(bodyBlock.get());
    NameScope inner;
    inner.parent = &scope;
    for (int i = 0; i < body->input_size(); ++i)
      inner.values[body->input(i).name()] = bodyBlock->getArgument(i);
    if (!importNodes(*body, inner))
      return false;
    SmallVector<Value> yielded;
    Value one = constI64({1}, /*scalar=*/true);
    yielded.push_back(
        b.create<graph::AddOp>(loc, i64, bodyBlock->getArgument(0), one));
    for (int i = 0; i < body->output_size(); ++i) {
      Value v = inner.lookup(body->output(i).name());
      if (!v) {
        nodeError(node, "body output '" + body->output(i).name() +
                            "' is not defined");
        return false;
      }
      if (i == 0 && !(v = controlScalar(node, v, b.getI1Type(),
                                        "condition the body yields")))
        return false;
      yielded.push_back(v);
    }
    std::string mismatch =
        carriedTypeMismatch(init, ValueRange(yielded).slice(2, numCarried));
    if (!mismatch.empty()) {
      nodeError(node, mismatch);
      return false;
    }
    b.create<graph::YieldOp>(loc, yielded);
  }
  SmallVector<Type> resultTypes(carriedTypes);
  // A scan output's length is the number of trips, known when the loop
  // runs; the model's declared output shape may fix it.
  for (size_t j = 0; j < numScan; ++j) {
    Value v = bodyBlock->getTerminator()->getOperand(2 + numCarried + j);
    Type stacked = stackedType(v.getType(), ShapedType::kDynamic);
    size_t out = numCarried + j;
    if (out < static_cast<size_t>(node.output_size()))
      stacked = refineWithDeclared(stacked, node.output(out));
    resultTypes.push_back(stacked);
  }
  auto loop = b.create<graph::WhileOp>(loc, resultTypes, whileInit,
                                       static_cast<int64_t>(numScan));
  loop.getCondRegion().push_back(condBlock.release());
  loop.getBodyRegion().push_back(bodyBlock.release());
  // ONNX outputs: v_final..., scan outputs... (iter and cond are dropped).
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      scope.values[node.output(i)] = loop.getResult(2 + i);
  return true;
}

bool GraphImporter::importScan(const onnx::NodeProto &node, NameScope &scope) {
  const onnx::GraphProto *body = graphAttr(node, "body");
  int64_t numScanIn = intAttr(node, "num_scan_inputs", -1);
  if (!body || numScanIn < 1) {
    nodeError(node, "Scan needs a body and num_scan_inputs >= 1");
    return false;
  }
  if (opset() < 9)
    return importBatchedScan(node, *body, numScanIn, scope);
  for (int64_t x : intsAttr(node, "scan_output_axes"))
    if (x != 0) {
      nodeError(node, "scan_output_axes other than 0 are not supported yet");
      return false;
    }
  for (int64_t x : intsAttr(node, "scan_output_directions"))
    if (x != 0) {
      nodeError(node, "reverse scan outputs are not supported yet");
      return false;
    }
  SmallVector<Value> inputs;
  for (const std::string &name : node.input()) {
    Value v = scope.lookup(name);
    if (!v) {
      nodeError(node, "input '" + name + "' is not defined");
      return false;
    }
    inputs.push_back(v);
  }
  Operation *loop =
      buildScanLoop(node, *body, inputs, numScanIn,
                    intsAttr(node, "scan_input_axes"),
                    intsAttr(node, "scan_input_directions"), scope);
  if (!loop)
    return false;
  bindOutputs(node, loop, scope);
  return true;
}

bool GraphImporter::importBatchedScan(const onnx::NodeProto &node,
                                      const onnx::GraphProto &body,
                                      int64_t numScanIn, NameScope &scope) {
  if (node.input_size() < 1 || !node.input(0).empty()) {
    nodeError(node, "Scan-8 with sequence_lens is not supported (every "
                    "sequence must run to its full length)");
    return false;
  }
  SmallVector<Value> inputs;
  for (int i = 1; i < node.input_size(); ++i) {
    Value v = scope.lookup(node.input(i));
    if (!v) {
      nodeError(node, "input '" + node.input(i) + "' is not defined");
      return false;
    }
    inputs.push_back(v);
  }
  auto firstType =
      inputs.empty() ? nullptr : dyn_cast<RankedTensorType>(inputs[0].getType());
  if (!firstType || firstType.getRank() < 1 || firstType.isDynamicDim(0)) {
    nodeError(node, "Scan-8 needs inputs with a static batch dim");
    return false;
  }
  int64_t batch = firstType.getDimSize(0);
  Location loc = locOf(node);
  OpBuilder &b = builder();
  auto i64 = scalarOf(b.getI64Type());

  // for b in [0, batch): the Scan-9 loop over the b-th item of every input
  // (its scan axis is the item's first); its results, stacked by the outer
  // loop, are Scan-8's outputs.
  auto bodyBlock = std::make_unique<Block>();
  Value item = bodyBlock->addArgument(i64, loc);
  SmallVector<Type> resultTypes;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(bodyBlock.get());
    SmallVector<Value> items;
    for (Value v : inputs) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (!t || t.getRank() < 1) {
        nodeError(node, "Scan-8 inputs must be ranked with a batch dim");
        return false;
      }
      auto itemType =
          RankedTensorType::get(t.getShape().drop_front(), t.getElementType());
      items.push_back(b.create<graph::GatherOp>(loc, itemType, v, item,
                                                b.getI64IntegerAttr(0)));
    }
    Operation *inner = buildScanLoop(node, body, items, numScanIn, {},
                                     intsAttr(node, "directions"), scope);
    if (!inner)
      return false;
    for (Value r : inner->getResults())
      resultTypes.push_back(stackedType(r.getType(), batch));
    b.create<graph::YieldOp>(loc, inner->getResults());
  }
  auto loop = b.create<graph::ForOp>(
      loc, resultTypes, constI64({batch}, /*scalar=*/true), ValueRange{},
      static_cast<int64_t>(resultTypes.size()));
  loop.getBody().push_back(bodyBlock.release());
  bindOutputs(node, loop, scope);
  return true;
}

Operation *GraphImporter::buildScanLoop(const onnx::NodeProto &node,
                                        const onnx::GraphProto &body,
                                        ArrayRef<Value> inputs,
                                        int64_t numScanIn,
                                        ArrayRef<int64_t> inAxes,
                                        ArrayRef<int64_t> inDirs,
                                        NameScope &scope) {
  int64_t numIn = inputs.size();
  int64_t numState = numIn - numScanIn;
  int64_t numScanOut = body.output_size() - numState;
  if (numState < 0 || numScanOut < 0) {
    nodeError(node, "Scan has more scan inputs than inputs, or fewer body "
                    "outputs than states");
    return nullptr;
  }
  if (body.input_size() != numIn) {
    nodeError(node, "the Scan body takes " + std::to_string(body.input_size()) +
                        " inputs, the "
                        "node gives " +
                        std::to_string(numIn));
    return nullptr;
  }
  // Each scan input ranked, its axis inside its rank.
  SmallVector<int64_t> axes;
  for (int64_t j = 0; j < numScanIn; ++j) {
    auto t = dyn_cast<RankedTensorType>(inputs[numState + j].getType());
    int64_t axis = j < static_cast<int64_t>(inAxes.size()) ? inAxes[j] : 0;
    if (t && axis < 0)
      axis += t.getRank();
    if (!t || axis < 0 || axis >= t.getRank()) {
      nodeError(node, "scan input " + std::to_string(j) +
                          (t ? " has no axis " + std::to_string(axis)
                             : " must be ranked"));
      return nullptr;
    }
    axes.push_back(axis);
  }
  Location loc = locOf(node);
  OpBuilder &b = builder();
  auto i64 = scalarOf(b.getI64Type());
  // Trip count: the scan axis length of the first scan input.
  auto axisOf = [&](int64_t j) { return axes[j]; };
  Value first = inputs[numState];
  auto firstType = cast<RankedTensorType>(first.getType());
  int64_t axis0 = axisOf(0);
  auto shapeType = RankedTensorType::get({firstType.getRank()}, b.getI64Type());
  Value shape = b.create<graph::ShapeOp>(loc, shapeType, first,
                                         IntegerAttr(), IntegerAttr());
  Value trip = b.create<graph::GatherOp>(loc, i64, shape,
                                         constI64({axis0}, true),
                                         b.getI64IntegerAttr(0));
  int64_t staticTrip = firstType.getDimSize(axis0);

  SmallVector<Value> init(inputs.begin(), inputs.begin() + numState);
  auto bodyBlock = std::make_unique<Block>();
  bodyBlock->addArgument(i64, loc);
  for (Value v : init)
    bodyBlock->addArgument(v.getType(), loc);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(bodyBlock.get());
    NameScope inner;
    inner.parent = &scope;
    for (int64_t i = 0; i < numState; ++i)
      inner.values[body.input(i).name()] = bodyBlock->getArgument(1 + i);
    Value iter = bodyBlock->getArgument(0);
    for (int64_t j = 0; j < numScanIn; ++j) {
      Value in = inputs[numState + j];
      auto t = cast<RankedTensorType>(in.getType());
      int64_t axis = axisOf(j);
      Value index = iter;
      if (j < static_cast<int64_t>(inDirs.size()) && inDirs[j] == 1) {
        // Reverse direction: index = N - 1 - iter.
        Value last = b.create<graph::SubOp>(loc, i64, trip,
                                            constI64({1}, true));
        index = b.create<graph::SubOp>(loc, i64, last, iter);
      }
      SmallVector<int64_t> dims(t.getShape());
      dims.erase(dims.begin() + axis);
      auto eltType = RankedTensorType::get(dims, t.getElementType());
      Value slice = b.create<graph::GatherOp>(loc, eltType, in, index,
                                              b.getI64IntegerAttr(axis));
      inner.values[body.input(numState + j).name()] = slice;
    }
    if (!importNodes(body, inner))
      return nullptr;
    SmallVector<Value> yielded;
    for (const auto &out : body.output()) {
      Value v = inner.lookup(out.name());
      if (!v) {
        nodeError(node, "body output '" + out.name() + "' is not defined");
        return nullptr;
      }
      yielded.push_back(v);
    }
    std::string mismatch =
        carriedTypeMismatch(init, ValueRange(yielded).take_front(numState));
    if (!mismatch.empty()) {
      nodeError(node, mismatch);
      return nullptr;
    }
    b.create<graph::YieldOp>(loc, yielded);
  }
  SmallVector<Type> resultTypes;
  for (Value v : init)
    resultTypes.push_back(v.getType());
  for (int64_t j = 0; j < numScanOut; ++j)
    resultTypes.push_back(stackedType(
        bodyBlock->getTerminator()->getOperand(numState + j).getType(),
        staticTrip));
  auto loop = b.create<graph::ForOp>(loc, resultTypes, trip, init,
                                     numScanOut);
  loop.getBody().push_back(bodyBlock.release());
  return loop;
}


} // namespace mlcc::onnximport
