//===- Resize.cpp - graph.resize and graph.upsample -----------------------===//
//
// As in the reference (compiler/Reference/Kernels/Resize.cpp), each axis is
// interpolated on its own: an output index maps to a source coordinate and
// from there to a few (input index, weight) taps that depend on that output
// index only. So the lowering first fills, per resized axis, a small table
// of taps (i64 indices, f64 weights and, for tf_crop_and_resize, a flag
// "extrapolate"), the only code with divisions; then one scf.parallel over
// every output element reads the tables. An axis whose scale is known to be
// 1 (in a mode that maps x to x) has no table: its index passes through.
//
// Nearest copies one element, bit for bit, for every dtype. Linear and
// cubic follow the reference's order of operations: it resizes axis 0,
// then axis 1, ... in double, so an output element is
//   sum_k w_last[k] * (... (sum_j w_first[j] * x[..., i_j, ...]) ...),
// each sum starting from 0 and skipping zero weights, with an extrapolated
// index giving the extrapolation value at its level. The body evaluates
// exactly that nest over the resized axes only (2 taps per axis for linear,
// 4 for cubic), which gives the reference's values bit for bit without its
// intermediate tensors.
//
//===----------------------------------------------------------------------===//

#include "NNUtils.h"
#include "ParallelLoops.h"
#include "ReductionsSupport.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <optional>

using namespace mlir;

namespace mlcc::portable {
namespace {

using red::addF;
using red::Builder;
using red::cF64;
using red::cIndex;
using red::cInt;
using red::cmpF;
using red::divF;
using red::Elem;
using red::elemOf;
using red::load;
using red::mulF;
using red::shapeOf;
using red::store;
using red::subF;

enum class Mode { Nearest, Linear, Cubic };
enum class Coord {
  HalfPixel,
  PytorchHalfPixel,
  AlignCorners,
  Asymmetric,
  TfHalfPixelForNN,
  TfCropAndResize
};
enum class Rounding { PreferFloor, PreferCeil, Floor, Ceil };

/// What an op asks for, resolved at compile time.
struct Params {
  Mode mode = Mode::Nearest;
  Coord coord = Coord::HalfPixel;
  Rounding rounding = Rounding::PreferFloor;
  double cubicA = -0.75;
  bool excludeOutside = false;
  double extrapolation = 0.0;
  /// The operand holding the scales (read at run time unless constant), or
  /// -1 when the scales come from the static shapes (sizes given).
  int scalesOperand = -1;
  /// The sizes operand when it is given and not a constant (checked at run
  /// time against the result shape), else -1.
  int sizesOperand = -1;
  int roiOperand = -1;
  /// Per axis, the scale when known at compile time.
  SmallVector<std::optional<double>> knownScale;

