//===- Gelu.cpp - graph.gelu reference kernel -----------------------------===//
//
// graph.gelu stands for the decomposed GELU that mlcc-fuse-gelu replaces
// (and for ONNX Gelu-20). It evaluates the decomposed graph's own sequence
// of operations, in the input's type and in the order torch exports them,
// so that fusing changes no bit of an f32 model on the reference executor:
//   none: 0.5 x (1 + erf(x / sqrt 2))
//   tanh: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x x x)))
// (0.5 x first: it is exact, and x (1 + erf) could overflow where the
// result does not.) f16 and bf16 compute in f32, like the other elementwise
// kernels.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseUtils.h"

#include <cmath>

namespace mlcc::ref {
namespace {

using namespace elementwise;

constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kTanhCubic = 0.044715;

struct Gelu : UnaryOpBase {
  static constexpr const char *kName = "gelu";
  static constexpr unsigned kTypes = kFloat;
  bool tanhForm;
  explicit Gelu(const Attrs &a)
      : tanhForm(a.getString("approximate", "none") == "tanh") {}
  template <typename T> T operator()(T x) const {
    T half = T(0.5) * x;
    if (!tanhForm)
      return half * (T(1) + std::erf(x / T(kSqrt2)));
    T inner = x + T(kTanhCubic) * (x * x * x);
    return half * (T(1) + std::tanh(T(kSqrt2OverPi) * inner));
  }
};

Status checkApproximate(const Attrs &attrs) {
  std::string approximate = attrs.getString("approximate", "none");
  MLCC_CHECK(approximate == "none" || approximate == "tanh",
             "gelu: approximate is '", approximate,
             "', expected 'none' or 'tanh'");
  return Status::success();
}

Status inferGelu(const Attrs &attrs, const std::vector<ValueInfo> &in,
                 std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(checkApproximate(attrs));
  return inferUnary<Gelu>(attrs, in, out);
}

Status runGelu(const Attrs &attrs, const std::vector<Tensor> &in,
               std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(checkApproximate(attrs));
  return runUnary<Gelu>(attrs, in, out);
}

} // namespace

void registerGeluKernels(KernelRegistry &r) {
  r.add("gelu", {inferGelu, runGelu});
}

} // namespace mlcc::ref
