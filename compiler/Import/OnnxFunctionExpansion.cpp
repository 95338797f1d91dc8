//===- OnnxFunctionExpansion.cpp - composite ops via ONNX function bodies -===//
//
// Ops that the graph dialect does not hold (SoftmaxCrossEntropyLoss,
// NegativeLogLikelihoodLoss, ...) are expanded into the nodes of their ONNX
// function body, taken from libonnx's schema registry, and imported like any
// other nodes. libonnx reports errors with exceptions, so this file is built
// with -fexceptions and catches them at the boundary.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"

#include "mlcc/Import/TensorProto.h"
#include "mlcc/Reference/MlirBridge.h"

#include "onnx/defs/schema.h"

#include <exception>
#include <map>

using namespace mlir;

namespace mlcc::onnximport {

namespace {

/// The TypeProto of a value, for context-dependent function builders.
onnx::TypeProto typeProtoOf(Value v) {
  onnx::TypeProto t;
  auto shaped = dyn_cast_or_null<ShapedType>(v ? v.getType() : Type());
  if (!shaped)
    return t;
  auto *tensor = t.mutable_tensor_type();
  tensor->set_elem_type(
      onnxio::dtypeToOnnx(dtypeFromMlir(shaped.getElementType())));
  if (shaped.hasRank()) {
    auto *shape = tensor->mutable_shape();
    for (int64_t d : shaped.getShape()) {
      auto *dim = shape->add_dim();
      if (!ShapedType::isDynamic(d))
        dim->set_dim_value(d);
    }
  }
  return t;
}

/// Builds the function body of `node`; false when it has none.
bool functionBody(const onnx::NodeProto &node, int64_t opset,
                  const std::vector<onnx::TypeProto> &inputTypes,
                  onnx::FunctionProto &body, std::string &error) {
  try {
    const onnx::OpSchema *schema =
        onnx::OpSchemaRegistry::Schema(node.op_type(), opset, "");
    if (!schema)
      return false;
    if (schema->HasFunction()) {
      body = *schema->GetFunction();
      return true;
    }
    if (schema->HasContextDependentFunction()) {
      onnx::FunctionBodyBuildContextImpl ctx(node, inputTypes);
      return schema->BuildContextDependentFunction(ctx, body);
    }
    return false;
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
}

} // namespace

bool GraphImporter::expandFunction(const onnx::NodeProto &node,
                                   NameScope &scope, bool &expanded) {
  expanded = false;
  std::vector<onnx::TypeProto> inputTypes;
  for (const std::string &name : node.input())
    inputTypes.push_back(typeProtoOf(name.empty() ? Value()
                                                  : scope.lookup(name)));
  onnx::FunctionProto body;
  std::string error;
  if (!functionBody(node, opset(), inputTypes, body, error)) {
    if (!error.empty()) {
      nodeError(node, "cannot expand its function body: " + error);
      return false;
    }
    return true;
  }
  expanded = true;

  // Formal parameters map to the node's actual names; the body's own
  // values get a prefix unique to this node.
  // (A node may have neither a name nor an output.)
  std::string prefix = "__" +
                       (!node.name().empty() ? node.name()
                        : node.output_size() ? node.output(0)
                                             : node.op_type()) +
                       "/";
  std::map<std::string, std::string> rename;
  for (int i = 0; i < body.input_size(); ++i)
    rename[body.input(i)] = i < node.input_size() ? node.input(i) : "";
  for (int i = 0; i < body.output_size(); ++i)
    rename[body.output(i)] = i < node.output_size() ? node.output(i) : "";
  auto renamed = [&](const std::string &name) {
    if (name.empty())
      return name;
    auto it = rename.find(name);
    return it != rename.end() ? it->second : prefix + name;
  };
  std::map<std::string, const onnx::AttributeProto *> nodeAttrs;
  for (const auto &a : node.attribute())
    nodeAttrs[a.name()] = &a;

  // The body is written against its own opset.
  int64_t savedOpset = opset_;
  for (const auto &imp : body.opset_import())
    if (imp.domain().empty() || imp.domain() == "ai.onnx")
      opset_ = imp.version();
  bool ok = true;
  int index = 0;
  for (const onnx::NodeProto &inner : body.node()) {
    onnx::NodeProto n = inner;
    n.set_name(prefix + inner.op_type() + "_" + std::to_string(index++));
    for (int i = 0; i < n.input_size(); ++i)
      n.set_input(i, renamed(n.input(i)));
    for (int i = 0; i < n.output_size(); ++i)
      n.set_output(i, renamed(n.output(i)));
    // Attributes that refer to the node's own ("ref_attr_name") take its
    // value, or are dropped to use the default.
    n.clear_attribute();
    for (const auto &a : inner.attribute()) {
      if (a.ref_attr_name().empty()) {
        *n.add_attribute() = a;
        continue;
      }
      auto it = nodeAttrs.find(a.ref_attr_name());
      if (it == nodeAttrs.end())
        continue;
      onnx::AttributeProto *copy = n.add_attribute();
      *copy = *it->second;
      copy->set_name(a.name());
    }
    if (!importNode(n, scope)) {
      ok = false;
      break;
    }
  }
  opset_ = savedOpset;
  return ok;
}

} // namespace mlcc::onnximport
