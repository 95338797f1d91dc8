//===- EltwiseKernelTest.cpp - Tests of the AVX-512 eltwise kernels -------===//
//
// Generates kernels, maps their bytes executable and runs them. The oracle
// is the reference kernel registry (compiler/Reference) for the ops it has,
// and the definition evaluated in double for gelu and silu, which it lacks.
// Sizes cover the empty array, a lone masked tail, whole vectors, every
// unroll remainder and long loops; inputs and outputs end at an unmapped
// page, so a kernel that touches an element past n faults.
//
//===----------------------------------------------------------------------===//

#include "Eltwise.h"
#include "ExecutableBuffer.h"
#include "KernelABI.h"
#include "KernelTestSupport.h"

#include "mlcc/Reference/Kernel.h"

#include <catch2/catch.hpp>

#include <algorithm>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using namespace mlcc;
using namespace mlcc::avx512;
using namespace mlcc::test;

namespace {

constexpr float kNanF = std::numeric_limits<float>::quiet_NaN();
constexpr float kInfF = std::numeric_limits<float>::infinity();

const int64_t kSizes[] = {0, 1, 15, 16, 17, 33, 1000, 4099};

//===----------------------------------------------------------------------===//
// Running a kernel
//===----------------------------------------------------------------------===//

std::vector<uint8_t> generate(const EltwiseSpec &spec) {
  return generateCode(generateEltwise, spec);
}

/// Runs `code` with src[i] = srcs[i] (arrays of any length, a broadcast
/// operand being one element) and returns dst[0, n).
std::vector<float> runCode(const std::vector<uint8_t> &code, int64_t n,
                           const std::vector<std::vector<float>> &srcs,
                           size_t offset = 0) {
  ExecutableBuffer exec(code, offset);
  REQUIRE(exec.ok());
  std::vector<std::unique_ptr<GuardedArray<float>>> inputs;
  mlcc_eltwise_args args = {};
  for (size_t i = 0; i < srcs.size(); ++i) {
    inputs.push_back(std::make_unique<GuardedArray<float>>(srcs[i]));
    REQUIRE(inputs.back()->ok());
    args.src[i] = inputs.back()->data();
  }
  GuardedArray<float> dst(static_cast<size_t>(n));
  REQUIRE(dst.ok());
  args.dst = dst.data();
  args.n = n;
  exec.function<mlcc_eltwise_kernel_fn>()(&args);
  return dst.values();
}

std::vector<float> run(const EltwiseSpec &spec,
                       const std::vector<std::vector<float>> &srcs) {
  return runCode(generate(spec), spec.n, srcs);
}

//===----------------------------------------------------------------------===//
// The oracle
//===----------------------------------------------------------------------===//

ref::Tensor tensor(const std::vector<float> &v, ref::Shape shape) {
  return ref::Tensor::fromBytes(DType::F32, std::move(shape), v.data());
}

double geluExact(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
double siluExact(double x) { return x / (1.0 + std::exp(-x)); }
/// 0.5 x (1 + tanh u) as x / (1 + exp(-2u)): no cancellation in the
/// negative tail, so the relative accuracy of the kernel shows there too.
double geluTanhExact(double x) {
  double u = std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x);
  return x / (1 + std::exp(-2 * u));
}

/// What `op` gives on x; `srcs` holds the arrays and scalars that binary
/// operands name.
std::vector<float> reference(const EltwiseOp &op, const std::vector<float> &x,
                             const std::vector<std::vector<float>> &srcs) {
  int64_t n = static_cast<int64_t>(x.size());
  ref::Tensor tx = tensor(x, {n});
  switch (op.kind) {
  case EltwiseKind::LeakyRelu:
    return runReference("leaky_relu", {{"alpha", op.alpha}}, {tx});
  case EltwiseKind::Clip:
    return runReference("clip", {},
                     {tx, tensor({op.lo}, {}), tensor({op.hi}, {})});
  case EltwiseKind::Elu:
  case EltwiseKind::Celu:
    return runReference(eltwiseKindName(op.kind), {{"alpha", op.alpha}}, {tx});
  case EltwiseKind::Selu:
    return runReference("selu", {{"alpha", op.alpha}, {"gamma", op.beta}},
                        {tx});
  case EltwiseKind::HardSigmoid:
    return runReference("hard_sigmoid", {{"alpha", op.alpha}, {"beta", op.beta}},
                        {tx});
  case EltwiseKind::Pow:
    return runReference("pow", {}, {tx, tensor({op.alpha}, {})});
  case EltwiseKind::Gelu:
  case EltwiseKind::GeluTanh:
  case EltwiseKind::Silu: {
    double (*exact)(double) = op.kind == EltwiseKind::Gelu       ? geluExact
                              : op.kind == EltwiseKind::GeluTanh ? geluTanhExact
                                                                 : siluExact;
    std::vector<float> y(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      y[i] = static_cast<float>(exact(x[i]));
    return y;
  }
  default:
    break;
  }
  if (!isBinary(op.kind))
    return runReference(eltwiseKindName(op.kind), {}, {tx});
  ref::Tensor b;
  switch (op.rhs.kind) {
  case EltwiseOperand::Kind::Constant:
    b = tensor({op.rhs.value}, {1});
    break;
  case EltwiseOperand::Kind::Broadcast:
    b = tensor({srcs[op.rhs.src][0]}, {1});
    break;
  case EltwiseOperand::Kind::Array:
    b = tensor(srcs[op.rhs.src], {n});
    break;
  }
  if (op.swapped)
    return runReference(eltwiseKindName(op.kind), {}, {b, tx});
  return runReference(eltwiseKindName(op.kind), {}, {tx, b});
}

std::vector<float> referenceChain(const EltwiseSpec &spec,
                                  const std::vector<std::vector<float>> &srcs) {
  std::vector<float> x = srcs[0];
  for (const EltwiseOp &op : spec.ops)
    x = reference(op, x, srcs);
  return x;
}

//===----------------------------------------------------------------------===//
// Data and comparison
//===----------------------------------------------------------------------===//

/// n values spread over [lo, hi] in a scrambled order (a multiplicative
/// hash of the index), so neighbouring lanes differ.
std::vector<float> sample(int64_t n, float lo, float hi, uint32_t seed = 1) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    uint32_t h = static_cast<uint32_t>(i + 1) * 2654435761u ^ seed * 40503u;
    h ^= h >> 13;
    h *= 2246822519u;
    h ^= h >> 16;
    v[i] = lo + (hi - lo) * static_cast<float>(h % 1000003u) / 1000003.0f;
  }
  return v;
}

