//===- GraphBase.td - graph dialect definition ----------------*- tablegen -*-===//
//
// The graph dialect: tensor-level ops of an ONNX-like model, region ops for
// control flow, and the few ops mlcc adds (stencil, control dependencies).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_GRAPH_BASE
#define MLCC_GRAPH_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Graph_Dialect : Dialect {
  let name = "graph";
  let cppNamespace = "::mlcc::graph";
  let summary = "Tensor graph of a model, with control flow as regions";
  let description = [{
    Values are ranked tensors (f32, f16, bf16, f64, signless and unsigned
    integers, i1 for bool) whose dimensions may be dynamic. Absent optional
    operands and results are values of the builtin `none` type, made by
    `graph.none`. The ONNX-derived ops are generated from ONNX's schemas
    (`tools/gen_graph_ops.py`); the control-flow ops, `graph.stencil` and
    `graph.control_dependency` are mlcc's own.
  }];
  let hasConstantMaterializer = 1;
}

class Graph_Op<string mnemonic, list<Trait> traits = []>
    : Op<Graph_Dialect, mnemonic, traits>;

def AnyTensorOrNone : AnyTypeOf<[AnyTensor, NoneType]>;

// Ops that mirror an ONNX operator: no side effects, generic operand syntax.
class Graph_OnnxOp<string mnemonic, string onnxName, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat([Pure], traits)> {
  // The ONNX operator this op mirrors, for tools that map back.
  string onnxOpName = onnxName;
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

#endif // MLCC_GRAPH_BASE
