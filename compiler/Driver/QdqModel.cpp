//===- QdqModel.cpp - A quantisation decision as a QDQ ONNX model ---------===//

#include "mlcc/Driver/QdqModel.h"
#include "mlcc/Import/TensorProto.h"

#include "onnx/onnx_pb.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <fstream>
#include <sstream>

namespace mlcc {

using ref::Status;
using ref::Tensor;

namespace {

/// The name the importer gives a node (OnnxImporter.cpp, locOf): its own,
/// or its first output's.
std::string importedName(const onnx::NodeProto &node) {
  if (!node.name().empty() || node.output_size() == 0)
    return node.name();
  return node.output(0);
}

int64_t defaultOpset(const onnx::ModelProto &model) {
  for (const auto &op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx")
      return op.version();
  return 0;
}

/// The node of `graph` that an attention's matmul `layer` ("R/scores" or
/// "R/context", graph::decomposeAttention) was, walking back from R, the
/// attention's final Reshape: R <- Transpose <- MatMul (the context's)
/// <- Softmax <- [Add mask] <- [Mul | Div scale] <- MatMul (the scores').
/// -1 when the file's nodes are not that chain. `producer` maps each
/// tensor to the node writing it.
int attentionMatmul(const onnx::GraphProto &graph,
                    const llvm::StringMap<int> &nodeIndex,
                    const llvm::StringMap<int> &producer,
                    const std::string &layer) {
  llvm::StringRef name(layer);
  bool scores = name.consume_back("/scores");
  if (!scores && !name.consume_back("/context"))
    return -1;
  auto root = nodeIndex.find(name);
  if (root == nodeIndex.end() || root->second < 0)
    return -1;
  auto inputOf = [&](int node, int input) {
    const onnx::NodeProto &n = graph.node(node);
    auto at =
        input < n.input_size() ? producer.find(n.input(input)) : producer.end();
    return at == producer.end() ? -1 : at->second;
  };
  auto is = [&](int node, const char *op) {
    return node >= 0 && graph.node(node).op_type() == op;
  };
  int transpose = inputOf(root->second, 0);
  int context = is(transpose, "Transpose") ? inputOf(transpose, 0) : -1;
  if (!is(context, "MatMul"))
    return -1;
  if (!scores)
    return context;
  int at = inputOf(context, 0);
  if (!is(at, "Softmax"))
    return -1;
  at = inputOf(at, 0);
  for (const char *op : {"Add", "Mul", "Div"}) {
    if (!is(at, op))
      continue;
    // The mask or the scale may be either operand of an Add or a Mul.
    int lhs = inputOf(at, 0), rhs = inputOf(at, 1);
    bool lhsOnPath = is(lhs, "MatMul") || is(lhs, "Mul") || is(lhs, "Div");
    at = lhsOnPath || std::string(op) == "Div" ? lhs : rhs;
  }
  return is(at, "MatMul") ? at : -1;
}

/// Every tensor name a node of `graph` or of its subgraphs (If, Loop,
/// Scan bodies, which may read the outer graph's initializers) reads.
void collectReads(const onnx::GraphProto &graph, llvm::StringSet<> &read) {
  for (const auto &node : graph.node()) {
    for (const std::string &name : node.input())
      read.insert(name);
    for (const auto &attr : node.attribute()) {
      if (attr.has_g())
        collectReads(attr.g(), read);
      for (const auto &g : attr.graphs())
        collectReads(g, read);
    }
  }
}

/// Builds the new nodes and initializers, with names no other tensor has.
class QdqWriter {
public:
  QdqWriter(onnx::ModelProto &model, std::string baseDir)
      : graph_(*model.mutable_graph()), baseDir_(std::move(baseDir)) {
    for (const auto &node : graph_.node()) {
      for (const std::string &name : node.output())
        names_.insert(name);
      names_.insert(node.name());
    }
    for (int i = 0; i < graph_.initializer_size(); ++i) {
      names_.insert(graph_.initializer(i).name());
      initializers_[graph_.initializer(i).name()] = i;
    }
    for (const auto &input : graph_.input())
      names_.insert(input.name());
  }

  /// The node inputs in QDQ form, or a reason (empty on success).
  std::string quantizeLayer(onnx::NodeProto &node,
                            const graph::QuantizedLayer &layer,
                            std::vector<onnx::NodeProto> &before) {
    if (node.op_type() != "Conv" && node.op_type() != "MatMul" &&
        node.op_type() != "Gemm")
      return "it is a " + node.op_type() + " in the file";
    if (node.input_size() < 2)
      return "it has no weight input";
    if (layer.activationB) {
      if (node.op_type() != "MatMul")
        return "it is a " + node.op_type() + " in the file, not a MatMul";
      std::string b =
          dequantizedActivation(node.input(1), *layer.activationB, before);
      node.set_input(
          0, dequantizedActivation(node.input(0), layer.activation, before));
      node.set_input(1, b);
      return {};
    }
    auto init = initializers_.find(node.input(1));
    if (init == initializers_.end())
      return "its weight '" + node.input(1) + "' is not an initializer";
    Tensor w;
    if (Status s = onnxio::tensorFromProto(graph_.initializer(init->second),
                                           baseDir_, w);
        s.failed() || w.dtype() != ref::DType::F32 ||
        layer.weightAxis >= static_cast<int64_t>(w.shape().size()))
      return "its weight '" + node.input(1) + "' is not a readable f32 tensor";
    std::string weight =
        dequantizedWeight(node.input(1), w, layer.weightAxis, before);
    std::string activation =
        dequantizedActivation(node.input(0), layer.activation, before);
    node.set_input(0, activation);
    node.set_input(1, weight);
    return {};
  }

  /// Initializers nothing reads any more (the f32 weights replaced), and
  /// their entries in the graph's inputs (where older models list them).
  void dropUnused() {
    llvm::StringSet<> read;
    collectReads(graph_, read);
    for (const auto &output : graph_.output())
      read.insert(output.name());
    llvm::StringSet<> dropped;
    auto *inits = graph_.mutable_initializer();
    for (int i = inits->size() - 1; i >= 0; --i)
      if (!read.contains(inits->Get(i).name())) {
        dropped.insert(inits->Get(i).name());
        inits->DeleteSubrange(i, 1);
      }
    auto *inputs = graph_.mutable_input();
    for (int i = inputs->size() - 1; i >= 0; --i)
      if (dropped.contains(inputs->Get(i).name()))
        inputs->DeleteSubrange(i, 1);
  }

  /// External data moves into the file: its paths are relative to the
  /// model's folder, which the output need not share.
  Status embedExternalData() {
    for (auto &init : *graph_.mutable_initializer()) {
      if (init.data_location() != onnx::TensorProto::EXTERNAL)
        continue;
      Tensor t;
      MLCC_RETURN_IF_ERROR(onnxio::tensorFromProto(init, baseDir_, t));
      std::string name = init.name();
      init.Clear();
      onnxio::tensorToProto(t, name, init);
    }
    return Status::success();
  }

private:
  onnx::GraphProto &graph_;
  std::string baseDir_;
  llvm::StringSet<> names_;
  llvm::StringMap<int> initializers_;
  llvm::StringMap<std::string> activations_, weights_;

  std::string freshName(const std::string &base) {
    std::string name = base;
    for (int i = 1; names_.contains(name); ++i)
      name = base + "_" + std::to_string(i);
    names_.insert(name);
    return name;
  }

  std::string addInitializer(const std::string &base, const Tensor &t) {
    std::string name = freshName(base);
    onnxio::tensorToProto(t, name, *graph_.add_initializer());
    return name;
  }

  onnx::NodeProto makeNode(const std::string &op,
                           std::vector<std::string> inputs,
                           const std::string &output) {
    onnx::NodeProto node;
    node.set_op_type(op);
    node.set_name(freshName(output + "_" + op));
    for (const std::string &input : inputs)
      node.add_input(input);
    node.add_output(output);
    return node;
  }

  std::string dequantizedActivation(const std::string &x,
                                    graph::ActivationQuantization a,
                                    std::vector<onnx::NodeProto> &before) {
    auto known = activations_.find(x);
    if (known != activations_.end())
      return known->second;
    std::string scale =
        addInitializer(x + "_scale", Tensor::fromVector<float>(ref::DType::F32,
                                                               {}, {a.scale}));
    std::string zero = addInitializer(
        x + "_zero_point",
        Tensor::fromVector<uint8_t>(ref::DType::U8, {}, {a.zero}));
    std::string q = freshName(x + "_quantized");
    std::string dq = freshName(x + "_dequantized");
    before.push_back(makeNode("QuantizeLinear", {x, scale, zero}, q));
    before.push_back(makeNode("DequantizeLinear", {q, scale, zero}, dq));
    return activations_[x] = dq;
  }

  std::string dequantizedWeight(const std::string &name, const Tensor &w,
                                int64_t axis,
                                std::vector<onnx::NodeProto> &before) {
    auto known = weights_.find(name);
    if (known != weights_.end())
      return known->second;
    std::vector<int8_t> q;
    std::vector<float> scale;
    graph::quantizeWeightPerChannel(w, axis, q, scale);
    int64_t channels = static_cast<int64_t>(scale.size());
    std::string qName = addInitializer(
        name + "_quantized",
        Tensor::fromVector<int8_t>(ref::DType::I8, w.shape(), q));
    std::string scaleName = addInitializer(
        name + "_scale",
        Tensor::fromVector<float>(ref::DType::F32, {channels}, scale));
    std::string zeroName = addInitializer(
        name + "_zero_point",
        Tensor::fromVector<int8_t>(ref::DType::I8, {channels},
                                   std::vector<int8_t>(channels, 0)));
    std::string dq = freshName(name + "_dequantized");
    onnx::NodeProto node =
        makeNode("DequantizeLinear", {qName, scaleName, zeroName}, dq);
    onnx::AttributeProto *attr = node.add_attribute();
    attr->set_name("axis");
    attr->set_type(onnx::AttributeProto::INT);
    attr->set_i(axis);
    before.push_back(std::move(node));
    return weights_[name] = dq;
  }
};

Status writeAtomically(const std::string &path, const std::string &bytes) {
  std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out || !out.write(bytes.data(), bytes.size()) || !out.flush()) {
      llvm::sys::fs::remove(temp);
      return Status::error("cannot write '", path, "'");
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path)) {
    llvm::sys::fs::remove(temp);
    return Status::error("cannot write '", path, "': ", ec.message());
  }
  return Status::success();
}

} // namespace

