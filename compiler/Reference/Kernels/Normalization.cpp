//===- Normalization.cpp - Batch, instance and layer norm kernels ---------===//
//
// graph.batch_norm, graph.instance_norm and graph.layer_norm. Statistics
// (mean, variance) are computed in double with two passes (mean first, then
// the mean of squared deviations), which stays accurate where E[x^2]-E[x]^2
// would cancel. The per-element loops are typed on float/double; f16/bf16
// are computed in f32.
//
//===----------------------------------------------------------------------===//

#include "ReduceUtils.h"

namespace mlcc::ref {
namespace {
using namespace reduction;

/// Mean and population variance of n contiguous elements.
template <typename T>
void meanVar(const T *x, int64_t n, double &mean, double &var) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i)
    sum += x[i];
  mean = sum / static_cast<double>(n);
  double sq = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double d = x[i] - mean;
    sq += d * d;
  }
  var = sq / static_cast<double>(n);
}

bool isKnown(const Shape &s) {
  for (int64_t d : s)
    if (d == kDynamic)
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// graph.batch_norm
//===----------------------------------------------------------------------===//

// Y = (X - mean) / sqrt(var + epsilon) * scale + B per channel (dim 1; a
// rank-1 X has one channel). In training mode the statistics are those of
// the batch, and outputs 1 and 2 are the updated running mean and variance.
// Parameters of C*D1*..*Dn elements (the pre-opset-9 spatial=0 form) are
// accepted in inference mode and applied per activation.

Status inferBatchNorm(const Attrs &attrs, const std::vector<ValueInfo> &in,
                      std::vector<ValueInfo> &out) {
  MLCC_CHECK(in.size() >= 5, "batch_norm: expected 5 inputs, got ", in.size());
  static const char *names[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (int i = 0; i < 5; ++i) {
    MLCC_CHECK(in[i].present(), "batch_norm: missing input '", names[i], "'");
    MLCC_CHECK(isFloatType(in[i].dtype), "batch_norm: input '", names[i],
               "' has type ", dtypeName(in[i].dtype),
               ", expected a float type");
  }
  const ValueInfo &x = in[0];
  MLCC_CHECK(x.rank() >= 1, "batch_norm: X must have rank >= 1");
  bool training = attrs.getInt("training_mode", 0) != 0;
  int64_t c = x.rank() == 1 ? 1 : x.shape[1];
  if (isKnown(x.shape)) {
    // C*D1*..*Dn, the per-activation parameter size.
    int64_t perAct = 1;
    for (int64_t d = 1; d < x.rank(); ++d)
      perAct *= x.shape[d];
    int64_t n0 = numElements(in[1].shape);
    for (int i = 1; i < 5; ++i) {
      if (!isKnown(in[i].shape))
        continue;
      int64_t n = numElements(in[i].shape);
      MLCC_CHECK(n == c || (!training && n == perAct), "batch_norm: input '",
                 names[i], "' has shape ", shapeToString(in[i].shape),
                 ", expected [", c, "] for the channels of X ",
                 shapeToString(x.shape));
      MLCC_CHECK(!isKnown(in[1].shape) || n == n0, "batch_norm: input '",
                 names[i], "' has shape ", shapeToString(in[i].shape),
                 " unlike scale ", shapeToString(in[1].shape));
    }
  }
  out[0].dtype = x.dtype;
  out[0].shape = x.shape;
  if (training) {
    for (size_t i = 1; i < 3 && i < out.size(); ++i) {
      out[i].dtype = in[i + 2].dtype;
      out[i].shape = {c};
    }
  }
  return Status::success();
}

template <typename T>
void batchNormTyped(const T *x, T *y, int64_t n, int64_t c, int64_t s,
                    const std::vector<double> &a,
                    const std::vector<double> &b) {
  bool perChannel = static_cast<int64_t>(a.size()) == c;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch) {
      const T *xp = x + (i * c + ch) * s;
      T *yp = y + (i * c + ch) * s;
      if (perChannel) {
        double ac = a[ch], bc = b[ch];
        for (int64_t j = 0; j < s; ++j)
          yp[j] = static_cast<T>(xp[j] * ac + bc);
      } else {
        const double *ap = a.data() + ch * s, *bp = b.data() + ch * s;
        for (int64_t j = 0; j < s; ++j)
          yp[j] = static_cast<T>(xp[j] * ap[j] + bp[j]);
      }
    }
}

/// Per-channel mean and population variance over the batch and spatial
/// dims (training mode).
template <typename T>
void batchStats(const T *x, int64_t n, int64_t c, int64_t s,
                std::vector<double> &mean, std::vector<double> &var) {
  mean.assign(c, 0.0);
  var.assign(c, 0.0);
  double count = static_cast<double>(n * s);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t j = 0; j < s; ++j)
        mean[ch] += x[(i * c + ch) * s + j];
  for (double &m : mean)
    m /= count;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t j = 0; j < s; ++j) {
        double d = x[(i * c + ch) * s + j] - mean[ch];
        var[ch] += d * d;
      }
  for (double &v : var)
    v /= count;
}

