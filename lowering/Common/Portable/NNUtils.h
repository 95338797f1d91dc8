//===- NNUtils.h - Shared pieces of the NN portable lowerings ---*- C++ -*-===//
//
// Helpers used by the matmul, conv, pool and quantization lowerings: ONNX
// attribute access with defaults, scalar conversions that honour the
// signedness of the graph's tensor types, a linalg.generic builder that
// skips absent operands, scratch buffers, and the conv/pool window
// arithmetic (strides, dilations, pads, auto_pad, ceil_mode) mirrored from
// the reference kernels (compiler/Reference/Kernels/ConvPoolUtils.h).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_PORTABLE_NNUTILS_H
#define MLCC_LOWERING_COMMON_PORTABLE_NNUTILS_H

#include "PortableLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinTypes.h"

#include <string>

namespace mlcc::portable::nn {

//===----------------------------------------------------------------------===//
// Attributes (an absent attribute is the ONNX default)
//===----------------------------------------------------------------------===//

int64_t intAttr(mlir::Operation *op, llvm::StringRef name, int64_t dflt);
double floatAttr(mlir::Operation *op, llvm::StringRef name, double dflt);
std::string stringAttr(mlir::Operation *op, llvm::StringRef name,
                       llvm::StringRef dflt);
/// An integer array attribute; empty when absent.
llvm::SmallVector<int64_t> intsAttr(mlir::Operation *op, llvm::StringRef name);

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

/// Element type of a graph value (signedness kept) or of a memref.
mlir::Type elementTypeOf(mlir::Value v);
llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);
int64_t numElements(llvm::ArrayRef<int64_t> shape);
bool isUnsignedInt(mlir::Type t);
/// f16 and bf16: computed in f32 and rounded once at the end, as the
/// reference kernels do.
bool isHalfFloat(mlir::Type t);
/// The type arithmetic is done in for a tensor element type: f32 for the
/// 16-bit floats, the storage type otherwise.
mlir::Type computeType(mlir::Type tensorElementType);

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

/// A constant of storage type `t` (float, integer or index) holding `v`.
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc, mlir::Type t,
                           double v);
/// The lowest finite value of `t` (the max reductions start there).
mlir::Value lowestConstant(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Type tensorElementType);
/// Converts `v` from tensor element type `from` to `to` (float/int widths,
/// int <-> float with the signedness of the integer side). The result has
/// storageType(to).
mlir::Value convertScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                          mlir::Type from, mlir::Type to);
mlir::Value addValues(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::Value y);
mlir::Value subValues(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::Value y);
mlir::Value mulValues(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::Value y);
/// Loads element 0 of a buffer of any rank (a scalar parameter).
mlir::Value loadFirst(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::Value buffer);
/// ONNX requantization of an f32 value into an 8/16-bit integer:
/// round half to even, add the zero point (f32 holding an integer),
/// saturate into [lo, hi]; NaN gives the zero point. Returns the storage
/// integer of `outType` (a tensor element type).
mlir::Value requantize(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                       mlir::Value zeroPoint, mlir::Type outType);
/// Saturation range of a quantized integer type.
void quantRange(mlir::Type t, double &lo, double &hi);

//===----------------------------------------------------------------------===//
// Loops and buffers
//===----------------------------------------------------------------------===//

/// Collects the inputs/outputs of one linalg.generic with their indexing
/// maps; null buffers (absent optional operands) are skipped and get
/// index -1, so bodies can test for them.
class GenericBuilder {
public:
  explicit GenericBuilder(unsigned numDims) : numDims(numDims) {}

  /// Adds an input read through `exprs`; returns its block argument index
  /// or -1 for a null buffer. All inputs must come before the outputs.
  int addInput(mlir::Value buffer, llvm::ArrayRef<mlir::AffineExpr> exprs);
  /// Adds an output (read-modify-write) written through `exprs`.
  int addOutput(mlir::Value buffer, llvm::ArrayRef<mlir::AffineExpr> exprs);
  void setReduction(unsigned dim) { reductions.push_back(dim); }

