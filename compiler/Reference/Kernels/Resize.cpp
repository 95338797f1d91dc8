//===- Resize.cpp - Resize and Upsample reference kernels -----------------===//
//
// Resize interpolates each axis on its own: every output coordinate maps to
// a source coordinate, which gives a few (index, weight) taps per output
// index. N-linear and N-cubic interpolation are tensor products of the 1-D
// weights, so the kernel resizes one axis after the other (in double), which
// costs O(taps) per element and axis instead of O(taps^rank). Nearest copies
// elements bit for bit, so it is exact for every dtype.
//
// Where the spec leaves details open we follow the ONNX reference
// implementation the node tests were made with (onnx/backend/test/case/
// node/resize.py): the "resized length" in the coordinate formulas is
// scale * input_length (not the floored output length), and source indices
// outside the input are clamped to the edge.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "MiscKernels.h"

#include <cmath>

namespace mlcc::ref::misc {
namespace {

struct ResizeParams {
  std::string mode;        // nearest, linear, cubic
  std::string coordMode;   // coordinate_transformation_mode
  std::string nearestMode; // round_prefer_floor, ...
  double cubicA = -0.75;
  bool excludeOutside = false;
  double extrapolation = 0.0;
  std::vector<double> scales; // per axis
  Shape outShape;             // may hold kDynamic in shape inference
  std::vector<double> roi;    // [start..., end...] for tf_crop_and_resize
  bool fromSizes = false;     // outShape came from the sizes input
};

/// Reads a float tensor's values (scales, roi).
std::vector<double> doublesOf(const Tensor &t) {
  std::vector<double> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i)
    v[i] = t.getDouble(i);
  return v;
}

/// An input that is absent or holds no element (opset 11 passes empty
/// tensors for the unused one of scales and sizes).
bool isEmpty(const ValueInfo &v) {
  if (!v.present())
    return true;
  for (int64_t d : v.shape)
    if (d == 0)
      return true;
  return false;
}

Status checkModes(const char *op, const ResizeParams &p) {
  MLCC_CHECK(p.mode == "nearest" || p.mode == "linear" || p.mode == "cubic", op,
             ": unknown mode '", p.mode, "'");
  static const char *coordModes[] = {
      "half_pixel", "pytorch_half_pixel", "align_corners",
      "asymmetric", "tf_crop_and_resize", "tf_half_pixel_for_nn"};
  bool known = false;
  for (const char *m : coordModes)
    known |= p.coordMode == m;
  MLCC_CHECK(known, op, ": unknown coordinate_transformation_mode '",
             p.coordMode, "'");
  MLCC_CHECK(p.nearestMode == "round_prefer_floor" ||
                 p.nearestMode == "round_prefer_ceil" ||
                 p.nearestMode == "floor" || p.nearestMode == "ceil",
             op, ": unknown nearest_mode '", p.nearestMode, "'");
  return Status::success();
}

/// Fills p.scales and p.outShape from a scales or a sizes operand. Either may
/// be null (not given); their values may be unknown in shape inference.
Status resolveSizes(const char *op, const ValueInfo &x, const ValueInfo *scales,
                    const ValueInfo *sizes, ResizeParams &p) {
  int64_t rank = x.rank();
  bool haveScales = scales && !isEmpty(*scales);
  bool haveSizes = sizes && !isEmpty(*sizes);
  MLCC_CHECK(haveScales != haveSizes, op,
             haveScales ? ": scales and sizes are both given"
                        : ": one of scales and sizes is required");
  const ValueInfo &v = haveScales ? *scales : *sizes;
  const char *what = haveScales ? "scales" : "sizes";
  MLCC_CHECK(v.rank() == 1, op, ": ", what, " has rank ", v.rank(),
             ", expected 1");
  MLCC_CHECK(isDyn(v.shape[0]) || v.shape[0] == rank, op, ": ", what, " has ",
             v.shape[0], " elements, expected one per input axis (", rank, ")");
  if (haveScales)
    MLCC_CHECK(isFloatType(v.dtype), op, ": scales must be a float tensor");
  else
    MLCC_CHECK(v.dtype == DType::I64, op, ": sizes must be an i64 tensor");
  p.outShape.assign(rank, kDynamic);
  p.scales.assign(rank, 0.0);
  p.fromSizes = haveSizes;
  if (!v.value)
    return Status::success();
  for (int64_t i = 0; i < rank; ++i) {
    if (haveScales) {
      double s = v.value->getDouble(i);
      MLCC_CHECK(s > 0, op, ": scales[", i, "] = ", s, " is not positive");
      p.scales[i] = s;
      MLCC_CHECK(
          isDyn(x.shape[i]) ||
              floorToDim(static_cast<double>(x.shape[i]) * s, p.outShape[i]),
          op, ": dim ", i, " (", x.shape[i], ") times scales[", i, "] = ", s,
          " overflows int64");
    } else {
      int64_t s = v.value->getInt(i);
      MLCC_CHECK(s >= 0, op, ": sizes[", i, "] = ", s, " is negative");
      p.outShape[i] = s;
      if (!isDyn(x.shape[i]) && x.shape[i] > 0)
        p.scales[i] = static_cast<double>(s) / x.shape[i];
    }
  }
  return Status::success();
}

Status resolveResize(const Attrs &attrs, const std::vector<ValueInfo> &in,
                     ResizeParams &p) {
  MLCC_CHECK(!in.empty() && in[0].present(), "resize: X is required");
  p.mode = attrs.getString("mode", "nearest");
  p.coordMode = attrs.getString("coordinate_transformation_mode", "half_pixel");
  p.nearestMode = attrs.getString("nearest_mode", "round_prefer_floor");
  p.cubicA = attrs.getFloat("cubic_coeff_a", -0.75f);
  p.excludeOutside = attrs.getInt("exclude_outside", 0) != 0;
  p.extrapolation = attrs.getFloat("extrapolation_value", 0.0f);
  MLCC_RETURN_IF_ERROR(checkModes("resize", p));
  auto opt = [&](size_t i) { return i < in.size() ? &in[i] : nullptr; };
  MLCC_RETURN_IF_ERROR(resolveSizes("resize", in[0], opt(2), opt(3), p));
  if (p.coordMode == "tf_crop_and_resize") {
    const ValueInfo *roi = opt(1);
    MLCC_CHECK(roi && !isEmpty(*roi), "resize: tf_crop_and_resize needs roi");
    MLCC_CHECK(roi->rank() == 1 &&
                   (isDyn(roi->shape[0]) || roi->shape[0] == 2 * in[0].rank()),
               "resize: roi has shape ", shapeToString(roi->shape),
               ", expected [", 2 * in[0].rank(), "]");
    if (roi->value)
      p.roi = doublesOf(*roi->value);
  }
  return Status::success();
}

/// Upsample (opset 7-10): a resize with asymmetric coordinates; nearest
/// takes the floor. Opset 7 gives scales as an attribute, later as input 1.
Status resolveUpsample(const Attrs &attrs, const std::vector<ValueInfo> &in,
                       ResizeParams &p) {
  MLCC_CHECK(!in.empty() && in[0].present(), "upsample: X is required");
  p.mode = attrs.getString("mode", "nearest");
  if (p.mode == "bilinear" || p.mode == "trilinear")
    p.mode = "linear";
  MLCC_CHECK(p.mode == "nearest" || p.mode == "linear",
             "upsample: unknown mode '", p.mode, "'");
  p.coordMode = "asymmetric";
  p.nearestMode = "floor";
  if (in.size() > 1 && in[1].present())
    return resolveSizes("upsample", in[0], &in[1], nullptr, p);
  MLCC_CHECK(attrs.has("scales"), "upsample: scales is required");
  std::vector<float> s = attrs.getFloats("scales");
  Tensor t =
      Tensor::fromVector(DType::F32, {static_cast<int64_t>(s.size())}, s);
  ValueInfo v{DType::F32, t.shape(), &t};
  return resolveSizes("upsample", in[0], &v, nullptr, p);
}

Status inferFrom(const ResizeParams &p, const std::vector<ValueInfo> &in,
                 std::vector<ValueInfo> &out) {
  out[0] = ValueInfo{in[0].dtype, p.outShape, nullptr};
  return Status::success();
}

Status inferResize(const Attrs &attrs, const std::vector<ValueInfo> &in,
                   std::vector<ValueInfo> &out) {
  ResizeParams p;
  MLCC_RETURN_IF_ERROR(resolveResize(attrs, in, p));
  return inferFrom(p, in, out);
}

Status inferUpsample(const Attrs &attrs, const std::vector<ValueInfo> &in,
                     std::vector<ValueInfo> &out) {
  ResizeParams p;
  MLCC_RETURN_IF_ERROR(resolveUpsample(attrs, in, p));
  return inferFrom(p, in, out);
}

//===----------------------------------------------------------------------===//
// Per-axis taps
//===----------------------------------------------------------------------===//

/// For each output index of one axis: `n` (input index, weight) pairs, or a
/// flag that the value is the extrapolation value.
struct AxisTaps {
  int64_t n = 0;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<char> extrapolate;
};

/// The source coordinate of output index x on one axis.
double sourceCoord(const ResizeParams &p, int64_t axis, double x, double scale,
                   int64_t inLen, int64_t outLen) {
  // The "resized length" of the formulas: scale * inLen (the ONNX reference
  // uses it unfloored); with sizes it is exactly the output length.
  double resized = p.fromSizes ? static_cast<double>(outLen) : scale * inLen;
  const std::string &m = p.coordMode;
  if (m == "half_pixel")
    return (x + 0.5) / scale - 0.5;
  if (m == "pytorch_half_pixel")
    return resized > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (m == "align_corners")
    return resized == 1 ? 0.0 : x * (inLen - 1) / (resized - 1);
  if (m == "asymmetric")
    return x / scale;
  if (m == "tf_half_pixel_for_nn")
    return (x + 0.5) / scale;
  // tf_crop_and_resize
  int64_t rank = static_cast<int64_t>(p.roi.size() / 2);
  double start = p.roi[axis], end = p.roi[rank + axis];
  if (resized == 1)
    return 0.5 * (start + end) * (inLen - 1);
  return start * (inLen - 1) + x * (end - start) * (inLen - 1) / (resized - 1);
}

AxisTaps computeTaps(const ResizeParams &p, int64_t axis, int64_t inLen,
                     int64_t outLen) {
  AxisTaps t;
  t.n = p.mode == "nearest" ? 1 : p.mode == "linear" ? 2 : 4;
  t.index.resize(outLen * t.n);
  t.weight.resize(outLen * t.n);
  t.extrapolate.assign(outLen, 0);
  double scale = p.scales[axis];
  for (int64_t o = 0; o < outLen; ++o) {
    double x =
        sourceCoord(p, axis, static_cast<double>(o), scale, inLen, outLen);
    if (p.coordMode == "tf_crop_and_resize" && (x < 0 || x > inLen - 1)) {
      t.extrapolate[o] = 1;
      continue;
    }
    int64_t *idx = &t.index[o * t.n];
    double *w = &t.weight[o * t.n];
    double base = std::floor(x), r = x - base;
    int64_t b = static_cast<int64_t>(base);
    if (p.mode == "nearest") {
      bool up = false;
      if (r != 0) {
        const std::string &nm = p.nearestMode;
        up = nm == "ceil" || (nm == "round_prefer_floor" && r > 0.5) ||
             (nm == "round_prefer_ceil" && r >= 0.5);
      }
      idx[0] = b + (up ? 1 : 0);
      w[0] = 1.0;
    } else if (p.mode == "linear") {
      idx[0] = b;
      idx[1] = b + 1;
      w[0] = 1 - r;
      w[1] = r;
    } else {
      const double a = p.cubicA;
      auto far = [a](double d) { // 1 < d < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
      };
      auto near = [a](double d) { // d <= 1
        return ((a + 2) * d - (a + 3)) * d * d + 1;
      };
      for (int k = 0; k < 4; ++k)
        idx[k] = b - 1 + k;
      w[0] = far(r + 1);
      w[1] = near(r);
      w[2] = near(1 - r);
      w[3] = far(2 - r);
    }
    if (p.excludeOutside && t.n > 1) {
      double sum = 0;
      for (int64_t k = 0; k < t.n; ++k) {
        if (idx[k] < 0 || idx[k] >= inLen)
          w[k] = 0;
        sum += w[k];
      }
      if (sum != 0)
        for (int64_t k = 0; k < t.n; ++k)
          w[k] /= sum;
    }
    for (int64_t k = 0; k < t.n; ++k)
      idx[k] = std::min(std::max<int64_t>(idx[k], 0), inLen - 1);
  }
  return t;
}

/// True when the taps copy the axis unchanged (scale 1 in most modes).
bool isIdentity(const AxisTaps &t, int64_t inLen, int64_t outLen) {
  if (inLen != outLen)
    return false;
  for (int64_t o = 0; o < outLen; ++o) {
    if (t.extrapolate[o])
      return false;
    for (int64_t k = 0; k < t.n; ++k) {
      double w = t.weight[o * t.n + k];
      int64_t i = t.index[o * t.n + k];
      if (w != 0 && (i != o || w != 1.0))
        return false;
    }
  }
  return true;
}

Status runWith(const ResizeParams &p, const Tensor &x, Tensor &y) {
  const int64_t rank = x.rank();
  const Shape &inShape = x.shape();
  std::vector<AxisTaps> taps(rank);
  for (int64_t a = 0; a < rank; ++a) {
    if (inShape[a] == 0 && p.outShape[a] > 0)
      return Status::error("resize: cannot resize axis ", a, " of length 0 to ",
                           p.outShape[a]);
    taps[a] = computeTaps(p, a, inShape[a], p.outShape[a]);
  }
  if (y.numel() == 0)
    return Status::success();

  if (p.mode == "nearest") {
    // Gather: each output element copies one input element, or takes the
    // extrapolation value. Walks output rows (the last axis) so that the
    // offset of the outer axes is computed once per row.
    const size_t es = dtypeSize(x.dtype());
    const std::vector<int64_t> inStrides = stridesOf(inShape);
    const uint8_t *src = static_cast<const uint8_t *>(x.raw());
    uint8_t *dst = static_cast<uint8_t *>(y.raw());
    const int64_t last = rank - 1;
    const int64_t rowLen = rank ? p.outShape[last] : 1;
    const AxisTaps *lastTaps = rank ? &taps[last] : nullptr;
    Shape rows(p.outShape.begin(), p.outShape.end() - (rank ? 1 : 0));
    forEachIndex(rows, [&](const std::vector<int64_t> &idx, int64_t row) {
      bool extrapolate = false;
      int64_t off = 0;
      for (int64_t a = 0; a < last; ++a) {
        extrapolate |= taps[a].extrapolate[idx[a]] != 0;
        off += taps[a].index[idx[a]] * inStrides[a];
      }
      for (int64_t j = 0; j < rowLen; ++j) {
        int64_t linear = row * rowLen + j;
        if (extrapolate || (lastTaps && lastTaps->extrapolate[j])) {
          y.setDouble(linear, p.extrapolation);
          continue;
        }
        int64_t o = off + (lastTaps ? lastTaps->index[j] : 0);
        if (es == 4) // the common case, without a memcpy call per element
          reinterpret_cast<uint32_t *>(dst)[linear] =
              reinterpret_cast<const uint32_t *>(src)[o];
        else
          std::memcpy(dst + linear * es, src + o * es, es);
      }
    });
    return Status::success();
  }

  // Linear and cubic: one axis at a time in double.
  std::vector<double> cur(x.numel());
  if (x.dtype() == DType::F32)
    std::copy(x.data<float>(), x.data<float>() + x.numel(), cur.begin());
  else
    for (int64_t i = 0; i < x.numel(); ++i)
      cur[i] = x.getDouble(i);
  Shape curShape = inShape;
  for (int64_t a = 0; a < rank; ++a) {
    const AxisTaps &t = taps[a];
    int64_t inLen = curShape[a], outLen = p.outShape[a];
    if (isIdentity(t, inLen, outLen))
      continue;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < a; ++d)
      outer *= curShape[d];
    for (int64_t d = a + 1; d < rank; ++d)
      inner *= curShape[d];
    std::vector<double> next(outer * outLen * inner, 0.0);
    for (int64_t o = 0; o < outer; ++o) {
      const double *in = &cur[o * inLen * inner];
      double *out = &next[o * outLen * inner];
      for (int64_t j = 0; j < outLen; ++j) {
        double *row = out + j * inner;
        if (t.extrapolate[j]) {
          std::fill(row, row + inner, p.extrapolation);
          continue;
        }
        for (int64_t k = 0; k < t.n; ++k) {
          double w = t.weight[j * t.n + k];
          if (w == 0)
            continue;
          const double *src = in + t.index[j * t.n + k] * inner;
          for (int64_t i = 0; i < inner; ++i)
            row[i] += w * src[i];
        }
      }
    }
    cur.swap(next);
    curShape[a] = outLen;
  }
  if (y.dtype() == DType::F32) {
    float *out = y.data<float>();
    for (size_t i = 0; i < cur.size(); ++i)
      out[i] = static_cast<float>(cur[i]);
  } else {
    for (size_t i = 0; i < cur.size(); ++i)
      y.setDouble(static_cast<int64_t>(i), cur[i]);
  }
  return Status::success();
}

std::vector<ValueInfo> infosOf(const std::vector<Tensor> &in) {
  std::vector<ValueInfo> v(in.size());
  for (size_t i = 0; i < in.size(); ++i)
    v[i] = ValueInfo{in[i].dtype(), in[i].shape(),
                     in[i].present() ? &in[i] : nullptr};
  return v;
}

// graph.resize
Status runResize(const Attrs &attrs, const std::vector<Tensor> &in,
                 std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferResize, attrs, in, out));
  ResizeParams p;
  MLCC_RETURN_IF_ERROR(resolveResize(attrs, infosOf(in), p));
  return runWith(p, in[0], out[0]);
}

// graph.upsample
Status runUpsample(const Attrs &attrs, const std::vector<Tensor> &in,
                   std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferUpsample, attrs, in, out));
  ResizeParams p;
  MLCC_RETURN_IF_ERROR(resolveUpsample(attrs, infosOf(in), p));
  return runWith(p, in[0], out[0]);
}

} // namespace

void registerResizeKernels(KernelRegistry &r) {
  r.add("resize", {inferResize, runResize});
  r.add("upsample", {inferUpsample, runUpsample});
}

} // namespace mlcc::ref::misc
