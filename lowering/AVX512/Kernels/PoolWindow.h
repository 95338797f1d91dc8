//===- PoolWindow.h - Pooling windows, for the pool generators -*- C++ -*-===//
//
// Internal to Pool.cpp (NCHW) and PoolBlocked.cpp (NCHW16c): where each
// output's window lies along one dim, which of its taps are inside the
// input, and the checks of a PoolSpec both kernels rely on.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_POOLWINDOW_H
#define MLCC_LOWERING_AVX512_KERNELS_POOLWINDOW_H

#include "Pool.h"

#include <algorithm>

namespace mlcc::avx512::pool {

inline bool isGlobal(PoolKind kind) {
  return kind == PoolKind::GlobalMax || kind == PoolKind::GlobalAverage;
}

inline bool isMax(PoolKind kind) {
  return kind == PoolKind::Max || kind == PoolKind::GlobalMax;
}

inline int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}
inline int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

/// Generated code addresses a plane with 32-bit displacements.
constexpr int64_t kMaxPlaneBytes = int64_t(1) << 30;

/// The taps of one window along one dim, as the reference walks them: the
/// window starts at input coordinate `start`; taps [lo, hi) are inside the
/// input, taps [0, padHi) inside the input plus its end padding.
struct Taps {
  int64_t start, lo, hi, padHi;
};

struct Dim {
  int64_t in, out, k, s, d, pb, pe;

  Taps at(int64_t o) const {
    Taps t;
    t.start = o * s - pb;
    t.lo = std::max<int64_t>(0, ceilDiv(-t.start, d));
    t.hi = std::min<int64_t>(k, floorDiv(in - 1 - t.start, d) + 1);
    t.padHi = std::min<int64_t>(k, floorDiv(in + pe - 1 - t.start, d) + 1);
    if (t.hi < t.lo)
      t.hi = t.lo;
    return t;
  }
  bool interior(int64_t o) const {
    Taps t = at(o);
    return t.lo == 0 && t.hi == k;
  }
};

/// Spatial dim i (0: H, 1: W) of a windowed pool, its output size unset.
inline Dim dimOf(const PoolSpec &spec, int i) {
  return Dim{i ? spec.w : spec.h, 0,
             spec.kernel[i],      spec.strides[i],
             spec.dilations[i],   spec.pads[i],
             spec.pads[i + 2]};
}

/// Fails, naming spec.name, for a spec the generators cannot take.
Status validatePool(const PoolSpec &spec);

} // namespace mlcc::avx512::pool

#endif // MLCC_LOWERING_AVX512_KERNELS_POOLWINDOW_H
