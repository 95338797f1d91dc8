//===- NNFc.cpp - Portable lowering of graph.fc ---------------------------===//
//
// Y = act(X W + B + Z) for a target without an fc kernel: X and Y seen as
// [rows, K] and [rows, N], the product as one linalg.generic over (row, k,
// n) with n innermost (the matmul lowering's order, NN.cpp), then one
// elementwise pass over Y adding the bias row and the residual and applying
// the activation, each step in the order of the reference kernel
// (compiler/Reference/Kernels/Fc.cpp) and of the activations' own
// lowerings (Elementwise.cpp). f32 only, as mlcc-fuse-fc forms it.
//
//===----------------------------------------------------------------------===//

#include "NNUtils.h"

#include "GraphDialect.h"

using namespace mlir;

namespace mlcc::portable {
namespace {

using namespace nn;

/// `buffer` (contiguous, identity layout) seen as [rows, cols].
Value asMatrix(OpBuilder &b, Location loc, Value buffer, int64_t rows,
               int64_t cols) {
  auto type = cast<MemRefType>(buffer.getType());
  if (type.getShape() == ArrayRef<int64_t>{rows, cols})
    return buffer;
  auto matrix = MemRefType::get({rows, cols}, type.getElementType());
  return b.create<memref::ReinterpretCastOp>(loc, matrix, buffer, 0,
                                             ArrayRef<int64_t>{rows, cols},
                                             ArrayRef<int64_t>{cols, 1});
}

/// v < lo ? lo : (v > hi ? hi : v) with nan passing through, as the
/// reference's clampNan.
Value clampNan(OpBuilder &b, Location loc, Value v, double lo, double hi) {
  Type f32 = b.getF32Type();
  Value loV = scalarConstant(b, loc, f32, lo);
  Value hiV = scalarConstant(b, loc, f32, hi);
  Value gt = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, v, hiV);
  Value upper = b.create<arith::SelectOp>(loc, gt, hiV, v);
  Value lt = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, v, loV);
  return b.create<arith::SelectOp>(loc, lt, loV, upper);
}

Value sigmoid(OpBuilder &b, Location loc, Value v) {
  Value one = scalarConstant(b, loc, v.getType(), 1.0);
  Value e = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, v));
  return b.create<arith::DivFOp>(loc, one,
                                 b.create<arith::AddFOp>(loc, one, e));
}

/// The activation `name` (one of graph::fusedActivations()) applied to the f32 `v`.
Value activate(OpBuilder &b, Location loc, StringRef name, double alpha,
               double beta, Value v) {
  Type f32 = b.getF32Type();
  auto cst = [&](double c) { return scalarConstant(b, loc, f32, c); };
  auto mul = [&](Value x, Value y) {
    return b.create<arith::MulFOp>(loc, x, y).getResult();
  };
  auto lessThanZero = [&](Value x) {
    return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, x, cst(0));
  };
  if (name == "none")
    return v;
  if (name == "relu")
    return b.create<arith::SelectOp>(loc, lessThanZero(v), cst(0), v);
  if (name == "leaky_relu")
    return b.create<arith::SelectOp>(loc, lessThanZero(v),
                                     mul(cst(static_cast<float>(alpha)), v), v);
  if (name == "clip") { // min(max(v, lo), hi), as clip's kernel
    Value lo = cst(static_cast<float>(alpha));
    Value hi = cst(static_cast<float>(beta));
    Value below =
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, v, lo);
    Value r = b.create<arith::SelectOp>(loc, below, lo, v);
    Value above =
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, r, hi);
    return b.create<arith::SelectOp>(loc, above, hi, r);
  }
  if (name == "sigmoid")
    return sigmoid(b, loc, v);
  if (name == "tanh")
    return b.create<math::TanhOp>(loc, v);
  if (name == "silu")
    return mul(v, sigmoid(b, loc, v));
  if (name == "hard_swish") {
    Value t = b.create<arith::AddFOp>(
        loc, b.create<arith::DivFOp>(loc, v, cst(6)), cst(0.5));
    return mul(v, clampNan(b, loc, t, 0, 1));
  }
  if (name == "gelu" || name == "gelu_tanh") { // as graph.gelu's lowering
    Value half = mul(cst(0.5), v);
    Value f;
    if (name == "gelu") {
      f = b.create<math::ErfOp>(
          loc, b.create<arith::DivFOp>(loc, v, cst(1.41421356237309504880)));
    } else {
      Value cube = mul(mul(v, v), v);
      Value inner = b.create<arith::AddFOp>(loc, v, mul(cst(0.044715), cube));
      f = b.create<math::TanhOp>(loc, mul(cst(0.79788456080286535588), inner));
    }
    return mul(half, b.create<arith::AddFOp>(loc, cst(1), f));
  }
  return v;
}

