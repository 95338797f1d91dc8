//===- ConvPoolUtils.h - Helpers of conv, pool and matmul -------*- C++ -*-===//
//
// Helpers shared by the conv, pooling, matmul and einsum kernels: the
// kernel/stride/dilation/pad attributes of a sliding window, the output size
// and auto_pad resolution, the 16-bit float widening that lets those kernels
// compute in f32, and the per-file registration functions of the family.
// Everything lives in mlcc::ref::nn so that it cannot collide with another
// family's helpers.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_REFERENCE_KERNELS_CONVPOOLUTILS_H
#define MLCC_REFERENCE_KERNELS_CONVPOOLUTILS_H

#include "KernelUtils.h"

#include <cmath>
#include <limits>
#include <string>

namespace mlcc::ref::nn {

// Registration of the files that make up the nn and matmul families; the
// entry points registerNNKernels (Conv.cpp) and registerMatmulKernels
// (Matmul.cpp) call these.
void registerPoolKernels(KernelRegistry &r);   // Pool.cpp
void registerEinsumKernels(KernelRegistry &r); // Einsum.cpp

//===----------------------------------------------------------------------===//
// Integer division with a defined rounding direction for negative operands.
//===----------------------------------------------------------------------===//

inline int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

//===----------------------------------------------------------------------===//
// Sliding windows
//===----------------------------------------------------------------------===//

enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

inline Status parseAutoPad(const char *op, const Attrs &attrs, AutoPad &out) {
  std::string s = attrs.getString("auto_pad", "NOTSET");
  if (s == "NOTSET" || s.empty())
    out = AutoPad::NotSet;
  else if (s == "SAME_UPPER")
    out = AutoPad::SameUpper;
  else if (s == "SAME_LOWER")
    out = AutoPad::SameLower;
  else if (s == "VALID")
    out = AutoPad::Valid;
  else
    return Status::error(op, ": unknown auto_pad '", s, "'");
  return Status::success();
}

/// The window of a conv or pooling op along its spatial dims. `kernel` may
/// hold kDynamic in shape inference (a conv weight of unknown size).
struct Window {
  Shape kernel, strides, dilations, padBegin, padEnd;

  size_t rank() const { return kernel.size(); }
  /// Extent of the dilated kernel along dim i.
  int64_t span(size_t i) const { return (kernel[i] - 1) * dilations[i] + 1; }
};

/// Reads strides, dilations and pads (ONNX defaults: ones and zeros) around
/// a kernel of `kernel.size()` spatial dims and checks their lengths and
/// ranges.
inline Status readWindow(const char *op, const Attrs &attrs,
                         const Shape &kernel, Window &w) {
  size_t nd = kernel.size();
  w.kernel = kernel;
  w.strides = attrs.getInts("strides");
  if (w.strides.empty())
    w.strides.assign(nd, 1);
  w.dilations = attrs.getInts("dilations");
  if (w.dilations.empty())
    w.dilations.assign(nd, 1);
  std::vector<int64_t> pads = attrs.getInts("pads");
  if (pads.empty())
    pads.assign(2 * nd, 0);
  MLCC_CHECK(w.strides.size() == nd, op, ": strides has ", w.strides.size(),
             " values, expected ", nd, " (one per spatial dim)");
  MLCC_CHECK(w.dilations.size() == nd, op, ": dilations has ",
             w.dilations.size(), " values, expected ", nd);
  MLCC_CHECK(pads.size() == 2 * nd, op, ": pads has ", pads.size(),
             " values, expected ", 2 * nd);
  w.padBegin.assign(pads.begin(), pads.begin() + nd);
  w.padEnd.assign(pads.begin() + nd, pads.end());
  for (size_t i = 0; i < nd; ++i) {
    MLCC_CHECK(isDyn(kernel[i]) || kernel[i] >= 1, op, ": kernel dim ", i,
               " is ", kernel[i], ", expected >= 1");
    MLCC_CHECK(w.strides[i] >= 1, op, ": stride ", w.strides[i],
               " must be >= 1");
    MLCC_CHECK(w.dilations[i] >= 1, op, ": dilation ", w.dilations[i],
               " must be >= 1");
    MLCC_CHECK(w.padBegin[i] >= 0 && w.padEnd[i] >= 0, op,
               ": pads must be >= 0");
  }
  return Status::success();
}

/// Output spatial dims of a conv/pool window over `in` (kDynamic where the
/// input or kernel dim is), resolving auto_pad into w.padBegin/padEnd.
/// With ceil_mode a last window that would start inside the end padding is
/// dropped (as PyTorch and later ONNX versions specify).
inline Status windowOutputDims(const char *op, AutoPad autoPad, bool ceilMode,
                               const Shape &in, Window &w, Shape &out) {
  out.assign(in.size(), kDynamic);
  for (size_t i = 0; i < in.size(); ++i) {
    if (isDyn(in[i]) || isDyn(w.kernel[i]))
      continue;
    // Attributes come from the model: a kernel, dilation or pad near
    // 2^63 must be an error, not a window that wraps around.
    int64_t s = w.strides[i], span = 0, padded = 0;
    MLCC_CHECK(mulDims(w.kernel[i] - 1, w.dilations[i], span) &&
                   addDims(span, 1, span),
               op, ": the dilated kernel of spatial dim ", i,
               " overflows int64");
    switch (autoPad) {
    case AutoPad::NotSet:
    case AutoPad::Valid: {
      if (autoPad == AutoPad::Valid)
        w.padBegin[i] = w.padEnd[i] = 0;
      MLCC_CHECK(addDims(in[i], w.padBegin[i], padded) &&
                     addDims(padded, w.padEnd[i], padded),
                 op, ": spatial dim ", i, " plus its pads overflows int64");
      int64_t room = padded - span;
      MLCC_CHECK(room >= 0, op, ": window of extent ", span,
                 " does not fit spatial dim ", i, " of size ", in[i],
                 " plus its pads");
      out[i] = (ceilMode ? ceilDiv(room, s) : room / s) + 1;
      if (ceilMode && (out[i] - 1) * s >= in[i] + w.padBegin[i])
        --out[i];
      break;
    }
    case AutoPad::SameUpper:
    case AutoPad::SameLower: {
      out[i] = ceilDiv(in[i], s);
      int64_t reach = 0;
      MLCC_CHECK(mulDims(out[i] - 1, s, reach) && addDims(reach, span, reach),
                 op, ": the windows of spatial dim ", i, " overflow int64");
      int64_t total = std::max<int64_t>(0, reach - in[i]);
      // The odd pad goes to the end for SAME_UPPER, the start for SAME_LOWER.
      int64_t small = total / 2;
      w.padBegin[i] = autoPad == AutoPad::SameUpper ? small : total - small;
      w.padEnd[i] = total - w.padBegin[i];
      break;
    }
    }
  }
  return Status::success();
}

/// Geometry of a conv/pool over at most three spatial dims, padded in front
/// with unit dims so that one triple loop serves 1-D, 2-D and 3-D.
struct Geom3 {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1};
  int64_t s[3] = {1, 1, 1}, d[3] = {1, 1, 1}, pb[3] = {0, 0, 0},
          pe[3] = {0, 0, 0};

