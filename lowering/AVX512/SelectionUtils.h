//===- SelectionUtils.h - What kernel selection asks of an op ---*- C++ -*-===//

#ifndef MLCC_LOWERING_AVX512_SELECTIONUTILS_H
#define MLCC_LOWERING_AVX512_SELECTIONUTILS_H

#include "KernelSelection.h"
#include "mlcc/Reference/MlirBridge.h"
#include "mlcc/Reference/Status.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <string>
#include <vector>

namespace mlcc::avx512 {

inline bool isF32Tensor(mlir::Value v) {
  auto t = mlir::dyn_cast<mlir::RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getElementType().isF32();
}

inline llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
  return mlir::cast<mlir::ShapedType>(v.getType()).getShape();
}

inline int64_t numElements(mlir::Value v) {
  return mlir::cast<mlir::ShapedType>(v.getType()).getNumElements();
}

inline int64_t intAttr(mlir::Operation *op, llvm::StringRef name,
                       int64_t fallback) {
  if (auto a = op->getAttrOfType<mlir::IntegerAttr>(name))
    return a.getInt();
  return fallback;
}

inline float floatAttr(mlir::Operation *op, llvm::StringRef name,
                       float fallback) {
  if (auto a = op->getAttrOfType<mlir::FloatAttr>(name))
    return static_cast<float>(a.getValueAsDouble());
  return fallback;
}

inline std::vector<int64_t> intsAttr(mlir::Operation *op,
                                     llvm::StringRef name) {
  std::vector<int64_t> out;
  if (auto a = op->getAttrOfType<mlir::ArrayAttr>(name))
    for (mlir::Attribute e : a)
      out.push_back(mlir::cast<mlir::IntegerAttr>(e).getInt());
  return out;
}

inline std::string stringAttr(mlir::Operation *op, llvm::StringRef name,
                              llvm::StringRef fallback) {
  if (auto a = op->getAttrOfType<mlir::StringAttr>(name))
    return a.str();
  return fallback.str();
}

/// The ONNX node name when the importer kept it, else the op's mnemonic:
/// names kernels and error messages.
inline std::string nodeName(mlir::Operation *op) {
  if (auto loc = mlir::dyn_cast<mlir::NameLoc>(op->getLoc()))
    return loc.getName().str();
  return op->getName().stripDialect().str();
}

/// The f32 values of a constant operand (dense or dense_resource).
inline bool constantFloats(OpLoweringContext &ctx, mlir::Value v,
                           std::vector<float> &values) {
  mlir::ElementsAttr attr = ctx.constantValue(v);
  ref::Tensor t;
  if (!attr || !attr.getElementType().isF32() ||
      tensorFromElementsAttr(attr, t).failed())
    return false;
  values.assign(t.data<float>(), t.data<float>() + t.numel());
  return true;
}

/// The single f32 value of a constant operand, if it is one.
inline bool constantScalar(OpLoweringContext &ctx, mlir::Value v,
                           float &value) {
  std::vector<float> values;
  if (!constantFloats(ctx, v, values) || values.size() != 1)
    return false;
  value = values[0];
  return true;
}

/// Generates a kernel for `spec` with `generator` (generateConv, ...) and
/// adds it to the model as `name` (its symbol in `symbol`); false, with the
/// generator's error reported on `op`, when that fails.
template <typename Spec, typename Generator>
bool addGeneratedKernel(mlir::Operation *op, OpLoweringContext &ctx,
                        Generator generator, const Spec &spec,
                        const std::string &name, std::string &symbol) {
  std::vector<uint8_t> code;
  if (ref::Status s = generator(spec, code); s.failed()) {
    op->emitError() << s.message();
    return false;
  }
  symbol = ctx.addKernel(name, std::move(code));
  return true;
}

/// Reports a generator failure on the op.
inline TargetLowering failed(mlir::Operation *op, const ref::Status &s) {
  op->emitError() << s.message();
  return TargetLowering::Failed;
}

/// With a range of lengths, for an op that may skip the positions past the
/// run's length (graph::kPaddedAxisAttr): how many of the `rows` that `v`
/// (an operand or result with the dim at the attribute's axis) is flattened
/// to, before its last dim, hold positions before the length: an i64, when
/// they are the first rows (every dim before the axis is 1 and the axis is
/// not the last). Null otherwise: the op computes every row.
mlir::Value lengthRows(mlir::Operation *op, OpLoweringContext &ctx,
                       mlir::Value v, int64_t rows);

/// Bytes of a float vector, for OpLoweringContext::addData.
inline std::vector<uint8_t> bytesOf(const std::vector<float> &v) {
  const auto *p = reinterpret_cast<const uint8_t *>(v.data());
  return std::vector<uint8_t>(p, p + v.size() * sizeof(float));
}

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_SELECTIONUTILS_H