// Operands: X [..., K], W [K, N], B [N] or none, Z [..., N] or none.
LogicalResult lowerFc(PortableOp &p) {
  Operation *op = p.op;
  OpBuilder &b = p.b;
  Location loc = p.loc;
  MLIRContext *ctx = b.getContext();
  for (Value v : op->getOperands())
    if (!isa<NoneType>(v.getType()) && !elementTypeOf(v).isF32())
      return op->emitError("fc: only f32 is supported, got ") << v.getType();
  std::string act = stringAttr(op, "activation", "none");
  double alpha = floatAttr(op, "activation_alpha", 0.0);
  double beta = floatAttr(op, "activation_beta", 0.0);
  ArrayRef<int64_t> xs = shapeOf(op->getOperand(0)),
                    ws = shapeOf(op->getOperand(1));
  if (xs.size() < 2 || ws.size() != 2 || xs.back() != ws[0])
    return op->emitError("fc: X must be [..., K] and W [K, N]");
  if (!llvm::is_contained(graph::fusedActivations(), StringRef(act)))
    return op->emitError("fc: unknown activation '") << act << "'";
  int64_t k = ws[0], n = ws[1];
  int64_t rows = numElements(xs.drop_back());
  if (rows == 0 || n == 0)
    return success(); // no element to write
  Value y = asMatrix(b, loc, p.results[0], rows, n);
  Value bias = p.operands[2];
  Value z = p.operands[3] ? asMatrix(b, loc, p.operands[3], rows, n) : Value();

  Type f32 = b.getF32Type();
  fillBuffer(b, loc, y, scalarConstant(b, loc, f32, 0.0));
  if (k > 0) {
    GenericBuilder g(3); // (row, k, n)
    g.addInput(asMatrix(b, loc, p.operands[0], rows, k), dimExprs(ctx, {0, 1}));
    g.addInput(p.operands[1], dimExprs(ctx, {1, 2}));
    g.addOutput(y, dimExprs(ctx, {0, 2}));
    g.setReduction(1);
    g.build(b, loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
      Value prod = nb.create<arith::MulFOp>(nl, args[0], args[1]);
      return SmallVector<Value>{nb.create<arith::AddFOp>(nl, args[2], prod)};
    });
  }
  if (!bias && !z && act == "none")
    return success();
  GenericBuilder g(2); // (row, n)
  int ib = g.addInput(bias, dimExprs(ctx, {1}));
  int iz = g.addInput(z, dimExprs(ctx, {0, 1}));
  int iy = g.addOutput(y, dimExprs(ctx, {0, 1}));
  g.build(b, loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value v = args[iy];
    if (ib >= 0)
      v = nb.create<arith::AddFOp>(nl, v, args[ib]);
    if (iz >= 0)
      v = nb.create<arith::AddFOp>(nl, v, args[iz]);
    return SmallVector<Value>{activate(nb, nl, act, alpha, beta, v)};
  });
  return success();
}

} // namespace

void registerPortableFc(PortableRegistry &registry) {
  registry["graph.fc"] = &lowerFc;
}

} // namespace mlcc::portable