  int64_t inSize() const { return in[0] * in[1] * in[2]; }
  int64_t outSize() const { return out[0] * out[1] * out[2]; }
  int64_t kSize() const { return k[0] * k[1] * k[2]; }
};

inline Status makeGeom3(const char *op, const Shape &in, const Shape &out,
                        const Window &w, Geom3 &g) {
  size_t nd = in.size();
  MLCC_CHECK(nd <= 3, op, ": ", nd,
             " spatial dims are not supported (at most 3)");
  size_t off = 3 - nd;
  for (size_t i = 0; i < nd; ++i) {
    g.in[off + i] = in[i];
    g.out[off + i] = out[i];
    g.k[off + i] = w.kernel[i];
    g.s[off + i] = w.strides[i];
    g.d[off + i] = w.dilations[i];
    g.pb[off + i] = w.padBegin[i];
    g.pe[off + i] = w.padEnd[i];
  }
  return Status::success();
}

/// Range [lo, hi) of output positions o whose tap o*s + off lands in [0, n).
inline void validRange(int64_t n, int64_t s, int64_t off, int64_t outN,
                       int64_t &lo, int64_t &hi) {
  lo = std::max<int64_t>(0, ceilDiv(-off, s));
  hi = std::min<int64_t>(outN, floorDiv(n - 1 - off, s) + 1);
  if (hi < lo)
    hi = lo;
}

//===----------------------------------------------------------------------===//
// Inner loops of conv and matmul
//===----------------------------------------------------------------------===//

// y += a * x over n contiguous elements. The restrict parameters (kept when
// inlined) rule out aliasing, and the fixed blocks of 8 let the compiler
// vectorise the block even where its loop vectoriser is off or too cautious
// (GCC at -O2).
constexpr int64_t kAxpyBlock = 8;

template <typename T>
inline void axpy1(T *__restrict y, const T *__restrict x, T a, int64_t n) {
  int64_t j = 0;
  for (; j + kAxpyBlock <= n; j += kAxpyBlock)
    for (int64_t u = 0; u < kAxpyBlock; ++u)
      y[j + u] += a * x[j + u];
  for (; j + 4 <= n; j += 4)
    for (int64_t u = 0; u < 4; ++u)
      y[j + u] += a * x[j + u];
  for (; j < n; ++j)
    y[j] += a * x[j];
}

