//===- ElementwiseUtils.h - Helpers of the elementwise family ---*- C++ -*-===//
//
// The elementwise lowerings (Elementwise.cpp, ElementwiseBinary.cpp,
// ElementwiseCast.cpp) all emit one linalg.generic over the result buffer
// whose inputs are read through ONNX (numpy) broadcasting maps, with a
// scalar body. This header holds what they share: the dtype view of a graph
// value (tensor type with signedness, storage type, compute type), the
// scalar conversions that follow the reference kernels
// (compiler/Reference/Kernels/ElementwiseUtils.h), and the generic builder.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_PORTABLE_ELEMENTWISEUTILS_H
#define MLCC_LOWERING_COMMON_PORTABLE_ELEMENTWISEUTILS_H

#include "PortableLowering.h"
#include "mlcc/Reference/TypeSets.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlcc::portable::ew {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// Classes of element types, as bits: the ONNX type constraints of an
/// operand are unions of them (those of the reference kernels).
using ref::TypeSet;
using ref::kFloat;
using ref::kSigned;
using ref::kUnsigned;
using ref::kBool;
using ref::kFloatOrSigned;
using ref::kNumeric;
using ref::kAny;

/// One element type as the lowerings see it.
struct ElemType {
  /// The tensor element type (ui8 keeps its signedness here).
  mlir::Type tensor;
  /// The buffers' element type (storageType(tensor)).
  mlir::Type storage;
  /// The type loop bodies compute in: f32 for f16 and bf16 (the reference
  /// kernels compute those in float), the storage type otherwise.
  mlir::Type compute;

  TypeSet typeClass() const;
  bool isFloat() const { return typeClass() == kFloat; }
  bool isSigned() const { return typeClass() == kSigned; }
  bool isUnsigned() const { return typeClass() == kUnsigned; }
  bool isBool() const { return typeClass() == kBool; }
  /// True for f16 and bf16, which are widened to f32 to compute.
  bool isNarrowFloat() const { return storage != compute; }
};

ElemType elemTypeOf(mlir::Type tensorElementType);
/// The element type of a graph value (a tensor).
ElemType elemTypeOf(mlir::Value graphValue);

/// Fails with an error on p.op unless operand `index` has a type in `set`.
mlir::LogicalResult checkOperandType(PortableOp &p, unsigned index,
                                     unsigned set);

/// Fails unless every operand in [0, count) is present.
mlir::LogicalResult checkPresent(PortableOp &p, unsigned count);

//===----------------------------------------------------------------------===//
// Scalar code
//===----------------------------------------------------------------------===//

/// A builder positioned inside a loop body, with short names for the
/// scalar ops the bodies are written in.
struct Scalar {
  mlir::OpBuilder &b;
  mlir::Location loc;

  /// A constant of `type` (float, or integer from the truncated value).
  mlir::Value cst(mlir::Type type, double v);
  /// An integer constant of `type` from a bit pattern.
  mlir::Value intCst(mlir::Type type, int64_t v);
  mlir::Value boolCst(bool v);

  /// Comparisons with the reference kernels' C++ meaning: ordered for
  /// floats (false on nan), signed or unsigned for integers by `t`.
  enum class Cmp { Eq, Ne, Lt, Le, Gt, Ge };
  mlir::Value cmp(Cmp kind, const ElemType &t, mlir::Value a, mlir::Value c);
  mlir::Value isNan(mlir::Value x);
  mlir::Value select(mlir::Value cond, mlir::Value a, mlir::Value c);

  /// Arithmetic on the compute type of `t` (integers wrap).
  mlir::Value add(const ElemType &t, mlir::Value a, mlir::Value c);
  mlir::Value sub(const ElemType &t, mlir::Value a, mlir::Value c);
  mlir::Value mul(const ElemType &t, mlir::Value a, mlir::Value c);
  mlir::Value div(mlir::Value a, mlir::Value c); // floats only
  mlir::Value andI(mlir::Value a, mlir::Value c);
  mlir::Value orI(mlir::Value a, mlir::Value c);

  /// Storage value -> compute value (widens f16/bf16).
  mlir::Value load(const ElemType &t, mlir::Value stored);
  /// Compute value -> storage value (rounds to f16/bf16 like the reference:
  /// to nearest even).
  mlir::Value store(const ElemType &t, mlir::Value computed);

  /// A compute value of type `t` as f64 (floats extend, integers convert
  /// by their signedness, bool is 0 or 1).
  mlir::Value toF64(const ElemType &t, mlir::Value v);
  /// An f64 as integer type `t`: toward zero, saturating at the limits,
  /// nan -> 0 (floatToIntSaturating of the reference).
  mlir::Value f64ToIntSaturating(const ElemType &t, mlir::Value d);
  /// The Cast conversion of a compute value of `from` to a compute value of
  /// `to` (see compiler/Reference/Kernels/Cast.cpp).
  mlir::Value convert(const ElemType &from, const ElemType &to, mlir::Value v);
};

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

/// The indexing map reading a buffer of `inShape` for the iteration space
/// `outShape` under multidirectional broadcasting: trailing dims aligned,
/// a size-1 dim that meets a larger one reads index 0.
mlir::AffineMap broadcastMap(mlir::MLIRContext *ctx,
                             llvm::ArrayRef<int64_t> inShape,
                             llvm::ArrayRef<int64_t> outShape);

/// Gets the storage values of the inputs at one point, returns the storage
/// values of the outputs there.
using BodyFn = llvm::function_ref<llvm::SmallVector<mlir::Value>(
    Scalar &s, mlir::ValueRange inputs)>;

/// Emits a linalg.generic over the shape of `outputs` (all the same shape)
/// reading `inputs` through `inputMaps` (broadcastMap when empty). Emits
/// nothing for an empty iteration space.
void buildElementwise(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::ValueRange inputs, mlir::ValueRange outputs,
                      BodyFn body,
                      llvm::ArrayRef<mlir::AffineMap> inputMaps = {});

/// Copies buffer `from` into `to` (same shape and element type).
void buildCopy(mlir::OpBuilder &b, mlir::Location loc, mlir::Value from,
               mlir::Value to);

/// Loads the single element of a one-element buffer (rank 0 or all dims 1).
mlir::Value loadScalar(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value buffer);

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

/// A float attribute, or `dflt` when absent. Rounded to float first, as the
/// reference kernels keep attributes in float.
double floatAttr(mlir::Operation *op, llvm::StringRef name, float dflt);
int64_t intAttr(mlir::Operation *op, llvm::StringRef name, int64_t dflt);

//===----------------------------------------------------------------------===//
// Sub-family registration (one .cpp each)
//===----------------------------------------------------------------------===//

void registerUnary(PortableRegistry &registry);  // Elementwise.cpp
void registerBinary(PortableRegistry &registry); // ElementwiseBinary.cpp
void registerCast(PortableRegistry &registry);   // ElementwiseCast.cpp

} // namespace mlcc::portable::ew

#endif // MLCC_LOWERING_COMMON_PORTABLE_ELEMENTWISEUTILS_H
