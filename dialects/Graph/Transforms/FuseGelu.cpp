//===- FuseGelu.cpp - decomposed GELU -> graph.gelu -----------------------===//
//
// Exporters that predate ONNX Gelu-20 write GELU as five to nine
// elementwise ops, each a full pass over a large activation (BERT's
// 128 x 3072 after every FFN up-projection). As one graph.gelu it is one
// kernel, and one a GEMM can apply in its epilogue. Two forms:
//
//   erf:  y = x * (1 + erf(x / 1.4142135)) * 0.5        (torch, BERT)
//   tanh: y = x * (1 + tanh(0.7978846 * (x + 0.044715 * x^3))) * 0.5  (GPT)
//
// with x / sqrt 2 also as x * 0.70710677, x^3 as pow(x, 3), x * (x * x) or
// (x * x) * x, the 0.5 applied to x, to (1 + ...) or to the product, and
// either operand order of every add and mul. Constants are one-element
// float constants equal to these within a relative 1e-4. Only when every
// value inside the group has no other user.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"
#include "PatternUtils.h"

#include "GraphDialect.h"
#include "mlcc/Reference/MlirBridge.h"

#include <cmath>

namespace mlcc::graph {
#define GEN_PASS_DEF_FUSEGELU
#include "Passes.h.inc"
} // namespace mlcc::graph

using namespace mlir;

namespace mlcc::graph {
namespace {

constexpr double kTolerance = 1e-4;
constexpr double kSqrt2OverPi = 0.79788456080286535588;

/// Whether `v` is a one-element float constant within kTolerance of `want`.
bool isConstant(Value v, double want) {
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c || !isa<FloatType>(c.getValue().getElementType()) ||
      c.getValue().getNumElements() != 1)
    return false;
  ref::Tensor t;
  if (!tensorFromElementsAttr(c.getValue(), t).ok())
    return false;
  return std::fabs(t.getDouble(0) - want) <= kTolerance * std::fabs(want);
}

/// Whether `v` is a one-element float constant equal to the integer `want`
/// (an exponent: pow(x, 3.0001) is nan for x < 0).
bool isExactly(Value v, double want) {
  ref::Tensor t;
  auto c = v.getDefiningOp<ConstantOp>();
  return c && isa<FloatType>(c.getValue().getElementType()) &&
         c.getValue().getNumElements() == 1 &&
         tensorFromElementsAttr(c.getValue(), t).ok() && t.getDouble(0) == want;
}

/// The ops of one candidate group, and the value they all compute from.
struct Group {
  Value x;
  SmallVector<Operation *> ops;

