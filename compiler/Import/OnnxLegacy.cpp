//===- OnnxLegacy.cpp - older opset forms -> current form -----------------===//
//
// The graph dialect holds the newest form of each op (opset <= 17). Models of
// older opsets pass some operands as attributes (Slice-1 starts, Pad-2 pads,
// Clip-6 min/max, ...) or use other semantics (Softmax before 13 flattens to
// 2-D). Those nodes are rewritten here, so kernels and backends see one form.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"

#include "GraphDialect.h"

using namespace mlir;

namespace mlcc::onnximport {

namespace {

/// Removes attribute `name` from `attrs`, returning it (null if absent).
Attribute takeAttr(SmallVectorImpl<NamedAttribute> &attrs, StringRef name) {
  for (auto it = attrs.begin(); it != attrs.end(); ++it)
    if (it->getName() == name) {
      Attribute a = it->getValue();
      attrs.erase(it);
      return a;
    }
  return nullptr;
}

/// The values of an ints attribute; false when `a` is of another kind.
bool intsOf(Attribute a, SmallVector<int64_t> &v) {
  auto arr = dyn_cast<ArrayAttr>(a);
  if (!arr)
    return false;
  for (Attribute e : arr) {
    auto i = dyn_cast<IntegerAttr>(e);
    if (!i)
      return false;
    v.push_back(i.getInt());
  }
  return true;
}

/// Element type of `v`, or null (also for no value).
Type elementTypeOf(Value v) {
  if (auto t = dyn_cast_or_null<ShapedType>(v ? v.getType() : Type()))
    return t.getElementType();
  return nullptr;
}

} // namespace

bool GraphImporter::upgradeLegacyForm(const onnx::NodeProto &node,
                                      SmallVectorImpl<Value> &operands,
                                      SmallVectorImpl<NamedAttribute> &attrs,
                                      NameScope &scope, bool &handled) {
  const std::string &type = node.op_type();
  int64_t v = opset();
  Value first = operands.empty() ? Value() : operands[0];
  // The attributes come from the model: one of the wrong kind is its
  // error (recorded here), never a cast that cannot hold.
  bool kindsOk = true;
  auto wrongKind = [&](StringRef name, const char *expected) {
    nodeError(node, "attribute '" + name.str() + "' must be " + expected);
    kindsOk = false;
  };
  // Moves an ints attribute into operand slot `index` as an i64 constant,
  // filling skipped slots with none.
  auto attrToOperand = [&](StringRef name, size_t index, bool scalar = false) {
    Attribute a = takeAttr(attrs, name);
    if (!a)
      return;
    SmallVector<int64_t> ints;
    if (!intsOf(a, ints))
      return wrongKind(name, "a list of ints");
    while (operands.size() < index)
      operands.push_back(none());
    Value c = constI64(ints, scalar);
    if (operands.size() == index)
      operands.push_back(c);
    else
      operands[index] = c;
  };
  auto floatAttrToOperand = [&](StringRef name, size_t index, Type eltType) {
    Attribute a = takeAttr(attrs, name);
    if (!a)
      return;
    while (operands.size() <= index)
      operands.push_back(none());
    auto f = dyn_cast<FloatAttr>(a);
    if (!f)
      return wrongKind(name, "a float");
    double value = f.getValueAsDouble();
    ref::DType dtype = ref::DType::F32;
    if (eltType && eltType.isF64())
      dtype = ref::DType::F64;
    else if (eltType && eltType.isF16())
      dtype = ref::DType::F16;
    operands[index] =
        constant(ref::Tensor::fromVector<double>(dtype, {}, {value}));
  };

  if (type == "Slice" && v < 10) {
    attrToOperand("starts", 1);
    attrToOperand("ends", 2);
    attrToOperand("axes", 3);
  } else if (type == "Pad" && v < 11) {
    attrToOperand("pads", 1);
    floatAttrToOperand("value", 2, elementTypeOf(first));
  } else if (type == "Clip" && v < 11) {
    Type elt = elementTypeOf(first);
    floatAttrToOperand("min", 1, elt);
    floatAttrToOperand("max", 2, elt);
  } else if ((type == "Squeeze" || type == "Unsqueeze") && v < 13) {
    attrToOperand("axes", 1);
  } else if (type == "ReduceSum" && v < 13) {
    attrToOperand("axes", 1);
  } else if (type == "Split" && v < 13) {
    attrToOperand("split", 1);
  } else if (type == "TopK" && v < 10) {
    if (Attribute k = takeAttr(attrs, "k")) {
      if (auto i = dyn_cast<IntegerAttr>(k))
        operands.push_back(constI64({i.getInt()}));
      else
        wrongKind("k", "an int");
    }
  } else if (type == "Dropout" && v < 12) {
    takeAttr(attrs, "ratio"); // inference: dropout is the identity anyway
    takeAttr(attrs, "is_test");
  } else if (type == "RoiAlign" && v < 16) {
    // RoiAlign-10 behaves as output_half_pixel; 16 made half_pixel the default.
    Attribute mode = takeAttr(attrs, "coordinate_transformation_mode");
    attrs.push_back(builder().getNamedAttr(
        "coordinate_transformation_mode",
        mode ? mode : builder().getStringAttr("output_half_pixel")));
  } else if (type == "Resize" && v < 11) {
    // Resize-10: (X, scales) -> (X, roi, scales, sizes).
    if (operands.size() == 2)
      operands.insert(operands.begin() + 1, none());
  } else if (type == "Upsample" && v < 9) {
    Attribute scales = takeAttr(attrs, "scales");
    auto list = dyn_cast_or_null<ArrayAttr>(scales);
    if (scales && (!list || !llvm::all_of(list, llvm::IsaPred<FloatAttr>)))
      wrongKind("scales", "a list of floats");
    else if (scales) {
      std::vector<float> s;
      for (Attribute e : list)
        s.push_back(cast<FloatAttr>(e).getValueAsDouble());
      operands.push_back(constant(ref::Tensor::fromVector(
          ref::DType::F32, {static_cast<int64_t>(s.size())}, s)));
    }
  } else if ((type == "Softmax" || type == "LogSoftmax" ||
              type == "Hardmax") &&
             v < 13) {
    // Before opset 13 these flatten the input to 2-D at `axis` (default 1)
    // and work on the second dim: flatten, apply on axis -1, reshape back.
    Attribute axisAttr = takeAttr(attrs, "axis");
    if (axisAttr && !isa<IntegerAttr>(axisAttr)) {
      wrongKind("axis", "an int");
      return false;
    }
    if (operands.size() != 1 || node.output_size() != 1) {
      nodeError(node, "expected one input and one output");
      return false;
    }
    int64_t axis = axisAttr ? cast<IntegerAttr>(axisAttr).getInt() : 1;
    OpBuilder &b = builder();
    auto flatAttr = b.getNamedAttr("axis", b.getI64IntegerAttr(axis));
    onnx::NodeProto inner = node;
    inner.clear_output();
    inner.add_output(node.output(0) + "__flat");
    Operation *flat = createOp(inner, "flatten", {operands[0]}, {flatAttr}, 1);
    if (!flat)
      return false;
    std::string mn = type == "Softmax"      ? "softmax"
                     : type == "LogSoftmax" ? "log_softmax"
                                            : "hardmax";
    inner.set_output(0, node.output(0) + "__2d");
    Operation *op = createOp(inner, mn, {flat->getResult(0)},
                             {b.getNamedAttr("axis", b.getI64IntegerAttr(-1))},
                             1);
    if (!op)
      return false;
    inner.set_output(0, node.output(0) + "__shape");
    Operation *shape = createOp(inner, "shape", {operands[0]}, {}, 1);
    if (!shape)
      return false;
    Operation *back = createOp(node, "reshape",
                               {op->getResult(0), shape->getResult(0)}, {}, 1);
    if (!back)
      return false;
    bindOutputs(node, back, scope);
    handled = true;
  }
  return kindsOk;
}

} // namespace mlcc::onnximport