Status runBatchNorm(const Attrs &attrs, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferBatchNorm, attrs, in, out));
  Tensor x = widenHalf(in[0]);
  Tensor y = computeBuffer(out[0]);
  int64_t n = x.dim(0), c = x.rank() == 1 ? 1 : x.dim(1);
  int64_t s = n * c == 0 ? 0 : x.numel() / (n * c);
  double eps = attrs.getFloat("epsilon", 1e-5f);
  std::vector<double> scale = toDoubles(in[1]), bias = toDoubles(in[2]);
  std::vector<double> mean = toDoubles(in[3]), var = toDoubles(in[4]);
  if (attrs.getInt("training_mode", 0) != 0) {
    std::vector<double> curMean, curVar;
    if (x.dtype() == DType::F64)
      batchStats(x.data<double>(), n, c, s, curMean, curVar);
    else
      batchStats(x.data<float>(), n, c, s, curMean, curVar);
    double momentum = attrs.getFloat("momentum", 0.9f);
    for (size_t i = 1; i < 3 && i < out.size(); ++i) {
      const std::vector<double> &running = i == 1 ? mean : var;
      const std::vector<double> &current = i == 1 ? curMean : curVar;
      for (int64_t ch = 0; ch < c; ++ch)
        out[i].setDouble(ch, running[ch] * momentum +
                                 current[ch] * (1.0 - momentum));
    }
    mean = curMean;
    var = curVar;
  }
  // y = x * a + b with a = scale / sqrt(var + eps), b = B - mean * a.
  std::vector<double> a(scale.size()), b(scale.size());
  for (size_t p = 0; p < scale.size(); ++p) {
    a[p] = scale[p] / std::sqrt(var[p] + eps);
    b[p] = bias[p] - mean[p] * a[p];
  }
  if (x.dtype() == DType::F64)
    batchNormTyped(x.data<double>(), y.data<double>(), n, c, s, a, b);
  else
    batchNormTyped(x.data<float>(), y.data<float>(), n, c, s, a, b);
  narrowHalf(y, out[0]);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.instance_norm
//===----------------------------------------------------------------------===//

// y = scale * (x - mean) / sqrt(var + epsilon) + B, with mean and variance
// over the spatial dims of each (batch, channel).

Status inferInstanceNorm(const Attrs &, const std::vector<ValueInfo> &in,
                         std::vector<ValueInfo> &out) {
  MLCC_CHECK(in.size() >= 3 && in[0].present() && in[1].present() &&
                 in[2].present(),
             "instance_norm: expected inputs 'input', 'scale' and 'B'");
  for (int i = 0; i < 3; ++i)
    MLCC_CHECK(isFloatType(in[i].dtype), "instance_norm: input ", i,
               " has type ", dtypeName(in[i].dtype), ", expected a float type");
  const ValueInfo &x = in[0];
  MLCC_CHECK(x.rank() >= 2, "instance_norm: input has rank ", x.rank(),
             ", expected N x C x D1 x ... (rank >= 2)");
  int64_t c = x.shape[1];
  for (int i = 1; i < 3; ++i) {
    if (c == kDynamic || !isKnown(in[i].shape))
      continue;
    MLCC_CHECK(numElements(in[i].shape) == c,
               "instance_norm: ", i == 1 ? "scale" : "B", " has shape ",
               shapeToString(in[i].shape), ", expected [", c, "]");
  }
  out[0].dtype = x.dtype;
  out[0].shape = x.shape;
  return Status::success();
}

