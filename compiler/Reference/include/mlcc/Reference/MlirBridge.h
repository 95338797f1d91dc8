//===- MlirBridge.h - MLIR attributes and types <-> host values -*- C++ -*-===//
//
// The one place where graph-dialect types and attributes become reference
// tensors and attribute maps, and back: used by the executor, the constant
// folder, shape inference and the importer.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_REFERENCE_MLIRBRIDGE_H
#define MLCC_REFERENCE_MLIRBRIDGE_H

#include "mlcc/Reference/Kernel.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

namespace mlcc {

/// Undefined for element types the reference executor does not handle.
ref::DType dtypeFromMlir(mlir::Type elementType);
mlir::Type mlirTypeFromDType(mlir::MLIRContext *ctx, ref::DType dtype);
/// tensor<d0 x d1 x ... x elt>, kDynamic dims become `?`.
mlir::RankedTensorType tensorTypeFor(mlir::MLIRContext *ctx, ref::DType dtype,
                                     const ref::Shape &shape);

ref::Status tensorFromElementsAttr(mlir::ElementsAttr attr, ref::Tensor &out);
/// Large tensors become dense resources (stored once, not uniqued).
mlir::ElementsAttr elementsAttrFromTensor(mlir::MLIRContext *ctx,
                                          const ref::Tensor &tensor);

/// All attributes of `op`, inherent and discardable, as plain values.
ref::Attrs attrsFromOp(mlir::Operation *op);
ref::Attrs attrsFromList(llvm::ArrayRef<mlir::NamedAttribute> attrs);

/// What is statically known of `value`: dtype and shape from its type
/// (Undefined dtype for `none`), and its data when `value` comes from a
/// small graph.constant (stored in `storage`, which must outlive the result).
ref::ValueInfo valueInfoOf(mlir::Value value, ref::Tensor &storage);

} // namespace mlcc

#endif // MLCC_REFERENCE_MLIRBRIDGE_H