/// Tolerance of one op: |got - want| <= atol + rtol |want|; nan wants nan.
struct Tolerance {
  double rtol = 0, atol = 0; // 0, 0: bit-exact up to the sign of zero
};

void requireClose(const std::vector<float> &got, const std::vector<float> &want,
                  Tolerance tol) {
  REQUIRE(got.size() == want.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    double g = got[i], w = want[i];
    bool ok;
    if (std::isnan(w))
      ok = std::isnan(g);
    else if (std::isinf(w))
      ok = g == w;
    else
      ok = std::fabs(g - w) <= tol.atol + tol.rtol * std::fabs(w);
    if (!ok) {
      ++bad;
      UNSCOPED_INFO("element " << i << ": got " << g << ", want " << w);
    }
  }
  CHECK(bad == 0);
}

/// Our approximations are within a few ulp; the reference's f32 libm
/// calls within one. Results below the normal range are held to an
/// absolute bound: a subnormal has fewer bits than an ulp bound assumes.
Tolerance toleranceOf(EltwiseKind kind) {
  const double subnormal = std::numeric_limits<float>::min();
  switch (kind) {
  case EltwiseKind::Sigmoid:
  case EltwiseKind::Tanh:
  case EltwiseKind::Exp:
  case EltwiseKind::Silu:
  case EltwiseKind::Elu:
  case EltwiseKind::Selu:
  case EltwiseKind::Celu:
  case EltwiseKind::Softplus:
  case EltwiseKind::Log:
    return {1e-6, subnormal};
  case EltwiseKind::Erf:
    return {1e-6, 1e-7};
  case EltwiseKind::Gelu:
  case EltwiseKind::GeluTanh:
    return {2e-6, 1e-7};
  case EltwiseKind::HardSwish: // x * (1/6) against x / 6
    return {1e-6, 1e-7};
  case EltwiseKind::Pow: // two roundings (x^3, x^-2) against libm's one
    return {2.5e-7, std::numeric_limits<float>::min()};
  default:
    return {};
  }
}

