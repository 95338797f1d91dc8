//===- Stencil.cpp - Portable lowering of graph.stencil -------------------===//
//
// What the avx512 target declines (lowering/AVX512/SelectStencil.cpp: a
// stride above 2 along the innermost dim, a window over more than three dims,
// weights computed at run time, other dtypes) runs here: scf loops over the
// output, and within each output over the flat window index, computing
// what the reference kernel (compiler/Reference/Kernels/Stencil.cpp) does,
// in the same order and in f64 as it does: coordinates resolved by the
// padding mode, v = x * weight, sum or the first strict min/max and its
// index. The result is converted to the output type once.
//
//===----------------------------------------------------------------------===//

#include "NNUtils.h"

#include "mlcc/Reference/StencilModes.h"

#include <limits>

using namespace mlir;

namespace mlcc::portable {
namespace {

using namespace nn;

using Padding = ref::StencilPadding;
using Reduction = ref::StencilReduction;

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIndexOp>(loc, v);
}

/// ((i % p) + p) % p for a constant period p > 0.
Value positiveRem(OpBuilder &b, Location loc, Value i, int64_t p) {
  Value pv = indexConst(b, loc, p);
  Value r = b.create<arith::RemSIOp>(loc, i, pv);
  return b.create<arith::RemSIOp>(loc, b.create<arith::AddIOp>(loc, r, pv), pv);
}

/// Coordinate `i` mapped into [0, n) by `pad` (for zero padding: clamped,
/// the caller replaces the value outside).
Value resolve(OpBuilder &b, Location loc, Value i, int64_t n, Padding pad) {
  Value zero = indexConst(b, loc, 0), last = indexConst(b, loc, n - 1);
  auto reflectInto = [&](int64_t period, int64_t hi) {
    // m < n ? m : hi - m
    Value m = positiveRem(b, loc, i, period);
    Value below = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, m,
                                          indexConst(b, loc, n));
    Value other = b.create<arith::SubIOp>(loc, indexConst(b, loc, hi), m);
    return b.create<arith::SelectOp>(loc, below, m, other).getResult();
  };
  switch (pad) {
  case Padding::Zero:
  case Padding::Clamp:
    return b.create<arith::MaxSIOp>(loc, zero,
                                    b.create<arith::MinSIOp>(loc, i, last));
  case Padding::Reflect:
    if (n == 1)
      return zero;
    return reflectInto(2 * (n - 1), 2 * (n - 1));
  case Padding::Mirror:
    return reflectInto(2 * n, 2 * n - 1);
  }
  return zero;
}

