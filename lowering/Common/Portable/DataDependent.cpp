//===- DataDependent.cpp - nonzero, compress, unique, non_max_suppression -===//
//
// Ops whose result lengths depend on the data (graph/RunTimeExtents.h). A
// result buffer has the bound shape of its type; the lowering writes the
// elements of the actual extents at their places in that shape, zeros in
// the rest (gathers read the padding: zero indices keep them in range), and
// stores the actual dims into p.resultExtents. Where a declared static dim
// makes the bound smaller than the data's count, writing stops at the bound
// and the entry fails with a shape mismatch. Counting, compaction and
// sorting are sequential scf.for loops over small scratch arrays; the loops
// that write independent elements (the selected slices, the padding) are
// scf.parallel. Each op computes what its reference kernel does
// (compiler/Reference/Kernels/Gather.cpp, Sort.cpp; NonMaxSuppression.cpp
// holds graph.non_max_suppression).
//
//===----------------------------------------------------------------------===//

#include "DataDependent.h"

#include "DataMovementUtils.h"
#include "NNUtils.h"
#include "ParallelLoops.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mlcc::portable {
namespace ddep {

using namespace red;

void storeExtents(Builder &b, PortableOp &p, unsigned i, ArrayRef<Value> dims) {
  if (i >= p.resultExtents.size() || !p.resultExtents[i])
    return;
  for (auto [d, v] : llvm::enumerate(dims))
    store(b, asI64(b, v), p.resultExtents[i], {cIndex(b, d)});
}

void zeroFill(Builder &b, Value buf) {
  auto type = cast<MemRefType>(buf.getType());
  Value zero = dm::zeroOf(b, b.getLoc(), type.getElementType());
  parallelLoops(b, type.getShape(),
                [&](Builder &b, ValueRange ivs) { store(b, zero, buf, ivs); });
}

Value addI(Builder &b, Value x, Value y) {
  return b.create<arith::AddIOp>(x, y);
}

Value cmpI(Builder &b, arith::CmpIPredicate pred, Value x, Value y) {
  return b.create<arith::CmpIOp>(pred, x, y);
}

Value plusIf(Builder &b, Value n, Value cond) {
  return addI(b, n,
              b.create<arith::SelectOp>(cond, cIndex(b, 1), cIndex(b, 0)));
}

Value asI64(Builder &b, Value index) {
  return b.create<arith::IndexCastOp>(b.getI64Type(), index);
}

Value mergeSort(Builder &b, Value keys, Value tmp, Value n, int64_t maxN,
                function_ref<Value(Builder &, Value, Value)> before) {
  int64_t passes = 0;
  while ((int64_t(1) << passes) < maxN)
    ++passes;
  if (passes == 0)
    return keys;
  Value c0 = cIndex(b, 0), c1 = cIndex(b, 1);
  // Pass p merges runs of 2^p entries of src into dst.
  auto mergePass = [&](Builder &b, Value src, Value dst, Value pass) {
    Value width = b.create<arith::ShLIOp>(c1, pass);
    Value step = addI(b, width, width);
    b.create<scf::ForOp>(
        c0, n, step, ValueRange{},
        [&](OpBuilder &ob, Location loc, Value lo, ValueRange) {
          Builder b(loc, ob);
          Value mid = b.create<arith::MinSIOp>(addI(b, lo, width), n);
          Value hi = b.create<arith::MinSIOp>(addI(b, lo, step), n);
          Value last = b.create<arith::SubIOp>(hi, c1);
          using P = arith::CmpIPredicate;
          // Entry k of the merge: the right run's head only when it goes
          // strictly before the left's (stable); the loads are clamped
          // into the runs, the flags say which heads exist.
          loop(b, lo, hi, {lo, mid},
               [&](Builder &b, ValueRange k, ValueRange ij) {
                 Value i = ij[0], j = ij[1];
                 Value xi = load(b, src, {b.create<arith::MinSIOp>(i, last)});
                 Value xj = load(b, src, {b.create<arith::MinSIOp>(j, last)});
                 Value leftDone = cmpI(b, P::sge, i, mid);
                 Value right = b.create<arith::AndIOp>(
                     cmpI(b, P::slt, j, hi),
                     b.create<arith::OrIOp>(leftDone, before(b, xj, xi)));
                 store(b, b.create<arith::SelectOp>(right, xj, xi), dst, k);
                 Value notRight =
                     b.create<arith::XOrIOp>(right, cInt(b, b.getI1Type(), 1));
                 return SmallVector<Value>{plusIf(b, i, notRight),
                                           plusIf(b, j, right)};
               });
          b.create<scf::YieldOp>();
        });
  };
  // Even passes merge keys into tmp, odd ones back, two per iteration: no
  // loop carries a buffer (a GPU kernel binds each buffer where it is).
  b.create<scf::ForOp>(
      c0, cIndex(b, passes), cIndex(b, 2), ValueRange{},
      [&](OpBuilder &ob, Location loc, Value pass, ValueRange) {
        Builder b(loc, ob);
        mergePass(b, keys, tmp, pass);
        Value next = addI(b, pass, c1);
        b.create<scf::IfOp>(
            cmpI(b, arith::CmpIPredicate::slt, next, cIndex(b, passes)),
            [&](OpBuilder &ob, Location loc) {
              Builder b(loc, ob);
              mergePass(b, tmp, keys, next);
              b.create<scf::YieldOp>();
            });
        b.create<scf::YieldOp>();
      });
  return passes % 2 ? tmp : keys;
}

} // namespace ddep

