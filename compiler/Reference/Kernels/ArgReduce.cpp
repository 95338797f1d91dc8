//===- ArgReduce.cpp - ArgMax, ArgMin and CumSum reference kernels --------===//
//
// Reductions and scans along one axis: graph.argmax, graph.argmin and
// graph.cumsum. The input is seen as [outer, len, inner] around the axis and
// the loops run along `inner`, which is contiguous.
//
//===----------------------------------------------------------------------===//

#include "ReduceUtils.h"

namespace mlcc::ref {
namespace {
using namespace reduction;

//===----------------------------------------------------------------------===//
// graph.argmax, graph.argmin
//===----------------------------------------------------------------------===//

template <bool IsMax>
Status inferArg(const Attrs &attrs, const std::vector<ValueInfo> &in,
                std::vector<ValueInfo> &out) {
  const char *op = IsMax ? "argmax" : "argmin";
  MLCC_CHECK(!in.empty() && in[0].present(), op, ": missing input 'data'");
  MLCC_CHECK(in[0].dtype != DType::Bool, op, ": bool input is not supported");
  int64_t axis = 0;
  Status s = normalizeAxis(attrs.getInt("axis", 0), in[0].rank(), axis);
  MLCC_CHECK(s.ok(), op, ": ", s.message());
  bool keep = attrs.getInt("keepdims", 1) != 0;
  Shape shape;
  for (int64_t d = 0; d < in[0].rank(); ++d) {
    if (d != axis)
      shape.push_back(in[0].shape[d]);
    else if (keep)
      shape.push_back(1);
  }
  out[0].dtype = DType::I64;
  out[0].shape = shape;
  return Status::success();
}

/// Index of the first (or with `last`, the last) extreme along the axis. A
/// nan counts as the extreme, as in numpy: the first nan wins.
template <bool IsMax, typename T>
void argTyped(const T *x, int64_t *y, int64_t outer, int64_t len, int64_t inner,
              bool last) {
  std::vector<T> best(inner);
  for (int64_t o = 0; o < outer; ++o) {
    const T *base = x + o * len * inner;
    int64_t *yo = y + o * inner;
    for (int64_t i = 0; i < inner; ++i) {
      best[i] = base[i];
      yo[i] = 0;
    }
    for (int64_t k = 1; k < len; ++k) {
      const T *row = base + k * inner;
      for (int64_t i = 0; i < inner; ++i) {
        T v = row[i], b = best[i];
        bool take;
        if (isNanValue(b))
          take = last && isNanValue(v);
        else if (isNanValue(v))
          take = true;
        else if (IsMax)
          take = last ? v >= b : v > b;
        else
          take = last ? v <= b : v < b;
        if (take) {
          best[i] = v;
          yo[i] = k;
        }
      }
    }
  }
}

template <bool IsMax>
Status runArg(const Attrs &attrs, const std::vector<Tensor> &in,
              std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferArg<IsMax>, attrs, in, out));
  Tensor x = widenHalf(in[0]);
  int64_t axis = 0, outer, len, inner;
  MLCC_RETURN_IF_ERROR(normalizeAxis(attrs.getInt("axis", 0), x.rank(), axis));
  splitAtAxis(x.shape(), axis, outer, len, inner);
  MLCC_CHECK(len > 0 || outer * inner == 0, IsMax ? "argmax" : "argmin",
             ": axis ", axis, " has size 0, there is no extreme to select");
  bool last = attrs.getInt("select_last_index", 0) != 0;
  int64_t *y = out[0].data<int64_t>();
  dispatchDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    argTyped<IsMax, T>(x.data<T>(), y, outer, len, inner, last);
  });
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.cumsum
//===----------------------------------------------------------------------===//

Status inferCumSum(const Attrs &, const std::vector<ValueInfo> &in,
                   std::vector<ValueInfo> &out) {
  MLCC_CHECK(in.size() >= 2 && in[0].present() && in[1].present(),
             "cumsum: expected inputs 'x' and 'axis'");
  MLCC_CHECK(in[0].dtype != DType::Bool, "cumsum: bool input is not supported");
  MLCC_CHECK(in[1].dtype == DType::I64 || in[1].dtype == DType::I32,
             "cumsum: axis has type ", dtypeName(in[1].dtype),
             ", expected i32 or i64");
  MLCC_CHECK(
      in[1].rank() == 0 || (in[1].rank() == 1 && (in[1].shape[0] == 1 ||
                                                  in[1].shape[0] == kDynamic)),
      "cumsum: axis must be a scalar, got shape ", shapeToString(in[1].shape));
  if (in[1].value) {
    int64_t axis = 0;
    Status s = normalizeAxis(in[1].value->getInt(0), in[0].rank(), axis);
    MLCC_CHECK(s.ok(), "cumsum: ", s.message());
  }
  out[0].dtype = in[0].dtype;
  out[0].shape = in[0].shape;
  return Status::success();
}

template <typename T>
void cumSumTyped(const T *x, T *y, int64_t outer, int64_t len, int64_t inner,
                 bool exclusive, bool reverse) {
  using A = AccOf<T>;
  std::vector<A> acc(inner);
  for (int64_t o = 0; o < outer; ++o) {
    std::fill(acc.begin(), acc.end(), A(0));
    for (int64_t kk = 0; kk < len; ++kk) {
      int64_t k = reverse ? len - 1 - kk : kk;
      const T *xr = x + (o * len + k) * inner;
      T *yr = y + (o * len + k) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        A v = static_cast<A>(xr[i]);
        if (exclusive) {
          yr[i] = static_cast<T>(acc[i]);
          acc[i] = wrapAdd(acc[i], v);
        } else {
          acc[i] = wrapAdd(acc[i], v);
          yr[i] = static_cast<T>(acc[i]);
        }
      }
    }
  }
}

Status runCumSum(const Attrs &attrs, const std::vector<Tensor> &in,
                 std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferCumSum, attrs, in, out));
  Tensor x = widenHalf(in[0]);
  Tensor y = computeBuffer(out[0]);
  int64_t axis = 0, outer, len, inner;
  MLCC_RETURN_IF_ERROR(normalizeAxis(in[1].getInt(0), x.rank(), axis));
  splitAtAxis(x.shape(), axis, outer, len, inner);
  bool exclusive = attrs.getInt("exclusive", 0) != 0;
  bool reverse = attrs.getInt("reverse", 0) != 0;
  dispatchDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    cumSumTyped<T>(x.data<T>(), y.data<T>(), outer, len, inner, exclusive,
                   reverse);
  });
  narrowHalf(y, out[0]);
  return Status::success();
}

} // namespace

void reduction::registerArgReduceKernels(KernelRegistry &r) {
  r.add("argmax", {inferArg<true>, runArg<true>});
  r.add("argmin", {inferArg<false>, runArg<false>});
  r.add("cumsum", {inferCumSum, runCumSum});
}

} // namespace mlcc::ref