/// The ops' errors add up. A later add or sub can cancel most of a value
/// and leave an earlier op's error large relative to the result, so each
/// op's relative error also counts against the largest intermediate, which
/// stays below 4 in these tests.
Tolerance chainTolerance(const EltwiseSpec &spec) {
  Tolerance t;
  for (const EltwiseOp &op : spec.ops) {
    Tolerance o = toleranceOf(op.kind);
    t.rtol += o.rtol;
    t.atol += o.atol + 4 * o.rtol;
  }
  return t;
}

EltwiseSpec specOf(std::vector<EltwiseOp> ops, int64_t n) {
  EltwiseSpec spec;
  spec.n = n;
  spec.ops = std::move(ops);
  return spec;
}

struct UnaryCase {
  EltwiseOp op;
  float lo, hi; // input range
};

std::vector<UnaryCase> unaryCases() {
  using K = EltwiseKind;
  return {
      {EltwiseOp::unary(K::Relu), -5, 5},
      {EltwiseOp::leakyRelu(0.2f), -5, 5},
      {EltwiseOp::leakyRelu(-1.5f), -5, 5},
      {EltwiseOp::clip(-1.0f, 2.5f), -5, 5},
      {EltwiseOp::unary(K::Neg), -5, 5},
      {EltwiseOp::unary(K::Abs), -5, 5},
      {EltwiseOp::unary(K::Sigmoid), -30, 30},
      {EltwiseOp::unary(K::Tanh), -6, 6},
      {EltwiseOp::unary(K::Exp), -80, 80},
      {EltwiseOp::unary(K::Erf), -5, 5},
      {EltwiseOp::unary(K::Gelu), -10, 10},
      {EltwiseOp::unary(K::HardSwish), -5, 5},
      {EltwiseOp::unary(K::Silu), -30, 30},
      {EltwiseOp::unary(K::GeluTanh), -10, 10},
      {EltwiseOp::withParams(K::Elu, 1.0f), -10, 5},
      {EltwiseOp::withParams(K::Elu, 0.3f), -10, 5},
      {EltwiseOp::withParams(K::Selu, 1.6732632f, 1.050701f), -10, 5},
      {EltwiseOp::withParams(K::Celu, 0.7f), -10, 5},
      {EltwiseOp::withParams(K::HardSigmoid, 0.2f, 0.5f), -5, 5},
      {EltwiseOp::withParams(K::HardSigmoid, -0.4f, 0.1f), -5, 5},
      {EltwiseOp::unary(K::Softplus), -30, 30},
      {EltwiseOp::unary(K::Softsign), -5, 5},
      {EltwiseOp::unary(K::Log), 0, 50},
      {EltwiseOp::unary(K::Sqrt), 0, 50},
      {EltwiseOp::unary(K::Reciprocal), -5, 5},
      {EltwiseOp::withParams(K::Pow, 2.0f), -5, 5},
      {EltwiseOp::withParams(K::Pow, 3.0f), -5, 5},
      {EltwiseOp::withParams(K::Pow, 0.5f), -1, 50},
      {EltwiseOp::withParams(K::Pow, -0.5f), -1, 50},
      {EltwiseOp::withParams(K::Pow, -1.0f), -5, 5},
      {EltwiseOp::withParams(K::Pow, -2.0f), -5, 5},
  };
}

} // namespace

//===----------------------------------------------------------------------===//
// Ops at every size
//===----------------------------------------------------------------------===//

TEST_CASE("each unary op matches the reference at every size",
          "[avx512][eltwise]") {
  MLCC_REQUIRE_AVX512F();
  for (const UnaryCase &c : unaryCases()) {
    for (int64_t n : kSizes) {
      INFO(eltwiseKindName(c.op.kind)
           << " alpha " << c.op.alpha << ", n " << n);
      EltwiseSpec spec = specOf({c.op}, n);
      std::vector<std::vector<float>> srcs = {sample(n, c.lo, c.hi)};
      requireClose(run(spec, srcs), referenceChain(spec, srcs),
                   toleranceOf(c.op.kind));
    }
  }
}

