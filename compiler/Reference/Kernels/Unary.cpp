//===- Unary.cpp - Elementwise unary math reference kernels ---------------===//
//
// abs, neg, sign, rounding, exp/log/sqrt, trigonometric and hyperbolic
// functions, erf, the predicates is_nan/is_inf, not and identity. Also the
// entry point of the whole elementwise family, registerElementwiseKernels.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseUtils.h"

#include <cmath>

namespace mlcc::ref {
namespace elementwise {
namespace {

// Float functions: T is float (also for f16/bf16) or double, so f32 models
// run the float versions of the libm functions.
#define MLCC_FLOAT_UNARY(Name, Mnemonic, Expr)                                 \
  struct Name : UnaryOpBase {                                                  \
    static constexpr const char *kName = Mnemonic;                             \
    static constexpr unsigned kTypes = kFloat;                                 \
    template <typename T> T operator()(T x) const { return Expr; }             \
  };

MLCC_FLOAT_UNARY(Acos, "acos", std::acos(x))
MLCC_FLOAT_UNARY(Acosh, "acosh", std::acosh(x))
MLCC_FLOAT_UNARY(Asin, "asin", std::asin(x))
MLCC_FLOAT_UNARY(Asinh, "asinh", std::asinh(x))
MLCC_FLOAT_UNARY(Atan, "atan", std::atan(x))
MLCC_FLOAT_UNARY(Atanh, "atanh", std::atanh(x))
MLCC_FLOAT_UNARY(Ceil, "ceil", std::ceil(x))
MLCC_FLOAT_UNARY(Cos, "cos", std::cos(x))
MLCC_FLOAT_UNARY(Cosh, "cosh", std::cosh(x))
MLCC_FLOAT_UNARY(Exp, "exp", std::exp(x))
MLCC_FLOAT_UNARY(Floor, "floor", std::floor(x))
MLCC_FLOAT_UNARY(Log, "log", std::log(x))
MLCC_FLOAT_UNARY(Reciprocal, "reciprocal", T(1) / x)
MLCC_FLOAT_UNARY(Sin, "sin", std::sin(x))
MLCC_FLOAT_UNARY(Sinh, "sinh", std::sinh(x))
MLCC_FLOAT_UNARY(Sqrt, "sqrt", std::sqrt(x))
MLCC_FLOAT_UNARY(Tan, "tan", std::tan(x))
MLCC_FLOAT_UNARY(Tanh, "tanh", std::tanh(x))
#undef MLCC_FLOAT_UNARY

// graph.round: halves go to the even neighbour (numpy.round, IEEE default),
// computed explicitly rather than relying on the current rounding mode.
struct Round : UnaryOpBase {
  static constexpr const char *kName = "round";
  static constexpr unsigned kTypes = kFloat;
  template <typename T> T operator()(T x) const {
    if (std::fabs(x - std::trunc(x)) == T(0.5))
      return T(2) * std::round(x / T(2));
    return std::round(x);
  }
};

// graph.erf: also defined on integers (Erf-13), where the result is
// truncated back to the integer type.
struct Erf : UnaryOpBase {
  static constexpr const char *kName = "erf";
  static constexpr unsigned kTypes = kNumeric;
  template <typename T> T operator()(T x) const {
    return static_cast<T>(std::erf(x));
  }
};

// graph.abs
struct Abs : UnaryOpBase {
  static constexpr const char *kName = "abs";
  static constexpr unsigned kTypes = kNumeric;
  template <typename T> T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>)
      return std::fabs(x); // also clears the sign of -0
    else if constexpr (std::is_signed_v<T>)
      return x < 0 ? wrapNeg(x) : x;
    else
      return x;
  }
};

// graph.neg
struct Neg : UnaryOpBase {
  static constexpr const char *kName = "neg";
  static constexpr unsigned kTypes = kFloatOrSigned;
  template <typename T> T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>)
      return -x;
    else
      return wrapNeg(x);
  }
};

// graph.sign: -1, 0 or 1; nan stays nan (as numpy.sign).
struct Sign : UnaryOpBase {
  static constexpr const char *kName = "sign";
  static constexpr unsigned kTypes = kNumeric;
  template <typename T> T operator()(T x) const {
    if (x > T(0))
      return T(1);
    if (x < T(0))
      return static_cast<T>(-1);
    return x;
  }
};

// graph.is_nan
struct IsNaN : UnaryOpBase {
  static constexpr const char *kName = "is_nan";
  static constexpr unsigned kTypes = kFloat;
  static constexpr bool kBoolResult = true;
  template <typename T> bool operator()(T x) const { return std::isnan(x); }
};

// graph.is_inf
struct IsInf : UnaryOpBase {
  static constexpr const char *kName = "is_inf";
  static constexpr unsigned kTypes = kFloat;
  static constexpr bool kBoolResult = true;
  bool negative, positive;
  explicit IsInf(const Attrs &attrs)
      : negative(attrs.getInt("detect_negative", 1) != 0),
        positive(attrs.getInt("detect_positive", 1) != 0) {}
  template <typename T> bool operator()(T x) const {
    return std::isinf(x) && (x > 0 ? positive : negative);
  }
};

// graph.not
struct Not : UnaryOpBase {
  static constexpr const char *kName = "not";
  static constexpr unsigned kTypes = kBool;
  bool operator()(bool x) const { return !x; }
};

//===----------------------------------------------------------------------===//
// graph.identity
//===----------------------------------------------------------------------===//

Status inferIdentity(const Attrs &, const std::vector<ValueInfo> &in,
                     std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(checkInputs("identity", in, 1));
  out[0].dtype = in[0].dtype;
  out[0].shape = in[0].shape;
  return Status::success();
}

Status runIdentity(const Attrs &attrs, const std::vector<Tensor> &in,
                   std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferIdentity, attrs, in, out));
  // A copy rather than shared storage: the output is a value of its own.
  if (in[0].byteSize())
    std::memcpy(out[0].raw(), in[0].raw(), in[0].byteSize());
  return Status::success();
}

} // namespace

void registerUnaryMathKernels(KernelRegistry &r) {
  addUnary<Abs>(r);
  addUnary<Acos>(r);
  addUnary<Acosh>(r);
  addUnary<Asin>(r);
  addUnary<Asinh>(r);
  addUnary<Atan>(r);
  addUnary<Atanh>(r);
  addUnary<Ceil>(r);
  addUnary<Cos>(r);
  addUnary<Cosh>(r);
  addUnary<Erf>(r);
  addUnary<Exp>(r);
  addUnary<Floor>(r);
  addUnary<Log>(r);
  addUnary<Neg>(r);
  addUnary<Reciprocal>(r);
  addUnary<Round>(r);
  addUnary<Sign>(r);
  addUnary<Sin>(r);
  addUnary<Sinh>(r);
  addUnary<Sqrt>(r);
  addUnary<Tan>(r);
  addUnary<Tanh>(r);
  addUnary<IsNaN>(r);
  addUnary<IsInf>(r);
  addUnary<Not>(r);
  r.add("identity", {inferIdentity, runIdentity});
}

} // namespace elementwise

void registerElementwiseKernels(KernelRegistry &r) {
  elementwise::registerUnaryMathKernels(r);
  elementwise::registerActivationKernels(r);
  elementwise::registerBinaryKernels(r);
  elementwise::registerVariadicKernels(r);
  elementwise::registerCastKernels(r);
}

} // namespace mlcc::ref
