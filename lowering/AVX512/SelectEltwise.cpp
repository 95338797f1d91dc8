//===- SelectEltwise.cpp - Elementwise ops -> AVX-512 kernels -------------===//
//
// An f32 op whose operands all have the result's shape, or whose second
// operand is one element (a constant baked into the code, or a run-time
// scalar), becomes one generated chain kernel; while the chain's result has
// one user that is an activation or a binary op with a constant scalar,
// that op joins the chain (x * s + b -> tanh: one pass over memory). When the full-size operands are held
// in NCHW16c (conv outputs), the kernel runs over the blocked buffers and
// the result stays blocked: elementwise ops do not care about the layout,
// and the padding lanes are never read as channels. Other broadcasts go to
// the portable lowering.
//
//===----------------------------------------------------------------------===//

#include "BlockedLayout.h"
#include "ChunkedKernelCalls.h"
#include "KernelABI.h"
#include "SelectionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Operation.h"

using namespace mlir;

namespace mlcc::avx512 {

bool activationOf(Operation *op, OpLoweringContext &ctx, EltwiseOp &e) {
  StringRef name = op->getName().stripDialect();
  if (op->getNumResults() != 1 || !isF32Tensor(op->getResult(0)) ||
      !isF32Tensor(op->getOperand(0)) ||
      shapeOf(op->getOperand(0)) != shapeOf(op->getResult(0)))
    return false;
  if (name == "leaky_relu") {
    e = EltwiseOp::leakyRelu(floatAttr(op, "alpha", 0.01f));
    return true;
  }
  if (name == "clip") {
    float lo = -FLT_MAX, hi = FLT_MAX;
    auto bound = [&](unsigned i, float &v) {
      return i >= op->getNumOperands() ||
             isa<NoneType>(op->getOperand(i).getType()) ||
             constantScalar(ctx, op->getOperand(i), v);
    };
    if (!bound(1, lo) || !bound(2, hi))
      return false;
    e = EltwiseOp::clip(lo, hi);
    return true;
  }
  if (name == "gelu") {
    auto approximate = op->getAttrOfType<StringAttr>("approximate");
    StringRef form = approximate ? approximate.getValue() : "none";
    if (form != "none" && form != "tanh")
      return false;
    e = EltwiseOp::unary(form == "none" ? EltwiseKind::Gelu
                                        : EltwiseKind::GeluTanh);
    return true;
  }
  if (name == "elu" || name == "celu") {
    e = EltwiseOp::withParams(name == "elu" ? EltwiseKind::Elu
                                            : EltwiseKind::Celu,
                              floatAttr(op, "alpha", 1.0f));
    return true;
  }
  if (name == "selu") {
    // The defaults are the reference's f32 roundings of SELU's constants.
    e = EltwiseOp::withParams(
        EltwiseKind::Selu, floatAttr(op, "alpha", 1.67326319217681884765625f),
        floatAttr(op, "gamma", 1.05070102214813232421875f));
    return true;
  }
  if (name == "hard_sigmoid") {
    e = EltwiseOp::withParams(EltwiseKind::HardSigmoid,
                              floatAttr(op, "alpha", 0.2f),
                              floatAttr(op, "beta", 0.5f));
    return true;
  }
  static const char *const unary[] = {
      "relu",     "neg",      "abs", "sigmoid", "tanh",      "exp",
      "erf",      "hard_swish", "softplus", "softsign", "log", "sqrt",
      "reciprocal"};
  EltwiseKind kind;
  if (!llvm::is_contained(unary, name) ||
      eltwiseKindFromName(name.str(), kind).failed())
    return false;
  e = EltwiseOp::unary(kind);
  return true;
}


Operation *fusableActivation(Value v, OpLoweringContext &ctx, EltwiseOp &e) {
  if (!v.hasOneUse())
    return nullptr;
  Operation *user = *v.getUsers().begin();
  if (user->getBlock() != v.getParentBlock() || user->getOperand(0) != v ||
      !activationOf(user, ctx, e))
    return nullptr;
  return user;
}

namespace {

/// A binary op as a chain element over `sources` (the full-size operand
/// first); false when the operands do not fit a chain.
bool binaryOf(Operation *op, OpLoweringContext &ctx, EltwiseOp &e,
              SmallVector<Value> &sources) {
  static const char *const binary[] = {"add", "sub", "mul", "div",
                                       "max", "min", "pow"};
  StringRef name = op->getName().stripDialect();
  EltwiseKind kind;
  if (!llvm::is_contained(binary, name) || op->getNumOperands() != 2 ||
      eltwiseKindFromName(name.str(), kind).failed())
    return false;
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  Value result = op->getResult(0);
  if (!isF32Tensor(lhs) || !isF32Tensor(rhs))
    return false;
  // The full-size operand is the chain's input; a one-element one is the
  // operand (swapped when it stands on the left).
  bool swapped = false;
  if (shapeOf(lhs) != shapeOf(result)) {
    std::swap(lhs, rhs);
    swapped = true;
  }
  if (shapeOf(lhs) != shapeOf(result))
    return false;
  sources = {lhs};
  float value;
  bool scalar = numElements(rhs) == 1 && numElements(result) > 1;
  if (kind == EltwiseKind::Pow) {
    // x^c for the constants the injector computes exactly enough.
    if (swapped || !scalar || !constantScalar(ctx, rhs, value) ||
        !isEltwisePowExponent(value))
      return false;
    e = EltwiseOp::withParams(EltwiseKind::Pow, value);
  } else if (scalar && constantScalar(ctx, rhs, value)) {
    e = EltwiseOp::binary(kind, EltwiseOperand::constant(value), swapped);
  } else if (scalar) {
    e = EltwiseOp::binary(kind, EltwiseOperand::broadcast(1), swapped);
    sources.push_back(rhs);
  } else if (shapeOf(rhs) == shapeOf(result)) {
    e = EltwiseOp::binary(kind, EltwiseOperand::array(1), swapped);
    sources.push_back(rhs);
  } else {
    return false;
  }
  return true;
}

/// graph.where(cond, a, b) with one of a, b of the result's f32 shape (the
/// chain's input) and the other a constant scalar (masked_fill): a Select
/// of that scalar under the condition's bytes, src[1]. The condition has
/// the result's shape, or its trailing dims (a causal mask over batches and
/// heads): then `period` is its element count, the chain runs one period
/// at a time over the same condition; else period is the result's count.
bool whereOf(Operation *op, OpLoweringContext &ctx, EltwiseOp &e,
             SmallVector<Value> &sources, int64_t &period) {
  if (op->getName().stripDialect() != "where" || op->getNumOperands() != 3)
    return false;
  Value cond = op->getOperand(0), a = op->getOperand(1),
        b = op->getOperand(2), result = op->getResult(0);
  auto condType = dyn_cast<RankedTensorType>(cond.getType());
  if (!condType || !condType.hasStaticShape() ||
      !condType.getElementType().isInteger(1) || !isF32Tensor(a) ||
      !isF32Tensor(b))
    return false;
  ArrayRef<int64_t> out = shapeOf(result), condShape = shapeOf(cond);
  float value;
  bool swapped; // the array is the branch taken where cond is true
  if (shapeOf(a) == out && constantScalar(ctx, b, value)) {
    sources = {a};
    swapped = true;
  } else if (shapeOf(b) == out && constantScalar(ctx, a, value)) {
    sources = {b};
    swapped = false;
  } else {
    return false;
  }
  // The condition's dims, less leading 1s, are the result's last ones.
  size_t lead = 0;
  while (lead < condShape.size() && condShape[lead] == 1)
    ++lead;
  ArrayRef<int64_t> trailing = condShape.drop_front(lead);
  if (trailing.size() > out.size() ||
      out.take_back(trailing.size()) != trailing)
    return false;
  period = 1;
  for (int64_t d : trailing)
    period *= d;
  if (period == 0)
    return false;
  e = EltwiseOp::binary(EltwiseKind::Select, EltwiseOperand::array(1),
                        swapped);
  e.alpha = value;
  sources.push_back(cond);
  return true;
}

/// The op that continues a chain ending in `v`: v's only user, when it is an
/// activation of v or a binary op of v and a constant scalar; else null.
Operation *chainContinuation(Value v, OpLoweringContext &ctx, EltwiseOp &e) {
  if (Operation *user = fusableActivation(v, ctx, e))
    return user;
  if (!v.hasOneUse())
    return nullptr;
  Operation *user = *v.getUsers().begin();
  if (user->getBlock() != v.getParentBlock() || user->getNumResults() != 1)
    return nullptr;
  SmallVector<Value> sources;
  if (binaryOf(user, ctx, e, sources) && sources.size() == 1 &&
      sources[0] == v && e.rhs.kind == EltwiseOperand::Kind::Constant)
    return user;
  return nullptr;
}

} // namespace

TargetLowering selectEltwise(Operation *op, OpLoweringContext &ctx,
                             SelectionState &state) {
  // Already applied by its producer's kernel.
  auto fused = state.fused.find(op);
  if (fused != state.fused.end()) {
    if (fused->second)
      setBlockedResult(op->getResult(0), fused->second, ctx, state);
    return TargetLowering::Lowered;
  }
  if (op->getNumResults() != 1 || !isF32Tensor(op->getResult(0)))
    return TargetLowering::Declined;
  Value result = op->getResult(0);
  EltwiseSpec spec;
  spec.name = nodeName(op);
  SmallVector<Value> sources{op->getOperand(0)};
  EltwiseOp e;
  // Elements a chain runs over before its operands start again: all but
  // for a where's condition of fewer dims.
  int64_t period = numElements(result);
  if (!activationOf(op, ctx, e) && !binaryOf(op, ctx, e, sources) &&
      !whereOf(op, ctx, e, sources, period))
    return TargetLowering::Declined;
  spec.ops.push_back(e);
  SmallVector<Operation *> joined;
  Value output = result;
  EltwiseOp next;
  while (Operation *user = chainContinuation(output, ctx, next)) {
    spec.ops.push_back(next);
    joined.push_back(user);
    output = user->getResult(0);
  }

  // Blocked when every full-size operand already is.
  // Of any conv's output, 1-D to 3-D: the same elements in either layout.
  bool blocked = shapeOf(result).size() >= 3 && shapeOf(result).size() <= 5 &&
                 period == numElements(result);
  for (auto [i, src] : llvm::enumerate(sources))
    if (shapeOf(src) == shapeOf(result))
      blocked &= state.blocked.count(src) != 0;
  SmallVector<Value> srcBuffers;
  for (Value src : sources)
    srcBuffers.push_back(blocked && shapeOf(src) == shapeOf(result)
                             ? state.blocked[src]
                             : ctx.buffer(src));
  Value dst;
  if (blocked) {
    dst = allocateBlocked(output, ctx, state);
    spec.n = cast<MemRefType>(dst.getType()).getNumElements();
  } else {
    dst = ctx.buffer(output);
    spec.n = period;
  }

  std::vector<uint8_t> code;
  if (ref::Status s = generateEltwise(spec, code); s.failed())
    return failed(op, s);
  std::string symbol = ctx.addKernel(spec.name, std::move(code));
  // mlcc_eltwise_args: src[4], dst, n.
  OpBuilder &b = ctx.builder();
  Value zero = b.create<arith::ConstantIntOp>(ctx.loc(), 0, 64);
  SmallVector<Value> fields(MLCC_ELTWISE_MAX_SRC, zero);
  for (auto [i, buffer] : llvm::enumerate(srcBuffers))
    fields[i] = ctx.address(buffer);
  fields.push_back(ctx.address(dst));
  fields.push_back(b.create<arith::ConstantIntOp>(ctx.loc(), spec.n, 64));
  if (period == numElements(result)) {
    ctx.callKernel(symbol, fields);
  } else {
    // One call per period: the arrays move on, the condition (src[1]) and
    // the count stay.
    SmallVector<int64_t> strides(fields.size(), 4 * period);
    strides[1] = 0;
    strides.back() = 0;
    ctx.parallelFor(numElements(result) / period, fields,
                    [&](Value i, ValueRange f) {
                      ctx.callKernel(symbol,
                                     offsetFields(ctx, i, f, strides));
                    });
  }

  // The chain's inner results are only read inside the chain: the ops that
  // joined it are done, the last one's result is dst.
  for (Operation *user : joined)
    state.fused[user] = user == joined.back() && blocked ? dst : Value();
  if (joined.empty() && blocked)
    setBlockedResult(result, dst, ctx, state);
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