Status writeQdqModel(const std::string &modelPath,
                     const graph::QuantizationReport &report,
                     const std::string &outPath,
                     std::vector<std::string> &skipped) {
  std::ifstream in(modelPath, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  onnx::ModelProto model;
  if (!in || !model.ParseFromString(buffer.str()) || !model.has_graph())
    return Status::error("cannot read the ONNX model '", modelPath, "'");
  if (int64_t opset = defaultOpset(model); opset < 13)
    return Status::error("'", modelPath, "' imports opset ", opset,
                         "; a QDQ model with per-channel weights needs 13 "
                         "or later (DequantizeLinear's axis)");
  llvm::SmallString<256> dir(modelPath);
  llvm::sys::path::remove_filename(dir);
  QdqWriter writer(model, dir.empty() ? std::string(".") : dir.str().str());

  onnx::GraphProto &graph = *model.mutable_graph();
  // Node names as the importer gave them (-1 for one that is not unique),
  // and the node writing each tensor.
  llvm::StringMap<int> nodeIndex, producer;
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const std::string &out : graph.node(i).output())
      producer[out] = i;
    auto [at, fresh] = nodeIndex.try_emplace(importedName(graph.node(i)), i);
    if (!fresh)
      at->second = -1;
  }
  // New nodes go right before the first layer that reads them.
  std::vector<std::vector<onnx::NodeProto>> before(graph.node_size());
  for (const graph::QuantizedLayer &layer : report.layers) {
    auto at = nodeIndex.find(layer.node);
    int index = at != nodeIndex.end()
                    ? at->second
                    : attentionMatmul(graph, nodeIndex, producer, layer.node);
    if (layer.node.empty() || (at == nodeIndex.end() && index < 0)) {
      skipped.push_back("node '" + layer.node +
                        "': not a node of the file (a fused layer?)");
      continue;
    }
    if (index < 0) {
      skipped.push_back("node '" + layer.node +
                        "': more than one node of the file has this name");
      continue;
    }
    std::string why =
        writer.quantizeLayer(*graph.mutable_node(index), layer, before[index]);
    if (!why.empty())
      skipped.push_back("node '" + layer.node + "': " + why);
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (int i = 0; i < graph.node_size(); ++i) {
    for (onnx::NodeProto &node : before[i])
      *nodes.Add() = std::move(node);
    *nodes.Add() = graph.node(i);
  }
  graph.mutable_node()->Swap(&nodes);
  writer.dropUnused();
  MLCC_RETURN_IF_ERROR(writer.embedExternalData());
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return Status::error("the QDQ model of '", modelPath,
                         "' does not serialise (over 2 GiB?)");
  return writeAtomically(outPath, bytes);
}

} // namespace mlcc