  /// Records `op` when it is an `OpTy` producing a value of x's type (so
  /// that no constant broadcasts the result to another shape).
  template <typename OpTy> bool take(Operation *op) {
    if (!op || !isa<OpTy>(op) || op->getResult(0).getType() != x.getType())
      return false;
    ops.push_back(op);
    return true;
  }
};

/// Whether `op` is mul(v, 0.5), mul(0.5, v) or div(v, 2) for some v; that v
/// in `v`.
bool isHalving(Operation *op, Value &v) {
  if (isa_and_nonnull<DivOp>(op) && isConstant(op->getOperand(1), 2.0)) {
    v = op->getOperand(0);
    return true;
  }
  if (!isa_and_nonnull<MulOp>(op))
    return false;
  for (int i = 0; i < 2; ++i)
    if (isConstant(op->getOperand(1 - i), 0.5)) {
      v = op->getOperand(i);
      return true;
    }
  return false;
}

/// From q = 1 + f(x) (the add, already in the group) to the end:
/// (x * q) * 0.5, (0.5 * x) * q or x * (0.5 * q), operands either way.
/// Returns the final op.
Operation *matchTail(Group &g, Operation *addOne) {
  Value q = addOne->getResult(0);
  Operation *user = soleUser(q);
  if (!g.take<MulOp>(user) && !g.take<DivOp>(user))
    return nullptr;
  Value inner;
  // x * (0.5 * q): the halving first.
  if (isHalving(user, inner) && inner == q) {
    Operation *mul = soleUser(user->getResult(0));
    if (!g.take<MulOp>(mul) || otherOperand(mul, user->getResult(0)) != g.x)
      return nullptr;
    return mul;
  }
  if (!isa<MulOp>(user))
    return nullptr;
  Value other = otherOperand(user, q);
  // (x * q) * 0.5.
  if (other == g.x) {
    Operation *half = soleUser(user->getResult(0));
    if (!(g.take<MulOp>(half) || g.take<DivOp>(half)) ||
        !isHalving(half, inner) || inner != user->getResult(0))
      return nullptr;
    return half;
  }
  // (0.5 * x) * q.
  Operation *half = other ? other.getDefiningOp() : nullptr;
  if (!half || !other.hasOneUse() ||
      !(g.take<MulOp>(half) || g.take<DivOp>(half)) ||
      !isHalving(half, inner) || inner != g.x)
    return nullptr;
  return user;
}

/// q = 1 + f, f the result of the erf or tanh op at the group's core.
Operation *matchAddOne(Group &g, Value f) {
  Operation *add = soleUser(f);
  if (!g.take<AddOp>(add) || !isConstant(otherOperand(add, f), 1.0))
    return nullptr;
  return add;
}

/// erf(x / sqrt 2) or erf(x * (1 / sqrt 2)): sets g.x.
bool matchErfArgument(Group &g, ErfOp erf) {
  Value t = erf->getOperand(0);
  Operation *def = t.getDefiningOp();
  if (!def || !t.hasOneUse())
    return false;
  if (isa<DivOp>(def) && isConstant(def->getOperand(1), std::sqrt(2.0))) {
    g.x = def->getOperand(0);
  } else if (isa<MulOp>(def)) {
    for (int i = 0; i < 2 && !g.x; ++i)
      if (isConstant(def->getOperand(1 - i), std::sqrt(0.5)))
        g.x = def->getOperand(i);
  }
  return g.x && (g.take<DivOp>(def) || g.take<MulOp>(def)) &&
         g.take<ErfOp>(erf);
}

/// x^3 as pow(x, 3), x * (x * x) or (x * x) * x, for the given x.
bool matchCube(Group &g, Value cube) {
  Operation *def = cube.getDefiningOp();
  if (!def || !cube.hasOneUse())
    return false;
  if (isa<PowOp>(def))
    return def->getOperand(0) == g.x && isExactly(def->getOperand(1), 3.0) &&
           g.take<PowOp>(def);
  Value square = otherOperand(def, g.x);
  if (!isa<MulOp>(def) || !square)
    return false;
  Operation *sq = square.getDefiningOp();
  return isa_and_nonnull<MulOp>(sq) && square.hasOneUse() &&
         sq->getOperand(0) == g.x && sq->getOperand(1) == g.x &&
         g.take<MulOp>(def) && g.take<MulOp>(sq);
}

/// tanh(0.7978846 * (x + 0.044715 * x^3)): sets g.x.
bool matchTanhArgument(Group &g, TanhOp tanh) {
  Value u = tanh->getOperand(0);
  Operation *scale = u.getDefiningOp();
  if (!isa_and_nonnull<MulOp>(scale) || !u.hasOneUse())
    return false;
  Value sum;
  for (int i = 0; i < 2 && !sum; ++i)
    if (isConstant(scale->getOperand(1 - i), kSqrt2OverPi))
      sum = scale->getOperand(i);
  Operation *add = sum ? sum.getDefiningOp() : nullptr;
  if (!isa_and_nonnull<AddOp>(add) || !sum.hasOneUse())
    return false;
  // x + p or p + x, p = 0.044715 * x^3.
  for (int i = 0; i < 2; ++i) {
    Group candidate{add->getOperand(i), {}};
    Value p = add->getOperand(1 - i);
    Operation *mul = p.getDefiningOp();
    if (!isa_and_nonnull<MulOp>(mul) || !p.hasOneUse())
      continue;
    for (int j = 0; j < 2; ++j) {
      Group c = candidate;
      if (isConstant(mul->getOperand(1 - j), 0.044715) &&
          matchCube(c, mul->getOperand(j)) && c.take<MulOp>(mul) &&
          c.take<AddOp>(add) && c.take<MulOp>(scale) && c.take<TanhOp>(tanh)) {
        g = c;
        return true;
      }
    }
  }
  return false;
}

bool isFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

/// Replaces the group ending in `last` with graph.gelu.
void fuse(Group &g, Operation *last, StringRef approximate) {
  OpBuilder b(last);
  auto gelu = b.create<GeluOp>(last->getLoc(), g.x.getType(), g.x,
                               b.getStringAttr(approximate));
  last->getResult(0).replaceAllUsesWith(gelu.getResult());
  eraseGroup(g.ops);
}

/// Fuses the GELU around `core` (an erf or tanh op); false when it is not
/// one.
bool fuseAround(Operation *core) {
  Group g;
  bool matched = false;
  if (auto erf = dyn_cast<ErfOp>(core))
    matched = matchErfArgument(g, erf);
  else if (auto tanh = dyn_cast<TanhOp>(core))
    matched = matchTanhArgument(g, tanh);
  if (!matched || !isFloatTensor(g.x))
    return false;
  Operation *addOne = matchAddOne(g, core->getResult(0));
  Operation *last = addOne ? matchTail(g, addOne) : nullptr;
  if (!last)
    return false;
  fuse(g, last, isa<ErfOp>(core) ? "none" : "tanh");
  return true;
}

struct FuseGelu : impl::FuseGeluBase<FuseGelu> {
  void runOnOperation() override {
    SmallVector<Operation *> cores;
    getOperation().walk([&](Operation *op) {
      if (isa<ErfOp, TanhOp>(op))
        cores.push_back(op);
    });
    for (Operation *core : cores)
      fuseAround(core);
  }
};

} // namespace
} // namespace mlcc::graph
