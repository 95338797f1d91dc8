//===- OnnxImporter.cpp - ONNX model -> graph dialect ---------------------===//
//
// Reads a ModelProto and builds func @main of graph ops. Weights become
// graph.constant (dense resources for large ones, copied once). Each node's
// result types come from the op's shape helper (the same one the reference
// executor and shape inference use); the model's value_info is a fallback.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"

#include "GraphDialect.h"
#include "mlcc/Import/TensorProto.h"
#include "mlcc/Reference/MlirBridge.h"
#include "Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringSet.h"

#include <fstream>
#include <limits>
#include <sstream>

using namespace mlir;

namespace mlcc {
namespace onnximport {

/// Folding at import is for shape computations: keep it to small values.
constexpr int64_t kImportFoldBytes = 1 << 20;

void GraphImporter::nodeError(const onnx::NodeProto &node,
                              const std::string &message) {
  std::ostringstream os;
  os << "node '" << (node.name().empty() ? node.output_size() ? node.output(0) : "?"
                                         : node.name())
     << "' (" << node.op_type() << ", opset " << opset_ << "): " << message;
  errors_.push_back(os.str());
}

Location GraphImporter::locOf(const onnx::NodeProto &node) {
  std::string name = node.name();
  if (name.empty() && node.output_size())
    name = node.output(0);
  return NameLoc::get(StringAttr::get(ctx_, name));
}

Value GraphImporter::none() {
  return builder_.create<graph::NoneOp>(builder_.getUnknownLoc());
}

Value GraphImporter::constant(const ref::Tensor &tensor) {
  return builder_.create<graph::ConstantOp>(
      builder_.getUnknownLoc(), elementsAttrFromTensor(ctx_, tensor));
}

Value GraphImporter::constI64(llvm::ArrayRef<int64_t> values, bool scalar) {
  ref::Shape shape;
  if (!scalar)
    shape.push_back(static_cast<int64_t>(values.size()));
  return constant(ref::Tensor::fromVector(ref::DType::I64, shape,
                                          std::vector<int64_t>(values)));
}

Type GraphImporter::typeOf(const onnx::TypeProto &type,
                           const std::string &what) {
  if (!type.has_tensor_type()) {
    if (!what.empty())
      errors_.push_back(what + ": only tensor types are supported (sequence, "
                             "map and optional types are not)");
    return nullptr;
  }
  const auto &tt = type.tensor_type();
  ref::DType dtype = onnxio::dtypeFromOnnx(tt.elem_type());
  if (dtype == ref::DType::Undefined) {
    if (!what.empty())
      errors_.push_back(what + ": unsupported element type " +
                      onnx::TensorProto::DataType_Name(
                          static_cast<onnx::TensorProto::DataType>(
                              tt.elem_type())));
    return nullptr;
  }
  Type elt = mlirTypeFromDType(ctx_, dtype);
  if (!tt.has_shape())
    return UnrankedTensorType::get(elt);
  llvm::SmallVector<int64_t> dims;
  for (const auto &d : tt.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() < 0) {
      if (!what.empty())
        errors_.push_back(what + ": dim " + std::to_string(dims.size()) +
                          " is " + std::to_string(d.dim_value()) +
                          "; a dim_value cannot be negative");
      return nullptr;
    }
    if (d.has_dim_value()) {
      dims.push_back(d.dim_value());
    } else if (d.has_dim_param() && dims_.count(d.dim_param())) {
      dims.push_back(dims_.at(d.dim_param()));
    } else {
      dims.push_back(ShapedType::kDynamic);
    }
  }
  ref::Shape counted;
  for (int64_t d : dims)
    counted.push_back(ShapedType::isDynamic(d) ? ref::kDynamic : d);
  if (ref::Status s = ref::checkShapeFits(counted, dtype); s.failed()) {
    if (!what.empty())
      errors_.push_back(what + ": " + s.message());
    return nullptr;
  }
  return RankedTensorType::get(dims, elt);
}

/// A dim that stands for the batch: "batch", "batch_size", "N"; an
/// unnamed first dim.
static bool batchLike(llvm::StringRef name, size_t dim) {
  if (name.empty())
    return dim == 0;
  return name.lower().find("batch") != std::string::npos || name == "N";
}

Type GraphImporter::graphInputType(const onnx::ValueInfoProto &input,
                                   size_t index) {
  const std::string what = "graph input '" + input.name() + "'";
  Type type = typeOf(input.type(), what);
  auto ranked = dyn_cast_or_null<RankedTensorType>(type);
  if (!ranked || ranked.hasStaticShape())
    return type;
  const auto &dims = input.type().tensor_type().shape().dim();
  const std::vector<int64_t> *data = index < options_.inputShapes.size()
                                         ? &options_.inputShapes[index]
                                         : nullptr;
  if (data && !data->empty() &&
      data->size() != static_cast<size_t>(ranked.getRank())) {
    errors_.push_back(what + " has rank " + std::to_string(ranked.getRank()) +
                      "; its data has rank " + std::to_string(data->size()));
    return nullptr;
  }
  SmallVector<int64_t> shape(ranked.getShape());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!ShapedType::isDynamic(shape[d]))
      continue;
    const std::string &name = dims[d].dim_param();
    int64_t value = -1;
    if (data && !data->empty())
      value = (*data)[d];
    else if (options_.batchDefaultsToOne && batchLike(name, d))
      value = 1;
    if (value < 0)
      continue;
    shape[d] = value;
    std::string label =
        name.empty() ? "input '" + input.name() + "' dim " + std::to_string(d)
                     : name;
    // The value holds for the other inputs of that name too (typeOf reads
    // dims_), and their data is checked against it when the model runs.
    if (!name.empty() && !dims_.emplace(name, value).second)
      continue;
    if (options_.chosenDims)
      options_.chosenDims->push_back(label + "=" + std::to_string(value));
  }
  return RankedTensorType::get(shape, ranked.getElementType());
}

