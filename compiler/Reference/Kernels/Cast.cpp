//===- Cast.cpp - Cast and CastLike reference kernels ---------------------===//
//
// Conversions between all numeric types and bool. Float to integer rounds
// toward zero and saturates (nan gives 0), like Tensor::setDouble; integer
// to integer wraps like C and numpy's astype; anything to bool is `!= 0`.
// Strings and float8 are not supported.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseUtils.h"

namespace mlcc::ref {
namespace elementwise {
namespace {

/// Converts every element of `x` into `y` (same shape, any types).
void convert(const Tensor &x, Tensor &y) {
  const int64_t n = x.numel();
  if (x.dtype() == y.dtype()) {
    if (x.byteSize())
      std::memcpy(y.raw(), x.raw(), x.byteSize());
    return;
  }
  dispatchTraits(x.dtype(), [&](auto ftr) {
    using Ft = decltype(ftr);
    using FS = typename Ft::Storage;
    dispatchTraits(y.dtype(), [&](auto ttr) {
      using Tt = decltype(ttr);
      using TS = typename Tt::Storage;
      using TC = typename Tt::Compute;
      const FS *xs = x.data<FS>();
      TS *ys = y.data<TS>();
      for (int64_t i = 0; i < n; ++i) {
        auto v = Ft::load(xs[i]);
        if constexpr (Tt::kClass == kFloat)
          // f64 -> f16/bf16 goes through float: one extra rounding, which
          // can only matter for values exactly between two halves.
          ys[i] = Tt::store(static_cast<TC>(v));
        else if constexpr (Tt::kClass == kBool)
          ys[i] = v != 0; // nan is true, as in C and numpy
        else if constexpr (Ft::kClass == kFloat)
          ys[i] = floatToIntSaturating<TS>(v);
        else
          ys[i] = static_cast<TS>(v);
      }
    });
  });
}

//===----------------------------------------------------------------------===//
// graph.cast
//===----------------------------------------------------------------------===//

Status inferCast(const Attrs &attrs, const std::vector<ValueInfo> &in,
                 std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(checkInputs("cast", in, 1));
  MLCC_CHECK(attrs.has("to"), "cast: attribute 'to' is missing");
  int64_t to = attrs.getInt("to");
  DType dtype = dtypeFromOnnxEnum(to);
  MLCC_CHECK(dtype != DType::Undefined, "cast: 'to' is ONNX data type ", to,
             ", which is not supported (only numeric types and bool)");
  out[0].dtype = dtype;
  out[0].shape = in[0].shape;
  return Status::success();
}

Status runCast(const Attrs &attrs, const std::vector<Tensor> &in,
               std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferCast, attrs, in, out));
  convert(in[0], out[0]);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.cast_like
//===----------------------------------------------------------------------===//

Status inferCastLike(const Attrs &, const std::vector<ValueInfo> &in,
                     std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(checkInputs("cast_like", in, 2));
  out[0].dtype = in[1].dtype;
  out[0].shape = in[0].shape;
  return Status::success();
}

Status runCastLike(const Attrs &attrs, const std::vector<Tensor> &in,
                   std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferCastLike, attrs, in, out));
  convert(in[0], out[0]);
  return Status::success();
}

} // namespace

void registerCastKernels(KernelRegistry &r) {
  r.add("cast", {inferCast, runCast});
  r.add("cast_like", {inferCastLike, runCastLike});
}

} // namespace elementwise
} // namespace mlcc::ref
