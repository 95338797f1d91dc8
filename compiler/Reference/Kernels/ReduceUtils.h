//===- ReduceUtils.h - Helpers of the reduction family ----------*- C++ -*-===//
//
// Shared by Reduce.cpp, Softmax.cpp and Normalization.cpp: the walk over an
// input split into "kept" and "reduced" axes, the resolution of reduce axes
// (attribute or input), and the widening of f16/bf16 to f32 so that every
// kernel needs only float and double loops. Everything lives in a nested
// namespace so it cannot collide with other families' helpers.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_REFERENCE_KERNELS_REDUCEUTILS_H
#define MLCC_REFERENCE_KERNELS_REDUCEUTILS_H

#include "KernelUtils.h"
#include "mlcc/Reference/ReduceAxes.h"

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace mlcc::ref {
namespace reduction {

// Registration of the pieces of registerReductionKernels that live in other
// files.
void registerSoftmaxKernels(KernelRegistry &r);
void registerArgReduceKernels(KernelRegistry &r);
void registerNormalizationKernels(KernelRegistry &r);
void registerMiscNormKernels(KernelRegistry &r);

//===----------------------------------------------------------------------===//
// Accumulation
//===----------------------------------------------------------------------===//

/// The type sums run in: double for floats (f32 sums lose digits quickly),
/// 64 bits of the same signedness for integers.
template <typename T>
using AccOf = std::conditional_t<
    std::is_floating_point_v<T>, double,
    std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

/// a + b and a * b, wrapping around on integer overflow like numpy rather
/// than invoking undefined behaviour.
template <typename A> A wrapAdd(A a, A b) {
  if constexpr (std::is_integral_v<A>)
    return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else
    return a + b;
}
template <typename A> A wrapMul(A a, A b) {
  if constexpr (std::is_integral_v<A>)
    return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else
    return a * b;
}

template <typename A> bool isNanValue(A x) {
  if constexpr (std::is_floating_point_v<A>)
    return std::isnan(x);
  else
    return false;
}

/// double -> T; for integer T saturating, with nan -> 0 (a log or sqrt
/// result stored in an integer tensor must not invoke undefined behaviour).
template <typename T> T castFromDouble(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else {
    if (std::isnan(v))
      return 0;
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
      return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max()))
      return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

/// ValueInfo describing a concrete tensor (for re-running shape helpers'
/// logic inside a RunFn).
inline ValueInfo infoOf(const Tensor &t) {
  ValueInfo v;
  v.dtype = t.dtype();
  v.shape = t.shape();
  v.value = t.present() ? &t : nullptr;
  return v;
}

//===----------------------------------------------------------------------===//
// f16 / bf16 widening
//===----------------------------------------------------------------------===//

inline bool isHalfType(DType t) { return t == DType::F16 || t == DType::BF16; }

/// The tensor kernels compute on: an f32 copy of an f16/bf16 tensor, the
/// tensor itself (shared storage) otherwise.
inline Tensor widenHalf(const Tensor &t) {
  if (!isHalfType(t.dtype()))
    return t;
  Tensor r(DType::F32, t.shape());
  const uint16_t *src = t.data<uint16_t>();
  float *dst = r.data<float>();
  bool bf = t.dtype() == DType::BF16;
  for (int64_t i = 0, e = t.numel(); i < e; ++i)
    dst[i] = bf ? bf16ToFloat(src[i]) : halfToFloat(src[i]);
  return r;
}

/// Where a kernel writes the result that belongs in `out`: an f32 scratch
/// tensor when `out` is f16/bf16 (see narrowHalf), `out` itself otherwise.
inline Tensor computeBuffer(const Tensor &out) {
  return isHalfType(out.dtype()) ? Tensor(DType::F32, out.shape()) : out;
}

/// Rounds the f32 scratch `buf` into the f16/bf16 tensor `out`; nothing to do
/// when `buf` is `out`.
inline void narrowHalf(const Tensor &buf, Tensor &out) {
  if (!isHalfType(out.dtype()))
    return;
  const float *src = buf.data<float>();
  uint16_t *dst = out.data<uint16_t>();
  bool bf = out.dtype() == DType::BF16;
  for (int64_t i = 0, e = out.numel(); i < e; ++i)
    dst[i] = bf ? floatToBf16(src[i]) : floatToHalf(src[i]);
}

/// All the values of a small (parameter) tensor as double.
inline std::vector<double> toDoubles(const Tensor &t) {
  std::vector<double> v(t.numel());
  for (int64_t i = 0, e = t.numel(); i < e; ++i)
    v[i] = t.getDouble(i);
  return v;
}

//===----------------------------------------------------------------------===//
// Reduce axes
//===----------------------------------------------------------------------===//

/// Marks in `reduced` (one flag per input dim) the axes an op reduces: the
/// `axes` input when present, else the `axes` attribute; an empty list
/// reduces everything unless `noopWithEmpty`. `known` is false when the axes
/// come from an input whose value is not known (shape inference); `reduced`
/// is then left all false and `numAxes` holds the axes input's length
/// (kDynamic when unknown).
inline Status resolveReduceAxes(const char *op, const Attrs &attrs,
                                const ValueInfo *axesInput, int64_t rank,
                                bool noopWithEmpty, std::vector<bool> &reduced,
                                bool &known, int64_t &numAxes) {
  reduced.assign(rank, false);
  known = true;
  numAxes = kDynamic;
  std::vector<int64_t> axes;
  if (axesInput && axesInput->present()) {
    MLCC_CHECK(axesInput->dtype == DType::I64 || axesInput->dtype == DType::I32,
               op, ": axes input has type ", dtypeName(axesInput->dtype),
               ", expected i64");
    MLCC_CHECK(axesInput->rank() <= 1, op, ": axes input has rank ",
               axesInput->rank(), ", expected a 1-D tensor");
    if (!axesInput->value &&
        !(axesInput->rank() == 1 && axesInput->shape[0] == 0)) {
      known = false;
      numAxes = axesInput->rank() == 0 ? 1 : axesInput->shape[0];
      return Status::success();
    }
    if (axesInput->value)
      axes = axesInput->value->toInt64Vector();
  } else {
    axes = attrs.getInts("axes");
  }
  numAxes = static_cast<int64_t>(axes.size());
  return reducedDimsOf(op, axes, rank, noopWithEmpty, reduced);
}

//===----------------------------------------------------------------------===//
// Reduction walk
//===----------------------------------------------------------------------===//

/// An input shape seen as kept and reduced axes. Size-1 dims are dropped and
/// neighbouring dims of the same kind merged, so that the innermost loop of
/// forEachSegment runs over as many contiguous elements as possible.
struct ReduceGeom {
  std::vector<int64_t> dims;       // merged dims, none of size 1
  std::vector<int64_t> outStrides; // output stride of each, 0 when reduced
  int64_t outCount = 1;            // elements of the output
  int64_t groupSize = 1;           // input elements per output element
  bool emptyInput = false;
};

inline ReduceGeom makeReduceGeom(const Shape &shape,
                                 const std::vector<bool> &reduced) {
  ReduceGeom g;
  std::vector<bool> kinds;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (reduced[d])
      g.groupSize *= shape[d];
    else
      g.outCount *= shape[d];
    if (shape[d] == 0)
      g.emptyInput = true;
    if (shape[d] == 1)
      continue;
    if (!kinds.empty() && kinds.back() == reduced[d]) {
      g.dims.back() *= shape[d];
    } else {
      g.dims.push_back(shape[d]);
      kinds.push_back(reduced[d]);
    }
  }
  g.outStrides.assign(g.dims.size(), 0);
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(g.dims.size()) - 1; d >= 0; --d) {
    if (kinds[d])
      continue;
    g.outStrides[d] = stride;
    stride *= g.dims[d];
  }
  return g;
}

