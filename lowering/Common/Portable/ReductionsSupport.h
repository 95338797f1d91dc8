//===- ReductionsSupport.h - Helpers of the reduction lowerings -*- C++ -*-===//
//
// Shared by the portable lowerings of the reduction and normalisation family
// (Reductions*.cpp, Normalization*.cpp): attribute and constant-operand
// access, element-type conversions that follow the reference kernels
// (floats accumulate in double, f16/bf16 compute in f32, integers in 64
// bits), buffer views and scf loop nests. Everything is emitted as plain
// scf loops with memref.load/store: scf.parallel (ParallelLoops.h) over the
// independent outer dims, scf.for inside; the only temporary memory is the
// per-block state arrays of the blocked loop forms (parallelBlocks()).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_PORTABLE_REDUCTIONSSUPPORT_H
#define MLCC_LOWERING_COMMON_PORTABLE_REDUCTIONSSUPPORT_H

#include "ParallelLoops.h"
#include "PortableLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace mlcc::portable::red {

using Builder = mlir::ImplicitLocOpBuilder;

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

/// What the loops need to know about a tensor's element type.
struct Elem {
  mlir::Type storage; // the buffer element type (signless for integers)
  bool isFloat = false;
  bool isUnsigned = false; // unsigned integers and bool
  unsigned width = 0;
};

/// The element description of a graph value (a ranked tensor).
Elem elemOf(mlir::Value tensor);

/// The smallest and largest value of an integer element type, as the bit
/// pattern of a constant of that type (all ones for the unsigned maximum).
void intLimits(const Elem &e, int64_t &lowest, int64_t &highest);

/// The static shape of a graph value.
llvm::ArrayRef<int64_t> shapeOf(mlir::Value tensor);

int64_t numElements(llvm::ArrayRef<int64_t> shape);

/// Sizes of the dims before, at and after `axis`.
void splitAtAxis(llvm::ArrayRef<int64_t> shape, int64_t axis, int64_t &outer,
                 int64_t &len, int64_t &inner);

//===----------------------------------------------------------------------===//
// Attributes and constant operands
//===----------------------------------------------------------------------===//

int64_t intAttr(mlir::Operation *op, llvm::StringRef name, int64_t dflt);
/// A float attribute as the reference reads it: a float, widened to double.
double floatAttr(mlir::Operation *op, llvm::StringRef name, float dflt);
std::optional<llvm::SmallVector<int64_t>> intsAttr(mlir::Operation *op,
                                                   llvm::StringRef name);

/// Whether operand `i` of `op` is present (not a `none` value).
bool hasOperand(mlir::Operation *op, unsigned i);

/// The integer values of a graph value defined by a constant, if it is one.
std::optional<llvm::SmallVector<int64_t>> constInts(mlir::Value v);

/// axis in [-rank, rank) -> [0, rank); emits an error on `op` otherwise.
mlir::FailureOr<int64_t> normalizeAxis(mlir::Operation *op, int64_t axis,
                                       int64_t rank);

//===----------------------------------------------------------------------===//
// Constants and conversions
//===----------------------------------------------------------------------===//

mlir::Value cIndex(Builder &b, int64_t v);
mlir::Value cInt(Builder &b, mlir::Type t, int64_t v);
mlir::Value cFloat(Builder &b, mlir::Type t, double v);
mlir::Value cF64(Builder &b, double v);

/// The float type a float tensor computes in: f64 for f64, f32 otherwise
/// (f16/bf16 are widened, as in the reference).
mlir::Type computeFloatType(const Elem &e);

/// A loaded element to its compute float type (identity for f32/f64).
mlir::Value toCompute(Builder &b, mlir::Value v, const Elem &e);
/// A compute-type float to the storage type (rounds f32 -> f16/bf16).
mlir::Value fromCompute(Builder &b, mlir::Value v, const Elem &e);
/// Any element (float or integer, by signedness) to f64.
mlir::Value toF64(Builder &b, mlir::Value v, const Elem &e);
/// f64 to the storage type: floats through the compute type (double
/// rounding, as the reference's f32 scratch), integers saturating with nan
/// -> 0 (the reference's castFromDouble).
mlir::Value fromF64(Builder &b, mlir::Value v, const Elem &e);
/// An integer element to i64 (sign- or zero-extended by signedness).
mlir::Value toI64(Builder &b, mlir::Value v, const Elem &e);
/// Any float or integer scalar to `index` (integers sign-extended).
mlir::Value toIndex(Builder &b, mlir::Value v);

mlir::Value isNan(Builder &b, mlir::Value v);

/// acc + x and acc * x for float accumulators, marked reassociable so that
/// LLVM may vectorise the reduction loop (sums are in double, so the
/// reordering stays far below the tolerance against the reference).
mlir::Value accAdd(Builder &b, mlir::Value acc, mlir::Value x);
mlir::Value accMul(Builder &b, mlir::Value acc, mlir::Value x);

/// Float arithmetic and comparison, shorthand for the lowerings that write
/// formulas out.
mlir::Value addF(Builder &b, mlir::Value x, mlir::Value y);
mlir::Value subF(Builder &b, mlir::Value x, mlir::Value y);
mlir::Value mulF(Builder &b, mlir::Value x, mlir::Value y);
mlir::Value divF(Builder &b, mlir::Value x, mlir::Value y);
mlir::Value cmpF(Builder &b, mlir::arith::CmpFPredicate pred, mlir::Value x,
                 mlir::Value y);