bool GraphImporter::convertAttributes(
    const onnx::NodeProto &node, llvm::SmallVectorImpl<NamedAttribute> &out) {
  Builder &b = builder_;
  for (const auto &a : node.attribute()) {
    Attribute attr;
    switch (a.type()) {
    case onnx::AttributeProto::INT:
      attr = b.getI64IntegerAttr(a.i());
      break;
    case onnx::AttributeProto::FLOAT:
      attr = b.getF32FloatAttr(a.f());
      break;
    case onnx::AttributeProto::STRING:
      attr = b.getStringAttr(a.s());
      break;
    case onnx::AttributeProto::INTS:
      attr = b.getI64ArrayAttr(
          llvm::SmallVector<int64_t>(a.ints().begin(), a.ints().end()));
      break;
    case onnx::AttributeProto::FLOATS:
      attr = b.getF32ArrayAttr(
          llvm::SmallVector<float>(a.floats().begin(), a.floats().end()));
      break;
    case onnx::AttributeProto::STRINGS: {
      llvm::SmallVector<StringRef> strs(a.strings().begin(), a.strings().end());
      attr = b.getStrArrayAttr(strs);
      break;
    }
    case onnx::AttributeProto::TENSOR: {
      if (!countWeights(a.t(), "node '" + node.name() + "' (" + node.op_type() +
                                   ") attribute '" + a.name() + "'"))
        return false;
      ref::Tensor t;
      ref::Status s = onnxio::tensorFromProto(a.t(), modelDir_, t);
      if (s.failed()) {
        nodeError(node, "attribute '" + a.name() + "': " + s.message());
        return false;
      }
      attr = elementsAttrFromTensor(ctx_, t);
      break;
    }
    case onnx::AttributeProto::GRAPH:
      continue; // handled by the control-flow importers
    default:
      nodeError(node, "attribute '" + a.name() + "' has an unsupported kind");
      return false;
    }
    out.push_back(b.getNamedAttr(a.name(), attr));
  }
  return true;
}

