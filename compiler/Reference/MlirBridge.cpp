//===- MlirBridge.cpp - MLIR attributes and types <-> host values ---------===//

#include "mlcc/Reference/MlirBridge.h"

#include "GraphDialect.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;

namespace mlcc {

using ref::DType;

DType dtypeFromMlir(Type t) {
  if (t.isF32())
    return DType::F32;
  if (t.isF64())
    return DType::F64;
  if (t.isF16())
    return DType::F16;
  if (t.isBF16())
    return DType::BF16;
  auto it = dyn_cast<IntegerType>(t);
  if (!it)
    return DType::Undefined;
  bool isUnsigned = it.isUnsigned();
  switch (it.getWidth()) {
  case 1:
    return DType::Bool;
  case 8:
    return isUnsigned ? DType::U8 : DType::I8;
  case 16:
    return isUnsigned ? DType::U16 : DType::I16;
  case 32:
    return isUnsigned ? DType::U32 : DType::I32;
  case 64:
    return isUnsigned ? DType::U64 : DType::I64;
  default:
    return DType::Undefined;
  }
}

Type mlirTypeFromDType(MLIRContext *ctx, DType d) {
  Builder b(ctx);
  auto u = [&](unsigned w) {
    return IntegerType::get(ctx, w, IntegerType::Unsigned);
  };
  switch (d) {
  case DType::F32: return b.getF32Type();
  case DType::F64: return b.getF64Type();
  case DType::F16: return b.getF16Type();
  case DType::BF16: return b.getBF16Type();
  case DType::I8: return b.getIntegerType(8);
  case DType::U8: return u(8);
  case DType::I16: return b.getIntegerType(16);
  case DType::U16: return u(16);
  case DType::I32: return b.getIntegerType(32);
  case DType::U32: return u(32);
  case DType::I64: return b.getIntegerType(64);
  case DType::U64: return u(64);
  case DType::Bool: return b.getI1Type();
  case DType::Undefined: break;
  }
  return NoneType::get(ctx);
}

RankedTensorType tensorTypeFor(MLIRContext *ctx, DType dtype,
                               const ref::Shape &shape) {
  llvm::SmallVector<int64_t> dims;
  for (int64_t d : shape)
    dims.push_back(d == ref::kDynamic ? ShapedType::kDynamic : d);
  return RankedTensorType::get(dims, mlirTypeFromDType(ctx, dtype));
}

static ref::Shape shapeOf(ShapedType type) {
  ref::Shape shape;
  for (int64_t d : type.getShape())
    shape.push_back(ShapedType::isDynamic(d) ? ref::kDynamic : d);
  return shape;
}

ref::Status tensorFromElementsAttr(ElementsAttr attr, ref::Tensor &out) {
  auto type = cast<ShapedType>(attr.getType());
  DType dtype = dtypeFromMlir(type.getElementType());
  if (dtype == DType::Undefined)
    return ref::Status::error("constant of unsupported element type");
  ref::Tensor t(dtype, shapeOf(type));
  if (auto res = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob)
      return ref::Status::error("constant refers to a missing resource blob");
    ArrayRef<char> data = blob->getData();
    if (data.size() != t.byteSize())
      return ref::Status::error("resource blob holds ", data.size(),
                                " bytes, expected ", t.byteSize());
    std::memcpy(t.raw(), data.data(), data.size());
  } else if (auto dense = dyn_cast<DenseIntOrFPElementsAttr>(attr)) {
    if (dtype == DType::Bool) {
      int64_t i = 0;
      for (bool v : dense.getValues<bool>())
        t.data<bool>()[i++] = v;
    } else {
      ArrayRef<char> raw = dense.getRawData();
      size_t elt = ref::dtypeSize(dtype);
      if (dense.isSplat()) {
        for (int64_t i = 0; i < t.numel(); ++i)
          std::memcpy(t.data<char>() + i * elt, raw.data(), elt);
      } else if (t.byteSize() != 0) { // an empty one may have no data
        std::memcpy(t.raw(), raw.data(), t.byteSize());
      }
    }
  } else {
    return ref::Status::error("unsupported constant attribute kind");
  }
  out = t;
  return ref::Status::success();
}

