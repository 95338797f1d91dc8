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

#include "FusedActivation.h"
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
    return SmallVector<Value>{fusedActivation(nb, nl, act, alpha, beta, v)};
  });
  return success();
}

} // namespace

void registerPortableFc(PortableRegistry &registry) {
  registry["graph.fc"] = &lowerFc;
}

} // namespace mlcc::portable
