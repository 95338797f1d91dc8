//===- EltwiseInjector.cpp - Elementwise ops on zmm registers -------------===//
//
// The transcendental functions share one scheme: reduce the argument, run a
// polynomial by Horner's rule with fma, rebuild. The coefficients are
// near-minimax fits (Lawson's iteration on Chebyshev nodes, in double,
// then rounded to f32) made by EltwiseCoefficients.py next to this file,
// which prints the fit error of each.
//
// Largest errors of the finished kernels against the function in double,
// over 16M to 33M evenly spaced points plus log-spaced ones down to 1e-30
// (relative where the result is a normal f32; one f32 ulp is 1.2e-7 at 1):
//   exp      [-87.3, 88.7]  7.6e-8 relative; subnormal results within one
//                           subnormal step
//   sigmoid  [-87, 40]      1.8e-7 relative
//   tanh     [-10, 10]      1.5e-7 relative
//   erf      [-6, 6]        1.2e-7 absolute, 1.8e-7 relative
//   gelu     [-13, 13]      4.4e-7 relative (negative tail included)
//   silu     [-80, 40]      2.2e-7 relative
//   elu      [-87, 1]       8.8e-8 relative (its expm1; selu and celu
//                           scale it), near 0 too
//   softplus [-103, 88]     1.3e-7 relative, both tails
//   log      [1e-30, 3e38]  8.3e-8 relative, subnormals and near 1 too
//   gelu_tanh [-3, 10]      8.1e-7 relative (2^22 points); on [-13, 13]
//                           1.4e-7 absolute
//                           against max(|y|, 1) (2^18 points): in the
//                           negative tail the rounding of 2u is magnified
//                           |2u| times (the reference's 1 + tanh u cancels
//                           outright there)
// test/unit/lowering/EltwiseKernelTest.cpp holds the kernels to about twice
// these bounds.
//
// Nan handling follows the reference kernels: a nan input gives a nan, and
// max/min-based clamps keep it (x86 max/min return their second source when
// either is nan, so the value being clamped goes second).
//
//===----------------------------------------------------------------------===//

#include "EltwiseInjector.h"

#include <cmath>

