//===- Softmax.cpp - Softmax, LogSoftmax and Hardmax reference kernels ----===//
//
// Opset-13 semantics: the op works along the single axis `axis` (default
// -1). The older "coerce to 2D" forms (opset < 13) are rewritten by the
// importer. Inputs are f32/f64 (f16/bf16 computed in f32); the max is
// subtracted before exp so large inputs do not overflow, and the sums of
// exponentials accumulate in double.
//
//===----------------------------------------------------------------------===//

#include "ReduceUtils.h"

namespace mlcc::ref {
namespace {
using namespace reduction;

enum class SK { Softmax, LogSoftmax, Hardmax };

constexpr const char *skName(SK k) {
  return k == SK::Softmax      ? "softmax"
         : k == SK::LogSoftmax ? "log_softmax"
                               : "hardmax";
}

template <SK K>
Status inferSoftmax(const Attrs &attrs, const std::vector<ValueInfo> &in,
                    std::vector<ValueInfo> &out) {
  const char *op = skName(K);
  MLCC_CHECK(!in.empty() && in[0].present(), op, ": missing input");
  MLCC_CHECK(isFloatType(in[0].dtype), op, ": input has type ",
             dtypeName(in[0].dtype), ", expected a float type");
  int64_t axis = 0;
  Status s = normalizeAxis(attrs.getInt("axis", -1), in[0].rank(), axis);
  MLCC_CHECK(s.ok(), op, ": ", s.message());
  out[0].dtype = in[0].dtype;
  out[0].shape = in[0].shape;
  return Status::success();
}

/// One row along the axis, contiguous (the common case: axis = -1, e.g. the
/// attention scores of a transformer).
template <SK K, typename T> void rowContiguous(const T *x, T *y, int64_t len) {
  T m = x[0];
  int64_t arg = 0;
  for (int64_t k = 1; k < len; ++k)
    if (x[k] > m) {
      m = x[k];
      arg = k;
    }
  if constexpr (K == SK::Hardmax) {
    for (int64_t k = 0; k < len; ++k)
      y[k] = T(0);
    y[arg] = T(1);
  } else if constexpr (K == SK::Softmax) {
    double sum = 0.0;
    for (int64_t k = 0; k < len; ++k) {
      T e = std::exp(x[k] - m);
      y[k] = e;
      sum += e;
    }
    T inv = static_cast<T>(1.0 / sum);
    for (int64_t k = 0; k < len; ++k)
      y[k] *= inv;
  } else {
    double sum = 0.0;
    for (int64_t k = 0; k < len; ++k)
      sum += std::exp(x[k] - m);
    double logSum = std::log(sum);
    for (int64_t k = 0; k < len; ++k)
      y[k] = static_cast<T>(static_cast<double>(x[k] - m) - logSum);
  }
}

/// [len, inner] block: the same computation, vectorised along `inner` so the
/// memory accesses stay contiguous.
template <SK K, typename T>
void blockStrided(const T *x, T *y, int64_t len, int64_t inner,
                  std::vector<T> &m, std::vector<int64_t> &arg,
                  std::vector<double> &sum) {
  for (int64_t i = 0; i < inner; ++i) {
    m[i] = x[i];
    arg[i] = 0;
    sum[i] = 0.0;
  }
  for (int64_t k = 1; k < len; ++k)
    for (int64_t i = 0; i < inner; ++i)
      if (x[k * inner + i] > m[i]) {
        m[i] = x[k * inner + i];
        arg[i] = k;
      }
  if constexpr (K == SK::Hardmax) {
    for (int64_t k = 0; k < len; ++k)
      for (int64_t i = 0; i < inner; ++i)
        y[k * inner + i] = T(arg[i] == k ? 1 : 0);
    return;
  }
  for (int64_t k = 0; k < len; ++k)
    for (int64_t i = 0; i < inner; ++i) {
      T e = std::exp(x[k * inner + i] - m[i]);
      if constexpr (K == SK::Softmax)
        y[k * inner + i] = e;
      sum[i] += e;
    }
  if constexpr (K == SK::Softmax) {
    for (int64_t i = 0; i < inner; ++i)
      sum[i] = 1.0 / sum[i];
    for (int64_t k = 0; k < len; ++k)
      for (int64_t i = 0; i < inner; ++i)
        y[k * inner + i] *= static_cast<T>(sum[i]);
  } else {
    for (int64_t i = 0; i < inner; ++i)
      sum[i] = std::log(sum[i]);
    for (int64_t k = 0; k < len; ++k)
      for (int64_t i = 0; i < inner; ++i)
        y[k * inner + i] = static_cast<T>(
            static_cast<double>(x[k * inner + i] - m[i]) - sum[i]);
  }
}

template <SK K, typename T>
void softmaxTyped(const T *x, T *y, int64_t outer, int64_t len, int64_t inner) {
  if (len == 0)
    return;
  if (inner == 1) {
    for (int64_t o = 0; o < outer; ++o)
      rowContiguous<K, T>(x + o * len, y + o * len, len);
    return;
  }
  std::vector<T> m(inner);
  std::vector<int64_t> arg(inner);
  std::vector<double> sum(inner);
  for (int64_t o = 0; o < outer; ++o)
    blockStrided<K, T>(x + o * len * inner, y + o * len * inner, len, inner, m,
                       arg, sum);
}

template <SK K>
Status runSoftmax(const Attrs &attrs, const std::vector<Tensor> &in,
                  std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferSoftmax<K>, attrs, in, out));
  Tensor x = widenHalf(in[0]);
  Tensor y = computeBuffer(out[0]);
  int64_t axis = 0, outer, len, inner;
  MLCC_RETURN_IF_ERROR(normalizeAxis(attrs.getInt("axis", -1), x.rank(), axis));
  splitAtAxis(x.shape(), axis, outer, len, inner);
  if (x.dtype() == DType::F64)
    softmaxTyped<K, double>(x.data<double>(), y.data<double>(), outer, len,
                            inner);
  else
    softmaxTyped<K, float>(x.data<float>(), y.data<float>(), outer, len, inner);
  narrowHalf(y, out[0]);
  return Status::success();
}

} // namespace

void reduction::registerSoftmaxKernels(KernelRegistry &r) {
  r.add("softmax", {inferSoftmax<SK::Softmax>, runSoftmax<SK::Softmax>});
  r.add("log_softmax",
        {inferSoftmax<SK::LogSoftmax>, runSoftmax<SK::LogSoftmax>});
  r.add("hardmax", {inferSoftmax<SK::Hardmax>, runSoftmax<SK::Hardmax>});
}

} // namespace mlcc::ref
