//===- Binary.cpp - Elementwise binary reference kernels ------------------===//
//
// Arithmetic, pow, mod, bit shifts, logical ops, comparisons and where, all
// with numpy-style (multidirectional) broadcasting.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseUtils.h"

#include <cmath>

namespace mlcc::ref {
namespace elementwise {
namespace {

/// A binary op: kName, kTypes (the TypeSet of both operands, which share
/// one type), kBoolResult, `template <typename T> R operator()(T a, T b)`
/// on the Compute type, an optional constructor from Attrs and an optional
/// attribute check. kIntDivisor asks for a check that an integer B holds no
/// zero, which would be undefined behaviour (a crash) in C++.
struct BinaryOpBase {
  static constexpr bool kBoolResult = false;
  static constexpr bool kIntDivisor = false;
  static Status checkAttrs(const char *, const Attrs &) {
    return Status::success();
  }
};

template <typename Op>
Status inferBinary(const Attrs &attrs, const std::vector<ValueInfo> &in,
                   std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(checkInputs(Op::kName, in, 2));
  MLCC_RETURN_IF_ERROR(checkType(Op::kName, "A", in[0].dtype, Op::kTypes));
  MLCC_CHECK(in[1].dtype == in[0].dtype, Op::kName, ": inputs have types ",
             dtypeName(in[0].dtype), " and ", dtypeName(in[1].dtype),
             ", expected one type");
  MLCC_RETURN_IF_ERROR(Op::checkAttrs(Op::kName, attrs));
  out[0].dtype = Op::kBoolResult ? DType::Bool : in[0].dtype;
  return broadcastOp(Op::kName, in[0].shape, in[1].shape, out[0].shape);
}

/// True when an integer tensor holds a zero.
bool hasIntZero(const Tensor &t) {
  if (isFloatType(t.dtype()))
    return false;
  for (int64_t i = 0, n = t.numel(); i < n; ++i)
    if (t.getInt(i) == 0)
      return true;
  return false;
}

template <typename Op>
Status runBinary(const Attrs &attrs, const std::vector<Tensor> &in,
                 std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferBinary<Op>, attrs, in, out));
  const Tensor &a = in[0], &b = in[1];
  Tensor &c = out[0];
  if constexpr (Op::kIntDivisor)
    MLCC_CHECK(!hasIntZero(b), Op::kName, ": integer division by zero");
  const Op op = makeOp<Op>(attrs);
  dispatchTraits(a.dtype(), [&](auto tr) {
    using Tr = decltype(tr);
    using S = typename Tr::Storage;
    if constexpr ((Op::kTypes & Tr::kClass) != 0) {
      const S *as = a.data<S>();
      const S *bs = b.data<S>();
      if constexpr (Op::kBoolResult) {
        bool *cs = c.data<bool>();
        forEachBinary(a.shape(), b.shape(), c.shape(),
                      [&](int64_t o, int64_t i, int64_t j) {
                        cs[o] = op(Tr::load(as[i]), Tr::load(bs[j]));
                      });
      } else {
        S *cs = c.data<S>();
        forEachBinary(a.shape(), b.shape(), c.shape(),
                      [&](int64_t o, int64_t i, int64_t j) {
                        cs[o] = Tr::store(op(Tr::load(as[i]), Tr::load(bs[j])));
                      });
      }
    }
  });
  return Status::success();
}

template <typename Op> void addBinary(KernelRegistry &r) {
  r.add(Op::kName, {inferBinary<Op>, runBinary<Op>});
}

//===----------------------------------------------------------------------===//
// Arithmetic
//===----------------------------------------------------------------------===//

// graph.add
struct Add : BinaryOpBase {
  static constexpr const char *kName = "add";
  static constexpr unsigned kTypes = kNumeric;
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>)
      return a + b;
    else
      return wrapAdd(a, b);
  }
};

// graph.sub
struct Sub : BinaryOpBase {
  static constexpr const char *kName = "sub";
  static constexpr unsigned kTypes = kNumeric;
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>)
      return a - b;
    else
      return wrapSub(a, b);
  }
};

// graph.mul
struct Mul : BinaryOpBase {
  static constexpr const char *kName = "mul";
  static constexpr unsigned kTypes = kNumeric;
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>)
      return a * b;
    else
      return wrapMul(a, b);
  }
};

// graph.div: integers truncate toward zero, like C.
struct Div : BinaryOpBase {
  static constexpr const char *kName = "div";
  static constexpr unsigned kTypes = kNumeric;
  static constexpr bool kIntDivisor = true;
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>)
      return a / b;
    else if constexpr (std::is_signed_v<T>)
      return b == T(-1) ? wrapNeg(a) : static_cast<T>(a / b); // INT_MIN / -1
    else
      return static_cast<T>(a / b);
  }
};

