//===- KernelUtils.h - Helpers shared by the reference kernels --*- C++ -*-===//

#ifndef MLCC_REFERENCE_KERNELS_KERNELUTILS_H
#define MLCC_REFERENCE_KERNELS_KERNELUTILS_H

#include "mlcc/Reference/Kernel.h"

#include <algorithm>
#include <cmath>

namespace mlcc::ref {

/// Adds two possibly-dynamic dims (or any arithmetic): kDynamic if either is.
inline bool isDyn(int64_t d) { return d == kDynamic; }

/// a * b and a + b for dims and counts: false when the result does not fit
/// in int64 (a model's attributes and constants can say anything).
inline bool mulDims(int64_t a, int64_t b, int64_t &out) {
  return !__builtin_mul_overflow(a, b, &out);
}
inline bool addDims(int64_t a, int64_t b, int64_t &out) {
  return !__builtin_add_overflow(a, b, &out);
}

/// floor(v) as a dim: false when it is not finite or does not fit in int64.
inline bool floorToDim(double v, int64_t &out) {
  double f = std::floor(v);
  // 2^63 is exact in double; every double below it converts.
  if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0))
    return false;
  out = static_cast<int64_t>(f);
  return true;
}

/// Numpy-style broadcast of two shapes. Dynamic dims stay dynamic unless the
/// other side fixes them (a dim of 1 broadcasts to the other).
inline Status broadcastShapes(const Shape &a, const Shape &b, Shape &out) {
  size_t rank = std::max(a.size(), b.size());
  out.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db)
      out[i] = da;
    else if (da == 1)
      out[i] = db;
    else if (db == 1)
      out[i] = da;
    else if (isDyn(da))
      out[i] = db;
    else if (isDyn(db))
      out[i] = da;
    else
      return Status::error("shapes ", shapeToString(a), " and ",
                           shapeToString(b), " do not broadcast");
  }
  return Status::success();
}

/// Maps a possibly negative axis into [0, rank); fails when out of range.
inline Status normalizeAxis(int64_t axis, int64_t rank, int64_t &out) {
  if (axis < -rank || axis >= rank)
    return Status::error("axis ", axis, " is out of range for rank ", rank);
  out = axis < 0 ? axis + rank : axis;
  return Status::success();
}

/// Element strides of `in` as seen from a broadcast result of shape `out`
/// (0 where `in` broadcasts).
inline std::vector<int64_t> broadcastStrides(const Shape &in,
                                             const Shape &out) {
  std::vector<int64_t> strides(out.size(), 0);
  std::vector<int64_t> inStrides = stridesOf(in);
  size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i)
    strides[off + i] = in[i] == 1 ? 0 : inStrides[i];
  return strides;
}

/// Walks all multi-indices of `shape` in row-major order.
template <typename Fn> void forEachIndex(const Shape &shape, Fn &&fn) {
  int64_t n = numElements(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    fn(idx, linear);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
}

} // namespace mlcc::ref

#endif // MLCC_REFERENCE_KERNELS_KERNELUTILS_H
