//===- FuseFc.cpp - matmul + add (+ add) (+ activation) -> fc -------------===//
//
// A fully connected layer exported as MatMul, Add of a bias row, maybe Add
// of a residual, maybe an activation, runs as four passes over its output.
// As one graph.fc the GEMM kernel adds the bias and the residual and applies
// the activation to its accumulators before it stores them, so the output
// is written once. Gemm (transA = 0, alpha = 1, constant B and C) is the
// same layer; it becomes an fc only when a residual or an activation
// follows, since a plain gemm already has its bias in the kernel.
//
//===----------------------------------------------------------------------===//

#include "Passes.h"
#include "PatternUtils.h"

#include "GraphDialect.h"
#include "mlcc/Reference/MlirBridge.h"

#include <cfloat>

namespace mlcc::graph {
#define GEN_PASS_DEF_FUSEFC
#include "Passes.h.inc"
} // namespace mlcc::graph

using namespace mlir;

namespace mlcc::graph {
namespace {

bool isF32(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.getElementType().isF32();
}

/// A constant that broadcasts against a [..., n] value as one row of n
/// values (shape [n], [1, n], [1], [] ...), expanded into `row`.
bool biasRow(Value c, int64_t n, int64_t maxRank, std::vector<float> &row) {
  ref::Tensor t;
  if (!constantF32(c, t) || t.rank() > maxRank)
    return false;
  for (int64_t i = 0; i + 1 < t.rank(); ++i)
    if (t.dim(i) != 1)
      return false;
  int64_t last = t.rank() ? t.dim(t.rank() - 1) : 1;
  if (last != n && last != 1)
    return false;
  row.resize(n);
  for (int64_t j = 0; j < n; ++j)
    row[j] = t.data<float>()[last == 1 ? 0 : j];
  return true;
}

/// What follows the product.
struct Epilogue {
  std::vector<float> bias; // empty: none
  Value biasValue;         // the constant itself when it is already [N]
  Value residual;
  std::string activation = "none";
  float alpha = 0.0f, beta = 0.0f;
  /// The ops the fc replaces after the product, in order; the last one's
  /// result is the fc's.
  SmallVector<Operation *> ops;
};

/// `add` adds a tensor of `v`'s (static) type to `v`: a residual.
bool matchResidual(Operation *add, Value v, Epilogue &e) {
  if (!isa<AddOp>(add) || add->getResult(0).getType() != v.getType() ||
      !cast<RankedTensorType>(v.getType()).hasStaticShape())
    return false;
  Value z = otherOperand(add, v);
  if (z.getType() != v.getType())
    return false;
  e.residual = z;
  e.ops.push_back(add);
  return true;
}

/// The activations fc encodes (GraphFusedOps.td), with their parameters.
bool matchActivation(Operation *op, Value v, Epilogue &e) {
  if (op->getNumOperands() < 1 || op->getOperand(0) != v ||
      op->getNumResults() != 1 || op->getResult(0).getType() != v.getType())
    return false;
  StringRef name = op->getName().getStringRef();
  if (name == "graph.relu" || name == "graph.sigmoid" || name == "graph.tanh" ||
      name == "graph.hard_swish") {
    e.activation = name.drop_front(6).str();
  } else if (name == "graph.leaky_relu") {
    e.activation = "leaky_relu";
    e.alpha = 0.01f;
    if (auto a = op->getAttrOfType<FloatAttr>("alpha"))
      e.alpha = static_cast<float>(a.getValueAsDouble());
  } else if (name == "graph.gelu") {
    auto a = op->getAttrOfType<StringAttr>("approximate");
    StringRef approximate = a ? a.getValue() : "none";
    if (approximate != "none" && approximate != "tanh")
      return false;
    e.activation = approximate == "none" ? "gelu" : "gelu_tanh";
  } else if (name == "graph.clip") {
    // Absent bounds are the lowest and highest floats, as in clip's kernel.
    float bounds[2] = {-FLT_MAX, FLT_MAX};
    for (unsigned i = 1; i < op->getNumOperands() && i < 3; ++i) {
      Value bound = op->getOperand(i);
      if (isa<NoneType>(bound.getType()))
        continue;
      ref::Tensor t;
      if (!constantF32(bound, t) || t.numel() != 1)
        return false;
      bounds[i - 1] = t.data<float>()[0];
    }
    e.activation = "clip";
    e.alpha = bounds[0];
    e.beta = bounds[1];
  } else {
    return false;
  }
  e.ops.push_back(op);
  return true;
}

/// silu as exported: mul(v, sigmoid(v)) in either order, `v` used by those
/// two ops only.
bool matchSilu(Value v, Epilogue &e) {
  SmallVector<Operation *, 2> users(v.getUsers().begin(), v.getUsers().end());
  if (users.size() != 2)
    return false;
  for (int i = 0; i < 2; ++i) {
    Operation *sig = users[i], *mul = users[1 - i];
    if (sig->getName().getStringRef() != "graph.sigmoid" ||
        mul->getName().getStringRef() != "graph.mul" ||
        sig->getResult(0).getType() != v.getType() ||
        mul->getResult(0).getType() != v.getType() ||
        soleUser(sig->getResult(0)) != mul)
      continue;
    Value s = sig->getResult(0);
    if (!((mul->getOperand(0) == v && mul->getOperand(1) == s) ||
          (mul->getOperand(0) == s && mul->getOperand(1) == v)))
      continue;
    // The mul comes after the sigmoid: it is the group's last op.
    e.activation = "silu";
    e.ops.push_back(sig);
    e.ops.push_back(mul);
    return true;
  }
  return false;
}

/// Bias add, residual add and activation after the product `y` (N
/// columns), each optional, each the single user of the value before it.
void matchEpilogue(Value y, int64_t n, Epilogue &e) {
  Value v = y;
  Operation *user = soleUser(v);
  if (user && isa<AddOp>(user) && user->getResult(0).getType() == v.getType()) {
    Value other = otherOperand(user, v);
    int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
    if (biasRow(other, n, rank, e.bias)) {
      if (cast<RankedTensorType>(other.getType()).getShape() ==
          ArrayRef<int64_t>{n})
        e.biasValue = other;
      e.ops.push_back(user);
      v = user->getResult(0);
      user = soleUser(v);
    }
  }
  if (user && matchResidual(user, v, e)) {
    v = user->getResult(0);
    user = soleUser(v);
  }
  if (user)
    matchActivation(user, v, e);
  else
    matchSilu(v, e);
}

/// One graph.none for the function's absent operands, first in its entry
/// block (where it dominates every fc): an existing one moved there (it has
/// no operands), or a new one.
class NoneValue {
public:
  explicit NoneValue(func::FuncOp f) : func(f) {}
  Value get() {
    if (value)
      return value;
    Block &entry = func.getBody().front();
    for (NoneOp op : entry.getOps<NoneOp>()) {
      op->moveBefore(&entry, entry.begin());
      return value = op;
    }
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    return value = b.create<NoneOp>(func.getLoc());
  }

private:
  func::FuncOp func;
  Value value;
};

/// Replaces `head` (the product) and the epilogue's ops with one graph.fc.
void buildFc(Operation *head, Value x, Value w, Epilogue &e, NoneValue &none) {
  Operation *last = e.ops.back();
  OpBuilder b(last);
  Location loc = last->getLoc();
  MLIRContext *ctx = b.getContext();
  Value bias = e.biasValue;
  if (!bias && !e.bias.empty()) {
    ref::Tensor t(ref::DType::F32, {static_cast<int64_t>(e.bias.size())});
    std::copy(e.bias.begin(), e.bias.end(), t.data<float>());
    bias = b.create<ConstantOp>(loc, elementsAttrFromTensor(ctx, t));
  }
  Value result = last->getResult(0);
  auto fc = b.create<FcOp>(
      loc, result.getType(), x, w, bias ? bias : none.get(),
      e.residual ? e.residual : none.get(), b.getStringAttr(e.activation),
      b.getF32FloatAttr(e.alpha), b.getF32FloatAttr(e.beta));
  result.replaceAllUsesWith(fc.getResult());
  for (Operation *op : llvm::reverse(e.ops))
    op->erase();
  head->erase();
}

/// matmul(X, W constant [K, N]) and what follows it.
bool fuseMatMul(MatMulOp mm, NoneValue &none) {
  Value x = mm->getOperand(0), w = mm->getOperand(1), y = mm->getResult(0);
  auto wType = dyn_cast<RankedTensorType>(w.getType());
  auto xType = dyn_cast<RankedTensorType>(x.getType());
  if (!isF32(x) || !isF32(y) || !wType || !w.getDefiningOp<ConstantOp>() ||
      !wType.getElementType().isF32() || wType.getRank() != 2 ||
      !wType.hasStaticShape() || xType.getRank() < 2)
    return false;
  Epilogue e;
  matchEpilogue(y, wType.getDimSize(1), e);
  if (e.ops.empty())
    return false;
  buildFc(mm, x, w, e, none);
  return true;
}

/// gemm(A, B constant, C constant row or none), transA = 0, alpha = 1,
/// when a residual or an activation follows: C (times beta) is the bias,
/// B^T is stored as K x N when transB.
bool fuseGemm(GemmOp gemm, NoneValue &none) {
  Operation *op = gemm.getOperation();
  auto intAttr = [&](StringRef name) {
    auto a = op->getAttrOfType<IntegerAttr>(name);
    return a ? a.getInt() : 0;
  };
  auto floatAttr = [&](StringRef name) {
    auto a = op->getAttrOfType<FloatAttr>(name);
    return a ? static_cast<float>(a.getValueAsDouble()) : 1.0f;
  };
  Value a = op->getOperand(0), y = op->getResult(0);
  ref::Tensor bt;
  if (intAttr("transA") != 0 || floatAttr("alpha") != 1.0f || !isF32(a) ||
      !isF32(y) || !constantF32(op->getOperand(1), bt) || bt.rank() != 2)
    return false;
  bool transB = intAttr("transB") != 0;
  int64_t k = bt.dim(transB ? 1 : 0), n = bt.dim(transB ? 0 : 1);
  Epilogue e;
  Value c = op->getNumOperands() > 2 ? op->getOperand(2) : Value();
  if (c && !isa<NoneType>(c.getType())) {
    if (!biasRow(c, n, 2, e.bias))
      return false;
    float beta = floatAttr("beta");
    for (float &v : e.bias)
      v = beta * v; // as gemm's kernel scales C
  }
  Value v = y;
  Operation *user = soleUser(v);
  if (user && matchResidual(user, v, e)) {
    v = user->getResult(0);
    user = soleUser(v);
  }
  if (user)
    matchActivation(user, v, e);
  else
    matchSilu(v, e);
  if (e.ops.empty())
    return false;

  OpBuilder b(op);
  Value w = op->getOperand(1);
  if (transB) {
    ref::Tensor kn(ref::DType::F32, {k, n});
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j)
        kn.data<float>()[i * n + j] = bt.data<float>()[j * k + i];
    w = b.create<ConstantOp>(op->getLoc(),
                             elementsAttrFromTensor(b.getContext(), kn));
  }
  buildFc(op, a, w, e, none);
  return true;
}

struct FuseFc : impl::FuseFcBase<FuseFc> {
  void runOnOperation() override {
    SmallVector<Operation *> candidates;
    getOperation().walk([&](Operation *op) {
      if (isa<MatMulOp, GemmOp>(op))
        candidates.push_back(op);
    });
    NoneValue none(getOperation());
    for (Operation *op : candidates) {
      if (auto mm = dyn_cast<MatMulOp>(op))
        fuseMatMul(mm, none);
      else
        fuseGemm(cast<GemmOp>(op), none);
    }
  }
};

} // namespace
} // namespace mlcc::graph
