//===- NormalizationMisc.cpp - LpNorm, MVN and LRN reference kernels ------===//
//
// graph.lp_norm, graph.mean_variance_norm and graph.lrn: the normalisations
// that are not a per-channel affine transform. Float inputs only (f16/bf16
// computed in f32); sums in double.
//
//===----------------------------------------------------------------------===//

#include "ReduceUtils.h"

namespace mlcc::ref {
namespace {
using namespace reduction;

Status checkFloatInput(const char *op, const std::vector<ValueInfo> &in) {
  MLCC_CHECK(!in.empty() && in[0].present(), op, ": missing input");
  MLCC_CHECK(isFloatType(in[0].dtype), op, ": input has type ",
             dtypeName(in[0].dtype), ", expected a float type");
  return Status::success();
}

/// Runs fn<T>(x, y) with T float or double on the (widened) input and an
/// output buffer, then rounds back to f16/bf16 where needed.
template <typename Fn>
void runFloat(const Tensor &input, Tensor &output, Fn &&fn) {
  Tensor x = widenHalf(input);
  Tensor y = computeBuffer(output);
  if (x.dtype() == DType::F64)
    fn(x.data<double>(), y.data<double>());
  else
    fn(x.data<float>(), y.data<float>());
  narrowHalf(y, output);
}

//===----------------------------------------------------------------------===//
// graph.lp_norm
//===----------------------------------------------------------------------===//

// y = x / ||x||_p along `axis`, p in {1, 2}. A zero vector stays zero
// (rather than 0/0 = nan), as in onnxruntime.

Status inferLpNorm(const Attrs &attrs, const std::vector<ValueInfo> &in,
                   std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(checkFloatInput("lp_norm", in));
  int64_t axis = 0;
  Status s = normalizeAxis(attrs.getInt("axis", -1), in[0].rank(), axis);
  MLCC_CHECK(s.ok(), "lp_norm: ", s.message());
  int64_t p = attrs.getInt("p", 2);
  MLCC_CHECK(p == 1 || p == 2, "lp_norm: p is ", p, ", expected 1 or 2");
  out[0].dtype = in[0].dtype;
  out[0].shape = in[0].shape;
  return Status::success();
}

template <typename T>
void lpNormTyped(const T *x, T *y, int64_t outer, int64_t len, int64_t inner,
                 bool l1) {
  std::vector<double> norm(inner);
  for (int64_t o = 0; o < outer; ++o) {
    const T *xb = x + o * len * inner;
    T *yb = y + o * len * inner;
    std::fill(norm.begin(), norm.end(), 0.0);
    for (int64_t k = 0; k < len; ++k)
      for (int64_t i = 0; i < inner; ++i) {
        double v = xb[k * inner + i];
        norm[i] += l1 ? std::fabs(v) : v * v;
      }
    for (int64_t i = 0; i < inner; ++i) {
      double n = l1 ? norm[i] : std::sqrt(norm[i]);
      norm[i] = n == 0.0 ? 0.0 : 1.0 / n;
    }
    for (int64_t k = 0; k < len; ++k)
      for (int64_t i = 0; i < inner; ++i)
        yb[k * inner + i] = static_cast<T>(xb[k * inner + i] * norm[i]);
  }
}

Status runLpNorm(const Attrs &attrs, const std::vector<Tensor> &in,
                 std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferLpNorm, attrs, in, out));
  int64_t axis = 0, outer, len, inner;
  MLCC_RETURN_IF_ERROR(
      normalizeAxis(attrs.getInt("axis", -1), in[0].rank(), axis));
  splitAtAxis(in[0].shape(), axis, outer, len, inner);
  bool l1 = attrs.getInt("p", 2) == 1;
  runFloat(in[0], out[0], [&](const auto *x, auto *y) {
    lpNormTyped(x, y, outer, len, inner, l1);
  });
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.mean_variance_norm
//===----------------------------------------------------------------------===//

// Y = (X - E[X]) / (sqrt(E[(X - E[X])^2]) + 1e-9) over `axes` (default
// [0, 2, 3]); the 1e-9 is the epsilon of the ONNX function body, added to
// the standard deviation.

Status mvnAxes(const Attrs &attrs, int64_t rank, std::vector<bool> &reduced) {
  std::vector<int64_t> axes = attrs.getInts("axes", {0, 2, 3});
  reduced.assign(rank, axes.empty());
  for (int64_t a : axes) {
    int64_t n = 0;
    Status s = normalizeAxis(a, rank, n);
    MLCC_CHECK(s.ok(), "mean_variance_norm: ", s.message());
    MLCC_CHECK(!reduced[n], "mean_variance_norm: axis ", a, " is listed twice");
    reduced[n] = true;
  }
  return Status::success();
}

Status inferMvn(const Attrs &attrs, const std::vector<ValueInfo> &in,
                std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(checkFloatInput("mean_variance_norm", in));
  std::vector<bool> reduced;
  MLCC_RETURN_IF_ERROR(mvnAxes(attrs, in[0].rank(), reduced));
  out[0].dtype = in[0].dtype;
  out[0].shape = in[0].shape;
  return Status::success();
}

template <typename T> void mvnTyped(const T *x, T *y, const ReduceGeom &g) {
  std::vector<double> mean(g.outCount, 0.0), var(g.outCount, 0.0);
  double n = static_cast<double>(g.groupSize);
  forEachSegment(g, [&](int64_t i, int64_t o, int64_t len, int64_t os) {
    for (int64_t j = 0; j < len; ++j)
      mean[o + j * os] += x[i + j];
  });
  for (double &m : mean)
    m /= n;
  forEachSegment(g, [&](int64_t i, int64_t o, int64_t len, int64_t os) {
    for (int64_t j = 0; j < len; ++j) {
      double d = x[i + j] - mean[o + j * os];
      var[o + j * os] += d * d;
    }
  });
  // var becomes 1 / (stddev + eps).
  for (double &v : var)
    v = 1.0 / (std::sqrt(v / n) + 1e-9);
  forEachSegment(g, [&](int64_t i, int64_t o, int64_t len, int64_t os) {
    for (int64_t j = 0; j < len; ++j)
      y[i + j] =
          static_cast<T>((x[i + j] - mean[o + j * os]) * var[o + j * os]);
  });
}

Status runMvn(const Attrs &attrs, const std::vector<Tensor> &in,
              std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferMvn, attrs, in, out));
  std::vector<bool> reduced;
  MLCC_RETURN_IF_ERROR(mvnAxes(attrs, in[0].rank(), reduced));
  ReduceGeom g = makeReduceGeom(in[0].shape(), reduced);
  runFloat(in[0], out[0], [&](const auto *x, auto *y) { mvnTyped(x, y, g); });
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.lrn
//===----------------------------------------------------------------------===//