TEST_CASE("each binary op matches the reference for each operand form",
          "[avx512][eltwise]") {
  MLCC_REQUIRE_AVX512F();
  using K = EltwiseKind;
  const K kinds[] = {K::Add, K::Sub, K::Mul, K::Div, K::Max, K::Min};
  const EltwiseOperand operands[] = {EltwiseOperand::array(1),
                                     EltwiseOperand::broadcast(2),
                                     EltwiseOperand::constant(-0.75f)};
  for (K kind : kinds)
    for (const EltwiseOperand &rhs : operands)
      for (bool swapped : {false, true})
        for (int64_t n : kSizes) {
          INFO(eltwiseKindName(kind)
               << ", operand kind " << static_cast<int>(rhs.kind)
               << (swapped ? ", swapped" : "") << ", n " << n);
          EltwiseSpec spec = specOf({EltwiseOp::binary(kind, rhs, swapped)}, n);
          std::vector<std::vector<float>> srcs = {
              sample(n, -4, 4, 1), sample(n, -4, 4, 2), {1.25f}};
          requireClose(run(spec, srcs), referenceChain(spec, srcs), {});
        }
}

TEST_CASE("a three-op chain runs in registers and matches op by op",
          "[avx512][eltwise]") {
  MLCC_REQUIRE_AVX512F();
  using K = EltwiseKind;
  std::vector<std::vector<EltwiseOp>> chains = {
      // Conv epilogue: bias, activation, scale.
      {EltwiseOp::binary(K::Add, EltwiseOperand::array(1)),
       EltwiseOp::unary(K::Relu),
       EltwiseOp::binary(K::Mul, EltwiseOperand::constant(0.5f))},
      // Transcendentals back to back, with a runtime scalar.
      {EltwiseOp::binary(K::Mul, EltwiseOperand::broadcast(2)),
       EltwiseOp::unary(K::Tanh),
       EltwiseOp::binary(K::Sub, EltwiseOperand::array(1), true)},
      {EltwiseOp::unary(K::Gelu), EltwiseOp::unary(K::Sigmoid),
       EltwiseOp::clip(0.6f, 0.9f)},
  };
  for (size_t c = 0; c < chains.size(); ++c)
    for (int64_t n : kSizes) {
      INFO("chain " << c << ", n " << n);
      EltwiseSpec spec = specOf(chains[c], n);
      std::vector<std::vector<float>> srcs = {
          sample(n, -3, 3, 7), sample(n, -1, 1, 8), {0.8f}};
      requireClose(run(spec, srcs), referenceChain(spec, srcs),
                   chainTolerance(spec));
    }
}

TEST_CASE("every unroll and constant placement gives the same results",
          "[avx512][eltwise]") {
  MLCC_REQUIRE_AVX512F();
  using K = EltwiseKind;
  std::vector<EltwiseOp> chain = {
      EltwiseOp::binary(K::Max, EltwiseOperand::array(1), true),
      EltwiseOp::unary(K::Erf), EltwiseOp::unary(K::Silu),
      EltwiseOp::leakyRelu(0.1f),
      EltwiseOp::binary(K::Div, EltwiseOperand::constant(3.0f), true)};
  for (int unroll : {1, 2, 3, 4})
    for (bool inRegs : {true, false})
      for (int64_t n : {int64_t(17), int64_t(127), int64_t(1000)}) {
        INFO("unroll " << unroll << (inRegs ? "" : ", constants in memory")
                       << ", n " << n);
        EltwiseSpec spec = specOf(chain, n);
        spec.unroll = unroll;
        spec.constantsInRegisters = inRegs;
        std::vector<std::vector<float>> srcs = {sample(n, -3, 3, 3),
                                                sample(n, -3, 3, 4)};
        requireClose(run(spec, srcs), referenceChain(spec, srcs),
                     chainTolerance(spec));
      }
}