Operation *GraphImporter::createOp(const onnx::NodeProto &node,
                                   StringRef mnemonic, ArrayRef<Value> operands,
                                   ArrayRef<NamedAttribute> attrs,
                                   unsigned numResults) {
  // Infer result types with the op's shape helper.
  std::vector<ref::ValueInfo> in(operands.size());
  std::vector<ref::Tensor> storage(operands.size());
  bool allRanked = true;
  for (size_t i = 0; i < operands.size(); ++i) {
    in[i] = valueInfoOf(operands[i], storage[i]);
    if (isa<UnrankedTensorType>(operands[i].getType()))
      allRanked = false;
  }
  std::vector<ref::ValueInfo> out(numResults);
  std::string inferError;
  const ref::KernelDef *kernel = ref::KernelRegistry::get().find(mnemonic.str());
  if (kernel && kernel->inferShapes && allRanked) {
    ref::Attrs plain = attrsFromList(attrs);
    ref::Status s =
        ref::inferShapesChecked(kernel->inferShapes, plain, in, out);
    if (s.failed())
      inferError = s.message();
  }
  if (!inferError.empty()) {
    nodeError(node, inferError);
    return nullptr;
  }

  llvm::SmallVector<Type> resultTypes;
  for (unsigned i = 0; i < numResults; ++i) {
    bool named = i < static_cast<unsigned>(node.output_size()) &&
                 !node.output(i).empty();
    if (!named) {
      resultTypes.push_back(NoneType::get(ctx_));
      continue;
    }
    Type hint = declaredType(node.output(i));
    if (out[i].present()) {
      resultTypes.push_back(refineWithDeclared(
          tensorTypeFor(ctx_, out[i].dtype, out[i].shape), node.output(i)));
    } else if (hint) {
      resultTypes.push_back(hint);
    } else {
      nodeError(node, "cannot infer the type of output '" + node.output(i) +
                          "'" + (kernel ? "" : " (no shape helper for graph." +
                                                   mnemonic.str() + ")"));
      return nullptr;
    }
  }
  OperationState state(locOf(node), "graph." + mnemonic.str());
  state.addOperands(operands);
  state.addAttributes(attrs);
  state.addTypes(resultTypes);
  Operation *op = builder_.create(state);
  // The op's own verifier sees what the shape helper may not (a required
  // attribute missing, one of the wrong kind): the model's mistake, told
  // as this node's, not a module that fails to verify later.
  std::string verifyError;
  {
    ScopedDiagnosticHandler capture(ctx_, [&](Diagnostic &diag) {
      if (verifyError.empty())
        verifyError = diag.str();
      return success();
    });
    if (succeeded(verify(op, /*verifyRecursively=*/false)))
      return op;
  }
  op->erase();
  nodeError(node, verifyError);
  return nullptr;
}

void GraphImporter::bindOutputs(const onnx::NodeProto &node, Operation *op,
                                NameScope &scope) {
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty() && i < static_cast<int>(op->getNumResults()))
      scope.values[node.output(i)] = op->getResult(i);
}