// Y[n, c, ...] = X[n, c, ...] / (bias + alpha / size * square_sum)^beta,
// square_sum over the channels max(0, c - floor((size-1)/2)) ..
// min(C-1, c + ceil((size-1)/2)).

Status inferLrn(const Attrs &attrs, const std::vector<ValueInfo> &in,
                std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(checkFloatInput("lrn", in));
  MLCC_CHECK(attrs.has("size"), "lrn: missing required attribute 'size'");
  MLCC_CHECK(attrs.getInt("size") >= 1, "lrn: size is ", attrs.getInt("size"),
             ", expected >= 1");
  MLCC_CHECK(in[0].rank() >= 2, "lrn: input has rank ", in[0].rank(),
             ", expected N x C x D1 x ... (rank >= 2)");
  out[0].dtype = in[0].dtype;
  out[0].shape = in[0].shape;
  return Status::success();
}

template <typename T>
void lrnTyped(const T *x, T *y, int64_t n, int64_t c, int64_t s, int64_t size,
              double alpha, double beta, double bias) {
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  std::vector<double> sq(s);
  for (int64_t i = 0; i < n; ++i) {
    const T *xn = x + i * c * s;
    T *yn = y + i * c * s;
    for (int64_t ch = 0; ch < c; ++ch) {
      std::fill(sq.begin(), sq.end(), 0.0);
      int64_t lo = std::max<int64_t>(0, ch - before);
      int64_t hi = std::min<int64_t>(c - 1, ch + after);
      for (int64_t k = lo; k <= hi; ++k)
        for (int64_t j = 0; j < s; ++j) {
          double v = xn[k * s + j];
          sq[j] += v * v;
        }
      for (int64_t j = 0; j < s; ++j)
        yn[ch * s + j] = static_cast<T>(
            xn[ch * s + j] /
            std::pow(bias + alpha / static_cast<double>(size) * sq[j], beta));
    }
  }
}

Status runLrn(const Attrs &attrs, const std::vector<Tensor> &in,
              std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferLrn, attrs, in, out));
  int64_t n = in[0].dim(0), c = in[0].dim(1);
  int64_t s = n * c == 0 ? 0 : in[0].numel() / (n * c);
  int64_t size = attrs.getInt("size");
  double alpha = attrs.getFloat("alpha", 1e-4f);
  double beta = attrs.getFloat("beta", 0.75f);
  double bias = attrs.getFloat("bias", 1.0f);
  runFloat(in[0], out[0], [&](const auto *x, auto *y) {
    lrnTyped(x, y, n, c, s, size, alpha, beta, bias);
  });
  return Status::success();
}

} // namespace

void reduction::registerMiscNormKernels(KernelRegistry &r) {
  r.add("lp_norm", {inferLpNorm, runLpNorm});
  r.add("mean_variance_norm", {inferMvn, runMvn});
  r.add("lrn", {inferLrn, runLrn});
}

} // namespace mlcc::ref