namespace {

using namespace red;
using namespace ddep;
using P = arith::CmpIPredicate;

/// Whether result `i` exists (an unused optional output has type none and
/// no buffer).
bool hasResult(PortableOp &p, unsigned i) {
  return i < p.results.size() && p.results[i] &&
         !isa<NoneType>(p.op->getResult(i).getType());
}

LogicalResult checkIntOrFloat(Operation *op, Value v) {
  if (isa<IntegerType, FloatType>(elemOf(v).storage))
    return success();
  return op->emitError("unsupported element type ")
         << cast<ShapedType>(v.getType()).getElementType();
}

/// Dim `dim` of `shape` replaced by `extent`, the others static.
SmallVector<Value> extentsWith(Builder &b, ArrayRef<int64_t> shape, int64_t dim,
                               Value extent) {
  SmallVector<Value> dims;
  for (auto [d, size] : llvm::enumerate(shape))
    dims.push_back(static_cast<int64_t>(d) == dim ? extent : cIndex(b, size));
  return dims;
}

//===----------------------------------------------------------------------===//
// graph.nonzero
//===----------------------------------------------------------------------===//

// Y[d, j]: coordinate d of the j-th non-zero element of X in row-major
// order; floats compare with 0 (-0.0 is zero, nan is not), other types are
// non-zero when any bit is set. A scalar gives [0, count].

LogicalResult lowerNonZero(PortableOp &p) {
  Operation *op = p.op;
  Value xv = op->getOperand(0);
  if (failed(checkIntOrFloat(op, xv)))
    return failure();
  Elem e = elemOf(xv);
  ArrayRef<int64_t> shape = shapeOf(xv);
  ArrayRef<int64_t> yShape = shapeOf(op->getResult(0));
  int64_t rank = shape.size();
  if (yShape.size() != 2 || yShape[0] != rank)
    return op->emitError("result shape does not match the input's rank");
  int64_t bound = yShape[1];

  Builder b(p.loc, p.b);
  shapeBuffers(b, p);
  Value x = p.operands[0], y = p.results[0];
  zeroFill(b, y);
  Value count =
      loops(b, shape, {cIndex(b, 0)},
            [&](Builder &b, ValueRange ivs, ValueRange acc) {
              Value v = load(b, x, ivs);
              Value hit = e.isFloat ? b.create<arith::CmpFOp>(
                                           arith::CmpFPredicate::UNE,
                                           toCompute(b, v, e),
                                           cFloat(b, computeFloatType(e), 0.0))
                                          .getResult()
                                    : cmpI(b, P::ne, v, cInt(b, e.storage, 0));
              Value fits = cmpI(b, P::ult, acc[0], cIndex(b, bound));
              ifThenElse(
                  b, b.create<arith::AndIOp>(hit, fits),
                  [&](Builder &b) {
                    for (int64_t d = 0; d < rank; ++d)
                      store(b, asI64(b, ivs[d]), y, {cIndex(b, d), acc[0]});
                  },
                  nullptr);
              return SmallVector<Value>{plusIf(b, acc[0], hit)};
            })[0];
  storeExtents(b, p, 0, {cIndex(b, rank), count});
  if (bound < numElements(shape))
    p.failIf(cmpI(b, P::ugt, count, cIndex(b, bound)),
             "more non-zero elements than the " + std::to_string(bound) +
                 " of its result shape");
  return success();
}

/// The dims before, along and after the op's `axis` attribute (normalised
/// into *axis), or, without one, the whole tensor as one axis (axis 0).
LogicalResult splitAtOptionalAxis(Operation *op, ArrayRef<int64_t> shape,
                                  int64_t &outer, int64_t &len, int64_t &inner,
                                  int64_t &axis) {
  outer = 1, len = numElements(shape), inner = 1, axis = 0;
  auto a = op->getAttrOfType<IntegerAttr>("axis");
  if (!a)
    return success();
  FailureOr<int64_t> normalized =
      normalizeAxis(op, a.getInt(), static_cast<int64_t>(shape.size()));
  if (failed(normalized) || shape.empty())
    return op->emitError("axis is out of range");
  axis = *normalized;
  splitAtAxis(shape, axis, outer, len, inner);
  return success();
}

//===----------------------------------------------------------------------===//
// graph.compress
//===----------------------------------------------------------------------===//

// The slices along the axis (the elements of the flattened input without
// one) whose condition entry is true, in order. Entries beyond the dim are
// an error when true (the reference's shape check) and ignored otherwise.

LogicalResult lowerCompress(PortableOp &p) {
  Operation *op = p.op;
  Value xv = op->getOperand(0), cv = op->getOperand(1);
  if (shapeOf(cv).size() != 1 || elemOf(cv).width != 1 || elemOf(cv).isFloat)
    return op->emitError("condition must be a 1-D bool tensor");
  ArrayRef<int64_t> shape = shapeOf(xv);
  int64_t outer, dim, inner, axis;
  if (failed(splitAtOptionalAxis(op, shape, outer, dim, inner, axis)))
    return failure();
  ArrayRef<int64_t> yShape = shapeOf(op->getResult(0));
  int64_t conditions = shapeOf(cv)[0];
  int64_t n = std::min(dim, conditions), bound = yShape[axis];

  Builder b(p.loc, p.b);
  shapeBuffers(b, p);
  Value x = view(b, p.operands[0], {outer, dim, inner});
  Value y = view(b, p.results[0], {outer, bound, inner});
  Value cond = p.operands[1];
  nn::Scratch scratch(b, b.getLoc());
  // from[j]: the input index of the j-th selected slice.
  Value from = scratch.alloc({bound}, b.getI64Type());
  Value c0 = cIndex(b, 0);
  Value count = loop(
      b, c0, cIndex(b, n), {c0}, [&](Builder &b, ValueRange i, ValueRange acc) {
        Value sel = load(b, cond, i);
        Value fits = cmpI(b, P::ult, acc[0], cIndex(b, bound));
        ifThenElse(
            b, b.create<arith::AndIOp>(sel, fits),
            [&](Builder &b) { store(b, asI64(b, i[0]), from, {acc[0]}); },
            nullptr);
        return SmallVector<Value>{plusIf(b, acc[0], sel)};
      })[0];
  if (conditions > dim) {
    Value beyond = loop(b, cIndex(b, dim), cIndex(b, conditions),
                        {cInt(b, b.getI1Type(), 0)},
                        [&](Builder &b, ValueRange i, ValueRange acc) {
                          return SmallVector<Value>{
                              b.create<arith::OrIOp>(acc[0], load(b, cond, i))};
                        })[0];
    p.failIf(beyond, "condition selects an index beyond the dimension of "
                     "size " +
                         std::to_string(dim));
  }
  Value zero = dm::zeroOf(b, b.getLoc(), elemOf(xv).storage);
  parallelLoops(b, {outer, bound, inner}, [&](Builder &b, ValueRange ivs) {
    ifThenElse(
        b, cmpI(b, P::ult, ivs[1], count),
        [&](Builder &b) {
          Value i = toIndex(b, load(b, from, {ivs[1]}));
          store(b, load(b, x, {ivs[0], i, ivs[2]}), y, ivs);
        },
        [&](Builder &b) { store(b, zero, y, ivs); });
  });
  storeExtents(b, p, 0, extentsWith(b, yShape, axis, count));
  if (bound < n)
    p.failIf(cmpI(b, P::ugt, count, cIndex(b, bound)),
             "more selected slices than the " + std::to_string(bound) +
                 " of its result shape");
  return success();
}

//===----------------------------------------------------------------------===//
// graph.unique
//===----------------------------------------------------------------------===//

// As the reference: the slices (elements, or subtensors along the axis,
// compared element by element in the order of the other dims) are sorted
// stably, runs of equal slices form the unique ones, each represented by
// its first occurrence. Keys compare as the reference's keyLess: integers
// by their signedness, floats with nan above every number (all nans are
// equal). Sorted output keeps the runs in order; otherwise they go by
// first occurrence.

/// keyLess(u, v) on two elements of `e`.
Value keyLess(Builder &b, Value u, Value v, const Elem &e) {
  if (!e.isFloat)
    return cmpI(b, e.isUnsigned ? P::ult : P::slt, u, v);
  u = toCompute(b, u, e);
  v = toCompute(b, v, e);
  Value nanAbove = b.create<arith::AndIOp>(
      isNan(b, v),
      b.create<arith::XOrIOp>(isNan(b, u), cInt(b, b.getI1Type(), 1)));
  return b.create<arith::OrIOp>(
      nanAbove, b.create<arith::CmpFOp>(arith::CmpFPredicate::OLT, u, v));
}

LogicalResult lowerUnique(PortableOp &p) {
  Operation *op = p.op;
  Value xv = op->getOperand(0);
  if (failed(checkIntOrFloat(op, xv)))
    return failure();
  Elem e = elemOf(xv);
  ArrayRef<int64_t> shape = shapeOf(xv);
  int64_t outer, n, inner, axis;
  if (failed(splitAtOptionalAxis(op, shape, outer, n, inner, axis)))
    return failure();
  bool sorted = intAttr(op, "sorted", 1) != 0;
  ArrayRef<int64_t> yShape = shapeOf(op->getResult(0));

  Builder b(p.loc, p.b);
  shapeBuffers(b, p);
  Value x = view(b, p.operands[0], {outer, n, inner});
  Type i64 = b.getI64Type();
  Value c0 = cIndex(b, 0), cn = cIndex(b, n);
  Value no = cInt(b, b.getI1Type(), 0);
  // Slice s before slice t: the first differing element decides.
  auto sliceLess = [&](Builder &b, Value s, Value t) -> Value {
    if (outer * inner == 1)
      return keyLess(b, load(b, x, {c0, s, c0}), load(b, x, {c0, t, c0}), e);
    SmallVector<Value> r =
        loops(b, {outer, inner}, {no, no},
              [&](Builder &b, ValueRange ok, ValueRange acc) {
                Value u = load(b, x, {ok[0], s, ok[1]});
                Value v = load(b, x, {ok[0], t, ok[1]});
                Value lt = keyLess(b, u, v, e), gt = keyLess(b, v, u, e);
                Value less = b.create<arith::SelectOp>(acc[0], acc[1], lt);
                Value decided = b.create<arith::OrIOp>(
                    acc[0], b.create<arith::OrIOp>(lt, gt));
                return SmallVector<Value>{decided, less};
              });
    return r[1];
  };

  nn::Scratch scratch(b, b.getLoc());
  auto array = [&] { return scratch.alloc({n}, i64); };
  Value order = array(), tmp = array(), runOf = array(), runFirst = array(),
        counts = array();
  parallelLoops(b, {n}, [&](Builder &b, ValueRange i) {
    store(b, asI64(b, i[0]), order, i);
    store(b, cInt(b, i64, 0), counts, i);
  });
  order = mergeSort(b, order, tmp, cn, n, [&](Builder &b, Value s, Value t) {
    return sliceLess(b, toIndex(b, s), toIndex(b, t));
  });
  // Runs of equal slices in sorted order: runFirst[r] is run r's first
  // occurrence (the sort is stable), runOf[s] the run of slice s.
  Value runs =
      loop(b, c0, cn, {c0, c0}, [&](Builder &b, ValueRange i, ValueRange acc) {
        Value s = toIndex(b, load(b, order, i));
        Value fresh = b.create<arith::OrIOp>(cmpI(b, P::eq, i[0], c0),
                                             sliceLess(b, acc[1], s));
        ifThenElse(
            b, fresh,
            [&](Builder &b) { store(b, asI64(b, s), runFirst, {acc[0]}); },
            nullptr);
        Value u = plusIf(b, acc[0], fresh);
        store(b, asI64(b, b.create<arith::SubIOp>(u, cIndex(b, 1))), runOf,
              {s});
        return SmallVector<Value>{u, s};
      })[0];
  // Output positions of the runs: the runs themselves when sorted, else
  // numbered as their first occurrences come in the input.
  Value first = runFirst, pos;
  if (!sorted) {
    first = array();
    pos = array();
  }
  Value inverse = hasResult(p, 2) ? view(b, p.results[2], {n}) : Value();
  loop(b, c0, cn, {c0}, [&](Builder &b, ValueRange i, ValueRange acc) {
    Value r = toIndex(b, load(b, runOf, i));
    Value g = r, next = acc[0];
    if (!sorted) {
      Value isFirst = cmpI(b, P::eq, toIndex(b, load(b, runFirst, {r})), i[0]);
      ifThenElse(
          b, isFirst,
          [&](Builder &b) {
            store(b, asI64(b, acc[0]), pos, {r});
            store(b, asI64(b, i[0]), first, {acc[0]});
          },
          nullptr);
      next = plusIf(b, acc[0], isFirst);
      g = toIndex(b, load(b, pos, {r}));
    }
    if (inverse)
      store(b, asI64(b, g), inverse, i);
    store(b, b.create<arith::AddIOp>(load(b, counts, {g}), cInt(b, i64, 1)),
          counts, {g});
    return SmallVector<Value>{next};
  });

  // Result k over its bound, loop dim g numbering the unique slices: the
  // unique ones, then zeros.
  auto write = [&](unsigned k, Value buf, ArrayRef<int64_t> loopShape,
                   unsigned g,
                   function_ref<Value(Builder &, ValueRange)> element) {
    int64_t bound = loopShape[g];
    Value zero = dm::zeroOf(b, b.getLoc(),
                            cast<MemRefType>(buf.getType()).getElementType());
    parallelLoops(b, loopShape, [&](Builder &b, ValueRange ivs) {
      ifThenElse(
          b, cmpI(b, P::ult, ivs[g], runs),
          [&](Builder &b) { store(b, element(b, ivs), buf, ivs); },
          [&](Builder &b) { store(b, zero, buf, ivs); });
    });
    storeExtents(
        b, p, k,
        extentsWith(b, shapeOf(op->getResult(k)), k == 0 ? axis : 0, runs));
    if (bound < n)
      p.failIf(cmpI(b, P::ugt, runs, cIndex(b, bound)),
               "more unique slices than the " + std::to_string(bound) +
                   " of its result shape");
  };
  SmallVector<int64_t> yLoops{outer, yShape[axis], inner};
  write(0, view(b, p.results[0], yLoops), yLoops, 1,
        [&](Builder &b, ValueRange ivs) {
          Value s = toIndex(b, load(b, first, {ivs[1]}));
          return load(b, x, {ivs[0], s, ivs[2]});
        });
  for (unsigned k : {1u, 3u})
    if (hasResult(p, k))
      write(k, p.results[k], shapeOf(op->getResult(k)), 0,
            [&](Builder &b, ValueRange ivs) {
              return load(b, k == 1 ? first : counts, ivs);
            });
  return success();
}

} // namespace

void registerPortableDataDependent(PortableRegistry &registry) {
  registry["graph.nonzero"] = lowerNonZero;
  registry["graph.compress"] = lowerCompress;
  registry["graph.unique"] = lowerUnique;
  ddep::registerNonMaxSuppression(registry);
}

} // namespace mlcc::portable