bool GraphImporter::importNode(const onnx::NodeProto &node, NameScope &scope) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") {
    nodeError(node, "operator domain '" + node.domain() + "' is not supported");
    return false;
  }
  const std::string &type = node.op_type();
  if (type == "Constant") {
    llvm::SmallVector<NamedAttribute> attrs;
    if (!convertAttributes(node, attrs))
      return false;
    ref::Tensor value;
    for (const auto &a : node.attribute()) {
      if (a.name() == "value") {
        ref::Status s = onnxio::tensorFromProto(a.t(), modelDir_, value);
        if (s.failed()) {
          nodeError(node, s.message());
          return false;
        }
      } else if (a.name() == "value_float") {
        value = ref::Tensor::fromVector<float>(ref::DType::F32, {}, {a.f()});
      } else if (a.name() == "value_int") {
        value = ref::Tensor::fromVector<int64_t>(ref::DType::I64, {}, {a.i()});
      } else if (a.name() == "value_floats") {
        std::vector<float> v(a.floats().begin(), a.floats().end());
        value = ref::Tensor::fromVector(ref::DType::F32,
                                        {static_cast<int64_t>(v.size())}, v);
      } else if (a.name() == "value_ints") {
        std::vector<int64_t> v(a.ints().begin(), a.ints().end());
        value = ref::Tensor::fromVector(ref::DType::I64,
                                        {static_cast<int64_t>(v.size())}, v);
      } else {
        nodeError(node, "Constant attribute '" + a.name() +
                            "' is not supported (sparse or string values)");
        return false;
      }
    }
    if (!value.present()) {
      nodeError(node, "Constant has no value attribute");
      return false;
    }
    Value v = constant(value);
    if (node.output_size())
      scope.values[node.output(0)] = v;
    return true;
  }
  if (type == "If")
    return importIf(node, scope);
  if (type == "Loop")
    return importLoop(node, scope);
  if (type == "Scan")
    return importScan(node, scope);

  // Every input is known before an op is built or a function body is
  // (libonnx's body builders read the inputs' types).
  llvm::SmallVector<Value> operands;
  for (const std::string &name : node.input()) {
    if (name.empty()) {
      operands.push_back(none());
      continue;
    }
    Value v = scope.lookup(name);
    if (!v) {
      nodeError(node, "input '" + name +
                          "' is not produced by any node, initializer or "
                          "graph input");
      return false;
    }
    operands.push_back(v);
  }
  const graph::OnnxOpInfo *info = graph::lookupOnnxOp(type);
  if (!info) {
    bool expanded = false;
    if (!expandFunction(node, scope, expanded))
      return false;
    if (!expanded)
      nodeError(node, "operator is not supported");
    return expanded;
  }
  llvm::SmallVector<NamedAttribute> attrs;
  if (!convertAttributes(node, attrs))
    return false;
  bool handled = false;
  if (!upgradeLegacyForm(node, operands, attrs, scope, handled))
    return false;
  if (handled)
    return true;
  if (!info->variadicInputs) {
    if (static_cast<int>(operands.size()) > info->numInputs) {
      nodeError(node, "has " + std::to_string(operands.size()) +
                          " inputs, the op takes at most " +
                          std::to_string(info->numInputs));
      return false;
    }
    while (static_cast<int>(operands.size()) < info->numInputs)
      operands.push_back(none());
  }
  unsigned numResults = info->variadicOutputs
                            ? node.output_size()
                            : static_cast<unsigned>(info->numOutputs);
  if (node.output_size() > static_cast<int>(numResults)) {
    nodeError(node, "has " + std::to_string(node.output_size()) +
                        " outputs, the op has " + std::to_string(numResults));
    return false;
  }
  Operation *op = createOp(node, info->mnemonic, operands, attrs, numResults);
  if (!op)
    return false;
  // Fold as we go: later nodes' shape helpers need the values of shape
  // computations (Shape -> Slice -> Concat -> Reshape) to type their results.
  // A dequantised weight waits for mlcc-fold-constants, which sees whether
  // a matmul or conv reads it (then it stays, for the int8 kernels).
  SmallVector<Value> results(op->result_begin(), op->result_end());
  if (!isa<graph::DequantizeLinearOp>(op) &&
      failed(graph::foldConstantOp(op, kImportFoldBytes, &results)))
    return false;
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      scope.values[node.output(i)] = results[i];
  return true;
}

Type GraphImporter::declaredType(const std::string &name) {
  auto it = typeHints_.find(name);
  // A declaration the importer cannot use is not an error.
  return it == typeHints_.end() ? Type() : typeOf(*it->second, /*what=*/"");
}