TEST_CASE("a run-time n computes each call's elements", "[avx512][eltwise]") {
  MLCC_REQUIRE_AVX512F();
  using K = EltwiseKind;
  std::vector<EltwiseOp> chain = {
      EltwiseOp::binary(K::Add, EltwiseOperand::array(1)),
      EltwiseOp::unary(K::Gelu)};
  const float sentinel = -12345.0f;
  for (int unroll : {1, 4})
    for (int64_t most : {int64_t(1), int64_t(17), int64_t(1000)})
      for (int64_t n : {int64_t(-1), int64_t(0), int64_t(1), int64_t(15),
                        int64_t(16), int64_t(17), int64_t(64), int64_t(65),
                        int64_t(999), int64_t(1000), int64_t(1001)}) {
        INFO("unroll " << unroll << ", at most " << most << ", n " << n);
        EltwiseSpec spec = specOf(chain, most);
        spec.unroll = unroll;
        spec.runTimeN = true;
        ExecutableBuffer exec(generate(spec));
        REQUIRE(exec.ok());
        std::vector<std::vector<float>> srcs = {sample(most, -3, 3, 5),
                                                sample(most, -1, 1, 6)};
        GuardedArray<float> a(srcs[0]), b(srcs[1]),
            dst(std::vector<float>(most, sentinel));
        REQUIRE((a.ok() && b.ok() && dst.ok()));
        mlcc_eltwise_args args = {};
        args.src[0] = a.data();
        args.src[1] = b.data();
        args.dst = dst.data();
        args.n = n;
        exec.function<mlcc_eltwise_kernel_fn>()(&args);
        const int64_t done = std::clamp<int64_t>(n, 0, most);
        std::vector<float> got = dst.values();
        for (int64_t i = done; i < most; ++i)
          REQUIRE(got[i] == sentinel);
        if (done == 0)
          continue;
        for (std::vector<float> &v : srcs)
          v.resize(done);
        got.resize(done);
        EltwiseSpec exact = specOf(chain, done);
        requireClose(got, referenceChain(exact, srcs), chainTolerance(exact));
      }
}

TEST_CASE("select takes the constant where the condition bytes say",
          "[avx512][eltwise]") {
  MLCC_REQUIRE_AVX512F();
  for (bool swapped : {false, true})
    for (float alpha : {-INFINITY, 0.5f})
      for (int64_t n : kSizes) {
        INFO("select " << (swapped ? "swapped " : "") << alpha << ", n " << n);
        // x with a nan, an inf and a -0; the condition's bytes 0, 1 and
        // other nonzero values (a bool is any nonzero byte).
        std::vector<float> x = sample(n, -4, 4, 5);
        if (n > 3) {
          x[0] = kNanF;
          x[1] = kInfF;
          x[2] = -0.0f;
        }
        std::vector<uint8_t> cond(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i)
          cond[i] = static_cast<uint8_t>((i * 7 + 3) % 5 < 2 ? 0 : i % 3 + 1);
        EltwiseOp op = EltwiseOp::binary(EltwiseKind::Select,
                                         EltwiseOperand::array(1), swapped);
        op.alpha = alpha;
        // A chain: the select, then x * 2 (the chain goes on after it).
        EltwiseSpec spec = specOf(
            {op, EltwiseOp::binary(EltwiseKind::Mul,
                                   EltwiseOperand::constant(2.0f))},
            n);
        ExecutableBuffer exec(generate(spec));
        REQUIRE(exec.ok());
        GuardedArray<float> src(x), dst(static_cast<size_t>(n));
        GuardedArray<uint8_t> mask(cond);
        REQUIRE(src.ok());
        REQUIRE(dst.ok());
        REQUIRE(mask.ok());
        mlcc_eltwise_args args = {};
        args.src[0] = src.data();
        args.src[1] = mask.data();
        args.dst = dst.data();
        args.n = n;
        exec.function<mlcc_eltwise_kernel_fn>()(&args);
        // The reference's where (a bool tensor from the bytes as 0 and 1).
        std::vector<uint8_t> bools(cond.size());
        for (size_t i = 0; i < cond.size(); ++i)
          bools[i] = cond[i] != 0;
        ref::Tensor c = ref::Tensor::fromBytes(DType::Bool, {n}, bools.data());
        ref::Tensor tx = tensor(x, {n}), ta = tensor({alpha}, {});
        std::vector<float> want =
            swapped ? runReference("where", {}, {c, tx, ta})
                    : runReference("where", {}, {c, ta, tx});
        for (float &v : want)
          v *= 2.0f;
        requireClose(dst.values(), want, {});
      }
}

