#!/usr/bin/env python3
"""Generates the ONNX-derived ops of the graph dialect from ONNX's schema registry.

onnx-mlir's approach: the op set, operand lists, attributes and docs of the
standard ONNX ops come from the schemas themselves, so the dialect cannot drift
from the spec. Hand-written ops (control flow, stencil, quantisation, constant)
live in their own .td files.

Run with Debian's interpreter (it has python3-onnx):
  /usr/bin/python3 tools/gen_graph_ops.py dialects/Graph/IR
and commit the outputs: GraphOnnxOps.td and GraphOnnxOpTable.inc.
"""
import re
import sys

import onnx.defs as defs

MAX_OPSET = 17

# ONNX ops that are not imported as generated ops, with the reason.
EXCLUDED = {
    "Constant": "imported as graph.constant",
    "If": "region op graph.if, hand-written",
    "Loop": "region ops graph.for / graph.while, hand-written",
    "Scan": "imported into graph.for, hand-written",
    "SequenceMap": "sequence types are not supported",
    "Optional": "optional types are not supported",
    "OptionalGetElement": "optional types are not supported",
    "OptionalHasElement": "optional types are not supported",
    "StringNormalizer": "string tensors are not supported",
    "TfIdfVectorizer": "string/ngram featurizer, out of scope",
    "RandomNormal": "random ops are not deterministic",
    "RandomNormalLike": "random ops are not deterministic",
    "RandomUniform": "random ops are not deterministic",
    "RandomUniformLike": "random ops are not deterministic",
    "Bernoulli": "random ops are not deterministic",
    # Composite ops the importer expands through their ONNX function bodies.
    "SoftmaxCrossEntropyLoss": "expanded by the importer (ONNX function body)",
    "NegativeLogLikelihoodLoss": "expanded by the importer (ONNX function body)",
    "Multinomial": "random ops are not deterministic",
}
SEQUENCE_OPS = {"ConcatFromSequence", "SplitToSequence"}

# Mnemonics that read better than the mechanical snake_case of the ONNX name.
RENAMES = {
    "MatMul": "matmul",
    "MatMulInteger": "matmul_integer",
    "QLinearMatMul": "qlinear_matmul",
    "QLinearConv": "qlinear_conv",
    "BatchNormalization": "batch_norm",
    "LayerNormalization": "layer_norm",
    "InstanceNormalization": "instance_norm",
    "LpNormalization": "lp_norm",
    "MeanVarianceNormalization": "mean_variance_norm",
    "PRelu": "prelu",
    "LRN": "lrn",
    "GRU": "gru",
    "LSTM": "lstm",
    "RNN": "rnn",
    "DFT": "dft",
    "STFT": "stft",
    "GatherND": "gather_nd",
    "ScatterND": "scatter_nd",
    "NonZero": "nonzero",
    "IsNaN": "is_nan",
    "IsInf": "is_inf",
    "TopK": "topk",
    "CumSum": "cumsum",
    "ArgMax": "argmax",
    "ArgMin": "argmin",
    "EyeLike": "eye_like",
    "OneHot": "one_hot",
    "CastLike": "cast_like",
    # The quantisation ops later passes rewrite and fuse.
    "QuantizeLinear": "quantize",
    "DequantizeLinear": "dequantize",
}

# Ops with a hand-written verifier (dialects/Graph/IR/GraphOpVerifiers.cpp)
# for what their operand types cannot express.
VERIFIED = {"Conv", "MatMul", "Gemm", "Transpose", "Concat", "Reshape",
            "Gather", "BatchNormalization", "Softmax", "LayerNormalization"}

ATTR_TYPES = {
    defs.OpSchema.AttrType.INT: "I64Attr",
    defs.OpSchema.AttrType.FLOAT: "F32Attr",
    defs.OpSchema.AttrType.STRING: "StrAttr",
    defs.OpSchema.AttrType.INTS: "I64ArrayAttr",
    defs.OpSchema.AttrType.FLOATS: "F32ArrayAttr",
    defs.OpSchema.AttrType.STRINGS: "StrArrayAttr",
    defs.OpSchema.AttrType.TENSOR: "ElementsAttr",
}
OPTION = defs.OpSchema.FormalParameterOption


def mnemonic(name):
    if name in RENAMES:
        return RENAMES[name]
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    s = re.sub(r"(?<=[A-Z])([A-Z][a-z])", r"_\1", s)
    return s.lower()


def odsText(text):
    return text.replace("}]", "} ]").rstrip()