Type GraphImporter::refineWithDeclared(Type inferred, const std::string &name) {
  auto type = dyn_cast<RankedTensorType>(inferred);
  auto declared = dyn_cast_or_null<RankedTensorType>(declaredType(name));
  if (!type || !declared || declared.getRank() != type.getRank() ||
      declared.getElementType() != type.getElementType())
    return inferred;
  llvm::SmallVector<int64_t> dims(type.getShape());
  for (int64_t d = 0; d < declared.getRank(); ++d)
    if (ShapedType::isDynamic(dims[d]))
      dims[d] = declared.getDimSize(d);
  return RankedTensorType::get(dims, type.getElementType());
}

bool GraphImporter::countWeights(const onnx::TensorProto &tensor,
                                 const std::string &what) {
  // Saturating: the dims are not checked yet (tensorFromProto does).
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t bytes = static_cast<int64_t>(
      ref::dtypeSize(onnxio::dtypeFromOnnx(tensor.data_type())));
  for (int64_t d : tensor.dims())
    bytes = d <= 0 ? 0 : bytes > kMax / d ? kMax : bytes * d;
  weightsBytes_ = bytes > kMax - weightsBytes_ ? kMax : weightsBytes_ + bytes;
  if (options_.maxWeightsBytes <= 0 ||
      weightsBytes_ <= options_.maxWeightsBytes)
    return true;
  errors_.push_back(
      what + " (" + std::to_string(bytes) +
      " bytes) takes the model's weights to " + std::to_string(weightsBytes_) +
      " bytes, past the limit of " + std::to_string(options_.maxWeightsBytes) +
      " (raise it with --max-weights-bytes)");
  return false;
}

bool GraphImporter::importNodes(const onnx::GraphProto &graph,
                                NameScope &scope) {
  for (const auto &vi : graph.value_info())
    typeHints_[vi.name()] = &vi.type();
  for (const auto &vi : graph.output())
    typeHints_[vi.name()] = &vi.type();
  bool ok = true;
  for (const auto &init : graph.initializer()) {
    if (!countWeights(init, "initializer '" + init.name() + "'"))
      return false;
    ref::Tensor t;
    ref::Status s = onnxio::tensorFromProto(init, modelDir_, t);
    if (s.failed()) {
      errors_.push_back("initializer '" + init.name() + "': " + s.message());
      ok = false;
      continue;
    }
    scope.values[init.name()] = constant(t);
  }
  if (!ok)
    return false;
  // Keep going after a failed node to report every unsupported op at once;
  // later nodes that depend on it are skipped silently.
  for (const auto &node : graph.node()) {
    bool inputsKnown = true;
    for (const std::string &name : node.input())
      if (!name.empty() && !scope.lookup(name))
        inputsKnown = false;
    if (!inputsKnown && !ok)
      continue;
    if (!importNode(node, scope))
      ok = false;
  }
  return ok;
}