// Four rows y0..y3 += a0..a3 * x: each x element is loaded once for four
// multiply-adds.
template <typename T>
inline void axpy4(T *__restrict y0, T *__restrict y1, T *__restrict y2,
                  T *__restrict y3, const T *__restrict x, T a0, T a1, T a2,
                  T a3, int64_t n) {
  int64_t j = 0;
  for (; j + kAxpyBlock <= n; j += kAxpyBlock) {
    for (int64_t u = 0; u < kAxpyBlock; ++u) {
      T v = x[j + u];
      y0[j + u] += a0 * v;
      y1[j + u] += a1 * v;
      y2[j + u] += a2 * v;
      y3[j + u] += a3 * v;
    }
  }
  for (; j + 4 <= n; j += 4) {
    for (int64_t u = 0; u < 4; ++u) {
      T v = x[j + u];
      y0[j + u] += a0 * v;
      y1[j + u] += a1 * v;
      y2[j + u] += a2 * v;
      y3[j + u] += a3 * v;
    }
  }
  for (; j < n; ++j) {
    T v = x[j];
    y0[j] += a0 * v;
    y1[j] += a1 * v;
    y2[j] += a2 * v;
    y3[j] += a3 * v;
  }
}

/// c[m, n] += a[m, k] * b[k, n], all row-major and contiguous, in i-k-j
/// order: four rows of c at a time take a row of b, over panels of columns
/// small enough for the four c rows to stay in L1.
template <typename T>
void matmulAcc(const T *a, const T *b, T *c, int64_t m, int64_t k, int64_t n) {
  constexpr int64_t kPanel = 512;
  for (int64_t j0 = 0; j0 < n; j0 += kPanel) {
    int64_t jn = std::min(kPanel, n - j0);
    int64_t i = 0;
    for (; i + 4 <= m; i += 4) {
      const T *a0 = a + i * k;
      T *c0 = c + i * n + j0;
      for (int64_t p = 0; p < k; ++p)
        axpy4(c0, c0 + n, c0 + 2 * n, c0 + 3 * n, b + p * n + j0, a0[p],
              a0[k + p], a0[2 * k + p], a0[3 * k + p], jn);
    }
    for (; i < m; ++i)
      for (int64_t p = 0; p < k; ++p)
        axpy1(c + i * n + j0, b + p * n + j0, a[i * k + p], jn);
  }
}

// out[0..3] += dot(a0..a3, b) over n contiguous elements, with eight
// partial sums per row (vectorisable without reassociating one sum).
template <typename T>
inline void dot4(const T *__restrict a0, const T *__restrict a1,
                 const T *__restrict a2, const T *__restrict a3,
                 const T *__restrict b, int64_t n, T *out) {
  T s0[kAxpyBlock] = {}, s1[kAxpyBlock] = {}, s2[kAxpyBlock] = {},
    s3[kAxpyBlock] = {};
  int64_t j = 0;
  for (; j + kAxpyBlock <= n; j += kAxpyBlock) {
    for (int64_t u = 0; u < kAxpyBlock; ++u) {
      T v = b[j + u];
      s0[u] += a0[j + u] * v;
      s1[u] += a1[j + u] * v;
      s2[u] += a2[j + u] * v;
      s3[u] += a3[j + u] * v;
    }
  }
  T r0 = 0, r1 = 0, r2 = 0, r3 = 0;
  for (int64_t u = 0; u < kAxpyBlock; ++u) {
    r0 += s0[u];
    r1 += s1[u];
    r2 += s2[u];
    r3 += s3[u];
  }
  for (; j < n; ++j) {
    T v = b[j];
    r0 += a0[j] * v;
    r1 += a1[j] * v;
    r2 += a2[j] * v;
    r3 += a3[j] * v;
  }
  out[0] += r0;
  out[1] += r1;
  out[2] += r2;
  out[3] += r3;
}

/// c[m, n] += a[m, k] * b[n, k]^T: rows of a against rows of b, both
/// contiguous, so a transposed right operand (gemm transB, as in Linear
/// layers) needs no transposed copy.
template <typename T>
void matmulAccTransB(const T *a, const T *b, T *c, int64_t m, int64_t k,
                     int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    const T *a0 = a + i * k;
    for (int64_t j = 0; j < n; ++j) {
      T out[4] = {};
      dot4(a0, a0 + k, a0 + 2 * k, a0 + 3 * k, b + j * k, k, out);
      for (int64_t r = 0; r < 4; ++r)
        c[(i + r) * n + j] += out[r];
    }
  }
  for (; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum += a[i * k + p] * b[j * k + p];
      c[i * n + j] += sum;
    }
  }
}

//===----------------------------------------------------------------------===//
// dtypes
//===----------------------------------------------------------------------===//

