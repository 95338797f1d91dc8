//===- Pool.cpp - Pooling reference kernels -------------------------------===//
//
// average_pool, max_pool (with its optional Indices), lp_pool, the global
// pools, max_unpool and max_roi_pool. Each output element walks its window
// with the in-bounds tap range precomputed per dim, so padding costs no
// branches in the inner loop.
//
//===----------------------------------------------------------------------===//

#include "ConvPoolUtils.h"

namespace mlcc::ref {
namespace {

using namespace nn;

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

/// Output shape and resolved window of a pool over X [N, C, D...]: the
/// kernel comes from the required kernel_shape attribute.
Status inferPoolShape(const char *op, const Attrs &attrs, const ValueInfo &x,
                      Shape &out, Window &win) {
  MLCC_CHECK(x.rank() >= 3, op, ": input has rank ", x.rank(),
             ", expected at least 3 (N, C, spatial dims)");
  MLCC_CHECK(attrs.has("kernel_shape"), op,
             ": the kernel_shape attribute is required");
  Shape kernel = attrs.getInts("kernel_shape");
  size_t nd = x.shape.size() - 2;
  MLCC_CHECK(kernel.size() == nd, op, ": kernel_shape has ", kernel.size(),
             " values, expected ", nd, " (one per spatial dim)");
  MLCC_RETURN_IF_ERROR(readWindow(op, attrs, kernel, win));
  AutoPad autoPad;
  MLCC_RETURN_IF_ERROR(parseAutoPad(op, attrs, autoPad));
  Shape spatial;
  MLCC_RETURN_IF_ERROR(windowOutputDims(
      op, autoPad, attrs.getInt("ceil_mode", 0) != 0,
      Shape(x.shape.begin() + 2, x.shape.end()), win, spatial));
  out = {x.shape[0], x.shape[1]};
  out.insert(out.end(), spatial.begin(), spatial.end());
  return Status::success();
}

/// Resolved 3-D geometry of a pool whose output is already allocated.
Status concretePoolGeom(const char *op, const Attrs &attrs, const Tensor &x,
                        const Tensor &y, Geom3 &g) {
  ValueInfo xi{x.dtype(), x.shape(), &x};
  Shape shape;
  Window win;
  MLCC_RETURN_IF_ERROR(inferPoolShape(op, attrs, xi, shape, win));
  return makeGeom3(op, Shape(x.shape().begin() + 2, x.shape().end()),
                   Shape(y.shape().begin() + 2, y.shape().end()), win, g);
}

//===----------------------------------------------------------------------===//
// Window walking
//===----------------------------------------------------------------------===//

/// The taps of one window along one dim: the window starts at input
/// coordinate `start`; taps [lo, hi) are inside the input and taps
/// [0, padHi) inside the input plus its end padding.
struct Taps {
  int64_t start, lo, hi, padHi;
};

inline Taps tapsAt(const Geom3 &g, int dim, int64_t o) {
  Taps t;
  int64_t k = g.k[dim], d = g.d[dim], n = g.in[dim];
  t.start = o * g.s[dim] - g.pb[dim];
  t.lo = std::max<int64_t>(0, ceilDiv(-t.start, d));
  t.hi = std::min<int64_t>(k, floorDiv(n - 1 - t.start, d) + 1);
  t.padHi = std::min<int64_t>(k, floorDiv(n + g.pe[dim] - 1 - t.start, d) + 1);
  if (t.hi < t.lo)
    t.hi = t.lo;
  return t;
}

/// Calls fn(outIndex, taps[3]) for each output position of one plane.
template <typename Fn> void forEachWindow(const Geom3 &g, Fn &&fn) {
  int64_t o = 0;
  for (int64_t od = 0; od < g.out[0]; ++od) {
    Taps td = tapsAt(g, 0, od);
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      Taps th = tapsAt(g, 1, oh);
      for (int64_t ow = 0; ow < g.out[2]; ++ow, ++o) {
        Taps t[3] = {td, th, tapsAt(g, 2, ow)};
        fn(o, t);
      }
    }
  }
}

/// Calls fn(offset) with the in-plane offset (d, h, w) of every in-bounds
/// tap of a window, in row-major order; fn also gets the coordinates.
template <typename Fn> void forEachTap(const Geom3 &g, const Taps *t, Fn &&fn) {
  for (int64_t kd = t[0].lo; kd < t[0].hi; ++kd) {
    int64_t id = t[0].start + kd * g.d[0];
    for (int64_t kh = t[1].lo; kh < t[1].hi; ++kh) {
      int64_t ih = t[1].start + kh * g.d[1];
      int64_t row = (id * g.in[1] + ih) * g.in[2];
      for (int64_t kw = t[2].lo; kw < t[2].hi; ++kw) {
        int64_t iw = t[2].start + kw * g.d[2];
        fn(row + iw, id, ih, iw);
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// graph.max_pool
//===----------------------------------------------------------------------===//

Status inferMaxPool(const Attrs &attrs, const std::vector<ValueInfo> &in,
                    std::vector<ValueInfo> &out) {
  MLCC_CHECK(!in.empty(), "max_pool: expected input X");
  DType t = in[0].dtype;
  MLCC_CHECK(isFloatType(t) || t == DType::I8 || t == DType::U8,
             "max_pool: input has type ", dtypeName(t),
             ", expected a float type, i8 or u8");
  Window win;
  MLCC_RETURN_IF_ERROR(
      inferPoolShape("max_pool", attrs, in[0], out[0].shape, win));
  out[0].dtype = t;
  int64_t order = attrs.getInt("storage_order", 0);
  MLCC_CHECK(order == 0 || order == 1, "max_pool: storage_order ", order,
             " must be 0 (row major) or 1 (column major)");
  if (out.size() > 1) {
    out[1].dtype = DType::I64;
    out[1].shape = out[0].shape;
  }
  return Status::success();
}

/// Max over each window; `indices` (may be null) gets the flat index of the
/// first maximum in X, its spatial part row- or column-major. NaN wins.
template <typename T>
void maxPool(const Geom3 &g, int64_t planes, bool colMajor, const T *x, T *y,
             int64_t *indices) {
  const int64_t inPlane = g.inSize(), outPlane = g.outSize();
  for (int64_t p = 0; p < planes; ++p) {
    const T *xp = x + p * inPlane;
    forEachWindow(g, [&](int64_t o, const Taps *t) {
      T best = std::numeric_limits<T>::lowest();
      int64_t at = -1;
      forEachTap(g, t, [&](int64_t off, int64_t id, int64_t ih, int64_t iw) {
        T v = xp[off];
        if (at < 0 || v > best || (v != v && best == best)) {
          best = v;
          at = colMajor ? id + g.in[0] * (ih + g.in[1] * iw) : off;
        }
      });
      y[p * outPlane + o] = best;
      if (indices)
        indices[p * outPlane + o] = at < 0 ? -1 : p * inPlane + at;
    });
  }
}

Status runMaxPool(const Attrs &attrs, const std::vector<Tensor> &in,
                  std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferMaxPool, attrs, in, out));
  Tensor x = widenHalf(in[0]);
  bool half = isHalfType(out[0].dtype());
  Tensor y = half ? Tensor(DType::F32, out[0].shape()) : out[0];
  Geom3 g;
  MLCC_RETURN_IF_ERROR(concretePoolGeom("max_pool", attrs, x, y, g));
  int64_t planes = x.dim(0) * x.dim(1);
  bool colMajor = attrs.getInt("storage_order", 0) == 1;
  int64_t *idx = out.size() > 1 ? out[1].data<int64_t>() : nullptr;
  switch (x.dtype()) {
  case DType::F64:
    maxPool(g, planes, colMajor, x.data<double>(), y.data<double>(), idx);
    break;
  case DType::I8:
    maxPool(g, planes, colMajor, x.data<int8_t>(), y.data<int8_t>(), idx);
    break;
  case DType::U8:
    maxPool(g, planes, colMajor, x.data<uint8_t>(), y.data<uint8_t>(), idx);
    break;
  default:
    maxPool(g, planes, colMajor, x.data<float>(), y.data<float>(), idx);
    break;
  }
  if (half)
    narrowHalf(y, out[0]);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.average_pool and graph.lp_pool
//===----------------------------------------------------------------------===//

/// Shape function of the float-only windowed pools.
template <const char *Op>
Status inferFloatPool(const Attrs &attrs, const std::vector<ValueInfo> &in,
                      std::vector<ValueInfo> &out) {
  MLCC_CHECK(!in.empty(), Op, ": expected input X");
  MLCC_RETURN_IF_ERROR(checkFloat(Op, "input", in[0].dtype));
  Window win;
  MLCC_RETURN_IF_ERROR(inferPoolShape(Op, attrs, in[0], out[0].shape, win));
  out[0].dtype = in[0].dtype;
  return Status::success();
}

constexpr char kAveragePool[] = "average_pool";
constexpr char kLpPool[] = "lp_pool";

/// Mean of each window. The divisor counts the taps inside the input, or
/// with count_include_pad also those in the pads (not those beyond the end
/// padding that ceil_mode adds).
template <typename T>
void averagePool(const Geom3 &g, int64_t planes, bool includePad, const T *x,
                 T *y) {
  const int64_t inPlane = g.inSize(), outPlane = g.outSize();
  for (int64_t p = 0; p < planes; ++p) {
    const T *xp = x + p * inPlane;
    forEachWindow(g, [&](int64_t o, const Taps *t) {
      T sum = 0;
      forEachTap(g, t, [&](int64_t off, int64_t, int64_t, int64_t) {
        sum += xp[off];
      });
      int64_t count = 1;
      for (int i = 0; i < 3; ++i)
        count *= includePad ? t[i].padHi : t[i].hi - t[i].lo;
      y[p * outPlane + o] = count > 0 ? sum / static_cast<T>(count) : T(0);
    });
  }
}

/// (sum |x|^p)^(1/p) over each window; pads count as zeros.
template <typename T>
void lpPool(const Geom3 &g, int64_t planes, int64_t pw, const T *x, T *y) {
  const int64_t inPlane = g.inSize(), outPlane = g.outSize();
  for (int64_t p = 0; p < planes; ++p) {
    const T *xp = x + p * inPlane;
    forEachWindow(g, [&](int64_t o, const Taps *t) {
      T sum = 0;
      forEachTap(g, t, [&](int64_t off, int64_t, int64_t, int64_t) {
        T a = std::fabs(xp[off]);
        sum += pw == 2 ? a * a : pw == 1 ? a : std::pow(a, T(pw));
      });
      y[p * outPlane + o] = pw == 2   ? std::sqrt(sum)
                            : pw == 1 ? sum
                                      : std::pow(sum, T(1) / T(pw));
    });
  }
}

template <const char *Op>
Status runFloatPool(const Attrs &attrs, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferFloatPool<Op>, attrs, in, out));
  bool lp = Op == kLpPool;
  int64_t p = attrs.getInt("p", 2);
  MLCC_CHECK(!lp || p >= 1, Op, ": p ", p, " must be >= 1");
  Tensor x = widenHalf(in[0]);
  bool half = isHalfType(out[0].dtype());
  Tensor y = half ? Tensor(DType::F32, out[0].shape()) : out[0];
  Geom3 g;
  MLCC_RETURN_IF_ERROR(concretePoolGeom(Op, attrs, x, y, g));
  int64_t planes = x.dim(0) * x.dim(1);
  bool includePad = attrs.getInt("count_include_pad", 0) != 0;
  if (x.dtype() == DType::F64) {
    if (lp)
      lpPool(g, planes, p, x.data<double>(), y.data<double>());
    else
      averagePool(g, planes, includePad, x.data<double>(), y.data<double>());
  } else {
    if (lp)
      lpPool(g, planes, p, x.data<float>(), y.data<float>());
    else
      averagePool(g, planes, includePad, x.data<float>(), y.data<float>());
  }
  if (half)
    narrowHalf(y, out[0]);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.global_average_pool, graph.global_max_pool, graph.global_lp_pool
//===----------------------------------------------------------------------===//

enum class GlobalKind { Average, Max, Lp };

template <const char *Op>
Status inferGlobalPool(const Attrs &, const std::vector<ValueInfo> &in,
                       std::vector<ValueInfo> &out) {
  MLCC_CHECK(!in.empty(), Op, ": expected input X");
  MLCC_RETURN_IF_ERROR(checkFloat(Op, "input", in[0].dtype));
  MLCC_CHECK(in[0].rank() >= 3, Op, ": input has rank ", in[0].rank(),
             ", expected at least 3 (N, C, spatial dims)");
  out[0].dtype = in[0].dtype;
  out[0].shape = Shape(in[0].shape.size(), 1);
  out[0].shape[0] = in[0].shape[0];
  out[0].shape[1] = in[0].shape[1];
  return Status::success();
}

template <typename T>
void globalPool(GlobalKind kind, int64_t p, int64_t planes, int64_t size,
                const T *x, T *y) {
  for (int64_t i = 0; i < planes; ++i) {
    const T *xp = x + i * size;
    T acc = kind == GlobalKind::Max ? -std::numeric_limits<T>::infinity() : 0;
    for (int64_t j = 0; j < size; ++j) {
      T v = xp[j];
      if (kind == GlobalKind::Max)
        acc = (v > acc || v != v) && acc == acc ? v : acc;
      else if (kind == GlobalKind::Average)
        acc += v;
      else
        acc += p == 2 ? v * v : std::pow(std::fabs(v), T(p));
    }
    if (kind == GlobalKind::Average)
      acc = size ? acc / static_cast<T>(size) : T(0);
    else if (kind == GlobalKind::Lp)
      acc = p == 2 ? std::sqrt(acc) : std::pow(acc, T(1) / T(p));
    y[i] = acc;
  }
}

constexpr char kGlobalAveragePool[] = "global_average_pool";
constexpr char kGlobalMaxPool[] = "global_max_pool";
constexpr char kGlobalLpPool[] = "global_lp_pool";

template <const char *Op, GlobalKind Kind>
Status runGlobalPool(const Attrs &attrs, const std::vector<Tensor> &in,
                     std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferGlobalPool<Op>, attrs, in, out));
  int64_t p = attrs.getInt("p", 2);
  MLCC_CHECK(Kind != GlobalKind::Lp || p >= 1, Op, ": p ", p, " must be >= 1");
  Tensor x = widenHalf(in[0]);
  bool half = isHalfType(out[0].dtype());
  Tensor y = half ? Tensor(DType::F32, out[0].shape()) : out[0];
  int64_t planes = x.dim(0) * x.dim(1);
  int64_t size = planes ? x.numel() / planes : 0;
  if (x.dtype() == DType::F64)
    globalPool(Kind, p, planes, size, x.data<double>(), y.data<double>());
  else
    globalPool(Kind, p, planes, size, x.data<float>(), y.data<float>());
  if (half)
    narrowHalf(y, out[0]);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.max_unpool
//===----------------------------------------------------------------------===//

/// The size of the max_pool input this op undoes: per spatial dim
/// (in - 1) * stride + kernel - pads.
Status unpooledShape(const Attrs &attrs, const Shape &x, Shape &out) {
  const char *op = "max_unpool";
  MLCC_CHECK(x.size() >= 3, op, ": input has rank ", x.size(),
             ", expected at least 3 (N, C, spatial dims)");
  MLCC_CHECK(attrs.has("kernel_shape"), op,
             ": the kernel_shape attribute is required");
  Shape kernel = attrs.getInts("kernel_shape");
  size_t nd = x.size() - 2;
  MLCC_CHECK(kernel.size() == nd, op, ": kernel_shape has ", kernel.size(),
             " values, expected ", nd);
  Window win;
  MLCC_RETURN_IF_ERROR(readWindow(op, attrs, kernel, win));
  out = {x[0], x[1]};
  for (size_t i = 0; i < nd; ++i) {
    int64_t d = x[i + 2];
    int64_t o =
        (d - 1) * win.strides[i] + kernel[i] - win.padBegin[i] - win.padEnd[i];
    MLCC_CHECK(isDyn(d) || o >= 0, op, ": pads make spatial dim ", i,
               " negative");
    out.push_back(isDyn(d) ? kDynamic : o);
  }
  return Status::success();
}

// Operands: X, I (int64 indices as max_pool returns them), optional
// output_shape.
Status inferMaxUnpool(const Attrs &attrs, const std::vector<ValueInfo> &in,
                      std::vector<ValueInfo> &out) {
  const char *op = "max_unpool";
  MLCC_CHECK(in.size() >= 2, op, ": expected inputs X and I");
  MLCC_RETURN_IF_ERROR(checkFloat(op, "input", in[0].dtype));
  MLCC_CHECK(in[1].dtype == DType::I64, op, ": indices have type ",
             dtypeName(in[1].dtype), ", expected i64");
  MLCC_CHECK(in[1].rank() == in[0].rank(), op, ": indices have rank ",
             in[1].rank(), ", expected ", in[0].rank(), " like the input");
  out[0].dtype = in[0].dtype;
  Shape unpooled;
  MLCC_RETURN_IF_ERROR(unpooledShape(attrs, in[0].shape, unpooled));
  if (in.size() < 3 || !in[2].present()) {
    out[0].shape = unpooled;
    return Status::success();
  }
  MLCC_CHECK(in[2].rank() == 1, op, ": output_shape has rank ", in[2].rank(),
             ", expected 1");
  if (!in[2].value) {
    out[0].shape.assign(in[0].shape.size(), kDynamic);
    return Status::success();
  }
  out[0].shape = in[2].value->toInt64Vector();
  MLCC_CHECK(out[0].rank() == in[0].rank(), op, ": output_shape ",
             shapeToString(out[0].shape), " has rank ", out[0].rank(),
             ", expected ", in[0].rank());
  for (size_t i = 0; i < unpooled.size(); ++i)
    MLCC_CHECK(isDyn(unpooled[i]) || out[0].shape[i] >= unpooled[i], op,
               ": output_shape ", shapeToString(out[0].shape),
               " is smaller than the unpooled shape ", shapeToString(unpooled));
  return Status::success();
}

/// As in the ONNX reference implementation, the indices address the
/// unpooled shape (the size the attributes imply); a larger output_shape
/// gets that result in its leading corner and zeros elsewhere.
Status runMaxUnpool(const Attrs &attrs, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferMaxUnpool, attrs, in, out));
  const Tensor &x = in[0], &idx = in[1];
  Tensor &y = out[0];
  MLCC_CHECK(idx.shape() == x.shape(), "max_unpool: indices have shape ",
             shapeToString(idx.shape()), ", expected ",
             shapeToString(x.shape()), " like the input");
  Shape unpooled;
  MLCC_RETURN_IF_ERROR(unpooledShape(attrs, x.shape(), unpooled));
  bool direct = unpooled == y.shape();
  Tensor u = direct ? y : Tensor(y.dtype(), unpooled);
  size_t es = dtypeSize(x.dtype());
  const uint8_t *src = static_cast<const uint8_t *>(x.raw());
  uint8_t *dst = static_cast<uint8_t *>(u.raw());
  const int64_t *ip = idx.data<int64_t>();
  for (int64_t i = 0, n = x.numel(), limit = u.numel(); i < n; ++i) {
    MLCC_CHECK(ip[i] >= 0 && ip[i] < limit, "max_unpool: index ", ip[i],
               " is out of range for the unpooled shape ",
               shapeToString(unpooled));
    std::memcpy(dst + ip[i] * es, src + i * es, es);
  }
  if (direct)
    return Status::success();
  std::vector<int64_t> ys = stridesOf(y.shape());
  uint8_t *yp = static_cast<uint8_t *>(y.raw());
  forEachIndex(unpooled, [&](const std::vector<int64_t> &at, int64_t i) {
    int64_t o = 0;
    for (size_t d = 0; d < at.size(); ++d)
      o += at[d] * ys[d];
    std::memcpy(yp + o * es, dst + i * es, es);
  });
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.max_roi_pool
//===----------------------------------------------------------------------===//

// Operands: X [N, C, H, W], rois [R, 5] rows of (batch, x1, y1, x2, y2).
Status inferMaxRoiPool(const Attrs &attrs, const std::vector<ValueInfo> &in,
                       std::vector<ValueInfo> &out) {
  const char *op = "max_roi_pool";
  MLCC_CHECK(in.size() >= 2, op, ": expected inputs X and rois");
  MLCC_RETURN_IF_ERROR(checkFloat(op, "input", in[0].dtype));
  MLCC_CHECK(in[1].dtype == in[0].dtype, op, ": rois have type ",
             dtypeName(in[1].dtype), ", expected ", dtypeName(in[0].dtype));
  MLCC_CHECK(in[0].rank() == 4, op, ": input has rank ", in[0].rank(),
             ", expected 4 (N, C, H, W)");
  MLCC_CHECK(
      in[1].rank() == 2 && (isDyn(in[1].shape[1]) || in[1].shape[1] == 5), op,
      ": rois have shape ", shapeToString(in[1].shape), ", expected [R, 5]");
  std::vector<int64_t> pooled = attrs.getInts("pooled_shape");
  MLCC_CHECK(pooled.size() == 2 && pooled[0] >= 1 && pooled[1] >= 1, op,
             ": pooled_shape must hold two positive values");
  out[0].dtype = in[0].dtype;
  out[0].shape = {in[1].shape[0], in[0].shape[1], pooled[0], pooled[1]};
  return Status::success();
}

/// ROI max pooling as in Fast R-CNN (and onnxruntime): ROI corners are
/// scaled and rounded, the ROI split into pooled bins by floor/ceil, and an
/// empty bin gives 0.
template <typename T>
Status maxRoiPool(const Tensor &xt, const Tensor &rt, float scale, Tensor &yt) {
  const T *x = xt.data<T>(), *rois = rt.data<T>();
  T *y = yt.data<T>();
  int64_t n = xt.dim(0), c = xt.dim(1), h = xt.dim(2), w = xt.dim(3);
  int64_t ph = yt.dim(2), pw = yt.dim(3);
  for (int64_t r = 0; r < rt.dim(0); ++r) {
    const T *roi = rois + r * 5;
    int64_t b = static_cast<int64_t>(roi[0]);
    MLCC_CHECK(b >= 0 && b < n, "max_roi_pool: roi ", r, " has batch index ",
               roi[0], ", expected [0, ", n, ")");
    auto scaled = [&](T v) {
      return static_cast<int64_t>(std::round(static_cast<double>(v) * scale));
    };
    int64_t x0 = scaled(roi[1]), y0 = scaled(roi[2]);
    int64_t rw = std::max<int64_t>(scaled(roi[3]) - x0 + 1, 1);
    int64_t rh = std::max<int64_t>(scaled(roi[4]) - y0 + 1, 1);
    double binH = double(rh) / double(ph), binW = double(rw) / double(pw);
    for (int64_t ch = 0; ch < c; ++ch) {
      const T *xp = x + (b * c + ch) * h * w;
      T *yp = y + (r * c + ch) * ph * pw;
      for (int64_t i = 0; i < ph; ++i) {
        int64_t hs = static_cast<int64_t>(std::floor(i * binH)) + y0;
        int64_t he = static_cast<int64_t>(std::ceil((i + 1) * binH)) + y0;
        hs = std::min(std::max<int64_t>(hs, 0), h);
        he = std::min(std::max<int64_t>(he, 0), h);
        for (int64_t j = 0; j < pw; ++j) {
          int64_t ws = static_cast<int64_t>(std::floor(j * binW)) + x0;
          int64_t we = static_cast<int64_t>(std::ceil((j + 1) * binW)) + x0;
          ws = std::min(std::max<int64_t>(ws, 0), w);
          we = std::min(std::max<int64_t>(we, 0), w);
          T best =
              he <= hs || we <= ws ? T(0) : std::numeric_limits<T>::lowest();
          for (int64_t yy = hs; yy < he; ++yy)
            for (int64_t xx = ws; xx < we; ++xx)
              best = std::max(best, xp[yy * w + xx]);
          yp[i * pw + j] = best;
        }
      }
    }
  }
  return Status::success();
}

Status runMaxRoiPool(const Attrs &attrs, const std::vector<Tensor> &in,
                     std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferMaxRoiPool, attrs, in, out));
  Tensor x = widenHalf(in[0]), rois = widenHalf(in[1]);
  bool half = isHalfType(out[0].dtype());
  Tensor y = half ? Tensor(DType::F32, out[0].shape()) : out[0];
  float scale = attrs.getFloat("spatial_scale", 1.0f);
  if (x.dtype() == DType::F64)
    MLCC_RETURN_IF_ERROR(maxRoiPool<double>(x, rois, scale, y));
  else
    MLCC_RETURN_IF_ERROR(maxRoiPool<float>(x, rois, scale, y));
  if (half)
    narrowHalf(y, out[0]);
  return Status::success();
}

} // namespace

void nn::registerPoolKernels(KernelRegistry &r) {
  r.add("max_pool", {inferMaxPool, runMaxPool});
  r.add("average_pool",
        {inferFloatPool<kAveragePool>, runFloatPool<kAveragePool>});
  r.add("lp_pool", {inferFloatPool<kLpPool>, runFloatPool<kLpPool>});
  r.add("global_average_pool",
        {inferGlobalPool<kGlobalAveragePool>,
         runGlobalPool<kGlobalAveragePool, GlobalKind::Average>});
  r.add("global_max_pool", {inferGlobalPool<kGlobalMaxPool>,
                            runGlobalPool<kGlobalMaxPool, GlobalKind::Max>});
  r.add("global_lp_pool", {inferGlobalPool<kGlobalLpPool>,
                           runGlobalPool<kGlobalLpPool, GlobalKind::Lp>});
  r.add("max_unpool", {inferMaxUnpool, runMaxUnpool});
  r.add("max_roi_pool", {inferMaxRoiPool, runMaxRoiPool});
}

} // namespace mlcc::ref