LogicalResult lowerStencil(PortableOp &p) {
  Operation *op = p.op;
  OpBuilder &b = p.b;
  Location loc = p.loc;
  Value x = p.operands[0], w = p.operands[1], y = p.results[0];
  ArrayRef<int64_t> xs = shapeOf(op->getOperand(0)),
                    ks = shapeOf(op->getOperand(1)),
                    ys = shapeOf(op->getResult(0));
  const size_t rank = xs.size();
  if (ks.size() != rank || ys.size() != rank)
    return op->emitError("stencil: weights and result need the input's rank");
  std::string r = stringAttr(op, "reduction", "sum");
  std::string pd = stringAttr(op, "padding", "zero");
  Reduction red;
  Padding pad;
  if (!ref::parseStencilReduction(r, red))
    return op->emitError("stencil: unknown reduction '") << r << "'";
  if (!ref::parseStencilPadding(pd, pad))
    return op->emitError("stencil: unknown padding '") << pd << "'";
  SmallVector<int64_t> strides = intsAttr(op, "strides"),
                       dilations = intsAttr(op, "dilations"),
                       offsets = intsAttr(op, "offsets");
  if (strides.empty())
    strides.assign(rank, 1);
  if (dilations.empty())
    dilations.assign(rank, 1);
  if (offsets.empty())
    for (size_t d = 0; d < rank; ++d)
      offsets.push_back(-((ks[d] - 1) * dilations[d]) / 2);
  if (strides.size() != rank || dilations.size() != rank ||
      offsets.size() != rank)
    return op->emitError("stencil: offsets, strides and dilations need one "
                         "entry per dim");
  for (size_t d = 0; d < rank; ++d)
    if (ys[d] != (xs[d] + strides[d] - 1) / strides[d] || ks[d] < 1 ||
        strides[d] < 1 || dilations[d] < 1)
      return op->emitError("stencil: result shape does not match the "
                           "input's divided by the strides");
  // An empty input has an empty output (its size divided by the stride).
  if (numElements(ys) == 0)
    return success();

  Type xType = elementTypeOf(op->getOperand(0)),
       wType = elementTypeOf(op->getOperand(1)),
       yType = elementTypeOf(op->getResult(0));
  if (!isa<FloatType>(xType) || !isa<FloatType>(wType))
    return op->emitError("stencil: takes float inputs and weights");
  Type f64 = b.getF64Type();
  bool arg = red == Reduction::ArgMin || red == Reduction::ArgMax;
  bool minimum = red == Reduction::Min || red == Reduction::ArgMin;
  double start = red == Reduction::Sum ? 0.0
                 : minimum             ? std::numeric_limits<double>::infinity()
                           : -std::numeric_limits<double>::infinity();
  double padValue = floatAttr(op, "padding_value", 0.0);
  int64_t taps = numElements(ks);
  SmallVector<int64_t> kStrides(rank, 1);
  for (int d = static_cast<int>(rank) - 2; d >= 0; --d)
    kStrides[d] = kStrides[d + 1] * ks[d + 1];

  SmallVector<Value> lbs(rank, indexConst(b, loc, 0)),
      steps(rank, indexConst(b, loc, 1)), ubs;
  for (int64_t n : ys)
    ubs.push_back(indexConst(b, loc, n));
  scf::buildLoopNest(
      b, loc, lbs, ubs, steps, [&](OpBuilder &nb, Location nl, ValueRange o) {
        Value init[] = {scalarConstant(nb, nl, f64, start),
                        indexConst(nb, nl, 0)};
        auto window = nb.create<scf::ForOp>(
            nl, indexConst(nb, nl, 0), indexConst(nb, nl, taps),
            indexConst(nb, nl, 1), ValueRange(init),
            [&](OpBuilder &tb, Location tl, Value t, ValueRange it) {
              Value inside = tb.create<arith::ConstantIntOp>(tl, 1, 1);
              SmallVector<Value> at, wAt;
              for (size_t d = 0; d < rank; ++d) {
                Value wi = tb.create<arith::DivUIOp>(
                    tl, t, indexConst(tb, tl, kStrides[d]));
                wi = tb.create<arith::RemUIOp>(tl, wi,
                                               indexConst(tb, tl, ks[d]));
                wAt.push_back(wi);
                // o * stride + offset + wi * dilation
                Value c = tb.create<arith::AddIOp>(
                    tl,
                    tb.create<arith::MulIOp>(tl, o[d],
                                             indexConst(tb, tl, strides[d])),
                    tb.create<arith::MulIOp>(tl, wi,
                                             indexConst(tb, tl, dilations[d])));
                c = tb.create<arith::AddIOp>(tl, c,
                                             indexConst(tb, tl, offsets[d]));
                if (pad == Padding::Zero) {
                  Value ge = tb.create<arith::CmpIOp>(
                      tl, arith::CmpIPredicate::sge, c, indexConst(tb, tl, 0));
                  Value lt =
                      tb.create<arith::CmpIOp>(tl, arith::CmpIPredicate::slt, c,
                                               indexConst(tb, tl, xs[d]));
                  inside = tb.create<arith::AndIOp>(
                      tl, inside, tb.create<arith::AndIOp>(tl, ge, lt));
                }
                at.push_back(resolve(tb, tl, c, xs[d], pad));
              }
              Value v = convertScalar(
                  tb, tl, tb.create<memref::LoadOp>(tl, x, at), xType, f64);
              if (pad == Padding::Zero)
                v = tb.create<arith::SelectOp>(
                    tl, inside, v, scalarConstant(tb, tl, f64, padValue));
              Value wv = convertScalar(
                  tb, tl, tb.create<memref::LoadOp>(tl, w, wAt), wType, f64);
              v = tb.create<arith::MulFOp>(tl, v, wv);
              Value acc = it[0], best = it[1];
              if (red == Reduction::Sum) {
                acc = tb.create<arith::AddFOp>(tl, acc, v);
              } else {
                // The reference's `v < acc` (`v > acc`): false for NaN, so
                // the first extreme wins.
                Value better = tb.create<arith::CmpFOp>(
                    tl,
                    minimum ? arith::CmpFPredicate::OLT
                            : arith::CmpFPredicate::OGT,
                    v, acc);
                acc = tb.create<arith::SelectOp>(tl, better, v, acc);
                best = tb.create<arith::SelectOp>(tl, better, t, best);
              }
              tb.create<scf::YieldOp>(tl, ValueRange{acc, best});
            });
        Value result;
        if (arg)
          result = nb.create<arith::IndexCastOp>(nl, storageType(yType),
                                                 window.getResult(1));
        else
          result = convertScalar(nb, nl, window.getResult(0), f64, yType);
        nb.create<memref::StoreOp>(nl, result, y, o);
      });
  return success();
}

} // namespace

void registerPortableStencil(PortableRegistry &registry) {
  registry["graph.stencil"] = &lowerStencil;
}

} // namespace mlcc::portable