  int64_t taps() const {
    return mode == Mode::Nearest ? 1 : mode == Mode::Linear ? 2 : 4;
  }
};

/// Absent, or without elements (opset 11 passes an empty tensor for the
/// unused one of scales and sizes).
bool isEmpty(Operation *op, int i) {
  return i < 0 || !red::hasOperand(op, i) ||
         red::numElements(shapeOf(op->getOperand(i))) == 0;
}

std::optional<SmallVector<double>> constDoubles(Value v) {
  DenseFPElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  SmallVector<double> r;
  for (APFloat x : attr.getValues<APFloat>()) {
    bool lossy;
    x.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lossy);
    r.push_back(x.convertToDouble());
  }
  return r;
}

/// Fills p.knownScale and the operands to read, from the scales operand or
/// the sizes operand (-1: the op has none), as the reference's
/// resolveSizes; constant values are checked against the result shape here.
LogicalResult resolveScales(Operation *op, int scalesIdx, int sizesIdx,
                            Params &p) {
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
  ArrayRef<int64_t> out = shapeOf(op->getResult(0));
  int64_t rank = in.size();
  if (static_cast<int64_t>(out.size()) != rank)
    return op->emitError("the result has rank ")
           << out.size() << ", the input " << rank;
  bool haveScales = !isEmpty(op, scalesIdx);
  bool haveSizes = !isEmpty(op, sizesIdx);
  if (haveScales == haveSizes)
    return op->emitError(haveScales ? "scales and sizes are both given"
                                    : "one of scales and sizes is required");
  Value v = op->getOperand(haveScales ? scalesIdx : sizesIdx);
  const char *what = haveScales ? "scales" : "sizes";
  ArrayRef<int64_t> vs = shapeOf(v);
  if (vs.size() != 1 || vs[0] != rank)
    return op->emitError() << what << " must have one element per input axis ("
                           << rank << ")";
  p.knownScale.assign(rank, std::nullopt);
  for (int64_t a = 0; a < rank; ++a)
    if (in[a] == 0 && out[a] > 0)
      return op->emitError("cannot resize axis ")
             << a << " of length 0 to " << out[a];
  if (haveScales) {
    if (!elemOf(v).isFloat)
      return op->emitError("scales must be a float tensor");
    p.scalesOperand = scalesIdx;
    if (std::optional<SmallVector<double>> s = constDoubles(v))
      for (int64_t a = 0; a < rank; ++a) {
        double len = std::floor(static_cast<double>(in[a]) * (*s)[a]);
        if (!((*s)[a] > 0) || len != static_cast<double>(out[a]))
          return op->emitError("scales[")
                 << a << "] = " << (*s)[a] << " does not give the result's "
                 << "length " << out[a] << " from " << in[a];
        p.knownScale[a] = (*s)[a];
      }
    return success();
  }
  auto sizesType = dyn_cast<IntegerType>(elemOf(v).storage);
  if (!sizesType || sizesType.getWidth() != 64)
    return op->emitError("sizes must be an i64 tensor");
  if (std::optional<SmallVector<int64_t>> s = red::constInts(v)) {
    if (ArrayRef<int64_t>(*s) != out)
      return op->emitError("sizes do not match the result shape");
  } else {
    p.sizesOperand = sizesIdx;
  }
  for (int64_t a = 0; a < rank; ++a)
    p.knownScale[a] =
        in[a] > 0 ? static_cast<double>(out[a]) / static_cast<double>(in[a])
                  : 0.0;
  return success();
}

// graph.resize: (X, roi, scales, sizes).
LogicalResult resolveResize(Operation *op, Params &p) {
  std::string mode = nn::stringAttr(op, "mode", "nearest");
  std::string coord =
      nn::stringAttr(op, "coordinate_transformation_mode", "half_pixel");
  std::string nearest =
      nn::stringAttr(op, "nearest_mode", "round_prefer_floor");
  auto m = llvm::StringSwitch<std::optional<Mode>>(mode)
               .Case("nearest", Mode::Nearest)
               .Case("linear", Mode::Linear)
               .Case("cubic", Mode::Cubic)
               .Default(std::nullopt);
  auto c = llvm::StringSwitch<std::optional<Coord>>(coord)
               .Case("half_pixel", Coord::HalfPixel)
               .Case("pytorch_half_pixel", Coord::PytorchHalfPixel)
               .Case("align_corners", Coord::AlignCorners)
               .Case("asymmetric", Coord::Asymmetric)
               .Case("tf_half_pixel_for_nn", Coord::TfHalfPixelForNN)
               .Case("tf_crop_and_resize", Coord::TfCropAndResize)
               .Default(std::nullopt);
  auto r = llvm::StringSwitch<std::optional<Rounding>>(nearest)
               .Case("round_prefer_floor", Rounding::PreferFloor)
               .Case("round_prefer_ceil", Rounding::PreferCeil)
               .Case("floor", Rounding::Floor)
               .Case("ceil", Rounding::Ceil)
               .Default(std::nullopt);
  if (!m)
    return op->emitError("unsupported mode '") << mode << "'";
  if (!c)
    return op->emitError("unsupported coordinate_transformation_mode '")
           << coord << "'";
  if (!r)
    return op->emitError("unsupported nearest_mode '") << nearest << "'";
  // Opset 18/19 additions the reference does not implement.
  if (red::intAttr(op, "antialias", 0) != 0)
    return op->emitError("antialias is not supported");
  if (nn::stringAttr(op, "keep_aspect_ratio_policy", "stretch") != "stretch")
    return op->emitError("keep_aspect_ratio_policy is not supported");
  if (op->hasAttr("axes"))
    return op->emitError("the axes attribute is not supported");
  p.mode = *m;
  p.coord = *c;
  p.rounding = *r;
  p.cubicA = red::floatAttr(op, "cubic_coeff_a", -0.75f);
  p.excludeOutside = red::intAttr(op, "exclude_outside", 0) != 0;
  p.extrapolation = red::floatAttr(op, "extrapolation_value", 0.0f);
  if (failed(resolveScales(op, 2, 3, p)))
    return failure();
  if (p.coord == Coord::TfCropAndResize) {
    if (isEmpty(op, 1))
      return op->emitError("tf_crop_and_resize needs roi");
    Value roi = op->getOperand(1);
    int64_t rank = shapeOf(op->getOperand(0)).size();
    if (shapeOf(roi).size() != 1 || shapeOf(roi)[0] != 2 * rank)
      return op->emitError("roi must have ") << 2 * rank << " elements";
    if (!elemOf(roi).isFloat)
      return op->emitError("roi must be a float tensor");
    p.roiOperand = 1;
  }
  return success();
}

// graph.upsample (opset 7-10): a resize with asymmetric coordinates whose
// nearest mode takes the floor; the importer turns opset 7's scales
// attribute into operand 1.
LogicalResult resolveUpsample(Operation *op, Params &p) {
  std::string mode = nn::stringAttr(op, "mode", "nearest");
  if (mode == "nearest")
    p.mode = Mode::Nearest;
  else if (mode == "linear" || mode == "bilinear" || mode == "trilinear")
    p.mode = Mode::Linear;
  else
    return op->emitError("unsupported mode '") << mode << "'";
  p.coord = Coord::Asymmetric;
  p.rounding = Rounding::Floor;
  return resolveScales(op, 1, -1, p);
}

/// Whether the coordinate formula gives x on an axis of unchanged length
/// with scale 1 (the reference then finds the axis to be an identity).
bool unitScaleKeepsIndex(const Params &p, int64_t inLen, int64_t outLen) {
  bool identityFormula =
      p.coord == Coord::HalfPixel || p.coord == Coord::PytorchHalfPixel ||
      p.coord == Coord::AlignCorners || p.coord == Coord::Asymmetric;
  return identityFormula && inLen == outLen;
}

//===----------------------------------------------------------------------===//
// Per-axis tap tables
//===----------------------------------------------------------------------===//

/// The taps of one resized axis: index [out, taps] (i64), weight
/// [out, taps] (f64, none for nearest), outside [out] (i8, only for
/// tf_crop_and_resize).
struct AxisTable {
  int64_t axis;
  Value index, weight, outside;
};

Value select(Builder &b, Value c, Value x, Value y) {
  return b.create<arith::SelectOp>(c, x, y);
}

/// The source coordinate of output coordinate `x` (f64), the reference's
/// sourceCoord: `resized` is the resized length of its formulas, `start`
/// and `end` the axis' roi (tf_crop_and_resize only).
Value sourceCoord(Builder &b, Coord coord, Value x, Value scale, Value resized,
                  int64_t inLen, Value start, Value end) {
  Value half = cF64(b, 0.5), one = cF64(b, 1.0), zero = cF64(b, 0.0);
  Value inLast = cF64(b, static_cast<double>(inLen - 1));
  using P = arith::CmpFPredicate;
  switch (coord) {
  case Coord::HalfPixel:
    return subF(b, divF(b, addF(b, x, half), scale), half);
  case Coord::PytorchHalfPixel:
    return select(b, cmpF(b, P::OGT, resized, one),
                  subF(b, divF(b, addF(b, x, half), scale), half), zero);
  case Coord::AlignCorners:
    return select(b, cmpF(b, P::OEQ, resized, one), zero,
                  divF(b, mulF(b, x, inLast), subF(b, resized, one)));
  case Coord::Asymmetric:
    return divF(b, x, scale);
  case Coord::TfHalfPixelForNN:
    return divF(b, addF(b, x, half), scale);
  case Coord::TfCropAndResize: {
    Value centre = mulF(b, mulF(b, half, addF(b, start, end)), inLast);
    Value step = divF(b, mulF(b, mulF(b, x, subF(b, end, start)), inLast),
                      subF(b, resized, one));
    return select(b, cmpF(b, P::OEQ, resized, one), centre,
                  addF(b, mulF(b, start, inLast), step));
  }
  }
  return x;
}

/// The 1-D weights of the taps at b-1..b+2 for the fraction r (Keys' cubic
/// convolution with coefficient a), in the reference's operation order.
SmallVector<Value> cubicWeights(Builder &b, double a, Value r) {
  Value one = cF64(b, 1.0), two = cF64(b, 2.0);
  auto far = [&](Value d) { // 1 < d < 2
    Value t = subF(b, mulF(b, cF64(b, a), d), cF64(b, 5 * a));
    t = addF(b, mulF(b, t, d), cF64(b, 8 * a));
    return subF(b, mulF(b, t, d), cF64(b, 4 * a));
  };
  auto near = [&](Value d) { // d <= 1
    Value t = subF(b, mulF(b, cF64(b, a + 2), d), cF64(b, a + 3));
    return addF(b, mulF(b, mulF(b, t, d), d), one);
  };
  return {far(addF(b, r, one)), near(r), near(subF(b, one, r)),
          far(subF(b, two, r))};
}

AxisTable allocTable(Builder &b, nn::Scratch &scratch, const Params &p,
                     int64_t a, int64_t outLen) {
  AxisTable t{a, scratch.alloc({outLen, p.taps()}, b.getI64Type()), Value(),
              Value()};
  if (p.mode != Mode::Nearest)
    t.weight = scratch.alloc({outLen, p.taps()}, b.getF64Type());
  if (p.coord == Coord::TfCropAndResize)
    t.outside = scratch.alloc({outLen}, b.getI8Type());
  return t;
}

/// Emits the loop filling table `t` for the scale `scale` (f64).
void fillTable(Builder &b, const AxisTable &t, const Params &p, int64_t inLen,
               int64_t outLen, Value scale, Value roi, const Elem &roiElem,
               int64_t rank) {
  using P = arith::CmpFPredicate;
  int64_t n = p.taps(), a = t.axis;
  Type i64 = b.getI64Type(), f64 = b.getF64Type();

  // The resized length of the formulas: the output length with sizes,
  // else scale * inLen (the ONNX reference uses it unfloored).
  Value resized = p.scalesOperand < 0
                      ? cF64(b, static_cast<double>(outLen))
                      : mulF(b, scale, cF64(b, static_cast<double>(inLen)));
  Value start, end;
  if (roi) {
    start = red::toF64(b, load(b, roi, {cIndex(b, a)}), roiElem);
    end = red::toF64(b, load(b, roi, {cIndex(b, rank + a)}), roiElem);
  }
  parallelLoops(b, {outLen}, [&](Builder &b, ValueRange ivs) {
    Value o = ivs[0];
    Value xo =
        b.create<arith::SIToFPOp>(f64, b.create<arith::IndexCastOp>(i64, o));
    Value x = sourceCoord(b, p.coord, xo, scale, resized, inLen, start, end);
    Value inLast = cF64(b, static_cast<double>(inLen - 1));
    if (t.outside) {
      // Outside [0, inLen - 1] (or nan): the extrapolation value.
      Value out = b.create<arith::OrIOp>(cmpF(b, P::ULT, x, cF64(b, 0.0)),
                                         cmpF(b, P::UGT, x, inLast));
      store(b, b.create<arith::ExtUIOp>(b.getI8Type(), out), t.outside, {o});
      x = select(b, out, cF64(b, 0.0), x);
    }
    // Valid scales keep x inside (-1, inLen); a wrong run-time scale (which
    // failIf reports, though the code still runs) must not make the index
    // conversion undefined.
    x = b.create<arith::MinNumFOp>(b.create<arith::MaxNumFOp>(x, cF64(b, -1.0)),
                                   cF64(b, static_cast<double>(inLen)));
    Value base = b.create<math::FloorOp>(x);
    Value r = subF(b, x, base);
    Value bi = b.create<arith::FPToSIOp>(i64, base);
    auto plus = [&](int64_t k) {
      return k == 0 ? bi : b.create<arith::AddIOp>(bi, cInt(b, i64, k));
    };
    SmallVector<Value> idx, w;
    switch (p.mode) {
    case Mode::Nearest: {
      Value up;
      switch (p.rounding) {
      case Rounding::Floor:
        break;
      case Rounding::Ceil:
        up = cmpF(b, P::ONE, r, cF64(b, 0.0));
        break;
      case Rounding::PreferFloor:
        up = cmpF(b, P::OGT, r, cF64(b, 0.5));
        break;
      case Rounding::PreferCeil:
        up = cmpF(b, P::OGE, r, cF64(b, 0.5));
        break;
      }
      idx.push_back(
          up ? b.create<arith::AddIOp>(bi, b.create<arith::ExtUIOp>(i64, up))
             : bi);
      break;
    }
    case Mode::Linear:
      idx = {bi, plus(1)};
      w = {subF(b, cF64(b, 1.0), r), r};
      break;
    case Mode::Cubic:
      idx = {plus(-1), bi, plus(1), plus(2)};
      w = cubicWeights(b, p.cubicA, r);
      break;
    }
    Value zero = cInt(b, i64, 0), last = cInt(b, i64, inLen - 1);
    if (p.excludeOutside && n > 1) {
      // Taps outside the input get weight 0; the others are renormalised.
      Value sum = cF64(b, 0.0);
      for (int64_t k = 0; k < n; ++k) {
        Value inside = b.create<arith::AndIOp>(
            b.create<arith::CmpIOp>(arith::CmpIPredicate::sge, idx[k], zero),
            b.create<arith::CmpIOp>(arith::CmpIPredicate::sle, idx[k], last));
        w[k] = select(b, inside, w[k], cF64(b, 0.0));
        sum = addF(b, sum, w[k]);
      }
      Value nonzero = cmpF(b, P::UNE, sum, cF64(b, 0.0));
      for (int64_t k = 0; k < n; ++k)
        w[k] = select(b, nonzero, divF(b, w[k], sum), w[k]);
    }
    for (int64_t k = 0; k < n; ++k) {
      Value i = b.create<arith::MinSIOp>(b.create<arith::MaxSIOp>(idx[k], zero),
                                         last);
      store(b, i, t.index, {o, cIndex(b, k)});
      if (t.weight)
        store(b, w[k], t.weight, {o, cIndex(b, k)});
    }
  });
}

//===----------------------------------------------------------------------===//
// The lowering
//===----------------------------------------------------------------------===//

/// The taps of one resized axis at one output index, loaded from its table.
struct Taps {
  int64_t axis;
  SmallVector<Value> index, weight;
  SmallVector<Value> zero; // weight == 0: the reference skips the tap
  Value outside;           // i1, or null
};

Taps loadTaps(Builder &b, const AxisTable &t, int64_t n, Value o) {
  Taps taps{t.axis, {}, {}, {}, Value()};
  for (int64_t k = 0; k < n; ++k) {
    Value i = load(b, t.index, {o, cIndex(b, k)});
    taps.index.push_back(b.create<arith::IndexCastOp>(b.getIndexType(), i));
    if (!t.weight)
      continue;
    Value w = load(b, t.weight, {o, cIndex(b, k)});
    taps.weight.push_back(w);
    taps.zero.push_back(cmpF(b, arith::CmpFPredicate::OEQ, w, cF64(b, 0.0)));
  }
  if (t.outside)
    taps.outside =
        b.create<arith::TruncIOp>(b.getI1Type(), load(b, t.outside, {o}));
  return taps;
}

/// Emits the loops writing every element of `y` from `x` and the tables of
/// the resized axes (in axis order): a parallel nest over the output rows,
/// which loads the taps of every axis but the last, around a parallel loop
/// along the row, which loads the last axis' taps (loads the compiler
/// could not hoist itself, as it cannot tell the tables from the output).
void emitOutput(Builder &b, const Params &prm, const Elem &e, Value x, Value y,
                ArrayRef<int64_t> out, ArrayRef<AxisTable> tables) {
  int64_t n = prm.taps(), last = static_cast<int64_t>(out.size()) - 1;
  Value extrapolation = cF64(b, prm.extrapolation);
  Value extrapolated =
      prm.mode == Mode::Nearest ? red::fromF64(b, extrapolation, e) : Value();
  parallelLoops(b, out.drop_back(), [&](Builder &b, ValueRange rowIvs) {
    SmallVector<Taps> rowTaps;
    for (const AxisTable &t : tables)
      if (t.axis < last)
        rowTaps.push_back(loadTaps(b, t, n, rowIvs[t.axis]));
    parallelLoops(b, out.take_back(), [&](Builder &b, ValueRange lastIv) {
      SmallVector<Value> ivs(rowIvs.begin(), rowIvs.end());
      ivs.push_back(lastIv[0]);
      SmallVector<Taps> taps = rowTaps;
      if (!tables.empty() && tables.back().axis == last)
        taps.push_back(loadTaps(b, tables.back(), n, lastIv[0]));
      SmallVector<Value> idx = ivs;
      if (prm.mode == Mode::Nearest) {
        Value outside;
        for (const Taps &t : taps) {
          idx[t.axis] = t.index[0];
          if (t.outside)
            outside = outside ? b.create<arith::OrIOp>(outside, t.outside)
                              : t.outside;
        }
        Value v = load(b, x, idx);
        if (outside)
          v = select(b, outside, extrapolated, v);
        store(b, v, y, ivs);
        return;
      }
      // The sum over the taps of taps[level], the earlier resized axes
      // nested inside (the reference resizes axis 0 first).
      std::function<Value(int)> sum = [&](int level) -> Value {
        if (level < 0)
          return red::toF64(b, load(b, x, idx), e);
        const Taps &t = taps[level];
        Value acc = cF64(b, 0.0);
        for (int64_t k = 0; k < n; ++k) {
          idx[t.axis] = t.index[k];
          Value term = addF(b, acc, mulF(b, t.weight[k], sum(level - 1)));
          acc = select(b, t.zero[k], acc, term);
        }
        if (t.outside)
          acc = select(b, t.outside, extrapolation, acc);
        return acc;
      };
      Value v = sum(static_cast<int>(taps.size()) - 1);
      store(b, red::fromF64(b, v, e), y, ivs);
    });
  });
}

/// Emits the run-time checks of scales or sizes read from operands against
/// the static result shape.
void checkShape(Builder &b, PortableOp &p, const Params &prm,
                ArrayRef<Value> scale) {
  ArrayRef<int64_t> in = shapeOf(p.op->getOperand(0));
  ArrayRef<int64_t> out = shapeOf(p.op->getResult(0));
  Value bad = b.create<arith::ConstantIntOp>(0, 1);
  auto orInto = [&](Value c) { bad = b.create<arith::OrIOp>(bad, c); };
  if (prm.sizesOperand >= 0) {
    Value sizes = p.operands[prm.sizesOperand];
    for (size_t a = 0; a < out.size(); ++a)
      orInto(b.create<arith::CmpIOp>(arith::CmpIPredicate::ne,
                                     load(b, sizes, {cIndex(b, a)}),
                                     cInt(b, b.getI64Type(), out[a])));
    p.failIf(bad, "sizes differ from the result shape the model was "
                  "compiled for");
    return;
  }
  bool runTime = false;
  for (size_t a = 0; a < out.size(); ++a) {
    if (prm.knownScale[a])
      continue;
    runTime = true;
    Value len = b.create<math::FloorOp>(
        mulF(b, cF64(b, static_cast<double>(in[a])), scale[a]));
    orInto(cmpF(b, arith::CmpFPredicate::ULE, scale[a], cF64(b, 0.0)));
    orInto(cmpF(b, arith::CmpFPredicate::UNE, len,
                cF64(b, static_cast<double>(out[a]))));
  }
  if (runTime)
    p.failIf(bad, "scales do not give the result shape the model was "
                  "compiled for");
}

LogicalResult lowerResizeWith(PortableOp &p, const Params &prm) {
  Operation *op = p.op;
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
  ArrayRef<int64_t> out = shapeOf(op->getResult(0));
  int64_t rank = in.size();
  Elem e = elemOf(op->getOperand(0));
  if (e.storage != elemOf(op->getResult(0)).storage)
    return op->emitError("the result's element type differs from X's");
  Builder b(p.loc, p.b);
  red::shapeBuffers(b, p);
  Value x = p.operands[0], y = p.results[0];

  SmallVector<Value> scale(rank);
  for (int64_t a = 0; a < rank; ++a) {
    if (prm.knownScale[a]) {
      scale[a] = cF64(b, *prm.knownScale[a]);
      continue;
    }
    Value s = load(b, p.operands[prm.scalesOperand], {cIndex(b, a)});
    scale[a] = red::toF64(b, s, elemOf(op->getOperand(prm.scalesOperand)));
  }
  checkShape(b, p, prm, scale);
  if (red::numElements(out) == 0)
    return success();

  // Axes of scale 1 known at compile time get no table. Those whose
  // scale is read at run time but may be 1 get one, and a second copy of
  // the loops runs without it when all of them are 1 (scales given as
  // inputs, as in the ONNX node tests, mostly are on N and C).
  nn::Scratch scratch(p.b, p.loc);
  Value roi = prm.roiOperand >= 0 ? p.operands[prm.roiOperand] : Value();
  Elem roiElem = roi ? elemOf(op->getOperand(prm.roiOperand)) : Elem();
  SmallVector<AxisTable> tables, maybeUnit;
  for (int64_t a = 0; a < rank; ++a) {
    bool unitKeeps = unitScaleKeepsIndex(prm, in[a], out[a]);
    if (unitKeeps && prm.knownScale[a] && *prm.knownScale[a] == 1.0)
      continue;
    AxisTable t = allocTable(b, scratch, prm, a, out[a]);
    if (unitKeeps && !prm.knownScale[a]) {
      maybeUnit.push_back(t);
      continue;
    }
    fillTable(b, t, prm, in[a], out[a], scale[a], roi, roiElem, rank);
    tables.push_back(t);
  }
  if (maybeUnit.empty()) {
    emitOutput(b, prm, e, x, y, out, tables);
    return success();
  }
  red::dispatch(
      b, 2,
      [&](Builder &b, unsigned) {
        Value all = b.create<arith::ConstantIntOp>(1, 1);
        for (const AxisTable &t : maybeUnit)
          all = b.create<arith::AndIOp>(all, cmpF(b, arith::CmpFPredicate::OEQ,
                                                  scale[t.axis], cF64(b, 1.0)));
        return all;
      },
      [&](Builder &b, unsigned alt) {
        if (alt == 0) {
          emitOutput(b, prm, e, x, y, out, tables);
          return;
        }
        SmallVector<AxisTable> all = tables;
        for (const AxisTable &t : maybeUnit) {
          fillTable(b, t, prm, in[t.axis], out[t.axis], scale[t.axis], roi,
                    roiElem, rank);
          all.push_back(t);
        }
        llvm::sort(all, [](const AxisTable &l, const AxisTable &r) {
          return l.axis < r.axis;
        });
        emitOutput(b, prm, e, x, y, out, all);
      });
  return success();
}

LogicalResult lowerResize(PortableOp &p) {
  Params prm;
  if (failed(resolveResize(p.op, prm)))
    return failure();
  return lowerResizeWith(p, prm);
}

LogicalResult lowerUpsample(PortableOp &p) {
  Params prm;
  if (failed(resolveUpsample(p.op, prm)))
    return failure();
  return lowerResizeWith(p, prm);
}

} // namespace

void registerPortableResize(PortableRegistry &registry) {
  registry["graph.resize"] = lowerResize;
  registry["graph.upsample"] = lowerUpsample;
}

} // namespace mlcc::portable