template <typename T>
void instanceNormTyped(const T *x, T *y, int64_t n, int64_t c, int64_t s,
                       const std::vector<double> &scale,
                       const std::vector<double> &bias, double eps) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch) {
      const T *xp = x + (i * c + ch) * s;
      T *yp = y + (i * c + ch) * s;
      double mean, var;
      meanVar(xp, s, mean, var);
      double a = scale[ch] / std::sqrt(var + eps);
      double b = bias[ch] - mean * a;
      for (int64_t j = 0; j < s; ++j)
        yp[j] = static_cast<T>(xp[j] * a + b);
    }
}

Status runInstanceNorm(const Attrs &attrs, const std::vector<Tensor> &in,
                       std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferInstanceNorm, attrs, in, out));
  Tensor x = widenHalf(in[0]);
  Tensor y = computeBuffer(out[0]);
  int64_t n = x.dim(0), c = x.dim(1);
  int64_t s = n * c == 0 ? 0 : x.numel() / (n * c);
  double eps = attrs.getFloat("epsilon", 1e-5f);
  std::vector<double> scale = toDoubles(in[1]), bias = toDoubles(in[2]);
  if (x.dtype() == DType::F64)
    instanceNormTyped(x.data<double>(), y.data<double>(), n, c, s, scale, bias,
                      eps);
  else
    instanceNormTyped(x.data<float>(), y.data<float>(), n, c, s, scale, bias,
                      eps);
  narrowHalf(y, out[0]);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.layer_norm
//===----------------------------------------------------------------------===//

// Normalises over the dims [axis, rank): Y = (X - Mean) * InvStdDev * Scale
// + B, with Scale and B broadcast against X. Mean and InvStdDev have X's
// shape with the normalised dims set to 1, in the type given by stash_type.

Status stashDType(const Attrs &attrs, DType &t) {
  int64_t stash = attrs.getInt("stash_type", 1);
  switch (stash) {
  case 1:
    t = DType::F32;
    return Status::success();
  case 10:
    t = DType::F16;
    return Status::success();
  case 11:
    t = DType::F64;
    return Status::success();
  case 16:
    t = DType::BF16;
    return Status::success();
  default:
    return Status::error("layer_norm: stash_type ", stash,
                         " is not a float type");
  }
}

Status inferLayerNorm(const Attrs &attrs, const std::vector<ValueInfo> &in,
                      std::vector<ValueInfo> &out) {
  MLCC_CHECK(in.size() >= 2 && in[0].present() && in[1].present(),
             "layer_norm: expected inputs 'X' and 'Scale'");
  const ValueInfo &x = in[0];
  for (size_t i = 0; i < in.size() && i < 3; ++i)
    MLCC_CHECK(!in[i].present() || isFloatType(in[i].dtype), "layer_norm: ",
               i == 0   ? "X"
               : i == 1 ? "Scale"
                        : "B",
               " has type ", dtypeName(in[i].dtype), ", expected a float type");
  int64_t axis = 0;
  Status s = normalizeAxis(attrs.getInt("axis", -1), x.rank(), axis);
  MLCC_CHECK(s.ok(), "layer_norm: ", s.message());
  for (size_t i = 1; i < in.size() && i < 3; ++i) {
    if (!in[i].present())
      continue;
    Shape b;
    Status bs = broadcastShapes(x.shape, in[i].shape, b);
    MLCC_CHECK(bs.ok() && in[i].rank() <= x.rank(),
               "layer_norm: ", i == 1 ? "Scale " : "B ",
               shapeToString(in[i].shape), " does not broadcast to X ",
               shapeToString(x.shape));
    for (size_t d = 0; d < b.size(); ++d)
      MLCC_CHECK(b[d] == x.shape[d] || isDyn(x.shape[d]) || isDyn(b[d]),
                 "layer_norm: ", i == 1 ? "Scale " : "B ",
                 shapeToString(in[i].shape), " does not broadcast to X ",
                 shapeToString(x.shape));
  }
  DType stash = DType::F32;
  MLCC_RETURN_IF_ERROR(stashDType(attrs, stash));
  out[0].dtype = x.dtype;
  out[0].shape = x.shape;
  Shape statShape = x.shape;
  for (int64_t d = axis; d < x.rank(); ++d)
    statShape[d] = 1;
  for (size_t i = 1; i < 3 && i < out.size(); ++i) {
    out[i].dtype = stash;
    out[i].shape = statShape;
  }
  return Status::success();
}