namespace mlcc::avx512 {

using Xbyak::Zmm;

namespace {

constexpr uint32_t kSignBit = 0x80000000u;
constexpr uint32_t kAbsMask = 0x7fffffffu;

// vcmpps predicates. Ordered compares are false on nan, so a nan takes the
// "not selected" path of every blend below.
constexpr uint8_t kCmpUnord = 0x03;
constexpr uint8_t kCmpOrd = 0x07;
constexpr uint8_t kCmpEqOq = 0x00;
constexpr uint8_t kCmpLtOq = 0x11;
constexpr uint8_t kCmpLeOq = 0x12;
constexpr uint8_t kCmpGeOq = 0x1d;
constexpr uint8_t kCmpGtOq = 0x1e;

/// vgetmantps control: the mantissa in [1, 2), nan for a negative input.
constexpr uint8_t kMantOneTwoNanIfNegative = 0x08;

/// vpternlogd truth table for "c ? b : a" (a = destination, b = second,
/// c = third source): with c the sign bit, copies b's sign onto a.
constexpr uint8_t kTernSelect = 0xd8;

//===----------------------------------------------------------------------===//
// Coefficients (EltwiseCoefficients.py)
//===----------------------------------------------------------------------===//

// exp(r) on |r| <= ln2/2: 1 + r + r^2 q(r), q of degree 4; fit relative
// error 3.1e-9, far below f32 rounding.
constexpr std::array<float, 7> kExpPoly = {1.0f,
                                           1.0f,
                                           4.999999404e-01f,
                                           1.666652113e-01f,
                                           4.166838899e-02f,
                                           8.368710056e-03f,
                                           1.381461276e-03f};
constexpr float kLog2e = 1.44269502e+00f;
// ln 2 split for Cody-Waite: hi is ln 2 rounded to f32, lo the rest. With
// |n| <= 160 the first fma step is exact.
constexpr float kLn2Hi = 6.93147182e-01f;
constexpr float kLn2Lo = -1.90465430e-09f;
// exp overflows to inf above 88.72 and underflows to 0 below -103.97;
// clamping just outside keeps the reduction exact and inf/-inf finite.
constexpr float kExpHigh = 89.0f;
constexpr float kExpLow = -110.0f;

// tanh(x) = x + x^3 P(x^2) on |x| < 0.625; fit relative error 4.4e-9.
constexpr float kTanhSplit = 0.625f;
constexpr std::array<float, 5> kTanhPoly = {-3.333328068e-01f, 1.333144158e-01f,
                                            -5.373971537e-02f, 2.063908800e-02f,
                                            -5.704987328e-03f};

// erf(x) = x P(x^2) on |x| < 0.875; fit relative error 8.5e-9.
constexpr float kErfSplit = 0.875f;
constexpr std::array<float, 6> kErfPoly = {1.128379107e+00f, -3.761255145e-01f,
                                           1.128245518e-01f, -2.679146640e-02f,
                                           5.032186396e-03f, -6.203278899e-04f};
// erfc(a) = exp(-a^2) R(t), t = 1 / (1 + 0.5 a), on a >= 0 (the form of
// Abramowitz and Stegun 7.1.26, refitted to a higher degree); fit relative
// error 3.2e-8 for a in [0, 10], beyond which erfc underflows (5.1e-8 with
// the coefficients rounded to f32).
constexpr float kErfcP = 0.5f;
constexpr std::array<float, 10> kErfcPoly = {
    -6.011313872e-06f, 2.822213769e-01f, 2.810984254e-01f, 2.497934997e-01f,
    1.812499166e-01f,  1.707757264e-02f, 2.211911082e-01f, -4.414777756e-01f,
    2.639031410e-01f,  -5.505130440e-02f};
// gelu squares a clamped input: beyond |x| = 20 erfc(|x| / sqrt 2) is 0 in
// f32 anyway, and the clamp keeps x * x and its rounding error finite.
constexpr float kGeluClamp = 20.0f;
constexpr float kSqrtHalf = 7.07106769e-01f;
// gelu_tanh's 2u = x (A + B x^2): A = 2 sqrt(2 / pi), B = 0.044715 A.
constexpr std::array<float, 2> kGeluTanhArg = {1.595769167e+00f,
                                               7.135481387e-02f};

// log1p(f) = f + f^2 R(f) on [-0.25, 0.5); fit relative error 4.8e-9.
constexpr std::array<float, 9> kLog1pPoly = {
    -5.000000000e-01f, 3.333345354e-01f,  -2.500005364e-01f,
    1.999060661e-01f,  -1.664776653e-01f, 1.448206156e-01f,
    -1.316223294e-01f, 1.044833139e-01f,  -4.490960762e-02f};
// The mantissa in [0.75, 1.5): from 1.5 on it is halved (and the exponent
// raised), so that f = m - 1 stays in the polynomial's interval.
constexpr float kMantissaSplit = 1.5f;
// ln 2 split for log's e ln 2 with both parts positive (hi rounded down),
// so that an infinite e (log of 0 or inf) gives an infinity, not inf - inf.
constexpr float kLn2Down = 6.931471229e-01f;
constexpr float kLn2DownRest = 5.769998879e-08f;

} // namespace

//===----------------------------------------------------------------------===//
// Register needs
//===----------------------------------------------------------------------===//

int EltwiseInjector::tempsNeeded(const EltwiseOp &op) {
  switch (op.kind) {
  case EltwiseKind::LeakyRelu:
  case EltwiseKind::Neg:
  case EltwiseKind::Abs:
  case EltwiseKind::Sqrt:
    return 0;
  case EltwiseKind::Relu:
  case EltwiseKind::Clip:
  case EltwiseKind::Softsign:
  case EltwiseKind::Reciprocal:
  case EltwiseKind::Pow:
    return 1; // a constant that must be a register (maxNan), or |x| + 1
  case EltwiseKind::Exp:
  case EltwiseKind::HardSwish:
  case EltwiseKind::HardSigmoid:
    return 2;
  case EltwiseKind::Sigmoid:
    return 3;
  case EltwiseKind::Tanh:
  case EltwiseKind::Erf:
  case EltwiseKind::Gelu:
  case EltwiseKind::Silu:
  case EltwiseKind::GeluTanh:
  case EltwiseKind::Elu:
  case EltwiseKind::Selu:
  case EltwiseKind::Celu:
  case EltwiseKind::Softplus:
  case EltwiseKind::Log:
    return 4;
  case EltwiseKind::Add:
  case EltwiseKind::Sub:
  case EltwiseKind::Mul:
  case EltwiseKind::Div:
  case EltwiseKind::Max:
  case EltwiseKind::Min:
  case EltwiseKind::Select:
    return 1; // rhs
  }
  return kEltwiseMaxTemps;
}

bool EltwiseInjector::rhsInRegister(const EltwiseOp &op) {
  // x - b and x / b take b from memory; b - x and b / x need b as the first
  // source, which must be a register. max/min with b first need it twice.
  return op.swapped &&
         (op.kind == EltwiseKind::Sub || op.kind == EltwiseKind::Div ||
          op.kind == EltwiseKind::Max || op.kind == EltwiseKind::Min);
}

//===----------------------------------------------------------------------===//
// Building blocks
//===----------------------------------------------------------------------===//

void EltwiseInjector::maxNan(const Zmm &dst, float c, const Zmm &src,
                             const Zmm &scratch) {
  Zmm cr = h_.cstReg(c, dst.getIdx() != src.getIdx() ? dst : scratch);
  h_.vmaxps(dst, cr, src);
}

void EltwiseInjector::minNan(const Zmm &dst, float c, const Zmm &src,
                             const Zmm &scratch) {
  Zmm cr = h_.cstReg(c, dst.getIdx() != src.getIdx() ? dst : scratch);
  h_.vminps(dst, cr, src);
}

template <size_t N>
void EltwiseInjector::horner(const Zmm &acc, const Zmm &x,
                             const std::array<float, N> &coeffs) {
  static_assert(N >= 2, "a constant is not a polynomial worth a Horner");
  h_.loadCst(acc, coeffs[N - 2]);
  h_.vfmadd231ps(acc, x, h_.cst(coeffs[N - 1])); // acc += x * c[N-1]
  for (size_t i = N - 2; i-- > 0;)
    h_.vfmadd213ps(acc, x, h_.cst(coeffs[i])); // acc = acc * x + c[i]
}

// exp(x) = 2^n exp(r), n = round(x / ln2), r = x - n ln2 in [-ln2/2, ln2/2].
// vscalefps applies 2^n with one rounding, so results that are subnormal
// come out correctly rounded too, and overflow gives inf. In place on x.
void EltwiseInjector::exp(const Zmm &x, const Zmm &t0, const Zmm &t1,
                          bool clampHigh) {
  if (clampHigh)
    minNan(x, kExpHigh, x, t0);
  maxNan(x, kExpLow, x, t0);
  h_.vmulps(t0, x, h_.cst(kLog2e));
  h_.vrndscaleps(t0, t0, 0); // to nearest even
  h_.vfnmadd231ps(x, t0, h_.cst(kLn2Hi));
  h_.vfnmadd231ps(x, t0, h_.cst(kLn2Lo));
  horner(t1, x, kExpPoly);
  h_.vscalefps(x, t1, t0);
}

// sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0 (one
// division of the numerator chosen by the sign), with
// e = exp(-|x|) <= 1: no overflow, and no cancellation on either side, so
// the result is accurate relative to itself even deep in the negative tail
// (1 / (1 + exp(-x)) would be 0 there). Uses t[0..2] and k; dst may be src.
void EltwiseInjector::sigmoid(const Zmm &dst, const Zmm &src,
                              const EltwiseLane &l) {
  const Zmm &t0 = l.t[0], &t1 = l.t[1], &t2 = l.t[2];
  h_.vpord(t0, src, h_.cstBits(kSignBit)); // -|x|
  exp(t0, t1, t2, /*clampHigh=*/false);
  h_.vaddps(t1, t0, h_.cst(1.0f));
  h_.vcmpps(l.k, src, h_.cst(0.0f), kCmpLtOq);
  h_.loadCst(dst, 1.0f);
  h_.vmovaps(dst | l.k, t0); // the numerator: 1 or e
  h_.vdivps(dst, dst, t1);
}

// silu(x) = x sigmoid(x) = x / (1 + e) for x >= 0 and x e / (1 + e) for
// x < 0, e = exp(-|x|) as in sigmoid, with one division and no 1 / (1 + e)
// of its own: two fewer operations, a rounding fewer.
void EltwiseInjector::silu(const EltwiseLane &l) {
  const Zmm &x = l.x, &t0 = l.t[0], &t1 = l.t[1], &t2 = l.t[2];
  h_.vpord(t0, x, h_.cstBits(kSignBit)); // -|x|
  exp(t0, t1, t2, /*clampHigh=*/false);
  h_.vaddps(t1, t0, h_.cst(1.0f));
  h_.vcmpps(l.k, x, h_.cst(0.0f), kCmpLtOq);
  h_.vmulps(x | l.k, x, t0);
  h_.vdivps(x, x, t1);
}

// tanh(x) = sign(x) (1 - e) / (1 + e), e = exp(-2|x|), except near 0 where
// 1 - e cancels: there the odd polynomial x + x^3 P(x^2).
void EltwiseInjector::tanh(const EltwiseLane &l) {
  const Zmm &x = l.x, &t0 = l.t[0], &t1 = l.t[1], &t2 = l.t[2], &t3 = l.t[3];
  h_.vpandd(t0, x, h_.cstBits(kAbsMask));
  h_.vcmpps(l.k, t0, h_.cst(kTanhSplit), kCmpLtOq);
  h_.vmulps(t1, t0, h_.cst(-2.0f));
  exp(t1, t2, t3, /*clampHigh=*/false);
  h_.vaddps(t2, t1, h_.cst(1.0f));
  h_.vsubps(t1, t1, h_.cst(1.0f));
  h_.vdivps(t1, t1, t2); // -|tanh x|: the sign is set below
  h_.vmulps(t2, x, x);
  horner(t3, t2, kTanhPoly);
  h_.vmulps(t3, t3, t2);
  h_.vfmadd213ps(t3, x, x); // x + x * x^2 P
  h_.vmovaps(t1 | l.k, t3);
  h_.vpternlogd(t1, x, h_.cstBits(kSignBit), kTernSelect);
  h_.vmovaps(x, t1);
}

// erf(x) = x P(x^2) for |x| < 0.875, else sign(x) (1 - erfc(|x|)).
void EltwiseInjector::erf(const EltwiseLane &l) {
  const Zmm &x = l.x, &t0 = l.t[0], &t1 = l.t[1], &t2 = l.t[2], &t3 = l.t[3];
  h_.vmulps(t1, x, x);
  h_.vpxord(t1, t1, h_.cstBits(kSignBit));
  exp(t1, t2, t3, /*clampHigh=*/false); // exp(-x^2)
  h_.vpandd(t0, x, h_.cstBits(kAbsMask));
  h_.vcmpps(l.k, t0, h_.cst(kErfSplit), kCmpLtOq);
  h_.vmulps(t0, t0, h_.cst(kErfcP));
  h_.vaddps(t0, t0, h_.cst(1.0f));
  Zmm one = h_.cstReg(1.0f, t2);
  h_.vdivps(t0, one, t0); // t
  horner(t2, t0, kErfcPoly);
  h_.vfmsub213ps(t1, t2, h_.cst(1.0f)); // erfc - 1 = -|erf|
  h_.vmulps(t0, x, x);
  horner(t2, t0, kErfPoly);
  h_.vmulps(t2, t2, x);
  h_.vmovaps(t1 | l.k, t2);
  h_.vpternlogd(t1, x, h_.cstBits(kSignBit), kTernSelect);
  h_.vmovaps(x, t1);
}

// gelu(x) = x q / 2 with q = 1 + erf(z), z = x / sqrt 2, computed without
// cancellation: q = 2 - erfc(|z|) for z > 0 and erfc(|z|) for z <= 0, so
// the negative tail keeps its relative accuracy (erfc is fitted from 0 on,
// so near 0 q is 1 within its relative error). exp(-z^2) = exp(-x^2 / 2)
// takes x^2 as hi + lo (the fma gives the rounding error exactly) so that
// the error of squaring, magnified by z^2 in the exponent, does not reach
// the result.
void EltwiseInjector::gelu(const EltwiseLane &l) {
  const Zmm &x = l.x, &t0 = l.t[0], &t1 = l.t[1], &t2 = l.t[2], &t3 = l.t[3];
  minNan(t0, kGeluClamp, x, t1);
  maxNan(t0, -kGeluClamp, t0, t1);
  h_.vmulps(t1, t0, t0);      // hi
  h_.vfmsub213ps(t0, t0, t1); // lo = x * x - hi
  h_.vmulps(t1, t1, h_.cst(-0.5f));
  exp(t1, t2, t3, /*clampHigh=*/false); // exp(-hi / 2)
  h_.vmulps(t0, t0, h_.cst(-0.5f));
  h_.vfmadd213ps(t0, t1, t1);          // exp(-hi/2) (1 - lo/2) = exp(-z^2)
  h_.vmulps(t1, x, h_.cst(kSqrtHalf)); // z
  h_.vpandd(t2, t1, h_.cstBits(kAbsMask));
  h_.vmulps(t2, t2, h_.cst(kErfcP));
  h_.vaddps(t2, t2, h_.cst(1.0f));
  Zmm one = h_.cstReg(1.0f, t3);
  h_.vdivps(t2, one, t2); // t
  horner(t3, t2, kErfcPoly);
  h_.vmulps(t0, t0, t3); // erfc(|z|)
  h_.vcmpps(l.k, t1, h_.cst(0.0f), kCmpGtOq);
  Zmm two = h_.cstReg(2.0f, t3);
  h_.vsubps(t0 | l.k, two, t0);
  // Halve q first (exactly): x * q could overflow where x q / 2 does not.
  h_.vmulps(t0, t0, h_.cst(0.5f));
  h_.vmulps(x, x, t0);
}

// gelu_tanh(x) = x / 2 (1 + tanh u) = x sigmoid(2u), u = sqrt(2 / pi) (x +
// 0.044715 x^3), since 1 + tanh u = 2 sigmoid(2u): the sigmoid has no
// cancellation, so the negative tail keeps its relative accuracy where
// 1 + tanh u would round to 0. Large |x| saturate: 2u becomes +-inf and
// the sigmoid 1 or 0.
void EltwiseInjector::geluTanh(const EltwiseLane &l) {
  const Zmm &x = l.x, &t2 = l.t[2], &t3 = l.t[3];
  h_.vmulps(t2, x, x);
  horner(t3, t2, kGeluTanhArg);
  h_.vmulps(t3, t3, x); // 2u
  sigmoid(t3, t3, l);
  h_.vmulps(x, x, t3);
}

// expm1(x) = 2^n (exp(r) - 1) + (2^n - 1), n and r as exp's, with
// exp(r) - 1 = r + r^2 q(r) (exp's polynomial without its 1): near 0
// (n = 0) the result keeps its relative accuracy, where exp(x) - 1 would
// cancel. 2^n - 1 is exact down to n = -24 and -1 below. Takes x in t0,
// leaves the result in t2; clobbers t0, t1, t3.
void EltwiseInjector::expm1(const EltwiseLane &l) {
  const Zmm &t0 = l.t[0], &t1 = l.t[1], &t2 = l.t[2], &t3 = l.t[3];
  minNan(t0, kExpHigh, t0, t1);
  maxNan(t0, kExpLow, t0, t1);
  h_.vmulps(t1, t0, h_.cst(kLog2e));
  h_.vrndscaleps(t1, t1, 0); // n
  h_.vfnmadd231ps(t0, t1, h_.cst(kLn2Hi));
  h_.vfnmadd231ps(t0, t1, h_.cst(kLn2Lo)); // r
  horner(t2, t0,
         std::array<float, 5>{kExpPoly[2], kExpPoly[3], kExpPoly[4],
                              kExpPoly[5], kExpPoly[6]});
  h_.vmulps(t3, t0, t0);
  h_.vfmadd213ps(t2, t3, t0); // exp(r) - 1
  Zmm one = h_.cstReg(1.0f, t3);
  h_.vscalefps(t3, one, t1); // 2^n
  h_.vsubps(t1, t3, h_.cst(1.0f));
  h_.vfmadd213ps(t2, t3, t1);
}

// dst = log1p(f) = f + f^2 R(f), for f in [-0.25, 0.5).
void EltwiseInjector::log1p(const Zmm &dst, const Zmm &f, const Zmm &scratch) {
  horner(dst, f, kLog1pPoly);
  h_.vmulps(scratch, f, f);
  h_.vfmadd213ps(dst, scratch, f);
}

// log(x) = e ln 2 + log1p(m - 1), x = m 2^e with m in [0.75, 1.5) (from
// vgetexpps and vgetmantps, which take subnormals as the numbers they
// are): m - 1 is exact, and e ln 2 (ln 2 as hi + lo) is added last. A
// negative x gives nan (vgetmantps), 0 gives -inf (e), inf inf.
void EltwiseInjector::log(const EltwiseLane &l) {
  const Zmm &x = l.x, &t0 = l.t[0], &t1 = l.t[1], &t2 = l.t[2], &t3 = l.t[3];
  h_.vgetexpps(t0, x);
  h_.vgetmantps(t1, x, kMantOneTwoNanIfNegative);
  h_.vcmpps(l.k, t1, h_.cst(kMantissaSplit), kCmpGeOq);
  h_.vmulps(t1 | l.k, t1, h_.cst(0.5f));
  h_.vaddps(t0 | l.k, t0, h_.cst(1.0f));
  h_.vsubps(t1, t1, h_.cst(1.0f));
  log1p(t2, t1, t3);
  h_.vfmadd231ps(t2, t0, h_.cst(kLn2DownRest));
  h_.vfmadd213ps(t0, h_.cstReg(kLn2Down, t3), t2);
  h_.vmovaps(x, t0);
}

// softplus(x) = max(x, 0) + log1p(e), e = exp(-|x|) in (0, 1]: exp cannot
// overflow, and a tiny e keeps its relative accuracy (log1p, not log(1 +
// e)). log1p(e) is the polynomial for e < 0.5, else ln 2 + log1p((e - 1) /
// 2), (e - 1) / 2 in [-0.25, 0] exact.
void EltwiseInjector::softplus(const EltwiseLane &l) {
  const Zmm &x = l.x, &t0 = l.t[0], &t1 = l.t[1], &t2 = l.t[2], &t3 = l.t[3];
  h_.vpord(t0, x, h_.cstBits(kSignBit)); // -|x|
  exp(t0, t1, t2, /*clampHigh=*/false);
  h_.vcmpps(l.k, t0, h_.cst(0.5f), kCmpGeOq);
  h_.vmovaps(t1, t0);
  h_.vsubps(t1 | l.k, t0, h_.cst(1.0f));
  h_.vmulps(t1 | l.k, t1, h_.cst(0.5f));
  log1p(t2, t1, t3);
  h_.vaddps(t2 | l.k, t2, h_.cst(kLn2Hi));
  maxNan(x, 0.0f, x, t0);
  h_.vaddps(x, x, t2);
}

// elu, selu and celu: alpha expm1(x) (celu: of x / alpha) where x < 0
// (selu: x <= 0; celu: not x > 0), else x; selu then scales by gamma.
void EltwiseInjector::expLinear(const EltwiseOp &op, const EltwiseLane &l) {
  const Zmm &x = l.x, &t0 = l.t[0], &t2 = l.t[2];
  if (op.kind == EltwiseKind::Celu)
    h_.vdivps(t0, x, h_.cst(op.alpha));
  else
    h_.vmovaps(t0, x);
  expm1(l);
  h_.vmulps(t2, t2, h_.cst(op.alpha));
  switch (op.kind) {
  case EltwiseKind::Elu:
    h_.vcmpps(l.k, x, h_.cst(0.0f), kCmpLtOq);
    h_.vmovaps(x | l.k, t2);
    return;
  case EltwiseKind::Selu:
    h_.vcmpps(l.k, x, h_.cst(0.0f), kCmpLeOq);
    h_.vmovaps(x | l.k, t2);
    h_.vmulps(x, x, h_.cst(op.beta));
    return;
  default: // celu: a nan takes the expm1 side, which keeps it
    h_.vcmpps(l.k, x, h_.cst(0.0f), kCmpGtOq);
    h_.vmovaps(t2 | l.k, x);
    h_.vmovaps(x, t2);
    return;
  }
}

// x^e for the exponents isEltwisePowExponent takes, with std::pow's
// special values: x^2 and 1 / x are exact as pow's; x^3 and x^-2 are two
// roundings. x^0.5 is sqrt(x) + 0 (pow(-0, 0.5) is +0, sqrt's -0) except
// at -inf, whose pow is +inf; x^-0.5 is 1 over that.
void EltwiseInjector::pow(float e, const EltwiseLane &l) {
  const Zmm &x = l.x, &t0 = l.t[0];
  if (e == 2.0f || e == -2.0f) {
    h_.vmulps(x, x, x);
  } else if (e == 3.0f) {
    h_.vmulps(t0, x, x);
    h_.vmulps(x, t0, x);
  } else if (e == 0.5f || e == -0.5f) {
    h_.vcmpps(l.k, x, h_.cst(-INFINITY), kCmpEqOq);
    h_.vsqrtps(x, x);
    h_.vaddps(x, x, h_.cst(0.0f));
    h_.vmovaps(x | l.k, h_.cstReg(INFINITY, t0));
  }
  if (e < 0)
    h_.vdivps(x, h_.cstReg(1.0f, t0), x);
}

void EltwiseInjector::hardSwish(const EltwiseLane &l) {
  const Zmm &x = l.x, &t0 = l.t[0], &t1 = l.t[1];
  h_.vmulps(t0, x, h_.cst(1.0f / 6.0f));
  h_.vaddps(t0, t0, h_.cst(0.5f));
  maxNan(t0, 0.0f, t0, t1);
  minNan(t0, 1.0f, t0, t1);
  h_.vmulps(x, x, t0);
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

void EltwiseInjector::unary(const EltwiseOp &op, const EltwiseLane &l) {
  const Zmm &x = l.x;
  switch (op.kind) {
  case EltwiseKind::Relu:
    maxNan(x, 0.0f, x, l.t[0]);
    return;
  case EltwiseKind::LeakyRelu:
    h_.vcmpps(l.k, x, h_.cst(0.0f), kCmpLtOq);
    h_.vmulps(x | l.k, x, h_.cst(op.alpha));
    return;
  case EltwiseKind::Clip:
    // min(max(x, lo), hi): with lo > hi every element becomes hi, as in the
    // reference.
    maxNan(x, op.lo, x, l.t[0]);
    minNan(x, op.hi, x, l.t[0]);
    return;
  case EltwiseKind::Neg:
    h_.vpxord(x, x, h_.cstBits(kSignBit));
    return;
  case EltwiseKind::Abs:
    h_.vpandd(x, x, h_.cstBits(kAbsMask));
    return;
  case EltwiseKind::Sigmoid:
    sigmoid(x, x, l);
    return;
  case EltwiseKind::Tanh:
    tanh(l);
    return;
  case EltwiseKind::Exp:
    exp(x, l.t[0], l.t[1], /*clampHigh=*/true);
    return;
  case EltwiseKind::Erf:
    erf(l);
    return;
  case EltwiseKind::Gelu:
    gelu(l);
    return;
  case EltwiseKind::HardSwish:
    hardSwish(l);
    return;
  case EltwiseKind::Silu:
    silu(l);
    return;
  case EltwiseKind::GeluTanh:
    geluTanh(l);
    return;
  case EltwiseKind::Elu:
  case EltwiseKind::Selu:
  case EltwiseKind::Celu:
    expLinear(op, l);
    return;
  case EltwiseKind::HardSigmoid:
    // alpha x + beta rounded twice, as the reference computes it.
    h_.vmulps(x, x, h_.cst(op.alpha));
    h_.vaddps(x, x, h_.cst(op.beta));
    maxNan(x, 0.0f, x, l.t[0]);
    minNan(x, 1.0f, x, l.t[0]);
    return;
  case EltwiseKind::Softplus:
    softplus(l);
    return;
  case EltwiseKind::Softsign:
    h_.vpandd(l.t[0], x, h_.cstBits(kAbsMask));
    h_.vaddps(l.t[0], l.t[0], h_.cst(1.0f));
    h_.vdivps(x, x, l.t[0]);
    return;
  case EltwiseKind::Log:
    log(l);
    return;
  case EltwiseKind::Sqrt:
    h_.vsqrtps(x, x);
    return;
  case EltwiseKind::Reciprocal:
    h_.vdivps(x, h_.cstReg(1.0f, l.t[0]), x);
    return;
  case EltwiseKind::Pow:
    pow(op.alpha, l);
    return;
  default:
    // Binary kinds never reach here: the kernel dispatches on isBinary.
    return;
  }
}

void EltwiseInjector::binary(const EltwiseOp &op, const EltwiseLane &l,
                             const Xbyak::Operand &rhs) {
  const Zmm &x = l.x;
  // Only meaningful when rhsInRegister(op): the caller put rhs in t[0].
  const Zmm b(rhs.getIdx());
  switch (op.kind) {
  case EltwiseKind::Add:
    h_.vaddps(x, x, rhs);
    return;
  case EltwiseKind::Mul:
    h_.vmulps(x, x, rhs);
    return;
  case EltwiseKind::Sub:
    if (op.swapped)
      h_.vsubps(x, b, x);
    else
      h_.vsubps(x, x, rhs);
    return;
  case EltwiseKind::Div:
    if (op.swapped)
      h_.vdivps(x, b, x);
    else
      h_.vdivps(x, x, rhs);
    return;
  case EltwiseKind::Max:
  case EltwiseKind::Min: {
    // The reference's max(a, b) is isnan(a) || a > b ? a : b, and vmaxps
    // (a, b) is a > b ? a : b: they differ only when a is nan.
    bool isMax = op.kind == EltwiseKind::Max;
    if (!op.swapped) {
      h_.vcmpps(l.k, x, x, kCmpOrd);
      if (isMax)
        h_.vmaxps(x | l.k, x, rhs);
      else
        h_.vminps(x | l.k, x, rhs);
    } else {
      h_.vcmpps(l.k, b, b, kCmpUnord);
      if (isMax)
        h_.vmaxps(x, b, x);
      else
        h_.vminps(x, b, x);
      h_.vmovaps(x | l.k, b);
    }
    return;
  }
  default:
    return;
  }
}

void EltwiseInjector::blockEpilogue(const std::vector<EltwiseOp> &ops,
                                    int rows, int vectors,
                                    const Xbyak::Reg64 *bias, bool masked,
                                    const Xbyak::Opmask &tail) {
  auto acc = [vectors](int i, int j) { return Zmm(i * vectors + j); };
  const int free = rows * vectors;
  if (bias) {
    for (int j = 0; j < vectors; ++j) {
      Xbyak::Address a = h_.ptr[*bias + j * kZmmBytes];
      if (masked && j == vectors - 1)
        h_.vmovups(Zmm(free + j) | tail | Xbyak::util::T_z, a);
      else
        h_.vmovups(Zmm(free + j), a);
    }
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < vectors; ++j)
        h_.vaddps(acc(i, j), acc(i, j), Zmm(free + j));
  }
  for (const EltwiseOp &op : ops)
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < vectors; ++j) {
        EltwiseLane l;
        l.x = acc(i, j);
        for (int t = 0; t < kEltwiseMaxTemps; ++t)
          l.t[t] = Zmm(free + t);
        l.k = h_.k2;
        if (!isBinary(op.kind)) {
          unary(op, l);
        } else if (rhsInRegister(op)) {
          h_.loadCst(l.t[0], op.rhs.value);
          binary(op, l, l.t[0]);
        } else {
          binary(op, l, h_.cst(op.rhs.value));
        }
      }
}

} // namespace mlcc::avx512