/// std::min(x, y) and std::max(x, y) as the reference evaluates them, nan
/// included: `y < x ? y : x` and `x < y ? y : x`.
mlir::Value stdMin(Builder &b, mlir::Value x, mlir::Value y);
mlir::Value stdMax(Builder &b, mlir::Value x, mlir::Value y);

/// max/min with the reference's nan rule: a nan input sticks.
mlir::Value nanMax(Builder &b, mlir::Value acc, mlir::Value x);
mlir::Value nanMin(Builder &b, mlir::Value acc, mlir::Value x);

//===----------------------------------------------------------------------===//
// Buffers and loops
//===----------------------------------------------------------------------===//

/// `buf` (static, identity layout, contiguous) seen with another shape of
/// the same element count.
mlir::Value view(Builder &b, mlir::Value buf, llvm::ArrayRef<int64_t> shape);

/// Views every operand and result buffer of `p` with its tensor's shape
/// where the driver passed another one (it may pass a flat buffer for an
/// empty tensor), so that lowerings can index them by the tensor shape.
void shapeBuffers(Builder &b, PortableOp &p);

mlir::Value load(Builder &b, mlir::Value buf, mlir::ValueRange idx);
void store(Builder &b, mlir::Value v, mlir::Value buf, mlir::ValueRange idx);

using LoopBody = llvm::function_ref<void(Builder &, mlir::ValueRange ivs)>;
using ReduceBody = llvm::function_ref<llvm::SmallVector<mlir::Value>(
    Builder &, mlir::ValueRange ivs, mlir::ValueRange acc)>;

/// A nest of scf.for loops over [0, ubs[d]).
void loops(Builder &b, llvm::ArrayRef<int64_t> ubs, LoopBody body);
/// The same, carrying `init` through the loops; returns the final values.
/// With no loops the body runs once, straight-line.
llvm::SmallVector<mlir::Value> loops(Builder &b, llvm::ArrayRef<int64_t> ubs,
                                     mlir::ValueRange init, ReduceBody body);
/// One loop over [lb, ub) (index values), carrying `init`.
llvm::SmallVector<mlir::Value> loop(Builder &b, mlir::Value lb, mlir::Value ub,
                                    mlir::ValueRange init, ReduceBody body);

/// Elements of a block: loops whose axis is not the innermost one run the
/// inner (contiguous) dims in blocks of this many elements, keeping their
/// per-element state in scratch arrays, so every memory access stays
/// contiguous (a walk along a strided axis thrashes the caches when the
/// stride is a large power of two).
constexpr int64_t kBlock = 256;
/// Inner sizes from which the blocked form pays off.
constexpr int64_t kMinBlockedInner = 16;

/// for (i0 = 0; i0 < inner; i0 += kBlock) body(i0, min(kBlock, inner - i0))
void blocks(
    Builder &b, int64_t inner,
    llvm::function_ref<void(Builder &, mlir::Value i0, mlir::Value n)> body);

/// The blocked form with independent blocks: one scf.parallel over the
/// dims `outer` and the blocks of the contiguous `inner` dim; iteration
/// (outer ivs, block) runs body(outer ivs, i0, n, state) for the elements
/// [i0, i0 + n) of its block. Its state arrays (kBlock elements of each of
/// `types`) are its own rows of buffers made once for the whole nest, not
/// the shared scratch(): nothing is shared between iterations, so the nest
/// may be split over threads (the pool, a device's). A temporary made
/// inside the body would not do: the host makes it one arena slot for all
/// iterations.
void parallelBlocks(Builder &b, llvm::ArrayRef<int64_t> outer, int64_t inner,
                    llvm::ArrayRef<mlir::Type> types,
                    llvm::function_ref<void(
                        Builder &, mlir::ValueRange outerIvs, mlir::Value i0,
                        mlir::Value n, llvm::ArrayRef<mlir::Value> state)>
                        body);

/// fn(ii) for ii in [0, n) (n an index value).
void each(Builder &b, mlir::Value n,
          llvm::function_ref<void(Builder &, mlir::Value ii)> fn);

/// scf.if without results.
void ifThenElse(Builder &b, mlir::Value cond,
                llvm::function_ref<void(Builder &)> thenFn,
                llvm::function_ref<void(Builder &)> elseFn);

/// Emits one of several alternatives chosen at run time: alternative i runs
/// when conds(i) holds (checked in order); the last one is the fallback and
/// has no condition.
void dispatch(Builder &b, unsigned count,
              llvm::function_ref<mlir::Value(Builder &, unsigned)> cond,
              llvm::function_ref<void(Builder &, unsigned)> emit);

//===----------------------------------------------------------------------===//
// Registration of the family's files
//===----------------------------------------------------------------------===//

void registerReduceOps(PortableRegistry &registry);
void registerArgOps(PortableRegistry &registry);
void registerSoftmaxOps(PortableRegistry &registry);
void registerNormalizationOps(PortableRegistry &registry);
void registerMiscNormOps(PortableRegistry &registry);

} // namespace mlcc::portable::red

#endif // MLCC_LOWERING_COMMON_PORTABLE_REDUCTIONSSUPPORT_H