/// Calls fn(inOffset, outOffset, n, outStep) for runs of `n` contiguous input
/// elements; input element inOffset+j belongs to output element
/// outOffset+j*outStep (outStep is 0 when the run lies along a reduced axis,
/// 1 otherwise). Covers the whole input in row-major order.
template <typename Fn> void forEachSegment(const ReduceGeom &g, Fn &&fn) {
  if (g.emptyInput)
    return;
  if (g.dims.empty()) {
    fn(int64_t(0), int64_t(0), int64_t(1), int64_t(0));
    return;
  }
  int64_t r = static_cast<int64_t>(g.dims.size()) - 1;
  int64_t inner = g.dims[r], innerStep = g.outStrides[r];
  int64_t outer = 1;
  for (int64_t d = 0; d < r; ++d)
    outer *= g.dims[d];
  std::vector<int64_t> idx(r, 0);
  int64_t outOff = 0;
  for (int64_t it = 0; it < outer; ++it) {
    fn(it * inner, outOff, inner, innerStep);
    for (int64_t d = r - 1; d >= 0; --d) {
      outOff += g.outStrides[d];
      if (++idx[d] < g.dims[d])
        break;
      outOff -= g.outStrides[d] * g.dims[d];
      idx[d] = 0;
    }
  }
}

/// Sizes of the dims before, at and after `axis`.
inline void splitAtAxis(const Shape &shape, int64_t axis, int64_t &outer,
                        int64_t &len, int64_t &inner) {
  outer = 1;
  inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  len = shape[axis];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
}

} // namespace reduction
} // namespace mlcc::ref

#endif // MLCC_REFERENCE_KERNELS_REDUCEUTILS_H