ElementsAttr elementsAttrFromTensor(MLIRContext *ctx, const ref::Tensor &t) {
  RankedTensorType type = tensorTypeFor(ctx, t.dtype(), t.shape());
  if (t.dtype() == DType::Bool) {
    llvm::SmallVector<bool> values(t.data<bool>(), t.data<bool>() + t.numel());
    return DenseElementsAttr::get(type, llvm::ArrayRef<bool>(values));
  }
  ArrayRef<char> bytes(static_cast<const char *>(t.raw()), t.byteSize());
  // Below this size, readable dense<...> text is worth the uniquing.
  constexpr size_t kResourceThreshold = 1024;
  if (t.byteSize() > kResourceThreshold)
    return DenseResourceElementsAttr::get(
        type, "mlcc_const",
        HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, 64,
                                                      /*dataIsMutable=*/false));
  return DenseElementsAttr::getFromRawBuffer(type, bytes);
}

static bool attrToValue(Attribute a, ref::AttrValue &out) {
  if (auto i = dyn_cast<IntegerAttr>(a)) {
    out = static_cast<int64_t>(i.getValue().getSExtValue());
    return true;
  }
  if (auto f = dyn_cast<FloatAttr>(a)) {
    out = static_cast<float>(f.getValueAsDouble());
    return true;
  }
  if (auto s = dyn_cast<StringAttr>(a)) {
    out = s.getValue().str();
    return true;
  }
  if (auto arr = dyn_cast<DenseI64ArrayAttr>(a)) {
    out = std::vector<int64_t>(arr.asArrayRef().begin(), arr.asArrayRef().end());
    return true;
  }
  if (auto arr = dyn_cast<ArrayAttr>(a)) {
    if (arr.empty()) {
      out = std::vector<int64_t>();
      return true;
    }
    if (isa<IntegerAttr>(arr[0])) {
      std::vector<int64_t> v;
      for (Attribute e : arr)
        v.push_back(cast<IntegerAttr>(e).getValue().getSExtValue());
      out = v;
      return true;
    }
    if (isa<FloatAttr>(arr[0])) {
      std::vector<float> v;
      for (Attribute e : arr)
        v.push_back(static_cast<float>(cast<FloatAttr>(e).getValueAsDouble()));
      out = v;
      return true;
    }
    if (isa<StringAttr>(arr[0])) {
      std::vector<std::string> v;
      for (Attribute e : arr)
        v.push_back(cast<StringAttr>(e).getValue().str());
      out = v;
      return true;
    }
    return false;
  }
  if (auto e = dyn_cast<ElementsAttr>(a)) {
    ref::Tensor t;
    if (tensorFromElementsAttr(e, t).failed())
      return false;
    out = t;
    return true;
  }
  return false;
}

ref::Attrs attrsFromOp(Operation *op) {
  return attrsFromList(op->getAttrDictionary().getValue());
}

ref::Attrs attrsFromList(ArrayRef<NamedAttribute> list) {
  ref::Attrs attrs;
  for (NamedAttribute na : list) {
    ref::AttrValue v;
    if (attrToValue(na.getValue(), v))
      attrs.set(na.getName().str(), std::move(v));
  }
  return attrs;
}

ref::ValueInfo valueInfoOf(Value value, ref::Tensor &storage) {
  ref::ValueInfo info;
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return info;
  info.dtype = dtypeFromMlir(type.getElementType());
  info.shape = shapeOf(type);
  // Shape helpers only read small shape-like operands; skip copying weights.
  constexpr int64_t kMaxValueElements = 1 << 16;
  if (auto cst = value.getDefiningOp<graph::ConstantOp>())
    if (type.getNumElements() <= kMaxValueElements &&
        tensorFromElementsAttr(cst.getValue(), storage).ok())
      info.value = &storage;
  return info;
}

} // namespace mlcc
