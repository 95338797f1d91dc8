//===- ElementwiseUtils.h - Helpers of the elementwise kernels --*- C++ -*-===//
//
// Shared by Unary.cpp, Activations.cpp, Binary.cpp, Variadic.cpp and
// Cast.cpp: dtype traits that let one loop body serve every element type
// (f16/bf16 are computed in float), dtype-set checks for the ONNX type
// constraints, and a broadcasting walk. Everything lives in
// mlcc::ref::elementwise so that inline helpers cannot clash with those of
// other kernel families.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_REFERENCE_KERNELS_ELEMENTWISEUTILS_H
#define MLCC_REFERENCE_KERNELS_ELEMENTWISEUTILS_H

#include "KernelUtils.h"
#include "mlcc/Reference/TypeSets.h"

#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

namespace mlcc::ref::elementwise {

//===----------------------------------------------------------------------===//
// Type sets (the ONNX type constraints of an operand)
//===----------------------------------------------------------------------===//

using ref::TypeSet;
using ref::kFloat;
using ref::kSigned;
using ref::kUnsigned;
using ref::kBool;
using ref::kFloatOrSigned;
using ref::kNumeric;
using ref::kAny;
using ref::typeSetName;

inline unsigned typeClassOf(DType t) {
  if (isFloatType(t))
    return kFloat;
  if (isSignedInt(t))
    return kSigned;
  if (isUnsignedInt(t))
    return kUnsigned;
  if (t == DType::Bool)
    return kBool;
  return 0;
}

/// Fails unless `t` is in `set`: "exp: input X has type i64, expected a
/// float type".
inline Status checkType(const char *op, const char *operand, DType t,
                        unsigned set) {
  MLCC_CHECK(typeClassOf(t) & set, op, ": input ", operand, " has type ",
             dtypeName(t), ", expected ", typeSetName(set));
  return Status::success();
}

/// Fails unless `count` inputs are present.
inline Status checkInputs(const char *op, const std::vector<ValueInfo> &in,
                          size_t count) {
  MLCC_CHECK(in.size() >= count, op, ": expected ", count, " inputs, got ",
             in.size());
  for (size_t i = 0; i < count; ++i)
    MLCC_CHECK(in[i].present(), op, ": input ", i, " is missing");
  return Status::success();
}

/// Broadcast of two shapes with the op named in the error.
inline Status broadcastOp(const char *op, const Shape &a, const Shape &b,
                          Shape &out) {
  Status s = broadcastShapes(a, b, out);
  MLCC_CHECK(s.ok(), op, ": ", s.message());
  return Status::success();
}

//===----------------------------------------------------------------------===//
// DType traits
//===----------------------------------------------------------------------===//

/// Storage is the C++ type in the buffer; Compute the type loop bodies see
/// (float for f16/bf16). load/store convert between them; they are the
/// identity, and vanish, for every other type.
template <DType D, typename S, typename C = S> struct TraitsBase {
  static constexpr DType kDType = D;
  static constexpr unsigned kClass = std::is_same_v<S, bool>       ? kBool
                                     : std::is_floating_point_v<C> ? kFloat
                                     : std::is_signed_v<S>         ? kSigned
                                                                   : kUnsigned;
  using Storage = S;
  using Compute = C;
};

template <DType D> struct Traits;
#define MLCC_EW_PLAIN_TRAITS(D, T)                                             \
  template <> struct Traits<DType::D> : TraitsBase<DType::D, T> {              \
    static T load(T v) { return v; }                                           \
    static T store(T v) { return v; }                                          \
  };
MLCC_EW_PLAIN_TRAITS(F32, float)
MLCC_EW_PLAIN_TRAITS(F64, double)
MLCC_EW_PLAIN_TRAITS(I8, int8_t)
MLCC_EW_PLAIN_TRAITS(U8, uint8_t)
MLCC_EW_PLAIN_TRAITS(I16, int16_t)
MLCC_EW_PLAIN_TRAITS(U16, uint16_t)
MLCC_EW_PLAIN_TRAITS(I32, int32_t)
MLCC_EW_PLAIN_TRAITS(U32, uint32_t)
MLCC_EW_PLAIN_TRAITS(I64, int64_t)
MLCC_EW_PLAIN_TRAITS(U64, uint64_t)
MLCC_EW_PLAIN_TRAITS(Bool, bool)
#undef MLCC_EW_PLAIN_TRAITS

template <>
struct Traits<DType::F16> : TraitsBase<DType::F16, uint16_t, float> {
  static float load(uint16_t v) { return halfToFloat(v); }
  static uint16_t store(float v) { return floatToHalf(v); }
};
template <>
struct Traits<DType::BF16> : TraitsBase<DType::BF16, uint16_t, float> {
  static float load(uint16_t v) { return bf16ToFloat(v); }
  static uint16_t store(float v) { return floatToBf16(v); }
};

/// Calls `fn(Traits<dtype>{})`; does nothing for Undefined (callers have
/// checked the type already).
template <typename Fn> void dispatchTraits(DType dtype, Fn &&fn) {
  switch (dtype) {
  case DType::F32:
    fn(Traits<DType::F32>{});
    return;
  case DType::F64:
    fn(Traits<DType::F64>{});
    return;
  case DType::F16:
    fn(Traits<DType::F16>{});
    return;
  case DType::BF16:
    fn(Traits<DType::BF16>{});
    return;
  case DType::I8:
    fn(Traits<DType::I8>{});
    return;
  case DType::U8:
    fn(Traits<DType::U8>{});
    return;
  case DType::I16:
    fn(Traits<DType::I16>{});
    return;
  case DType::U16:
    fn(Traits<DType::U16>{});
    return;
  case DType::I32:
    fn(Traits<DType::I32>{});
    return;
  case DType::U32:
    fn(Traits<DType::U32>{});
    return;
  case DType::I64:
    fn(Traits<DType::I64>{});
    return;
  case DType::U64:
    fn(Traits<DType::U64>{});
    return;
  case DType::Bool:
    fn(Traits<DType::Bool>{});
    return;
  case DType::Undefined:
    return;
  }
}

//===----------------------------------------------------------------------===//
// Scalar helpers
//===----------------------------------------------------------------------===//

template <typename T> bool isNan(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isnan(v);
  else
    return false;
}

/// Integer +, -, * and negation that wrap instead of overflowing (signed
/// overflow is undefined behaviour in C++, and the constant folder must not
/// depend on it).
template <typename T> T wrapAdd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T> T wrapSub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename T> T wrapMul(T a, T b) {
  // Multiply in at least unsigned int: uint16_t * uint16_t would promote to
  // (signed) int and could overflow.
  using U = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}
template <typename T> T wrapNeg(T a) { return wrapSub<T>(0, a); }

/// Float to integer conversion, rounding toward zero, saturating at the
/// limits and mapping nan to 0 (ONNX leaves these cases undefined; this
/// matches Tensor::setDouble).
template <typename T, typename F> T floatToIntSaturating(F v) {
  if (std::isnan(v))
    return 0;
  const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  double d = static_cast<double>(v);
  if (d <= lo)
    return std::numeric_limits<T>::lowest();
  if (d >= hi)
    return std::numeric_limits<T>::max();
  return static_cast<T>(d);
}

//===----------------------------------------------------------------------===//
// Broadcasting walk
//===----------------------------------------------------------------------===//

/// Calls `fn(o, off)` for every element `o` of the row-major `outShape`, with
/// off[k] the element offset into input k whose broadcast strides are
/// `strides[k]` (see broadcastStrides). Size-1 dims are dropped and adjacent
/// dims that are contiguous for every input are merged first, so that e.g.
/// NCHW + C11 runs as a 3-d walk with a long inner loop.
template <size_t K, typename Fn>
void forEachBroadcast(const Shape &outShape,
                      const std::array<std::vector<int64_t>, K> &strides,
                      Fn &&fn) {
  int64_t n = numElements(outShape);
  if (n == 0)
    return;
  Shape dims;
  std::array<std::vector<int64_t>, K> st;
  for (size_t d = 0; d < outShape.size(); ++d) {
    if (outShape[d] == 1)
      continue;
    bool merge = !dims.empty();
    for (size_t k = 0; k < K && merge; ++k)
      merge = st[k].back() == strides[k][d] * outShape[d];
    if (merge) {
      dims.back() *= outShape[d];
      for (size_t k = 0; k < K; ++k)
        st[k].back() = strides[k][d];
    } else {
      dims.push_back(outShape[d]);
      for (size_t k = 0; k < K; ++k)
        st[k].push_back(strides[k][d]);
    }
  }
  if (dims.empty()) { // a single element
    dims.push_back(1);
    for (size_t k = 0; k < K; ++k)
      st[k].push_back(0);
  }

  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t inner = dims[rank - 1];
  std::array<int64_t, K> step, base{};
  for (size_t k = 0; k < K; ++k)
    step[k] = st[k][rank - 1];
  std::vector<int64_t> idx(rank, 0);
  for (int64_t o = 0; o < n; o += inner) {
    std::array<int64_t, K> off = base;
    for (int64_t j = 0; j < inner; ++j) {
      fn(o + j, off);
      for (size_t k = 0; k < K; ++k)
        off[k] += step[k];
    }
    for (int64_t d = rank - 2; d >= 0; --d) {
      for (size_t k = 0; k < K; ++k)
        base[k] += st[k][d];
      if (++idx[d] < dims[d])
        break;
      for (size_t k = 0; k < K; ++k)
        base[k] -= st[k][d] * dims[d];
      idx[d] = 0;
    }
  }
}

/// Calls `fn(o, ia, ib)` for every element of the broadcast `outShape` of
/// inputs of shapes `a` and `b`, with flat loops for the common cases of
/// equal shapes and of a scalar operand.
template <typename Fn>
void forEachBinary(const Shape &a, const Shape &b, const Shape &outShape,
                   Fn &&fn) {
  const int64_t n = numElements(outShape);
  if (a == outShape && b == outShape) {
    for (int64_t i = 0; i < n; ++i)
      fn(i, i, i);
  } else if (a == outShape && numElements(b) == 1) {
    for (int64_t i = 0; i < n; ++i)
      fn(i, i, int64_t(0));
  } else if (b == outShape && numElements(a) == 1) {
    for (int64_t i = 0; i < n; ++i)
      fn(i, int64_t(0), i);
  } else {
    std::array<std::vector<int64_t>, 2> strides = {
        broadcastStrides(a, outShape), broadcastStrides(b, outShape)};
    forEachBroadcast<2>(outShape, strides,
                        [&](int64_t o, const std::array<int64_t, 2> &off) {
                          fn(o, off[0], off[1]);
                        });
  }
}

//===----------------------------------------------------------------------===//
// Unary ops with one typed loop
//===----------------------------------------------------------------------===//

/// A unary op is a struct deriving from UnaryOpBase with
///   static constexpr const char *kName;   // the mnemonic
///   static constexpr unsigned kTypes;     // allowed input TypeSet
///   template <typename T> T operator()(T x) const;  // bool if kBoolResult
/// and optionally a constructor from Attrs that reads its attributes. T is
/// the Compute type of the input (float for f16/bf16).
struct UnaryOpBase {
  static constexpr bool kBoolResult = false;
};

template <typename Op> Op makeOp(const Attrs &attrs) {
  if constexpr (std::is_constructible_v<Op, const Attrs &>)
    return Op(attrs);
  else
    return Op{};
}

template <typename Op>
Status inferUnary(const Attrs &, const std::vector<ValueInfo> &in,
                  std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(checkInputs(Op::kName, in, 1));
  MLCC_RETURN_IF_ERROR(checkType(Op::kName, "X", in[0].dtype, Op::kTypes));
  out[0].dtype = Op::kBoolResult ? DType::Bool : in[0].dtype;
  out[0].shape = in[0].shape;
  return Status::success();
}

template <typename Op>
Status runUnary(const Attrs &attrs, const std::vector<Tensor> &in,
                std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferUnary<Op>, attrs, in, out));
  const Op op = makeOp<Op>(attrs);
  const Tensor &x = in[0];
  Tensor &y = out[0];
  const int64_t n = x.numel();
  dispatchTraits(x.dtype(), [&](auto tr) {
    using Tr = decltype(tr);
    using S = typename Tr::Storage;
    if constexpr ((Op::kTypes & Tr::kClass) != 0) {
      const S *xs = x.data<S>();
      if constexpr (Op::kBoolResult) {
        bool *ys = y.data<bool>();
        for (int64_t i = 0; i < n; ++i)
          ys[i] = op(Tr::load(xs[i]));
      } else {
        S *ys = y.data<S>();
        for (int64_t i = 0; i < n; ++i)
          ys[i] = Tr::store(op(Tr::load(xs[i])));
      }
    }
  });
  return Status::success();
}

template <typename Op> void addUnary(KernelRegistry &r) {
  r.add(Op::kName, {inferUnary<Op>, runUnary<Op>});
}

//===----------------------------------------------------------------------===//
// Registration of the sub-families (each defined in its own file)
//===----------------------------------------------------------------------===//

void registerUnaryMathKernels(KernelRegistry &r);  // Unary.cpp
void registerActivationKernels(KernelRegistry &r); // Activations.cpp
void registerBinaryKernels(KernelRegistry &r);     // Binary.cpp
void registerVariadicKernels(KernelRegistry &r);   // Variadic.cpp
void registerCastKernels(KernelRegistry &r);       // Cast.cpp

} // namespace mlcc::ref::elementwise

#endif // MLCC_REFERENCE_KERNELS_ELEMENTWISEUTILS_H