// graph.mod: with fmod = 0 the result takes the sign of the divisor (Python
// and numpy.mod), with fmod = 1 that of the dividend (C fmod and %). ONNX
// requires fmod = 1 for floats; fmod = 0 on floats is given the numpy.mod
// meaning rather than rejected.
struct Mod : BinaryOpBase {
  static constexpr const char *kName = "mod";
  static constexpr unsigned kTypes = kNumeric;
  static constexpr bool kIntDivisor = true;
  bool fmod;
  explicit Mod(const Attrs &attrs) : fmod(attrs.getInt("fmod", 0) != 0) {}
  static Status checkAttrs(const char *, const Attrs &attrs) {
    int64_t f = attrs.getInt("fmod", 0);
    MLCC_CHECK(f == 0 || f == 1, "mod: fmod is ", f, ", expected 0 or 1");
    return Status::success();
  }
  template <typename T> T operator()(T a, T b) const {
    T r;
    if constexpr (std::is_floating_point_v<T>)
      r = std::fmod(a, b);
    else if constexpr (std::is_signed_v<T>)
      r = b == T(-1) ? T(0) : static_cast<T>(a % b); // INT_MIN % -1
    else
      r = static_cast<T>(a % b);
    if constexpr (std::is_signed_v<T>)
      if (!fmod && r != T(0) && ((r < T(0)) != (b < T(0))))
        r = static_cast<T>(r + b);
    return r;
  }
};

// graph.bit_shift: shifting by the bit width or more gives 0 (in C++ it
// would be undefined).
struct BitShift : BinaryOpBase {
  static constexpr const char *kName = "bit_shift";
  static constexpr unsigned kTypes = kUnsigned;
  bool left;
  explicit BitShift(const Attrs &attrs)
      : left(attrs.getString("direction") == "LEFT") {}
  static Status checkAttrs(const char *, const Attrs &attrs) {
    std::string d = attrs.getString("direction");
    MLCC_CHECK(d == "LEFT" || d == "RIGHT", "bit_shift: direction is '", d,
               "', expected LEFT or RIGHT");
    return Status::success();
  }
  template <typename T> T operator()(T a, T b) const {
    if (b >= T(sizeof(T) * 8))
      return T(0);
    return left ? static_cast<T>(a << b) : static_cast<T>(a >> b);
  }
};

//===----------------------------------------------------------------------===//
// Logical ops and comparisons
//===----------------------------------------------------------------------===//

#define MLCC_BOOL_BINARY(Name, Mnemonic, Types, Expr)                          \
  struct Name : BinaryOpBase {                                                 \
    static constexpr const char *kName = Mnemonic;                             \
    static constexpr unsigned kTypes = Types;                                  \
    static constexpr bool kBoolResult = true;                                  \
    template <typename T> bool operator()(T a, T b) const { return Expr; }     \
  };

MLCC_BOOL_BINARY(And, "and", kBool, (a && b))
MLCC_BOOL_BINARY(Or, "or", kBool, (a || b))
MLCC_BOOL_BINARY(Xor, "xor", kBool, a != b)
MLCC_BOOL_BINARY(Equal, "equal", kAny, a == b)
MLCC_BOOL_BINARY(Greater, "greater", kNumeric, a > b)
MLCC_BOOL_BINARY(GreaterOrEqual, "greater_or_equal", kNumeric, a >= b)
MLCC_BOOL_BINARY(Less, "less", kNumeric, a < b)
MLCC_BOOL_BINARY(LessOrEqual, "less_or_equal", kNumeric, a <= b)
#undef MLCC_BOOL_BINARY

//===----------------------------------------------------------------------===//
// graph.pow
//===----------------------------------------------------------------------===//

// The exponent may have another type than the base (Pow-15: T and T1); the
// result has the base's type.

/// Integer power by squaring, wrapping on overflow. Negative exponents give
/// the truncated reciprocal: 0 except for bases 1 and -1.
template <typename A, typename B> A intPow(A base, B exp) {
  if constexpr (std::is_signed_v<B>) {
    if (exp < 0) {
      if (base == A(1))
        return A(1);
      if constexpr (std::is_signed_v<A>)
        if (base == A(-1))
          return (exp % 2) ? A(-1) : A(1);
      return A(0);
    }
  }
  A result = 1;
  while (exp != 0) {
    if (exp & 1)
      result = wrapMul(result, base);
    base = wrapMul(base, base);
    exp = static_cast<B>(exp / 2);
  }
  return result;
}