TEST_CASE("special values follow the reference", "[avx512][eltwise]") {
  MLCC_REQUIRE_AVX512F();
  const float denorm = std::numeric_limits<float>::denorm_min();
  std::vector<float> x = {kNanF,  -kNanF,  kInfF,   -kInfF,  0.0f,  -0.0f,
                          denorm, -denorm, 1e-30f,  -1e-30f, 3e38f, -3e38f,
                          88.7f,  -88.7f,  -103.0f, 1e-7f,   -1e-7f};
  int64_t n = static_cast<int64_t>(x.size());
  for (const UnaryCase &c : unaryCases()) {
    INFO(eltwiseKindName(c.op.kind));
    EltwiseSpec spec = specOf({c.op}, n);
    std::vector<float> got = run(spec, {x});
    std::vector<float> want = referenceChain(spec, {x});
    requireClose(got, want, toleranceOf(c.op.kind));
    // The reference's sign of zero for the exact ops.
    for (size_t i = 0; i < x.size(); ++i)
      if (want[i] == 0 && toleranceOf(c.op.kind).rtol == 0)
        CHECK(std::signbit(got[i]) == std::signbit(want[i]));
  }
  // nan passes max and min from either side.
  for (EltwiseKind kind : {EltwiseKind::Max, EltwiseKind::Min})
    for (bool swapped : {false, true}) {
      std::vector<float> a = {kNanF, 1.0f, kNanF, 0.0f, -0.0f};
      std::vector<float> b = {1.0f, kNanF, kNanF, -0.0f, 0.0f};
      EltwiseSpec spec = specOf(
          {EltwiseOp::binary(kind, EltwiseOperand::array(1), swapped)}, 5);
      std::vector<float> got = run(spec, {a, b});
      std::vector<float> want = referenceChain(spec, {a, b});
      requireClose(got, want, {});
      for (size_t i = 3; i < 5; ++i)
        CHECK(std::signbit(got[i]) == std::signbit(want[i]));
    }
}

TEST_CASE("the output may be the input", "[avx512][eltwise]") {
  MLCC_REQUIRE_AVX512F();
  int64_t n = 100;
  std::vector<float> x = sample(n, -2, 2);
  EltwiseSpec spec =
      specOf({EltwiseOp::unary(EltwiseKind::Sigmoid),
              EltwiseOp::binary(EltwiseKind::Mul, EltwiseOperand::array(0))},
             n);
  std::vector<uint8_t> code = generate(spec);
  ExecutableBuffer exec(code);
  REQUIRE(exec.ok());
  std::vector<float> buf = x;
  mlcc_eltwise_args args = {};
  args.src[0] = buf.data();
  args.dst = buf.data();
  args.n = n;
  exec.function<mlcc_eltwise_kernel_fn>()(&args);
  requireClose(buf, referenceChain(spec, {x}), chainTolerance(spec));
}

//===----------------------------------------------------------------------===//
// Position independence
//===----------------------------------------------------------------------===//

