//===- Reduce.cpp - Reduce* reference kernels -----------------------------===//
//
// graph.reduce_{sum,mean,max,min,prod,l1,l2,log_sum,log_sum_exp,sum_square}.
// The axes come from the `axes` attribute (opset <= 17 form) or from the
// optional second input (ReduceSum-13, every Reduce op from opset 18); both
// are accepted for every op. With empty axes and noop_with_empty_axes=1 each
// element is reduced on its own, so the pre/post functions still apply
// (ReduceSumSquare squares, ReduceL1 takes |x|, ...), as the current ONNX
// spec states; for sum/mean/max/min/prod that is the identity.
//
// Floats accumulate in double, integers in 64 bits (wrapping like numpy).
// Reductions over an empty set give the identity of the operation: 0 for
// sums, 1 for prod, -inf / the lowest value for max, nan for mean (0 for
// integers), -inf for log_sum and log_sum_exp.
//
//===----------------------------------------------------------------------===//

#include "ReduceUtils.h"

namespace mlcc::ref {
namespace {
using namespace reduction;

enum class RK {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  L1,
  L2,
  LogSum,
  LogSumExp,
  SumSquare
};

constexpr const char *rkName(RK k) {
  switch (k) {
  case RK::Sum:
    return "reduce_sum";
  case RK::Mean:
    return "reduce_mean";
  case RK::Max:
    return "reduce_max";
  case RK::Min:
    return "reduce_min";
  case RK::Prod:
    return "reduce_prod";
  case RK::L1:
    return "reduce_l1";
  case RK::L2:
    return "reduce_l2";
  case RK::LogSum:
    return "reduce_log_sum";
  case RK::LogSumExp:
    return "reduce_log_sum_exp";
  case RK::SumSquare:
    return "reduce_sum_square";
  }
  return "reduce";
}

template <typename A> A absOf(A x) {
  if constexpr (std::is_unsigned_v<A>)
    return x;
  else if constexpr (std::is_integral_v<A>)
    return x < 0 ? static_cast<A>(0 - static_cast<uint64_t>(x)) : x;
  else
    return std::fabs(x);
}

/// The identity of the reduction, i.e. the result over an empty set. For
/// max/min of integers the limits are those of the element type T, not of
/// the wider accumulator.
template <RK K, typename T, typename A> A initAcc() {
  if constexpr (K == RK::Prod) {
    return A(1);
  } else if constexpr (K == RK::Max) {
    if constexpr (std::is_floating_point_v<T>)
      return -std::numeric_limits<A>::infinity();
    else
      return static_cast<A>(std::numeric_limits<T>::lowest());
  } else if constexpr (K == RK::Min) {
    if constexpr (std::is_floating_point_v<T>)
      return std::numeric_limits<A>::infinity();
    else
      return static_cast<A>(std::numeric_limits<T>::max());
  } else {
    return A(0);
  }
}

template <RK K, typename A> inline void step(A &a, A x) {
  if constexpr (K == RK::Sum || K == RK::Mean || K == RK::LogSum)
    a = wrapAdd(a, x);
  else if constexpr (K == RK::L1)
    a = wrapAdd(a, absOf(x));
  else if constexpr (K == RK::L2 || K == RK::SumSquare)
    a = wrapAdd(a, wrapMul(x, x));
  else if constexpr (K == RK::Prod)
    a = wrapMul(a, x);
  else if constexpr (K == RK::Max) {
    // nan propagates, as with numpy's max.
    if (x > a || isNanValue(x))
      a = isNanValue(a) ? a : x;
  } else if constexpr (K == RK::Min) {
    if (x < a || isNanValue(x))
      a = isNanValue(a) ? a : x;
  }
}

template <RK K, typename T, typename A> T finish(A a, int64_t n) {
  if constexpr (K == RK::Mean) {
    if constexpr (std::is_floating_point_v<A>)
      return static_cast<T>(a / static_cast<double>(n));
    else // integer mean truncates, like numpy's mean(...).astype(int)
      return n == 0 ? T(0) : static_cast<T>(a / static_cast<A>(n));
  } else if constexpr (K == RK::L2) {
    return castFromDouble<T>(std::sqrt(static_cast<double>(a)));
  } else if constexpr (K == RK::LogSum) {
    return castFromDouble<T>(std::log(static_cast<double>(a)));
  } else {
    return static_cast<T>(a);
  }
}

template <RK K, typename T>
void reduceTyped(const Tensor &x, Tensor &y, const ReduceGeom &g) {
  using A = AccOf<T>;
  const T *in = x.data<T>();
  T *out = y.data<T>();
  std::vector<A> acc(g.outCount, initAcc<K, T, A>());
  forEachSegment(g, [&](int64_t i, int64_t o, int64_t n, int64_t os) {
    const T *p = in + i;
    if (os == 0) {
      A a = acc[o];
      for (int64_t j = 0; j < n; ++j)
        step<K>(a, static_cast<A>(p[j]));
      acc[o] = a;
    } else {
      A *a = acc.data() + o;
      for (int64_t j = 0; j < n; ++j)
        step<K>(a[j], static_cast<A>(p[j]));
    }
  });
  for (int64_t o = 0; o < g.outCount; ++o)
    out[o] = finish<K, T, A>(acc[o], g.groupSize);
}

/// log(sum(exp(x))) computed as m + log(sum(exp(x - m))) with m the max, so
/// that large inputs do not overflow.
template <typename T>
void logSumExpTyped(const Tensor &x, Tensor &y, const ReduceGeom &g) {
  const T *in = x.data<T>();
  T *out = y.data<T>();
  std::vector<double> shift(g.outCount,
                            -std::numeric_limits<double>::infinity());
  forEachSegment(g, [&](int64_t i, int64_t o, int64_t n, int64_t os) {
    for (int64_t j = 0; j < n; ++j)
      step<RK::Max>(shift[o + j * os], static_cast<double>(in[i + j]));
  });
  // An infinite or nan max cannot be subtracted; the plain formula gives
  // the right inf/nan result then.
  for (double &m : shift)
    if (!std::isfinite(m))
      m = 0.0;
  std::vector<double> sum(g.outCount, 0.0);
  forEachSegment(g, [&](int64_t i, int64_t o, int64_t n, int64_t os) {
    for (int64_t j = 0; j < n; ++j)
      sum[o + j * os] +=
          std::exp(static_cast<double>(in[i + j]) - shift[o + j * os]);
  });
  for (int64_t o = 0; o < g.outCount; ++o)
    out[o] = castFromDouble<T>(shift[o] + std::log(sum[o]));
}

template <RK K>
Status reducedAxes(const Attrs &attrs, const std::vector<ValueInfo> &in,
                   std::vector<bool> &reduced, bool &known, int64_t &numAxes) {
  bool noop = attrs.getInt("noop_with_empty_axes", 0) != 0;
  return resolveReduceAxes(rkName(K), attrs, in.size() > 1 ? &in[1] : nullptr,
                           in[0].rank(), noop, reduced, known, numAxes);
}

template <RK K>
Status inferReduce(const Attrs &attrs, const std::vector<ValueInfo> &in,
                   std::vector<ValueInfo> &out) {
  const char *op = rkName(K);
  MLCC_CHECK(!in.empty() && in[0].present(), op, ": missing input 'data'");
  DType t = in[0].dtype;
  MLCC_CHECK(t != DType::Bool || K == RK::Max || K == RK::Min, op,
             ": bool input is not supported");
  bool keep = attrs.getInt("keepdims", 1) != 0;
  std::vector<bool> reduced;
  bool known = true;
  int64_t numAxes = 0;
  MLCC_RETURN_IF_ERROR(reducedAxes<K>(attrs, in, reduced, known, numAxes));
  const Shape &s = in[0].shape;
  Shape shape;
  if (!known) {
    // Which dims go is data dependent: each kept dim is its input dim or 1.
    if (keep) {
      for (int64_t d : s)
        shape.push_back(d == 1 ? 1 : kDynamic);
    } else {
      MLCC_CHECK(numAxes != kDynamic, op,
                 ": with keepdims=0 the axes input needs a known length");
      MLCC_CHECK(numAxes <= in[0].rank(), op, ": ", numAxes,
                 " axes for an input of rank ", in[0].rank());
      shape.assign(in[0].rank() - numAxes, kDynamic);
    }
  } else {
    for (size_t d = 0; d < s.size(); ++d) {
      if (!reduced[d])
        shape.push_back(s[d]);
      else if (keep)
        shape.push_back(1);
    }
  }
  out[0].dtype = t;
  out[0].shape = shape;
  return Status::success();
}

template <RK K>
Status runReduce(const Attrs &attrs, const std::vector<Tensor> &in,
                 std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferReduce<K>, attrs, in, out));
  std::vector<ValueInfo> info;
  for (const Tensor &t : in)
    info.push_back(infoOf(t));
  std::vector<bool> reduced;
  bool known = true;
  int64_t numAxes = 0;
  MLCC_RETURN_IF_ERROR(reducedAxes<K>(attrs, info, reduced, known, numAxes));
  Tensor x = widenHalf(in[0]);
  Tensor y = computeBuffer(out[0]);
  ReduceGeom g = makeReduceGeom(x.shape(), reduced);
  dispatchDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (K == RK::LogSumExp)
      logSumExpTyped<T>(x, y, g);
    else
      reduceTyped<K, T>(x, y, g);
  });
  narrowHalf(y, out[0]);
  return Status::success();
}

template <RK K> KernelDef reduceKernel() {
  return {inferReduce<K>, runReduce<K>};
}

} // namespace

void registerReductionKernels(KernelRegistry &r) {
  r.add("reduce_sum", reduceKernel<RK::Sum>());
  r.add("reduce_mean", reduceKernel<RK::Mean>());
  r.add("reduce_max", reduceKernel<RK::Max>());
  r.add("reduce_min", reduceKernel<RK::Min>());
  r.add("reduce_prod", reduceKernel<RK::Prod>());
  r.add("reduce_l1", reduceKernel<RK::L1>());
  r.add("reduce_l2", reduceKernel<RK::L2>());
  r.add("reduce_log_sum", reduceKernel<RK::LogSum>());
  r.add("reduce_log_sum_exp", reduceKernel<RK::LogSumExp>());
  r.add("reduce_sum_square", reduceKernel<RK::SumSquare>());
  reduction::registerArgReduceKernels(r);
  reduction::registerSoftmaxKernels(r);
  reduction::registerNormalizationKernels(r);
}

} // namespace mlcc::ref