inline bool isHalfType(DType t) { return t == DType::F16 || t == DType::BF16; }

/// f16/bf16 tensors as an f32 copy; any other tensor as itself. Lets the
/// float kernels compute 16-bit types in f32.
inline Tensor widenHalf(const Tensor &t) {
  if (!t.present() || !isHalfType(t.dtype()))
    return t;
  Tensor f(DType::F32, t.shape());
  const uint16_t *src = t.data<uint16_t>();
  float *dst = f.data<float>();
  bool bf = t.dtype() == DType::BF16;
  for (int64_t i = 0, n = t.numel(); i < n; ++i)
    dst[i] = bf ? bf16ToFloat(src[i]) : halfToFloat(src[i]);
  return f;
}

/// Rounds the f32 tensor `f` into the f16/bf16 tensor `dst` of the same
/// shape.
inline void narrowHalf(const Tensor &f, Tensor &dst) {
  const float *src = f.data<float>();
  uint16_t *out = dst.data<uint16_t>();
  bool bf = dst.dtype() == DType::BF16;
  for (int64_t i = 0, n = dst.numel(); i < n; ++i)
    out[i] = bf ? floatToBf16(src[i]) : floatToHalf(src[i]);
}

/// Checks that `t` is one of the float types.
inline Status checkFloat(const char *op, const char *what, DType t) {
  MLCC_CHECK(isFloatType(t), op, ": ", what, " has type ", dtypeName(t),
             ", expected a float type");
  return Status::success();
}

/// The requantization step of the qlinear ops: rounds `v` half to even,
/// adds the zero point and saturates into the 8-bit type `t` (U8 or I8).
inline int64_t requantize(float v, int64_t zeroPoint, DType t) {
  double lo = t == DType::U8 ? 0 : -128, hi = t == DType::U8 ? 255 : 127;
  double r = std::nearbyint(static_cast<double>(v));
  if (std::isnan(r))
    return zeroPoint;
  r += static_cast<double>(zeroPoint);
  return static_cast<int64_t>(std::min(hi, std::max(lo, r)));
}

/// Checks that `t` is an 8-bit integer type, as the quantized ops require.
inline Status check8Bit(const char *op, const char *what, DType t) {
  MLCC_CHECK(t == DType::U8 || t == DType::I8, op, ": ", what, " has type ",
             dtypeName(t), ", expected u8 or i8");
  return Status::success();
}

/// Reads element `i` of a quantization parameter that is a scalar (one
/// element) or holds one value per index along some axis.
inline double paramAt(const Tensor &p, int64_t i) {
  return p.getDouble(p.numel() == 1 ? 0 : i);
}

/// `t` minus its zero point, as int32: the integer ops compute on these.
/// `zp` is absent (zero), holds one element, or holds one per index along
/// `axis` of `t` (per output channel or per row/column quantization).
inline Status subtractZeroPoint(const char *op, const char *what,
                                const Tensor &t, const Tensor &zp, int64_t axis,
                                std::vector<int32_t> &out) {
  MLCC_RETURN_IF_ERROR(check8Bit(op, what, t.dtype()));
  int64_t n = t.numel();
  out.resize(n);
  std::vector<int32_t> zeros(1, 0);
  int64_t stride = 1, dim = 1;
  if (zp.present()) {
    MLCC_CHECK(zp.dtype() == t.dtype(), op, ": zero point of ", what,
               " has type ", dtypeName(zp.dtype()), ", expected ",
               dtypeName(t.dtype()), " like the ", what);
    if (zp.numel() != 1) {
      MLCC_CHECK(axis >= 0 && axis < t.rank() && zp.numel() == t.dim(axis), op,
                 ": zero point of ", what, " has ", zp.numel(),
                 " elements, expected 1",
                 axis >= 0 && axis < t.rank()
                     ? " or " + std::to_string(t.dim(axis))
                     : std::string());
      stride = stridesOf(t.shape())[axis];
      dim = t.dim(axis);
    }
    zeros.resize(zp.numel());
    for (int64_t i = 0; i < zp.numel(); ++i)
      zeros[i] = static_cast<int32_t>(zp.getInt(i));
  }
  if (t.dtype() == DType::U8) {
    const uint8_t *p = t.data<uint8_t>();
    for (int64_t i = 0; i < n; ++i)
      out[i] = int32_t(p[i]) - zeros[dim == 1 ? 0 : (i / stride) % dim];
  } else {
    const int8_t *p = t.data<int8_t>();
    for (int64_t i = 0; i < n; ++i)
      out[i] = int32_t(p[i]) - zeros[dim == 1 ? 0 : (i / stride) % dim];
  }
  return Status::success();
}

} // namespace mlcc::ref::nn

#endif // MLCC_REFERENCE_KERNELS_CONVPOOLUTILS_H