TEST_CASE("the bytes run unchanged wherever they are copied",
          "[avx512][eltwise]") {
  MLCC_REQUIRE_AVX512F();
  // Constants are used by every transcendental: all in the pool, and some
  // preloaded, both reached RIP-relative.
  for (bool inRegs : {true, false}) {
    int64_t n = 1000;
    EltwiseSpec spec = specOf(
        {EltwiseOp::unary(EltwiseKind::Gelu),
         EltwiseOp::binary(EltwiseKind::Add, EltwiseOperand::constant(0.25f))},
        n);
    spec.constantsInRegisters = inRegs;
    std::vector<uint8_t> code = generate(spec);
    std::vector<std::vector<float>> srcs = {sample(n, -4, 4)};
    // Two mappings, one at an odd offset: neither is where Xbyak wrote.
    std::vector<float> a = runCode(code, n, srcs, 0);
    std::vector<float> b = runCode(code, n, srcs, 4096 + 13);
    REQUIRE(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
    requireClose(a, referenceChain(spec, srcs), chainTolerance(spec));
    // Generation is deterministic: the object file's bytes do not depend
    // on where the scratch buffer was allocated.
    CHECK(generate(spec) == code);
  }
}

TEST_CASE("generation is deterministic and needs no AVX-512",
          "[avx512][eltwise]") {
  EltwiseSpec spec =
      specOf({EltwiseOp::unary(EltwiseKind::Tanh),
              EltwiseOp::binary(EltwiseKind::Min, EltwiseOperand::array(3))},
             4099);
  std::vector<uint8_t> code = generate(spec);
  CHECK(generate(spec) == code);
  // An empty array touches nothing: the postamble alone, vzeroupper; ret.
  spec.n = 0;
  CHECK(generate(spec) == std::vector<uint8_t>{0xc5, 0xf8, 0x77, 0xc3});
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

namespace {
std::string failure(const EltwiseSpec &spec) {
  std::vector<uint8_t> code = {1, 2, 3};
  Status s = generateEltwise(spec, code);
  REQUIRE(s.failed());
  CHECK(code.empty());
  return s.message();
}
} // namespace

TEST_CASE("unsupported ops, dtypes and operands fail with a message",
          "[avx512][eltwise]") {
  EltwiseSpec spec = specOf({EltwiseOp::unary(EltwiseKind::Relu)}, 16);
  spec.name = "graph.relu @node7";

  EltwiseSpec f16 = spec;
  f16.dtype = DType::F16;
  std::string msg = failure(f16);
  CHECK(msg.find("graph.relu @node7") != std::string::npos);
  CHECK(msg.find("f16") != std::string::npos);

  EltwiseSpec unknown = spec;
  unknown.ops[0].kind = static_cast<EltwiseKind>(200);
  CHECK(failure(unknown).find("unsupported kind") != std::string::npos);

  EltwiseKind kind;
  Status s = eltwiseKindFromName("thresholded_relu", kind);
  REQUIRE(s.failed());
  CHECK(s.message().find("thresholded_relu") != std::string::npos);
  REQUIRE(eltwiseKindFromName("hard_swish", kind).ok());
  CHECK(kind == EltwiseKind::HardSwish);

  EltwiseSpec badSrc = spec;
  badSrc.ops.push_back(
      EltwiseOp::binary(EltwiseKind::Add, EltwiseOperand::array(4)));
  CHECK(failure(badSrc).find("src[4]") != std::string::npos);

  EltwiseSpec scalarInput = spec;
  scalarInput.ops.push_back(
      EltwiseOp::binary(EltwiseKind::Add, EltwiseOperand::broadcast(0)));
  CHECK(failure(scalarInput).find("src[0]") != std::string::npos);

  EltwiseSpec negative = spec;
  negative.n = -1;
  CHECK(failure(negative).find("negative") != std::string::npos);

  EltwiseSpec pow = spec;
  pow.ops[0] = EltwiseOp::withParams(EltwiseKind::Pow, 1.5f);
  CHECK(failure(pow).find("exponent 1.5") != std::string::npos);

  EltwiseSpec unroll = spec;
  unroll.unroll = 5;
  CHECK(failure(unroll).find("unroll") != std::string::npos);
}

//===----------------------------------------------------------------------===//
// Accuracy against double
//===----------------------------------------------------------------------===//

namespace {

/// Largest error of the kernel for `op` on x, against `exact`: relative
/// where |exact| >= floor, absolute (scaled by floor) below it. A nan
/// result counts as an infinite error.
double maxError(const EltwiseOp &op, const std::vector<float> &x,
                double (*exact)(double), double floor) {
  EltwiseSpec spec = specOf({op}, int64_t(x.size()));
  std::vector<float> y = run(spec, {x});
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double want = exact(x[i]);
    double err = std::fabs(y[i] - want) / std::max(std::fabs(want), floor);
    worst = std::isnan(err) ? INFINITY : std::max(worst, err);
  }
  return worst;
}

double maxError(EltwiseKind kind, const std::vector<float> &x,
                double (*exact)(double), double floor) {
  return maxError(EltwiseOp::unary(kind), x, exact, floor);
}

std::vector<float> linspace(float lo, float hi, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[i] = lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(n - 1);
  return v;
}

/// Magnitudes from 1e-30 to `hi`, log-spaced, both signs.
std::vector<float> logspace(float hi, int64_t n) {
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) {
    float m = std::pow(10.0f, -30.0f + (std::log10(hi) + 30.0f) * i / (n - 1));
    v.push_back(m);
    v.push_back(-m);
  }
  return v;
}

double sigmoidExact(double x) { return 1 / (1 + std::exp(-x)); }
double expExact(double x) { return std::exp(x); }
double tanhExact(double x) { return std::tanh(x); }
double erfExact(double x) { return std::erf(x); }
double eluExact(double x) { return x < 0 ? std::expm1(x) : x; }
double softplusExact(double x) {
  return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
}
double logExact(double x) { return std::log(x); }

/// The positive half of logspace.
std::vector<float> positive(std::vector<float> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](float x) { return x <= 0; }),
          v.end());
  return v;
}

} // namespace

