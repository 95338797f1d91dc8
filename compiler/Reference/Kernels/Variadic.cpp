//===- Variadic.cpp - Elementwise sum/max/min/mean reference kernels ------===//
//
// Ops over any number (at least one) of inputs, broadcast together
// numpy-style. The output is seeded with the first input and folded with the
// others one at a time.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseUtils.h"

namespace mlcc::ref {
namespace elementwise {
namespace {

/// kName, kTypes, kMean (divide by the input count at the end) and
/// `template <typename T> T operator()(T acc, T x)`.
struct VariadicOpBase {
  static constexpr bool kMean = false;
};

// graph.sum
struct Sum : VariadicOpBase {
  static constexpr const char *kName = "sum";
  static constexpr unsigned kTypes = kFloat;
  template <typename T> T operator()(T a, T b) const { return a + b; }
};

// graph.mean
struct Mean : VariadicOpBase {
  static constexpr const char *kName = "mean";
  static constexpr unsigned kTypes = kFloat;
  static constexpr bool kMean = true;
  template <typename T> T operator()(T a, T b) const { return a + b; }
};

// graph.max: nan propagates, as numpy.maximum.
struct Max : VariadicOpBase {
  static constexpr const char *kName = "max";
  static constexpr unsigned kTypes = kNumeric;
  template <typename T> T operator()(T a, T b) const {
    return isNan(a) || a > b ? a : b;
  }
};

// graph.min: nan propagates, as numpy.minimum.
struct Min : VariadicOpBase {
  static constexpr const char *kName = "min";
  static constexpr unsigned kTypes = kNumeric;
  template <typename T> T operator()(T a, T b) const {
    return isNan(a) || a < b ? a : b;
  }
};

template <typename Op>
Status inferVariadic(const Attrs &, const std::vector<ValueInfo> &in,
                     std::vector<ValueInfo> &out) {
  MLCC_CHECK(!in.empty(), Op::kName, ": expected at least one input");
  MLCC_RETURN_IF_ERROR(checkInputs(Op::kName, in, in.size()));
  MLCC_RETURN_IF_ERROR(checkType(Op::kName, "0", in[0].dtype, Op::kTypes));
  Shape shape = in[0].shape;
  for (size_t i = 1; i < in.size(); ++i) {
    MLCC_CHECK(in[i].dtype == in[0].dtype, Op::kName, ": input ", i,
               " has type ", dtypeName(in[i].dtype), ", expected ",
               dtypeName(in[0].dtype), " like input 0");
    Shape next;
    MLCC_RETURN_IF_ERROR(broadcastOp(Op::kName, shape, in[i].shape, next));
    shape = std::move(next);
  }
  out[0].dtype = in[0].dtype;
  out[0].shape = std::move(shape);
  return Status::success();
}

template <typename Op>
Status runVariadic(const Attrs &attrs, const std::vector<Tensor> &in,
                   std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferVariadic<Op>, attrs, in, out));
  const Op op{};
  Tensor &y = out[0];
  const Shape &shape = y.shape();
  dispatchTraits(y.dtype(), [&](auto tr) {
    using Tr = decltype(tr);
    using S = typename Tr::Storage;
    using C = typename Tr::Compute;
    if constexpr ((Op::kTypes & Tr::kClass) != 0) {
      S *ys = y.data<S>();
      const S *x0 = in[0].data<S>();
      forEachBinary(shape, in[0].shape(), shape,
                    [&](int64_t o, int64_t, int64_t j) { ys[o] = x0[j]; });
      for (size_t k = 1; k < in.size(); ++k) {
        const S *xk = in[k].data<S>();
        forEachBinary(shape, in[k].shape(), shape,
                      [&](int64_t o, int64_t, int64_t j) {
                        ys[o] = Tr::store(op(Tr::load(ys[o]), Tr::load(xk[j])));
                      });
      }
      if constexpr (Op::kMean) {
        const C count = static_cast<C>(in.size());
        for (int64_t i = 0, n = y.numel(); i < n; ++i)
          ys[i] = Tr::store(Tr::load(ys[i]) / count);
      }
    }
  });
  return Status::success();
}

template <typename Op> void addVariadic(KernelRegistry &r) {
  r.add(Op::kName, {inferVariadic<Op>, runVariadic<Op>});
}

} // namespace

void registerVariadicKernels(KernelRegistry &r) {
  addVariadic<Sum>(r);
  addVariadic<Mean>(r);
  addVariadic<Max>(r);
  addVariadic<Min>(r);
}

} // namespace elementwise
} // namespace mlcc::ref
