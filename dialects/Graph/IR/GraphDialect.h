//===- GraphDialect.h - graph dialect ---------------------------*- C++ -*-===//

#ifndef MLCC_DIALECTS_GRAPH_IR_GRAPHDIALECT_H
#define MLCC_DIALECTS_GRAPH_IR_GRAPHDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "GraphOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "GraphOps.h.inc"

namespace mlcc::graph {

/// Info about an ONNX-derived op, from the generated op table.
struct OnnxOpInfo {
  const char *onnxName;
  const char *mnemonic;
  int sinceVersion;
  int numInputs;
  int numOutputs;
  bool variadicInputs;
  bool variadicOutputs;
};

/// Looks up an ONNX op type ("Conv"); null if the dialect has no such op.
const OnnxOpInfo *lookupOnnxOp(llvm::StringRef onnxName);
/// Looks up by mnemonic without the "graph." prefix ("conv").
const OnnxOpInfo *lookupOnnxOpByMnemonic(llvm::StringRef mnemonic);
llvm::ArrayRef<OnnxOpInfo> allOnnxOps();

/// The activations a fused op's epilogue may apply (GraphFusedOps.td).
llvm::ArrayRef<llvm::StringLiteral> fusedActivations();

/// Whether a fused norm op (skip_layer_norm, embed_layer_norm) takes this
/// epsilon: finite and >= 0. graph.layer_norm, ONNX's, takes any, so the
/// fusions ask before they form one.
bool isFusedOpEpsilon(float epsilon);

/// How messages name an op: "node 'conv1' (graph.conv)" when the importer
/// kept the node's name, else "(graph.conv)".
std::string describeOp(mlir::Operation *op);

/// How messages and `mlcc inspect` show a tensor type: MLIR's form
/// (tensor<1x3xf32>), or, when some dynamic dim has a name in `dimParams`
/// (a graph input's or output's graph.dim_params),
/// "tensor<batch x 3 x 224 x 224 x f32>" with "?" for unnamed ones.
std::string describeType(mlir::Type type, mlir::ArrayAttr dimParams);

/// The name of dim `d` in `dimParams` ("" when there is none).
llvm::StringRef dimParamName(mlir::ArrayAttr dimParams, int64_t d);

} // namespace mlcc::graph

#endif // MLCC_DIALECTS_GRAPH_IR_GRAPHDIALECT_H