// The bounds measured in EltwiseInjector.cpp, with room of about two:
// errors in units of 2^-23 (1.19e-7, one f32 ulp at 1).
TEST_CASE("transcendentals stay within their stated error bounds",
          "[avx512][eltwise]") {
  MLCC_REQUIRE_AVX512F();
  const double ulp = std::ldexp(1.0, -23);
  const int64_t n = 1 << 18;
  const double tiny = std::numeric_limits<float>::min(); // relative above
  CHECK(maxError(EltwiseKind::Exp, linspace(-87.3f, 88.7f, n), expExact, tiny) <
        1.5 * ulp);
  CHECK(maxError(EltwiseKind::Sigmoid, linspace(-87, 40, n), sigmoidExact,
                 tiny) < 4 * ulp);
  CHECK(maxError(EltwiseKind::Tanh, linspace(-10, 10, n), tanhExact, tiny) <
        4 * ulp);
  CHECK(maxError(EltwiseKind::Tanh, logspace(1, n / 2), tanhExact, tiny) <
        4 * ulp);
  // erf: absolute error (floor 1), then relative near 0.
  CHECK(maxError(EltwiseKind::Erf, linspace(-6, 6, n), erfExact, 1.0) <
        2 * ulp);
  CHECK(maxError(EltwiseKind::Erf, logspace(0.875f, n / 2), erfExact, tiny) <
        4 * ulp);
  // gelu and silu relative, including the far negative tail.
  CHECK(maxError(EltwiseKind::Gelu, linspace(-13, 10, n), geluExact, tiny) <
        8 * ulp);
  CHECK(maxError(EltwiseKind::Silu, linspace(-80, 40, n), siluExact, tiny) <
        6 * ulp);
  // gelu_tanh: relative where the sigmoid's argument 2u is moderate; in
  // the tail the rounding of 2u (a few ulp of it) is magnified |2u| times,
  // so there the bound is absolute, against the largest |x| (floor 10).
  CHECK(maxError(EltwiseKind::GeluTanh, linspace(-3, 10, n), geluTanhExact,
                 tiny) < 12 * ulp);
  CHECK(maxError(EltwiseKind::GeluTanh, linspace(-13, 13, n), geluTanhExact,
                 10.0) < 1 * ulp);
  CHECK(maxError(EltwiseKind::GeluTanh, logspace(1, n / 2), geluTanhExact,
                 tiny) < 4 * ulp);
  // elu's expm1 relative, near 0 too (selu and celu are it scaled).
  const EltwiseOp elu = EltwiseOp::withParams(EltwiseKind::Elu, 1.0f);
  CHECK(maxError(elu, linspace(-87, 1, n), eluExact, tiny) < 1.5 * ulp);
  CHECK(maxError(elu, logspace(1, n / 2), eluExact, tiny) < 1.5 * ulp);
  // softplus relative, both tails.
  CHECK(maxError(EltwiseKind::Softplus, linspace(-103, 88, n), softplusExact,
                 tiny) < 2 * ulp);
  CHECK(maxError(EltwiseKind::Softplus, logspace(1, n / 2), softplusExact,
                 tiny) < 2 * ulp);
  // log relative over the normal and subnormal range, and near 1.
  CHECK(maxError(EltwiseKind::Log, positive(logspace(3e38f, n)), logExact,
                 tiny) < 1.5 * ulp);
  CHECK(maxError(EltwiseKind::Log, linspace(0.5f, 2, n), logExact, tiny) <
        1.5 * ulp);
  CHECK(maxError(EltwiseKind::Log,
                 {std::numeric_limits<float>::denorm_min(), 1e-44f, 3e-39f},
                 logExact, tiny) < 1.5 * ulp);
}
