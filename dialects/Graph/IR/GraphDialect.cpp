//===- GraphDialect.cpp - graph dialect registration ----------------------===//

#include "GraphDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlcc::graph;

#include "GraphOpsDialect.cpp.inc"

void GraphDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "GraphOps.cpp.inc"
      >();
}

Operation *GraphDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  if (isa<NoneType>(type))
    return builder.create<NoneOp>(loc);
  if (auto elements = dyn_cast<ElementsAttr>(value))
    if (elements.getType() == type)
      return builder.create<ConstantOp>(loc, elements);
  return nullptr;
}

namespace {
const OnnxOpInfo kOnnxOps[] = {
#include "GraphOnnxOpTable.inc"
    // Newer than the generated table's opset 17; the op is in
    // GraphFusedOps.td.
    {"Gelu", "gelu", 20, 1, 1, false, false},
};
} // namespace

llvm::ArrayRef<OnnxOpInfo> mlcc::graph::allOnnxOps() { return kOnnxOps; }

std::string mlcc::graph::describeOp(Operation *op) {
  std::string s;
  if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
    s = "node '" + loc.getName().str() + "' ";
  return s + "(" + op->getName().getStringRef().str() + ")";
}

llvm::StringRef mlcc::graph::dimParamName(ArrayAttr dimParams, int64_t d) {
  if (!dimParams || d < 0 || d >= static_cast<int64_t>(dimParams.size()))
    return "";
  auto name = dyn_cast<StringAttr>(dimParams[d]);
  return name ? name.getValue() : "";
}

std::string mlcc::graph::describeType(Type type, ArrayAttr dimParams) {
  std::string s;
  llvm::raw_string_ostream os(s);
  auto ranked = dyn_cast<RankedTensorType>(type);
  bool named = false;
  for (int64_t d = 0; ranked && d < ranked.getRank(); ++d)
    named |= ranked.isDynamicDim(d) && !dimParamName(dimParams, d).empty();
  if (!named) {
    os << type;
    return os.str();
  }
  os << "tensor<";
  for (int64_t d = 0; d < ranked.getRank(); ++d) {
    llvm::StringRef name = dimParamName(dimParams, d);
    if (!ranked.isDynamicDim(d))
      os << ranked.getDimSize(d);
    else
      os << (name.empty() ? llvm::StringRef("?") : name);
    os << " x ";
  }
  os << ranked.getElementType() << ">";
  return os.str();
}

const OnnxOpInfo *mlcc::graph::lookupOnnxOp(llvm::StringRef onnxName) {
  static const llvm::StringMap<const OnnxOpInfo *> byName = [] {
    llvm::StringMap<const OnnxOpInfo *> m;
    for (const OnnxOpInfo &info : kOnnxOps)
      m[info.onnxName] = &info;
    return m;
  }();
  auto it = byName.find(onnxName);
  return it == byName.end() ? nullptr : it->second;
}

const OnnxOpInfo *mlcc::graph::lookupOnnxOpByMnemonic(llvm::StringRef mn) {
  static const llvm::StringMap<const OnnxOpInfo *> byMnemonic = [] {
    llvm::StringMap<const OnnxOpInfo *> m;
    for (const OnnxOpInfo &info : kOnnxOps)
      m[info.mnemonic] = &info;
    return m;
  }();
  auto it = byMnemonic.find(mn);
  return it == byMnemonic.end() ? nullptr : it->second;
}