template <typename A, typename B> A powElem(A a, B b) {
  if constexpr (std::is_floating_point_v<A>)
    return static_cast<A>(std::pow(a, b)); // float ^ float stays in float
  else if constexpr (std::is_floating_point_v<B>)
    return floatToIntSaturating<A>(
        std::pow(static_cast<double>(a), static_cast<double>(b)));
  else
    return intPow(a, b);
}

Status inferPow(const Attrs &, const std::vector<ValueInfo> &in,
                std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(checkInputs("pow", in, 2));
  MLCC_RETURN_IF_ERROR(checkType("pow", "X", in[0].dtype, kNumeric));
  MLCC_RETURN_IF_ERROR(checkType("pow", "Y", in[1].dtype, kNumeric));
  out[0].dtype = in[0].dtype;
  return broadcastOp("pow", in[0].shape, in[1].shape, out[0].shape);
}

Status runPow(const Attrs &attrs, const std::vector<Tensor> &in,
              std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferPow, attrs, in, out));
  const Tensor &x = in[0], &y = in[1];
  Tensor &z = out[0];
  dispatchTraits(x.dtype(), [&](auto xtr) {
    using Xt = decltype(xtr);
    using XS = typename Xt::Storage;
    if constexpr ((kNumeric & Xt::kClass) != 0) {
      dispatchTraits(y.dtype(), [&](auto ytr) {
        using Yt = decltype(ytr);
        using YS = typename Yt::Storage;
        if constexpr ((kNumeric & Yt::kClass) != 0) {
          const XS *xs = x.data<XS>();
          const YS *ys = y.data<YS>();
          XS *zs = z.data<XS>();
          forEachBinary(x.shape(), y.shape(), z.shape(),
                        [&](int64_t o, int64_t i, int64_t j) {
                          zs[o] = Xt::store(
                              powElem(Xt::load(xs[i]), Yt::load(ys[j])));
                        });
        }
      });
    }
  });
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.where
//===----------------------------------------------------------------------===//

Status inferWhere(const Attrs &, const std::vector<ValueInfo> &in,
                  std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(checkInputs("where", in, 3));
  MLCC_RETURN_IF_ERROR(checkType("where", "condition", in[0].dtype, kBool));
  MLCC_CHECK(in[1].dtype == in[2].dtype, "where: X and Y have types ",
             dtypeName(in[1].dtype), " and ", dtypeName(in[2].dtype),
             ", expected one type");
  Shape xy;
  MLCC_RETURN_IF_ERROR(broadcastOp("where", in[1].shape, in[2].shape, xy));
  out[0].dtype = in[1].dtype;
  return broadcastOp("where", in[0].shape, xy, out[0].shape);
}

Status runWhere(const Attrs &attrs, const std::vector<Tensor> &in,
                std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferWhere, attrs, in, out));
  const Tensor &cond = in[0], &x = in[1], &y = in[2];
  Tensor &z = out[0];
  const Shape &shape = z.shape();
  std::array<std::vector<int64_t>, 3> strides = {
      broadcastStrides(cond.shape(), shape), broadcastStrides(x.shape(), shape),
      broadcastStrides(y.shape(), shape)};
  // Selection copies elements: the storage type is enough.
  dispatchDType(z.dtype(), [&](auto tag) {
    using S = decltype(tag);
    const bool *cs = cond.data<bool>();
    const S *xs = x.data<S>();
    const S *ys = y.data<S>();
    S *zs = z.data<S>();
    forEachBroadcast<3>(shape, strides,
                        [&](int64_t o, const std::array<int64_t, 3> &off) {
                          zs[o] = cs[off[0]] ? xs[off[1]] : ys[off[2]];
                        });
  });
  return Status::success();
}

} // namespace

void registerBinaryKernels(KernelRegistry &r) {
  addBinary<Add>(r);
  addBinary<Sub>(r);
  addBinary<Mul>(r);
  addBinary<Div>(r);
  addBinary<Mod>(r);
  addBinary<BitShift>(r);
  addBinary<And>(r);
  addBinary<Or>(r);
  addBinary<Xor>(r);
  addBinary<Equal>(r);
  addBinary<Greater>(r);
  addBinary<GreaterOrEqual>(r);
  addBinary<Less>(r);
  addBinary<LessOrEqual>(r);
  r.add("pow", {inferPow, runPow});
  r.add("where", {inferWhere, runWhere});
}

} // namespace elementwise
} // namespace mlcc::ref