def summaryOf(doc):
    text = " ".join(doc.strip().split())
    text = re.sub(r"[`\"\\]", "", text)
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    if len(first) > 110:
        first = first[:107].rstrip() + "..."
    return first or "ONNX op"


def latestSchemas():
    latest = {}
    for s in defs.get_all_schemas_with_history():
        if s.domain != "" or s.since_version > MAX_OPSET:
            continue
        if s.name in EXCLUDED or s.name in SEQUENCE_OPS:
            continue
        if s.name.startswith("Sequence"):
            continue
        if s.name not in latest or latest[s.name].since_version < s.since_version:
            latest[s.name] = s
    return [latest[k] for k in sorted(latest)]


def operandList(params, taken=frozenset()):
    """ODS entries for the inputs or outputs `params`, and whether the last is
    variadic. Names in `taken` (an output named like an input) get "_out"."""
    entries, variadic = [], False
    for p in params:
        name = p.name if p.name not in taken else p.name + "_out"
        if p.option == OPTION.Variadic:
            entries.append(f"Variadic<AnyTensor>:${name}")
            variadic = True
        elif p.option == OPTION.Optional:
            entries.append(f"AnyTensorOrNone:${name}")
        else:
            entries.append(f"AnyTensor:${name}")
    return entries, variadic


def main(outDir):
    schemas = latestSchemas()
    td, table = [], []
    td.append("//===- GraphOnnxOps.td - generated from ONNX op schemas ---*- tablegen -*-===//")
    td.append("//")
    td.append("// GENERATED by tools/gen_graph_ops.py from the ONNX schema registry")
    td.append(f"// (opset <= {MAX_OPSET}). Do not edit by hand: change the generator.")
    td.append("//")
    td.append("//===----------------------------------------------------------------------===//")
    td.append("")
    td.append("#ifndef MLCC_GRAPH_ONNX_OPS")
    td.append("#define MLCC_GRAPH_ONNX_OPS")
    td.append("")
    td.append('include "GraphBase.td"')
    td.append("")
    for s in schemas:
        mn = mnemonic(s.name)
        ins, varIn = operandList(s.inputs)
        inNames = {p.name for p in s.inputs}
        outs, varOut = operandList(s.outputs, inNames)
        attrs = []
        for a in sorted(s.attributes.values(), key=lambda a: a.name):
            if a.type not in ATTR_TYPES or a.name in inNames:
                continue
            attrs.append(f"OptionalAttr<{ATTR_TYPES[a.type]}>:${a.name}")
        args = ",\n    ".join(ins + attrs)
        doc = odsText(s.doc or "")
        td.append(f"// graph.{mn}  (ONNX {s.name}-{s.since_version})")
        td.append(f'def Graph_{s.name}Op : Graph_OnnxOp<"{mn}", "{s.name}"> {{')
        td.append(f'  let summary = "{summaryOf(s.doc or s.name)}";')
        td.append("  let description = [{")
        td.append(f"    The ONNX `{s.name}` operator (opset {s.since_version}). Absent optional")
        td.append("    inputs are `none` values from `graph.none`; attributes left out take")
        td.append("    their ONNX defaults.")
        td.append("")
        td.append("    Example:")
        operandsEx = ", ".join(f"%{p.name.lower()}" for p in s.inputs)
        td.append("    ```mlir")
        td.append(f"    %r = graph.{mn} {operandsEx} : (...) -> ...")
        td.append("    ```")
        td.append("")
        td.append("    ONNX documentation:")
        td.append("")
        td.append(doc)
        td.append("  }];")
        td.append(f"  let arguments = (ins\n    {args}\n  );" if args else "  let arguments = (ins);")
        td.append(f"  let results = (outs\n    {', '.join(outs)}\n  );")
        if s.name in VERIFIED:
            td.append("  let hasVerifier = 1;")
        td.append("}")
        td.append("")
        table.append(
            f'  {{"{s.name}", "{mn}", {s.since_version}, {len(s.inputs)}, '
            f'{len(s.outputs)}, {str(varIn).lower()}, {str(varOut).lower()}}},'
        )
    td.append("#endif // MLCC_GRAPH_ONNX_OPS")
    with open(f"{outDir}/GraphOnnxOps.td", "w") as f:
        f.write("\n".join(td) + "\n")
    with open(f"{outDir}/GraphOnnxOpTable.inc", "w") as f:
        f.write("// GENERATED by tools/gen_graph_ops.py. Do not edit by hand.\n")
        f.write("// {onnx op type, graph mnemonic, schema version, #inputs, #outputs,\n")
        f.write("//  last input variadic, last output variadic}\n")
        f.write("\n".join(table) + "\n")
    print(f"{len(schemas)} ops")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
