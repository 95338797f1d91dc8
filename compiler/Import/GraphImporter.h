//===- GraphImporter.h - state of one ONNX graph import ---------*- C++ -*-===//
//
// Internal to compiler/Import: the importer's state shared by the files that
// handle plain nodes, legacy opset forms and control flow.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_IMPORT_GRAPHIMPORTER_H
#define MLCC_IMPORT_GRAPHIMPORTER_H

#include "mlcc/Import/OnnxImporter.h"
#include "mlcc/Reference/Tensor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"

#include "onnx/onnx_pb.h"

namespace mlcc::onnximport {

/// Names visible in a (sub)graph; lookups fall through to the outer graph,
/// which is how ONNX subgraphs capture outer values.
struct NameScope {
  llvm::StringMap<mlir::Value> values;
  const NameScope *parent = nullptr;

  mlir::Value lookup(llvm::StringRef name) const {
    for (const NameScope *s = this; s; s = s->parent) {
      auto it = s->values.find(name);
      if (it != s->values.end())
        return it->second;
    }
    return nullptr;
  }
};

class GraphImporter {
public:
  GraphImporter(mlir::MLIRContext *ctx, const ImportOptions &options,
                std::string modelDir, std::vector<std::string> &errors)
      : ctx_(ctx), builder_(ctx), options_(options), dims_(options.dims),
        modelDir_(std::move(modelDir)), errors_(errors) {}

  mlir::OwningOpRef<mlir::ModuleOp> importModel(const onnx::ModelProto &model);

  // --- shared by the node handlers (OnnxNodes.cpp, OnnxLegacy.cpp,
  //     OnnxControlFlow.cpp) ---
  mlir::OpBuilder &builder() { return builder_; }
  mlir::MLIRContext *context() { return ctx_; }
  int64_t opset() const { return opset_; }

  /// Imports the nodes of `graph` into the builder's current block, with
  /// names resolved in `scope`. Initializers become constants there.
  bool importNodes(const onnx::GraphProto &graph, NameScope &scope);
  /// The type of a value declared in a ValueInfoProto (symbolic dims fixed
  /// by --dim, others dynamic); null when unsupported, with an error naming
  /// `what` unless it is empty.
  mlir::Type typeOf(const onnx::TypeProto &type, const std::string &what);
  /// The type the model declares for value `name` (graph output or
  /// value_info), or null.
  mlir::Type declaredType(const std::string &name);
  /// `inferred` with its dynamic dims taken from the declared type of
  /// `name` where that one is static.
  mlir::Type refineWithDeclared(mlir::Type inferred, const std::string &name);

  /// Adds `tensor`'s declared byte size to the model's weights; false,
  /// with an error naming `what`, when that takes them past
  /// ImportOptions::maxWeightsBytes. Called before the tensor is read.
  bool countWeights(const onnx::TensorProto &tensor, const std::string &what);

  /// Records an error about `node`.
  void nodeError(const onnx::NodeProto &node, const std::string &message);

  mlir::Value none();
  mlir::Value constI64(llvm::ArrayRef<int64_t> values, bool scalar = false);
  mlir::Value constant(const ref::Tensor &tensor);
  mlir::Location locOf(const onnx::NodeProto &node);
  /// `v` (If's condition, Loop's trip count or condition) as the scalar of
  /// `element` the region ops take, ONNX allowing any one-element tensor of
  /// it; null, with the node's error naming `what`, when `v` has another
  /// element type or a static element count other than one.
  mlir::Value controlScalar(const onnx::NodeProto &node, mlir::Value v,
                            mlir::Type element, const char *what);

  /// Creates graph.<mnemonic> with the given operands and attributes; result
  /// types come from the op's shape helper, else from `hints` (ONNX
  /// value_info), else an error. Returns null on error.
  mlir::Operation *createOp(const onnx::NodeProto &node,
                            llvm::StringRef mnemonic,
                            llvm::ArrayRef<mlir::Value> operands,
                            llvm::ArrayRef<mlir::NamedAttribute> attrs,
                            unsigned numResults);
  /// Converts the node's non-graph attributes.
  bool convertAttributes(const onnx::NodeProto &node,
                         llvm::SmallVectorImpl<mlir::NamedAttribute> &out);

  // Handlers; each returns false after recording an error.
  bool importNode(const onnx::NodeProto &node, NameScope &scope);
  bool importIf(const onnx::NodeProto &node, NameScope &scope);
  bool importLoop(const onnx::NodeProto &node, NameScope &scope);
  bool importScan(const onnx::NodeProto &node, NameScope &scope);
  /// Scan-8: a batch axis in front, one Scan-9 loop per batch item.
  bool importBatchedScan(const onnx::NodeProto &node,
                         const onnx::GraphProto &body, int64_t numScanIn,
                         NameScope &scope);
  /// The graph.for of a Scan-9+ node over `inputs` (states, then scan
  /// inputs) at the builder's place; null after an error.
  mlir::Operation *buildScanLoop(const onnx::NodeProto &node,
                                 const onnx::GraphProto &body,
                                 llvm::ArrayRef<mlir::Value> inputs,
                                 int64_t numScanIn,
                                 llvm::ArrayRef<int64_t> inAxes,
                                 llvm::ArrayRef<int64_t> inDirs,
                                 NameScope &scope);
  /// Rewrites forms of ops from older opsets (attributes that later became
  /// inputs, changed semantics) into the current form. Returns false on
  /// error; sets `handled` when it emitted the node itself.
  bool upgradeLegacyForm(const onnx::NodeProto &node,
                         llvm::SmallVectorImpl<mlir::Value> &operands,
                         llvm::SmallVectorImpl<mlir::NamedAttribute> &attrs,
                         NameScope &scope, bool &handled);
  /// Imports the node through its ONNX function body when the dialect has no
  /// op for it. Sets `expanded` when it did; false after an error.
  bool expandFunction(const onnx::NodeProto &node, NameScope &scope,
                      bool &expanded);
  /// The type of graph input `index` (of those that are not initializers)
  /// with its dynamic dims fixed as ImportOptions::inputShapes and
  /// batchDefaultsToOne say; null after an error.
  mlir::Type graphInputType(const onnx::ValueInfoProto &input, size_t index);

  /// Binds the node's outputs to `op`'s results in `scope`.
  void bindOutputs(const onnx::NodeProto &node, mlir::Operation *op,
                   NameScope &scope);

private:
  mlir::MLIRContext *ctx_;
  mlir::OpBuilder builder_;
  const ImportOptions &options_;
  /// options_.dims, and the dims the graph inputs' data fixed.
  std::map<std::string, int64_t> dims_;
  std::string modelDir_;
  std::vector<std::string> &errors_;
  int64_t opset_ = 0;
  int64_t weightsBytes_ = 0; ///< initializers and tensor attributes so far
  /// Types from the model's value_info, by value name.
  llvm::StringMap<const onnx::TypeProto *> typeHints_;
};

} // namespace mlcc::onnximport

#endif // MLCC_IMPORT_GRAPHIMPORTER_H