OwningOpRef<ModuleOp>
GraphImporter::importModel(const onnx::ModelProto &model) {
  for (const auto &imp : model.opset_import())
    if (imp.domain().empty() || imp.domain() == "ai.onnx")
      opset_ = imp.version();
  if (opset_ == 0) {
    errors_.push_back("model imports no version of the default ONNX domain");
    return nullptr;
  }
  const onnx::GraphProto &graph = model.graph();
  OwningOpRef<ModuleOp> module = ModuleOp::create(builder_.getUnknownLoc());
  llvm::StringSet<> initNames;
  for (const auto &init : graph.initializer())
    initNames.insert(init.name());

  // The dim_param names ("batch", "" for a numeric dim) of an input or
  // output, kept so that a header can say which dims a model was compiled
  // for several values of (`--dim batch=1,8`); null without any name.
  auto dimParams = [&](const onnx::TypeProto &type) -> ArrayAttr {
    if (!type.has_tensor_type() || !type.tensor_type().has_shape())
      return nullptr;
    llvm::SmallVector<Attribute> names;
    bool any = false;
    for (const auto &d : type.tensor_type().shape().dim()) {
      names.push_back(builder_.getStringAttr(d.dim_param()));
      any |= !d.dim_param().empty();
    }
    return any ? builder_.getArrayAttr(names) : nullptr;
  };
  llvm::SmallVector<Type> argTypes;
  llvm::SmallVector<std::string> argNames;
  llvm::SmallVector<ArrayAttr> argDimParams;
  for (const auto &in : graph.input()) {
    if (initNames.contains(in.name()))
      continue; // an initializer listed as input (IR < 4): a constant
    Type t = graphInputType(in, argTypes.size());
    if (!t)
      return nullptr;
    argTypes.push_back(t);
    argNames.push_back(in.name());
    argDimParams.push_back(dimParams(in.type()));
  }
  auto func = func::FuncOp::create(
      builder_.getUnknownLoc(), "main",
      builder_.getFunctionType(argTypes, {}));
  module->push_back(func);
  Block *entry = func.addEntryBlock();
  NameScope scope;
  for (size_t i = 0; i < argNames.size(); ++i) {
    scope.values[argNames[i]] = entry->getArgument(i);
    func.setArgAttr(i, "graph.name", builder_.getStringAttr(argNames[i]));
    if (argDimParams[i])
      func.setArgAttr(i, "graph.dim_params", argDimParams[i]);
  }
  builder_.setInsertionPointToStart(entry);
  if (!importNodes(graph, scope))
    return nullptr;

  llvm::SmallVector<Value> results;
  for (const auto &out : graph.output()) {
    Value v = scope.lookup(out.name());
    if (!v) {
      errors_.push_back("graph output '" + out.name() +
                        "' is not produced by any node");
      return nullptr;
    }
    results.push_back(v);
  }
  builder_.create<func::ReturnOp>(builder_.getUnknownLoc(), results);
  func.setType(builder_.getFunctionType(argTypes, TypeRange(results)));
  for (int i = 0; i < graph.output_size(); ++i) {
    func.setResultAttr(i, "graph.name",
                       builder_.getStringAttr(graph.output(i).name()));
    if (ArrayAttr params = dimParams(graph.output(i).type()))
      func.setResultAttr(i, "graph.dim_params", params);
  }
  return module;
}

} // namespace onnximport

OwningOpRef<ModuleOp> importOnnxModel(MLIRContext *ctx, const std::string &path,
                                      const ImportOptions &options,
                                      std::vector<std::string> &errors) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    errors.push_back("cannot open model file '" + path + "'");
    return nullptr;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string dir = path.find('/') == std::string::npos
                        ? "."
                        : path.substr(0, path.find_last_of('/'));
  return importOnnxModelBytes(ctx, buffer.str(), dir, "'" + path + "'", options,
                              errors);
}

OwningOpRef<ModuleOp> importOnnxModelBytes(MLIRContext *ctx,
                                           const std::string &bytes,
                                           const std::string &baseDir,
                                           const std::string &what,
                                           const ImportOptions &options,
                                           std::vector<std::string> &errors) {
  onnx::ModelProto model;
  // The parser stops at 100 nested messages (about 33 levels of If/Loop
  // bodies), which also bounds the importer's recursion into subgraphs.
  if (!model.ParseFromString(bytes) || !model.has_graph()) {
    errors.push_back(what +
                     " is not a valid ONNX model (truncated or corrupt "
                     "file, or subgraphs nested deeper than protobuf's limit "
                     "of 100 messages?)");
    return nullptr;
  }
  ctx->loadDialect<graph::GraphDialect, func::FuncDialect>();
  onnximport::GraphImporter importer(ctx, options, baseDir, errors);
  OwningOpRef<ModuleOp> module = importer.importModel(model);
  if (module && failed(verify(*module))) {
    errors.push_back("internal error: the imported module does not verify");
    return nullptr;
  }
  return module;
}

} // namespace mlcc
