//===- Normalization.cpp - Batch, instance and layer norm -----------------===//
//
// graph.batch_norm, graph.instance_norm and graph.layer_norm as scf loops.
// As in the reference (Kernels/Normalization.cpp): statistics are computed
// in double with two passes (mean, then mean of squared deviations), and
// the per-element affine transform runs in double before rounding to the
// element type. Parameters may have a float type other than X's.
//
//===----------------------------------------------------------------------===//

#include "ParallelLoops.h"
#include "ReductionsSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace mlcc::portable::red {
namespace {

/// Whether result `i` exists (an unused optional output has type none and
/// may have no buffer).
bool hasResult(PortableOp &p, unsigned i) {
  return i < p.results.size() && p.results[i] &&
         !isa<NoneType>(p.op->getResult(i).getType());
}

/// Element `idx` of the flat parameter buffer `buf` as f64.
Value paramAt(Builder &b, Value buf, const Elem &e, Value idx) {
  return toF64(b, load(b, buf, {idx}), e);
}

/// mean and population variance (f64) of the elements fn(ivs) yields over
/// the loop nest `dims`: two passes, like the reference's meanVar.
std::pair<Value, Value>
meanVar(Builder &b, ArrayRef<int64_t> dims,
        function_ref<Value(Builder &, ValueRange)> elementF64) {
  Value count = cF64(b, static_cast<double>(numElements(dims)));
  Value sum = loops(
      b, dims, {cF64(b, 0.0)}, [&](Builder &b, ValueRange ivs, ValueRange acc) {
        return SmallVector<Value>{accAdd(b, acc[0], elementF64(b, ivs))};
      })[0];
  Value mean = b.create<arith::DivFOp>(sum, count);
  Value sq = loops(
      b, dims, {cF64(b, 0.0)}, [&](Builder &b, ValueRange ivs, ValueRange acc) {
        Value d = b.create<arith::SubFOp>(elementF64(b, ivs), mean);
        return SmallVector<Value>{
            accAdd(b, acc[0], b.create<arith::MulFOp>(d, d))};
      })[0];
  return {mean, b.create<arith::DivFOp>(sq, count)};
}

/// 1 / sqrt(var + eps).
Value invStd(Builder &b, Value var, double eps) {
  Value s = b.create<math::SqrtOp>(b.create<arith::AddFOp>(var, cF64(b, eps)));
  return b.create<arith::DivFOp>(cF64(b, 1.0), s);
}

LogicalResult checkFloat(Operation *op, unsigned first, unsigned last) {
  for (unsigned i = first; i <= last && i < op->getNumOperands(); ++i)
    if (hasOperand(op, i) && !elemOf(op->getOperand(i)).isFloat)
      return op->emitError("operand ") << i << " must have a float type";
  return success();
}

//===----------------------------------------------------------------------===//
// graph.batch_norm
//===----------------------------------------------------------------------===//

// Y = (X - mean) / sqrt(var + eps) * scale + B per channel (dim 1; rank-1
// X has one channel), as y = x * a + b with a = scale / sqrt(var + eps),
// b = B - mean * a. Training mode uses the batch statistics and writes the
// updated running mean/var into results 1 and 2. Parameters of C*D1*..*Dn
// elements (the old spatial=0 form) apply per activation in inference.

LogicalResult lowerBatchNorm(PortableOp &p) {
  Operation *op = p.op;
  if (op->getNumOperands() < 5)
    return op->emitError("expected 5 operands");
  for (unsigned i = 0; i < 5; ++i)
    if (!hasOperand(op, i))
      return op->emitError("missing operand ") << i;
  if (failed(checkFloat(op, 0, 4)))
    return failure();
  Value xv = op->getOperand(0);
  Elem e = elemOf(xv);
  ArrayRef<int64_t> shape = shapeOf(xv);
  if (shape.empty())
    return op->emitError("X must have rank >= 1");
  int64_t n = shape[0], c = shape.size() == 1 ? 1 : shape[1];
  int64_t s = n * c == 0 ? 0 : numElements(shape) / (n * c);
  int64_t pn = numElements(shapeOf(op->getOperand(1)));
  for (unsigned i = 2; i < 5; ++i)
    if (numElements(shapeOf(op->getOperand(i))) != pn)
      return op->emitError("parameters have different sizes");
  bool training = intAttr(op, "training_mode", 0) != 0;
  bool perChannel = pn == c;
  if (!perChannel && (training || pn != c * s))
    return op->emitError("parameters of ")
           << pn << " elements do not match " << c << " channels";
  if (n * c * s == 0 && !training)
    return success();
  double eps = floatAttr(op, "epsilon", 1e-5f);
  double momentum = floatAttr(op, "momentum", 0.9f);

  Builder b(p.loc, p.b);
  shapeBuffers(b, p);
  Value x = view(b, p.operands[0], {n, c, s});
  Value y = view(b, p.results[0], {n, c, s});
  SmallVector<Value> prm;
  SmallVector<Elem> pe;
  for (unsigned i = 1; i < 5; ++i) {
    prm.push_back(view(b, p.operands[i], {pn}));
    pe.push_back(elemOf(op->getOperand(i)));
  }
  // a and b of parameter element `pi` given its mean and variance.
  auto affine = [&](Builder &b, Value pi, Value mean, Value var) {
    Value a = b.create<arith::MulFOp>(paramAt(b, prm[0], pe[0], pi),
                                      invStd(b, var, eps));
    Value bb = b.create<arith::SubFOp>(paramAt(b, prm[1], pe[1], pi),
                                       b.create<arith::MulFOp>(mean, a));
    return std::make_pair(a, bb);
  };
  auto apply = [&](Builder &b, Value i, Value ch, Value j, Value a, Value bb) {
    Value v = toF64(b, load(b, x, {i, ch, j}), e);
    Value r = b.create<arith::AddFOp>(b.create<arith::MulFOp>(v, a), bb);
    store(b, fromF64(b, r, e), y, {i, ch, j});
  };

  // Every (batch, channel) -- or element -- reads only X and the parameters
  // and writes its own elements of Y: parallel (ParallelLoops.h).
  if (!training) {
    if (perChannel) {
      parallelLoops(b, {n, c}, [&](Builder &b, ValueRange ic) {
        std::pair<Value, Value> abb =
            affine(b, ic[1], paramAt(b, prm[2], pe[2], ic[1]),
                   paramAt(b, prm[3], pe[3], ic[1]));
        Value a = abb.first, bb = abb.second;
        loops(b, {s}, [&](Builder &b, ValueRange j) {
          apply(b, ic[0], ic[1], j[0], a, bb);
        });
      });
    } else {
      parallelLoops(b, {n, c, s}, [&](Builder &b, ValueRange ivs) {
        Value pi = b.create<arith::AddIOp>(
            b.create<arith::MulIOp>(ivs[1], cIndex(b, s)), ivs[2]);
        std::pair<Value, Value> abb =
            affine(b, pi, paramAt(b, prm[2], pe[2], pi),
                   paramAt(b, prm[3], pe[3], pi));
        Value a = abb.first, bb = abb.second;
        apply(b, ivs[0], ivs[1], ivs[2], a, bb);
      });
    }
    return success();
  }

  // Training: per-channel batch statistics over (batch, spatial).
  SmallVector<Value> runOut;
  SmallVector<Elem> runElem;
  for (unsigned r = 1; r < 3; ++r)
    if (hasResult(p, r)) {
      runOut.push_back(view(b, p.results[r], {c}));
      runElem.push_back(elemOf(op->getResult(r)));
    } else {
      runOut.push_back(Value());
      runElem.push_back(Elem());
    }
  // Each channel computes its own statistics (reductions carried in
  // registers inside) and writes its running mean/var element and its
  // slice of Y: parallel.
  parallelLoops(b, {c}, [&](Builder &b, ValueRange chv) {
    Value ch = chv[0];
    std::pair<Value, Value> meanvar =
        meanVar(b, {n, s}, [&](Builder &b, ValueRange ivs) {
          return toF64(b, load(b, x, {ivs[0], ch, ivs[1]}), e);
        });
    Value mean = meanvar.first, var = meanvar.second;
    Value mom = cF64(b, momentum), rest = cF64(b, 1.0 - momentum);
    for (unsigned r = 0; r < 2; ++r) {
      if (!runOut[r])
        continue;
      Value running = paramAt(b, prm[2 + r], pe[2 + r], ch);
      Value cur = r == 0 ? mean : var;
      Value upd = b.create<arith::AddFOp>(b.create<arith::MulFOp>(running, mom),
                                          b.create<arith::MulFOp>(cur, rest));
      store(b, fromF64(b, upd, runElem[r]), runOut[r], {ch});
    }
    std::pair<Value, Value> abb = affine(b, ch, mean, var);
    Value a = abb.first, bb = abb.second;
    loops(b, {n, s}, [&](Builder &b, ValueRange ij) {
      apply(b, ij[0], ch, ij[1], a, bb);
    });
  });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.instance_norm
//===----------------------------------------------------------------------===//

// y = scale * (x - mean) / sqrt(var + eps) + B, statistics over the spatial
// dims of each (batch, channel).

LogicalResult lowerInstanceNorm(PortableOp &p) {
  Operation *op = p.op;
  for (unsigned i = 0; i < 3; ++i)
    if (!hasOperand(op, i))
      return op->emitError("missing operand ") << i;
  if (failed(checkFloat(op, 0, 2)))
    return failure();
  Value xv = op->getOperand(0);
  Elem e = elemOf(xv);
  ArrayRef<int64_t> shape = shapeOf(xv);
  if (shape.size() < 2)
    return op->emitError("input must have rank >= 2 (N x C x ...)");
  int64_t n = shape[0], c = shape[1];
  int64_t s = n * c == 0 ? 0 : numElements(shape) / (n * c);
  for (unsigned i = 1; i < 3; ++i)
    if (numElements(shapeOf(op->getOperand(i))) != c)
      return op->emitError("scale and B must have one element per channel");
  if (n * c * s == 0)
    return success();
  double eps = floatAttr(op, "epsilon", 1e-5f);

  Builder b(p.loc, p.b);
  shapeBuffers(b, p);
  Value x = view(b, p.operands[0], {n, c, s});
  Value y = view(b, p.results[0], {n, c, s});
  Value scale = view(b, p.operands[1], {c}), bias = view(b, p.operands[2], {c});
  Elem se = elemOf(op->getOperand(1)), be = elemOf(op->getOperand(2));
  // Each (batch, channel) normalises its own spatial slice: parallel.
  parallelLoops(b, {n, c}, [&](Builder &b, ValueRange ic) {
    Value i = ic[0], ch = ic[1];
    std::pair<Value, Value> meanvar =
        meanVar(b, {s}, [&](Builder &b, ValueRange j) {
          return toF64(b, load(b, x, {i, ch, j[0]}), e);
        });
    Value mean = meanvar.first, var = meanvar.second;
    Value a =
        b.create<arith::MulFOp>(paramAt(b, scale, se, ch), invStd(b, var, eps));
    Value bb = b.create<arith::SubFOp>(paramAt(b, bias, be, ch),
                                       b.create<arith::MulFOp>(mean, a));
    loops(b, {s}, [&](Builder &b, ValueRange j) {
      Value v = toF64(b, load(b, x, {i, ch, j[0]}), e);
      Value r = b.create<arith::AddFOp>(b.create<arith::MulFOp>(v, a), bb);
      store(b, fromF64(b, r, e), y, {i, ch, j[0]});
    });
  });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.layer_norm
//===----------------------------------------------------------------------===//

// Normalises over the dims [axis, rank): Y = (X - Mean) * InvStdDev * Scale
// + B with Scale and B broadcast against X (numpy rules). Mean and
// InvStdDev (optional results) have X's shape with the normalised dims 1.

/// Index into a parameter broadcast against x from x's loop variables.
SmallVector<Value> broadcastIndex(Builder &b, ArrayRef<int64_t> pshape,
                                  ValueRange xIvs) {
  SmallVector<Value> idx;
  size_t lead = xIvs.size() - pshape.size();
  for (size_t j = 0; j < pshape.size(); ++j)
    idx.push_back(pshape[j] == 1 ? cIndex(b, 0) : xIvs[lead + j]);
  return idx;
}

LogicalResult checkBroadcast(Operation *op, unsigned i,
                             ArrayRef<int64_t> xShape) {
  ArrayRef<int64_t> ps = shapeOf(op->getOperand(i));
  if (ps.size() > xShape.size())
    return op->emitError("operand ") << i << " does not broadcast to X";
  size_t lead = xShape.size() - ps.size();
  for (size_t j = 0; j < ps.size(); ++j)
    if (ps[j] != 1 && ps[j] != xShape[lead + j])
      return op->emitError("operand ") << i << " does not broadcast to X";
  return success();
}

LogicalResult lowerLayerNorm(PortableOp &p) {
  Operation *op = p.op;
  if (!hasOperand(op, 0) || !hasOperand(op, 1))
    return op->emitError("missing operand X or Scale");
  if (failed(checkFloat(op, 0, 2)))
    return failure();
  Value xv = op->getOperand(0);
  Elem e = elemOf(xv);
  ArrayRef<int64_t> shape = shapeOf(xv);
  int64_t rank = shape.size();
  FailureOr<int64_t> axis = normalizeAxis(op, intAttr(op, "axis", -1), rank);
  if (failed(axis))
    return failure();
  bool hasBias = hasOperand(op, 2);
  if (failed(checkBroadcast(op, 1, shape)) ||
      (hasBias && failed(checkBroadcast(op, 2, shape))))
    return failure();
  if (numElements(shape.take_front(*axis)) == 0)
    return success();
  double eps = floatAttr(op, "epsilon", 1e-5f);

  Builder b(p.loc, p.b);
  shapeBuffers(b, p);
  Value x = p.operands[0], y = p.results[0];
  Value scale = p.operands[1], bias = hasBias ? p.operands[2] : Value();
  ArrayRef<int64_t> sShape = shapeOf(op->getOperand(1));
  ArrayRef<int64_t> bShape = hasBias ? shapeOf(op->getOperand(2)) : sShape;
  Elem se = elemOf(op->getOperand(1));
  Elem be = hasBias ? elemOf(op->getOperand(2)) : se;
  ArrayRef<int64_t> outerDims = shape.take_front(*axis);
  ArrayRef<int64_t> normDims = shape.drop_front(*axis);
  // Each outer index normalises its own row and writes its own statistics:
  // parallel (a serial nest would be one device thread for the whole op).
  parallelLoops(b, outerDims, [&](Builder &b, ValueRange oIvs) {
    auto fullIndex = [&](ValueRange nIvs) {
      SmallVector<Value> idx(oIvs.begin(), oIvs.end());
      idx.append(nIvs.begin(), nIvs.end());
      return idx;
    };
    std::pair<Value, Value> meanvar =
        meanVar(b, normDims, [&](Builder &b, ValueRange nIvs) {
          return toF64(b, load(b, x, fullIndex(nIvs)), e);
        });
    Value mean = meanvar.first, var = meanvar.second;
    Value inv = invStd(b, var, eps);
    loops(b, normDims, [&](Builder &b, ValueRange nIvs) {
      SmallVector<Value> idx = fullIndex(nIvs);
      Value v = toF64(b, load(b, x, idx), e);
      Value sc = toF64(b, load(b, scale, broadcastIndex(b, sShape, idx)), se);
      Value r = b.create<arith::MulFOp>(
          b.create<arith::MulFOp>(b.create<arith::SubFOp>(v, mean), inv), sc);
      if (bias)
        r = b.create<arith::AddFOp>(
            r, toF64(b, load(b, bias, broadcastIndex(b, bShape, idx)), be));
      store(b, fromF64(b, r, e), y, idx);
    });
    // The statistics, if asked for, in their own (stash) type.
    SmallVector<Value> statIdx(oIvs.begin(), oIvs.end());
    Value zero = cIndex(b, 0);
    statIdx.append(rank - *axis, zero);
    for (unsigned r = 1; r < 3; ++r)
      if (hasResult(p, r))
        store(b, fromF64(b, r == 1 ? mean : inv, elemOf(op->getResult(r))),
              p.results[r], statIdx);
  });
  return success();
}

} // namespace

void registerNormalizationOps(PortableRegistry &registry) {
  registry["graph.batch_norm"] = &lowerBatchNorm;
  registry["graph.instance_norm"] = &lowerInstanceNorm;
  registry["graph.layer_norm"] = &lowerLayerNorm;
}

} // namespace mlcc::portable::red
