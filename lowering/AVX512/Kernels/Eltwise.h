//===- Eltwise.h - AVX-512 elementwise chain kernels ------------*- C++ -*-===//
//
// Generates f32 kernels that apply a chain of elementwise ops to a
// contiguous array of exactly n elements: one load, the whole chain in
// registers, one store, so a fused relu(add(x, y)) touches memory once. The
// count is known when the kernel is generated, so the loop trip count and
// the tail mask are constants in the code; or it is each call's args->n
// (EltwiseSpec::runTimeN), for a dim known only when the model runs.
//
// The kernel's signature is that of lowering/Common/KernelABI.h:
//   void kernel(const mlcc_eltwise_args *args);
// with args->src[0] the chain's input and args->dst its output.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_ELTWISE_H
#define MLCC_LOWERING_AVX512_KERNELS_ELTWISE_H

#include "mlcc/Reference/Status.h"
#include "mlcc/Reference/Tensor.h"

#include <cfloat>
#include <cstdint>
#include <string>
#include <vector>

namespace mlcc::avx512 {

using ref::DType;
using ref::Status;

/// The ops a chain can hold. Names (eltwiseKindName) are the graph
/// dialect's mnemonics, so the lowering maps ops by name.
enum class EltwiseKind : uint8_t {
  // Unary.
  Relu,
  LeakyRelu, // x < 0 ? alpha * x : x
  Clip,      // min(max(x, lo), hi)
  Neg,
  Abs,
  Sigmoid,
  Tanh,
  Exp,
  Erf,
  Gelu,      // 0.5 x (1 + erf(x / sqrt 2)), the exact (erf) form
  HardSwish, // x * clip(x / 6 + 0.5, 0, 1)
  Silu,      // x * sigmoid(x)
  GeluTanh,  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
  Elu,         // x < 0 ? alpha (exp(x) - 1) : x
  Selu,        // beta (x <= 0 ? alpha (exp(x) - 1) : x); beta is gamma
  Celu,        // x > 0 ? x : alpha (exp(x / alpha) - 1)
  HardSigmoid, // clip(alpha x + beta, 0, 1)
  Softplus,    // log(1 + exp(x))
  Softsign,    // x / (1 + |x|)
  Log,
  Sqrt,
  Reciprocal, // 1 / x
  Pow,        // x^alpha (isEltwisePowExponent(alpha)): std::pow's values
  // Binary: x op rhs, or rhs op x when swapped.
  Add,
  Sub,
  Mul,
  Div,
  Max, // nan propagates from either side, as numpy.maximum
  Min,
  // rhs an Array of bool bytes (src[rhs.src], n bytes): rhs ? alpha : x, or
  // rhs ? x : alpha when swapped (graph.where with a constant branch).
  Select,
};

const char *eltwiseKindName(EltwiseKind kind);
/// The constant exponents EltwiseKind::Pow computes with products, square
/// roots and divisions (RMSNorm's x^2, a norm's x^0.5, ...).
bool isEltwisePowExponent(float exponent);
bool isBinary(EltwiseKind kind);
/// The kind named by a graph-dialect mnemonic ("leaky_relu"); fails for an
/// op that this generator does not implement.
Status eltwiseKindFromName(const std::string &name, EltwiseKind &kind);

/// The second operand of a binary op.
struct EltwiseOperand {
  enum class Kind : uint8_t {
    Array,     // args->src[src][i], n elements like the input
    Broadcast, // args->src[src][0] in every lane (a runtime scalar)
    Constant,  // `value`, baked into the code
  };
  Kind kind = Kind::Constant;
  int src = 1;
  float value = 0.0f;

  static EltwiseOperand array(int src) { return {Kind::Array, src, 0.0f}; }
  static EltwiseOperand broadcast(int src) {
    return {Kind::Broadcast, src, 0.0f};
  }
  static EltwiseOperand constant(float v) { return {Kind::Constant, 0, v}; }
};

/// One op of a chain, applied to the running value x.
struct EltwiseOp {
  EltwiseKind kind = EltwiseKind::Relu;
  float alpha = 0.01f; // leaky_relu, elu, ...; pow's exponent; select's value
  float beta = 0.0f;                 // hard_sigmoid's offset, selu's gamma
  float lo = -FLT_MAX, hi = FLT_MAX; // clip
  EltwiseOperand rhs;                // binary
  bool swapped = false;              // binary: rhs op x

  static EltwiseOp unary(EltwiseKind kind) {
    EltwiseOp op;
    op.kind = kind;
    return op;
  }
  static EltwiseOp leakyRelu(float alpha) {
    EltwiseOp op = unary(EltwiseKind::LeakyRelu);
    op.alpha = alpha;
    return op;
  }
  /// elu, selu, celu, hard_sigmoid and pow: alpha, and beta where it has
  /// one.
  static EltwiseOp withParams(EltwiseKind kind, float alpha, float beta = 0) {
    EltwiseOp op = unary(kind);
    op.alpha = alpha;
    op.beta = beta;
    return op;
  }
  static EltwiseOp clip(float lo, float hi) {
    EltwiseOp op = unary(EltwiseKind::Clip);
    op.lo = lo;
    op.hi = hi;
    return op;
  }
  static EltwiseOp binary(EltwiseKind kind, EltwiseOperand rhs,
                          bool swapped = false) {
    EltwiseOp op = unary(kind);
    op.rhs = rhs;
    op.swapped = swapped;
    return op;
  }
};

struct EltwiseSpec {
  /// Names the kernel in error messages (the graph op it lowers).
  std::string name = "eltwise";
  DType dtype = DType::F32;
  int64_t n = 0;
  /// Read each call's count from args->n, at most `n` (more are clamped).
  bool runTimeN = false;
  std::vector<EltwiseOp> ops; // applied in order; empty copies src[0]
  /// Vectors per main-loop iteration, 1 to 4; 0 picks. Tests set it to
  /// reach each remainder path.
  int unroll = 0;
  /// Keep the most used constants in spare registers; otherwise every
  /// constant is an embedded broadcast from the pool. Tests turn it off to
  /// cover the memory forms.
  bool constantsInRegisters = true;
};

/// Generates the kernel's machine code into `code` (plain bytes, position
/// independent: copy them anywhere executable). Fails, naming spec.name,
/// for a dtype other than f32, an unknown op kind, a bad operand or count.
Status generateEltwise(const EltwiseSpec &spec, std::vector<uint8_t> &code);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_ELTWISE_H