  /// Emits the op; `body` gets the block arguments and yields one value
  /// per output.
  void build(mlir::OpBuilder &b, mlir::Location loc,
             llvm::function_ref<llvm::SmallVector<mlir::Value>(
                 mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>
                 body);

private:
  unsigned numDims;
  llvm::SmallVector<mlir::Value> inputs, outputs;
  llvm::SmallVector<mlir::AffineMap> inMaps, outMaps;
  llvm::SmallVector<unsigned> reductions;
};

/// 0, 1, ..., rank - 1: every loop dim, for dimExprs.
llvm::SmallVector<unsigned> allDims(unsigned rank);
/// Affine dim expressions d0..d(n-1) picked by `dims`.
llvm::SmallVector<mlir::AffineExpr> dimExprs(mlir::MLIRContext *ctx,
                                             llvm::ArrayRef<unsigned> dims);
/// Indexing expressions for a per-tensor or per-axis parameter (scale,
/// zero point): none for a 0-D buffer, the constant 0 for one element,
/// `axisDim` otherwise.
llvm::SmallVector<mlir::AffineExpr> paramExprs(mlir::MLIRContext *ctx,
                                               mlir::Value buffer,
                                               mlir::AffineExpr axisDim);

/// Temporary buffers of one lowering: allocated on the heap (they can be
/// large) and freed by release() once the op's code is emitted.
class Scratch {
public:
  Scratch(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}
  ~Scratch() { release(); }
  mlir::Value alloc(llvm::ArrayRef<int64_t> shape, mlir::Type elementType);
  void release();

private:
  mlir::OpBuilder &b;
  mlir::Location loc;
  llvm::SmallVector<mlir::Value> buffers;
};

void fillBuffer(mlir::OpBuilder &b, mlir::Location loc, mlir::Value buffer,
                mlir::Value value);
/// dst = convert(src) elementwise (same shapes; dst may be a subview).
void copyBuffer(mlir::OpBuilder &b, mlir::Location loc, mlir::Value src,
                mlir::Value dst,
                llvm::function_ref<mlir::Value(mlir::OpBuilder &,
                                               mlir::Location, mlir::Value)>
                    convert = nullptr);
/// A static subview of `buffer` at `offsets` of `sizes` (unit strides).
mlir::Value subview(mlir::OpBuilder &b, mlir::Location loc, mlir::Value buffer,
                    llvm::ArrayRef<int64_t> offsets,
                    llvm::ArrayRef<int64_t> sizes);

/// The accumulator of a lowering whose result is `result` (tensor element
/// type `type`): the result itself, or an f32 scratch buffer for f16/bf16
/// results, rounded into the result by finish().
struct Accumulator {
  mlir::Value buffer, result;
  mlir::Type tensorType;
  bool separate = false;

  static Accumulator create(Scratch &scratch, mlir::Value result,
                            mlir::Type tensorType);
  void finish(mlir::OpBuilder &b, mlir::Location loc) const;
};

//===----------------------------------------------------------------------===//
// Conv and pool windows
//===----------------------------------------------------------------------===//

int64_t floorDiv(int64_t a, int64_t b);
int64_t ceilDiv(int64_t a, int64_t b);

/// A sliding window along the spatial dims.
struct Window {
  llvm::SmallVector<int64_t> kernel, strides, dilations, padBegin, padEnd;

  size_t rank() const { return kernel.size(); }
  /// Extent of the dilated kernel along dim i.
  int64_t span(size_t i) const { return (kernel[i] - 1) * dilations[i] + 1; }
};

/// Reads strides, dilations and pads around `kernel` and resolves auto_pad
/// against the input spatial dims `in`, as the reference does; `out` gets
/// the output spatial dims (ceil_mode drops a last window starting in the
/// end padding).
mlir::LogicalResult readWindow(mlir::Operation *op, llvm::ArrayRef<int64_t> in,
                               llvm::ArrayRef<int64_t> kernel, bool ceilMode,
                               Window &w, llvm::SmallVector<int64_t> &out);

/// Per spatial dim, the length a padded input copy needs so that every
/// window tap of `outDims` lands inside it with the input at padBegin.
llvm::SmallVector<int64_t> paddedLengths(llvm::ArrayRef<int64_t> in,
                                         llvm::ArrayRef<int64_t> outDims,
                                         const Window &w);

/// `x` [N, C, S...] copied into a new buffer [N, C, lengths...] of storage
/// type `elementType` at offsets padBegin, the rest `padValue`; `convert`
/// maps each element (null: none). Returns `x` itself when no padding and
/// no conversion are needed.
mlir::Value
padInput(mlir::OpBuilder &b, mlir::Location loc, Scratch &scratch,
         mlir::Value x, llvm::ArrayRef<int64_t> padBegin,
         llvm::ArrayRef<int64_t> lengths, mlir::Type elementType,
         mlir::Value padValue,
         llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                        mlir::Value)>
             convert = nullptr);

/// conv_transpose's window: the kernel from the weight's dims, strides,
/// dilations and pads resolved against auto_pad, output_shape and
/// output_padding, checked against the result's dims `ys` (NNConv.cpp).
/// Emits an error on `op` when they do not agree.
mlir::LogicalResult convTransposeWindow(mlir::Operation *op,
                                        llvm::ArrayRef<int64_t> xs,
                                        llvm::ArrayRef<int64_t> ws,
                                        llvm::ArrayRef<int64_t> ys,
                                        Window &win);

//===----------------------------------------------------------------------===//
// Registration of the family's parts (NNConv.cpp, NNPool.cpp, Quant.cpp,
// NNEinsum.cpp)
//===----------------------------------------------------------------------===//

void registerConvLowerings(PortableRegistry &registry);
void registerPoolLowerings(PortableRegistry &registry);
void registerQuantLowerings(PortableRegistry &registry);
void registerEinsumLowering(PortableRegistry &registry);

} // namespace mlcc::portable::nn

#endif // MLCC_LOWERING_COMMON_PORTABLE_NNUTILS_H
