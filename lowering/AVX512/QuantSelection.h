//===- QuantSelection.h - What the int8 selectors share ---------*- C++ -*-===//
//
// Reading quantised operands (int8 tensors, constant zero points and
// scales) and emitting one int8 GEMM (GemmInt8.h) for a planned matmul:
// SelectQuantGemm.cpp (MatMulInteger, QLinearMatMul) and SelectQdqGemm.cpp
// (f32 MatMul/Gemm between DequantizeLinear ops) plan, this emits.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_QUANTSELECTION_H
#define MLCC_LOWERING_AVX512_QUANTSELECTION_H

#include "GemmInt8.h"
#include "KernelSelection.h"

#include <cstdint>
#include <vector>

namespace mlcc::avx512 {

/// A static 8-bit integer tensor (i8, si8 or ui8).
bool isInt8Tensor(mlir::Value v);
bool isUnsignedTensor(mlir::Value v);

/// A scale or zero point of one value, or one per slice (`slices`: N
/// columns, OC channels).
inline bool oneOrPerSlice(size_t count, int64_t slices) {
  return count == 1 || static_cast<int64_t>(count) == slices;
}

/// The values of a constant 8-bit integer operand; `none` gives {0}.
bool constantInts(OpLoweringContext &ctx, mlir::Value v,
                  std::vector<int32_t> &out);

/// A B, zero points or scales that are graph inputs: the model's code
/// packs B with them (mlcc_int8_pack_b, mlcc/int8_pack.h) when the op runs,
/// from these values' buffers (null: none, which reads as 0 or 1).
struct RuntimeOperands {
  /// B[k][n] is element k * strideK + n * strideN of b's buffer.
  mlir::Value b;
  int64_t strideK = 0, strideN = 1;
  mlir::Value aZero, bZero, aScale, bScale, yScale, yZero, intBias;
};

/// A [rows x K] (A's leading dims are rows) x B [K x N] constant, int32
/// accumulators, then the output's epilogue.
struct Int8GemmPlan {
  /// B and its quantisation are packed at run time from `runtime`; b, zb,
  /// za, scale, intBias and outputZero are then not read.
  bool packAtRunTime = false;
  RuntimeOperands runtime;
  /// Packed at run time: A, B and C hold this many matrices one after
  /// another (a batched matmul), each B packed before its product.
  int64_t batches = 1;
  /// bf16 x bf16 (Int8GemmSpec::bf16): B in bFloat, A a bf16 buffer.
  bool bf16 = false;
  /// The product may run on AMX tiles (useAmx); prepareInt8Gemm still
  /// keeps the VNNI kernel where the tiles cannot read A (a blocked A) or
  /// the kernel needs A's row sums.
  bool amx = false;
  std::vector<float> bFloat; // K x N
  mlir::Value a, result;
  bool signedA = false;
  int64_t m = 0, n = 0, k = 0;
  std::vector<int32_t> b; // K x N
  bool unsignedB = false;
  std::vector<int32_t> zb; // 1 or N
  int32_t za = 0;
  /// Per column (N), or empty: 1 and 0.
  std::vector<float> scale, bias;
  /// Per column (N), or empty: added to the int32 accumulators
  /// (QLinearConv's bias).
  std::vector<int32_t> intBias;
  /// Int8GemmSpec's layout of A and C (0: dense rows).
  int64_t lda = 0, aBlockStride = 0, ldc = 0, cBlockStride = 0;
  Int8GemmOutput output = Int8GemmOutput::Int32;
  int32_t outputZero = 0; // Int8GemmSpec::outputZero
  /// A variant of a range of lengths: the rows of the run's positions (an
  /// i64, lengthRows), at most m; null: m rows. Not on AMX tiles.
  mlir::Value rows;
  /// Float output: graph.fc's Z, laid out like the result; or null.
  mlir::Value residual;
  std::vector<EltwiseOp> epilogue;
};

/// Whether a product of M rows and K of A's elements (bf16, else 8-bit)
/// goes on AMX tiles: the --cpu has AMX-INT8 (AMX-BF16), and there are a
/// tile's 16 rows and one 64-byte step of K at least (below that the
/// tiles are mostly idle and VNNI is as fast).
bool useAmx(const lowering::CpuTarget &cpu, bool bf16, int64_t m, int64_t k);

/// What a gemm (alpha into plan.scale, beta * its bias) or an fc (bias,
/// residual, fused activation) adds after the product; plan.n is set.
/// False when it is not constant or not of the kernels' shapes.
bool planGemmEpilogue(mlir::Operation *op, OpLoweringContext &ctx,
                      Int8GemmPlan &plan);

/// A planned GEMM's kernels and data in the object.
struct Int8GemmKernels {
  Int8GemmSpec spec;
  std::string whole;
  /// Column chunks over the thread pool; chunks == 0 when there are none.
  std::string chunk, tail;
  int64_t chunks = 0;
  /// Addresses of packed B and its column data: in the object's data, or,
  /// packed at run time, of scratch buffers that packAtRunTime fills.
  mlir::Value packed, columns;
  /// Int8GemmSpec::outputZeroArgument's value (i64), or null.
  mlir::Value outputZero;
  /// Int8GemmPlan::rows.
  mlir::Value rows;
};

/// Packs B and generates the kernels (with kernels for chunks of columns
/// unless the op runs on one thread); false after an error on `op`.
/// `plan.result` and `plan.residual` are not read.
bool prepareInt8Gemm(mlir::Operation *op, OpLoweringContext &ctx,
                     const Int8GemmPlan &plan, Int8GemmKernels &out);

/// Packs B (at address `b`, or the buffer of plan.runtime.b when null) into
/// the scratch buffers of `kernels`, for a plan packed at run time.
void packAtRunTime(OpLoweringContext &ctx, const Int8GemmPlan &plan,
                   const Int8GemmKernels &kernels, mlir::Value b = {});

/// Plans A [..., M, K] x B [K, N] of 8-bit types (a, b, signedness, m, n,
/// k, batches); or, `runtime` (B packed when the op runs), B [..., K, N]
/// with A's leading dims, one product per batch. False for other shapes.
bool planInt8Shapes(mlir::Value a, mlir::Value b, bool runtime,
                    Int8GemmPlan &plan);

/// Whether `v` (a scale: f32; a zero point: 8-bit; none) holds one value,
/// or one per slice of `slices`.
bool runtimeScalars(mlir::Value v, int64_t slices, bool zeroPoint);

/// Element 0 of the 8-bit tensor `v` (a zero point) as an i64, extended
/// by its signedness; 0 for none.
mlir::Value loadZeroPoint(OpLoweringContext &ctx, mlir::Value v);

/// Calls the kernels on A at address `a`, C at `c` (and the residual at
/// `residual`, when the plan has one): over the pool when chunk kernels
/// were prepared.
void callInt8Gemm(OpLoweringContext &ctx, const Int8GemmKernels &kernels,
                  mlir::Value a, mlir::Value c, mlir::Value residual);

/// prepareInt8Gemm and callInt8Gemm on the plan's own buffers.
TargetLowering emitInt8Gemm(mlir::Operation *op, OpLoweringContext &ctx,
                            Int8GemmPlan &plan);

/// `f32`, the buffer (plain or blocked) of the graph value `v`, rounded to
/// bf16 by a generated kernel (Quantize.h) into a buffer of its shape that
/// lives as long as `v`, for a bf16 GEMM's A; made once per buffer
/// (state.bf16). Null after an error on `op`.
mlir::Value emitToBf16(mlir::Operation *op, OpLoweringContext &ctx,
                       SelectionState &state, mlir::Value v, mlir::Value f32);

/// x = (q - zero) * scale with q an 8-bit tensor: per tensor, or per
/// `axis` (scale and zero point one per slice).
struct Dequantized {
  mlir::Value q;
  std::vector<float> scale;
  std::vector<int32_t> zero;
  int64_t axis = 1;
};

/// Whether `v` is a graph.dequantize of an 8-bit tensor with constant
/// scales and zero points (one, or one per slice of its axis).
bool dequantizedFrom(OpLoweringContext &ctx, mlir::Value v, Dequantized &d);

/// for (i = 0; i < n; ++i) body(i), at b's insertion point.
void forLoop(mlir::OpBuilder &b, mlir::Location loc, int64_t n,
             llvm::function_ref<void(mlir::OpBuilder &, mlir::Value)> body);

/// `buffer` (a contiguous memref) seen with `shape`.
mlir::Value view(mlir::OpBuilder &b, mlir::Location loc, mlir::Value buffer,
                 llvm::ArrayRef<int64_t> shape);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_QUANTSELECTION_H
