//===- Activations.cpp - Activation function reference kernels ------------===//
//
// relu and its relatives, sigmoid-like functions, shrink, prelu, clip and
// inference-mode dropout.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseUtils.h"

#include <cmath>

namespace mlcc::ref {
namespace elementwise {
namespace {

/// Clamps with nan passing through (std::min/max would drop it).
template <typename T> T clampNan(T v, T lo, T hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

// graph.relu: also on signed integers (Relu-14). nan stays nan.
struct Relu : UnaryOpBase {
  static constexpr const char *kName = "relu";
  static constexpr unsigned kTypes = kFloatOrSigned;
  template <typename T> T operator()(T x) const { return x < T(0) ? T(0) : x; }
};

// graph.leaky_relu
struct LeakyRelu : UnaryOpBase {
  static constexpr const char *kName = "leaky_relu";
  static constexpr unsigned kTypes = kFloat;
  float alpha;
  explicit LeakyRelu(const Attrs &a) : alpha(a.getFloat("alpha", 0.01f)) {}
  template <typename T> T operator()(T x) const {
    return x < T(0) ? T(alpha) * x : x;
  }
};

// graph.thresholded_relu
struct ThresholdedRelu : UnaryOpBase {
  static constexpr const char *kName = "thresholded_relu";
  static constexpr unsigned kTypes = kFloat;
  float alpha;
  explicit ThresholdedRelu(const Attrs &a) : alpha(a.getFloat("alpha", 1.0f)) {}
  template <typename T> T operator()(T x) const {
    return x > T(alpha) ? x : T(0);
  }
};

// graph.elu: alpha * (exp(x) - 1) for x < 0, via expm1 for accuracy near 0.
struct Elu : UnaryOpBase {
  static constexpr const char *kName = "elu";
  static constexpr unsigned kTypes = kFloat;
  float alpha;
  explicit Elu(const Attrs &a) : alpha(a.getFloat("alpha", 1.0f)) {}
  template <typename T> T operator()(T x) const {
    return x < T(0) ? T(alpha) * std::expm1(x) : x;
  }
};

// graph.selu: gamma * (alpha * (exp(x) - 1)) for x <= 0, gamma * x else.
struct Selu : UnaryOpBase {
  static constexpr const char *kName = "selu";
  static constexpr unsigned kTypes = kFloat;
  float alpha, gamma;
  explicit Selu(const Attrs &a)
      : alpha(a.getFloat("alpha", 1.67326319217681884765625f)),
        gamma(a.getFloat("gamma", 1.05070102214813232421875f)) {}
  template <typename T> T operator()(T x) const {
    return T(gamma) * (x <= T(0) ? T(alpha) * std::expm1(x) : x);
  }
};

// graph.celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
struct Celu : UnaryOpBase {
  static constexpr const char *kName = "celu";
  static constexpr unsigned kTypes = kFloat;
  float alpha;
  explicit Celu(const Attrs &a) : alpha(a.getFloat("alpha", 1.0f)) {}
  template <typename T> T operator()(T x) const {
    return x > T(0) ? x : T(alpha) * std::expm1(x / T(alpha));
  }
};

// graph.sigmoid
struct Sigmoid : UnaryOpBase {
  static constexpr const char *kName = "sigmoid";
  static constexpr unsigned kTypes = kFloat;
  template <typename T> T operator()(T x) const {
    return T(1) / (T(1) + std::exp(-x));
  }
};

// graph.hard_sigmoid: max(0, min(1, alpha * x + beta)).
struct HardSigmoid : UnaryOpBase {
  static constexpr const char *kName = "hard_sigmoid";
  static constexpr unsigned kTypes = kFloat;
  float alpha, beta;
  explicit HardSigmoid(const Attrs &a)
      : alpha(a.getFloat("alpha", 0.2f)), beta(a.getFloat("beta", 0.5f)) {}
  template <typename T> T operator()(T x) const {
    return clampNan(T(alpha) * x + T(beta), T(0), T(1));
  }
};

// graph.hard_swish: x * hard_sigmoid(x) with alpha = 1/6, beta = 0.5.
struct HardSwish : UnaryOpBase {
  static constexpr const char *kName = "hard_swish";
  static constexpr unsigned kTypes = kFloat;
  template <typename T> T operator()(T x) const {
    return x * clampNan(x / T(6) + T(0.5), T(0), T(1));
  }
};

// graph.softplus: log(exp(x) + 1), written so exp cannot overflow.
struct Softplus : UnaryOpBase {
  static constexpr const char *kName = "softplus";
  static constexpr unsigned kTypes = kFloat;
  template <typename T> T operator()(T x) const {
    return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
};

// graph.softsign: x / (1 + |x|).
struct Softsign : UnaryOpBase {
  static constexpr const char *kName = "softsign";
  static constexpr unsigned kTypes = kFloat;
  template <typename T> T operator()(T x) const {
    return x / (T(1) + std::fabs(x));
  }
};

// graph.shrink: x + bias below -lambd, x - bias above lambd, else 0. On
// integers the float result is truncated back (with saturation).
struct Shrink : UnaryOpBase {
  static constexpr const char *kName = "shrink";
  static constexpr unsigned kTypes = kNumeric;
  float bias, lambd;
  explicit Shrink(const Attrs &a)
      : bias(a.getFloat("bias", 0.0f)), lambd(a.getFloat("lambd", 0.5f)) {}
  template <typename T> T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (x < -T(lambd))
        return x + T(bias);
      if (x > T(lambd))
        return x - T(bias);
      return T(0);
    } else {
      double v = static_cast<double>(x);
      double r = v < -lambd ? v + bias : (v > lambd ? v - bias : 0.0);
      return floatToIntSaturating<T>(r);
    }
  }
};

//===----------------------------------------------------------------------===//
// graph.prelu
//===----------------------------------------------------------------------===//

/// The shape slope is broadcast with: its own, or, for a 1-d slope of size
/// C = X.dim(1) that does not broadcast numpy-style, [C, 1, ...]. The latter
/// is the per-channel form of PRelu-6 that old PyTorch exports still use
/// (e.g. slope [3] for X [2, 3, 4]); it only applies where numpy broadcasting
/// would fail, so it never changes a valid PRelu-16 result.
Status preluSlopeShape(const Shape &x, const Shape &slope, Shape &effective) {
  effective = slope;
  Shape out;
  if (broadcastShapes(x, slope, out).ok() && out.size() == x.size()) {
    bool fits = true; // a dynamic dim of X may still turn out to fit
    for (size_t i = 0; i < x.size(); ++i)
      fits &= out[i] == x[i] || isDyn(x[i]);
    if (fits)
      return Status::success();
  }
  if (slope.size() == 1 && x.size() >= 2 && slope[0] == x[1]) {
    effective.assign(x.size() - 1, 1);
    effective[0] = slope[0];
    return Status::success();
  }
  return Status::error("prelu: slope of shape ", shapeToString(slope),
                       " does not broadcast to input shape ", shapeToString(x));
}

Status inferPRelu(const Attrs &, const std::vector<ValueInfo> &in,
                  std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(checkInputs("prelu", in, 2));
  MLCC_RETURN_IF_ERROR(checkType("prelu", "X", in[0].dtype, kNumeric));
  MLCC_CHECK(in[1].dtype == in[0].dtype, "prelu: slope has type ",
             dtypeName(in[1].dtype), ", expected ", dtypeName(in[0].dtype),
             " like X");
  Shape effective;
  MLCC_RETURN_IF_ERROR(preluSlopeShape(in[0].shape, in[1].shape, effective));
  out[0].dtype = in[0].dtype;
  out[0].shape = in[0].shape;
  return Status::success();
}

Status runPRelu(const Attrs &attrs, const std::vector<Tensor> &in,
                std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferPRelu, attrs, in, out));
  const Tensor &x = in[0];
  Tensor &y = out[0];
  Shape slopeShape;
  MLCC_RETURN_IF_ERROR(preluSlopeShape(x.shape(), in[1].shape(), slopeShape));
  std::array<std::vector<int64_t>, 2> strides = {
      stridesOf(x.shape()), broadcastStrides(slopeShape, x.shape())};
  dispatchTraits(x.dtype(), [&](auto tr) {
    using Tr = decltype(tr);
    using S = typename Tr::Storage;
    using C = typename Tr::Compute;
    if constexpr ((kNumeric & Tr::kClass) != 0) {
      const S *xs = x.data<S>();
      const S *ss = in[1].data<S>();
      S *ys = y.data<S>();
      forEachBroadcast<2>(x.shape(), strides, [&](int64_t o, const auto &off) {
        C v = Tr::load(xs[off[0]]);
        C s = Tr::load(ss[off[1]]);
        if constexpr (std::is_floating_point_v<C>)
          ys[o] = Tr::store(v < C(0) ? s * v : v);
        else if constexpr (std::is_signed_v<C>)
          ys[o] = v < C(0) ? wrapMul(s, v) : v;
        else
          ys[o] = v; // never negative
      });
    }
  });
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.clip
//===----------------------------------------------------------------------===//

Status inferClip(const Attrs &, const std::vector<ValueInfo> &in,
                 std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(checkInputs("clip", in, 1));
  MLCC_RETURN_IF_ERROR(checkType("clip", "input", in[0].dtype, kNumeric));
  for (size_t i = 1; i < 3 && i < in.size(); ++i) {
    if (!in[i].present())
      continue;
    const char *name = i == 1 ? "min" : "max";
    MLCC_CHECK(in[i].dtype == in[0].dtype, "clip: ", name, " has type ",
               dtypeName(in[i].dtype), ", expected ", dtypeName(in[0].dtype),
               " like the input");
    bool known =
        std::count(in[i].shape.begin(), in[i].shape.end(), kDynamic) == 0;
    MLCC_CHECK(!known || numElements(in[i].shape) == 1, "clip: ", name,
               " has shape ", shapeToString(in[i].shape),
               ", expected a scalar");
  }
  out[0].dtype = in[0].dtype;
  out[0].shape = in[0].shape;
  return Status::success();
}

Status runClip(const Attrs &attrs, const std::vector<Tensor> &in,
               std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferClip, attrs, in, out));
  const Tensor &x = in[0];
  Tensor &y = out[0];
  const Tensor none;
  const Tensor &minT = in.size() > 1 ? in[1] : none;
  const Tensor &maxT = in.size() > 2 ? in[2] : none;
  const int64_t n = x.numel();
  dispatchTraits(x.dtype(), [&](auto tr) {
    using Tr = decltype(tr);
    using S = typename Tr::Storage;
    using C = typename Tr::Compute;
    if constexpr ((kNumeric & Tr::kClass) != 0) {
      C lo = minT.present() ? Tr::load(minT.data<S>()[0])
                            : std::numeric_limits<C>::lowest();
      C hi = maxT.present() ? Tr::load(maxT.data<S>()[0])
                            : std::numeric_limits<C>::max();
      const S *xs = x.data<S>();
      S *ys = y.data<S>();
      // min(max(x, lo), hi): when lo > hi every element becomes hi.
      for (int64_t i = 0; i < n; ++i) {
        C v = Tr::load(xs[i]);
        v = v < lo ? lo : v;
        ys[i] = Tr::store(v > hi ? hi : v);
      }
    }
  });
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.dropout
//===----------------------------------------------------------------------===//

Status inferDropout(const Attrs &, const std::vector<ValueInfo> &in,
                    std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(checkInputs("dropout", in, 1));
  MLCC_RETURN_IF_ERROR(checkType("dropout", "data", in[0].dtype, kFloat));
  if (in.size() > 1 && in[1].present())
    MLCC_RETURN_IF_ERROR(checkType("dropout", "ratio", in[1].dtype, kFloat));
  if (in.size() > 2 && in[2].present())
    MLCC_RETURN_IF_ERROR(
        checkType("dropout", "training_mode", in[2].dtype, kBool));
  out[0].dtype = in[0].dtype;
  out[0].shape = in[0].shape;
  if (out.size() > 1) {
    out[1].dtype = DType::Bool;
    out[1].shape = in[0].shape;
  }
  return Status::success();
}

// Inference only: training mode drops elements at random, which a
// reference executor cannot reproduce, unless the ratio is 0.
Status runDropout(const Attrs &attrs, const std::vector<Tensor> &in,
                  std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferDropout, attrs, in, out));
  bool training = in.size() > 2 && in[2].present() && in[2].numel() > 0 &&
                  in[2].getDouble(0) != 0.0;
  if (training) {
    double ratio = in.size() > 1 && in[1].present() && in[1].numel() > 0
                       ? in[1].getDouble(0)
                       : 0.5;
    MLCC_CHECK(ratio == 0.0, "dropout: training mode with ratio ", ratio,
               " is random and not supported");
  }
  if (in[0].byteSize())
    std::memcpy(out[0].raw(), in[0].raw(), in[0].byteSize());
  if (out.size() > 1 && out[1].present()) {
    bool *mask = out[1].data<bool>();
    std::fill(mask, mask + out[1].numel(), true);
  }
  return Status::success();
}

} // namespace

void registerActivationKernels(KernelRegistry &r) {
  addUnary<Relu>(r);
  addUnary<LeakyRelu>(r);
  addUnary<ThresholdedRelu>(r);
  addUnary<Elu>(r);
  addUnary<Selu>(r);
  addUnary<Celu>(r);
  addUnary<Sigmoid>(r);
  addUnary<HardSigmoid>(r);
  addUnary<HardSwish>(r);
  addUnary<Softplus>(r);
  addUnary<Softsign>(r);
  addUnary<Shrink>(r);
  r.add("prelu", {inferPRelu, runPRelu});
  r.add("clip", {inferClip, runClip});
  r.add("dropout", {inferDropout, runDropout});
}

} // namespace elementwise
} // namespace mlcc::ref