/// Offsets into a parameter broadcast to `shape`, split at `axis`: the
/// element (o, j) of X seen as [outer, norm] reads param[outer[o] +
/// inner[j]] (broadcast offsets are linear in the index).
void paramOffsets(const Shape &param, const Shape &shape, int64_t axis,
                  std::vector<int64_t> &outer, std::vector<int64_t> &inner) {
  std::vector<int64_t> strides = broadcastStrides(param, shape);
  Shape outerShape(shape.begin(), shape.begin() + axis);
  Shape innerShape(shape.begin() + axis, shape.end());
  outer.assign(numElements(outerShape), 0);
  inner.assign(numElements(innerShape), 0);
  forEachIndex(outerShape, [&](const std::vector<int64_t> &idx, int64_t l) {
    for (int64_t d = 0; d < axis; ++d)
      outer[l] += idx[d] * strides[d];
  });
  forEachIndex(innerShape, [&](const std::vector<int64_t> &idx, int64_t l) {
    for (size_t d = 0; d < idx.size(); ++d)
      inner[l] += idx[d] * strides[axis + d];
  });
}

template <typename T>
void layerNormTyped(const T *x, T *y, int64_t outer, int64_t norm,
                    const std::vector<double> &scale,
                    const std::vector<int64_t> &sOuter,
                    const std::vector<int64_t> &sInner,
                    const std::vector<double> &bias,
                    const std::vector<int64_t> &bOuter,
                    const std::vector<int64_t> &bInner, double eps,
                    std::vector<double> &means, std::vector<double> &invs) {
  for (int64_t o = 0; o < outer; ++o) {
    const T *xr = x + o * norm;
    T *yr = y + o * norm;
    double mean, var;
    meanVar(xr, norm, mean, var);
    double inv = 1.0 / std::sqrt(var + eps);
    means[o] = mean;
    invs[o] = inv;
    const double *sp = scale.data() + sOuter[o];
    if (bias.empty()) {
      for (int64_t j = 0; j < norm; ++j)
        yr[j] = static_cast<T>((xr[j] - mean) * inv * sp[sInner[j]]);
    } else {
      const double *bp = bias.data() + bOuter[o];
      for (int64_t j = 0; j < norm; ++j)
        yr[j] = static_cast<T>((xr[j] - mean) * inv * sp[sInner[j]] +
                               bp[bInner[j]]);
    }
  }
}

Status runLayerNorm(const Attrs &attrs, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferLayerNorm, attrs, in, out));
  Tensor x = widenHalf(in[0]);
  Tensor y = computeBuffer(out[0]);
  int64_t axis = 0;
  MLCC_RETURN_IF_ERROR(normalizeAxis(attrs.getInt("axis", -1), x.rank(), axis));
  int64_t outer = 1, norm = 1;
  for (int64_t d = 0; d < x.rank(); ++d)
    (d < axis ? outer : norm) *= x.dim(d);
  double eps = attrs.getFloat("epsilon", 1e-5f);
  std::vector<double> scale = toDoubles(in[1]), bias;
  std::vector<int64_t> sOuter, sInner, bOuter, bInner;
  paramOffsets(in[1].shape(), x.shape(), axis, sOuter, sInner);
  bool hasBias = in.size() > 2 && in[2].present();
  if (hasBias) {
    bias = toDoubles(in[2]);
    paramOffsets(in[2].shape(), x.shape(), axis, bOuter, bInner);
  }
  std::vector<double> means(outer), invs(outer);
  if (x.dtype() == DType::F64)
    layerNormTyped(x.data<double>(), y.data<double>(), outer, norm, scale,
                   sOuter, sInner, bias, bOuter, bInner, eps, means, invs);
  else
    layerNormTyped(x.data<float>(), y.data<float>(), outer, norm, scale, sOuter,
                   sInner, bias, bOuter, bInner, eps, means, invs);
  narrowHalf(y, out[0]);
  for (size_t i = 1; i < 3 && i < out.size(); ++i)
    for (int64_t o = 0; o < outer; ++o)
      out[i].setDouble(o, i == 1 ? means[o] : invs[o]);
  return Status::success();
}

} // namespace

void reduction::registerNormalizationKernels(KernelRegistry &r) {
  r.add("batch_norm", {inferBatchNorm, runBatchNorm});
  r.add("instance_norm", {inferInstanceNorm, runInstanceNorm});
  r.add("layer_norm", {inferLayerNorm, runLayerNorm});
  registerMiscNormKernels(r);
}

} // namespace mlcc::ref
