//===- Sampling.cpp - graph.grid_sample and graph.roi_align --------------===//
//
// Ops that sample a feature map at fractional locations computed from data
// (the grid, the rois), and the determinant (Determinant.cpp). Each computes
// what its reference kernel (compiler/Reference/Kernels/Sampling.cpp,
// Misc.cpp) does, in f64 and in the same order of operations, rounding to
// the element type once. The output points are independent: one
// scf.parallel nest over them, each point resolving its source coordinates
// and weights once before it reads the input.
//
//===----------------------------------------------------------------------===//

#include "NNUtils.h"
#include "ParallelLoops.h"
#include "ReductionsSupport.h"

#include "GraphDialect.h"

using namespace mlir;

namespace mlcc::portable {

void registerDetLowering(PortableRegistry &registry); // Determinant.cpp

namespace {

using namespace red;

/// An index value as f64.
Value indexToF64(Builder &b, Value i) {
  Value v = b.create<arith::IndexCastOp>(b.getI64Type(), i);
  return b.create<arith::SIToFPOp>(b.getF64Type(), v);
}

//===----------------------------------------------------------------------===//
// graph.grid_sample
//===----------------------------------------------------------------------===//

enum class Padding { Zeros, Border, Reflection };
enum class Mode { Bilinear, Nearest, Bicubic };

/// One pixel a sample reads: in range or not (then it reads 0), and its
/// coordinates, clamped to 0 outside so that the load stays in the buffer.
struct Tap {
  Value valid, y, x;
};

/// How one grid_sample resolves coordinates (the reference's padCoord).
struct GridSampler {
  Padding padding;
  bool align;
  int64_t h, w;

  /// Grid value in [-1, 1] to a pixel coordinate.
  Value unnormalize(Builder &b, Value c, int64_t size) const {
    Value one = cF64(b, 1.0), n = cF64(b, static_cast<double>(size));
    if (align)
      return mulF(b, divF(b, addF(b, c, one), cF64(b, 2.0)),
                  cF64(b, static_cast<double>(size - 1)));
    return divF(b, subF(b, mulF(b, addF(b, c, one), n), one), cF64(b, 2.0));
  }

  static Value clip(Builder &b, Value c, int64_t size) {
    return stdMin(b, cF64(b, static_cast<double>(size - 1)),
                  stdMax(b, c, cF64(b, 0.0)));
  }

  /// Reflects c into [twiceLow / 2, twiceHigh / 2] as often as needed. The
  /// parity of floor(c / span) is taken in f64: the reference's conversion
  /// to int64 is even for every value past 2^53 as well (and for nan or
  /// inf the result is nan either way).
  static Value reflect(Builder &b, Value c, double twiceLow, double twiceHigh) {
    if (twiceLow == twiceHigh)
      return cF64(b, 0.0);
    Value mn = cF64(b, twiceLow / 2),
          span = cF64(b, (twiceHigh - twiceLow) / 2);
    c = b.create<math::AbsFOp>(subF(b, c, mn));
    Value extra = b.create<arith::RemFOp>(c, span);
    Value flips = b.create<math::FloorOp>(divF(b, c, span));
    Value even =
        cmpF(b, arith::CmpFPredicate::OEQ,
             b.create<arith::RemFOp>(flips, cF64(b, 2.0)), cF64(b, 0.0));
    return b.create<arith::SelectOp>(even, addF(b, extra, mn),
                                     addF(b, subF(b, span, extra), mn));
  }

  Value pad(Builder &b, Value c, int64_t size) const {
    if (padding == Padding::Border)
      return clip(b, c, size);
    if (padding == Padding::Reflection) {
      c = align ? reflect(b, c, 0, 2.0 * (size - 1))
                : reflect(b, c, -1, 2.0 * size - 1);
      return clip(b, c, size);
    }
    return c;
  }

  /// The pixel at integral f64 coordinates (xi, yi): range-checked before
  /// any conversion, so that far-off or nan coordinates read 0.
  Tap tap(Builder &b, Value xi, Value yi) const {
    auto inRange = [&](Value v, int64_t n) {
      return b.create<arith::AndIOp>(
          cmpF(b, arith::CmpFPredicate::OGE, v, cF64(b, 0.0)),
          cmpF(b, arith::CmpFPredicate::OLT, v,
               cF64(b, static_cast<double>(n))));
    };
    Value valid = b.create<arith::AndIOp>(inRange(xi, w), inRange(yi, h));
    auto index = [&](Value v) {
      return toIndex(b, b.create<arith::SelectOp>(valid, v, cF64(b, 0.0)));
    };
    return {valid, index(yi), index(xi)};
  }
};

LogicalResult lowerGridSample(PortableOp &p) {
  auto op = cast<graph::GridSampleOp>(p.op);
  StringRef modeName = op.getMode().value_or("bilinear");
  Mode mode;
  if (modeName == "bilinear" || modeName == "linear")
    mode = Mode::Bilinear;
  else if (modeName == "nearest")
    mode = Mode::Nearest;
  else if (modeName == "bicubic" || modeName == "cubic")
    mode = Mode::Bicubic;
  else
    return op->emitError("grid_sample: unsupported mode '") << modeName << "'";
  StringRef padName = op.getPaddingMode().value_or("zeros");
  GridSampler s;
  if (padName == "zeros")
    s.padding = Padding::Zeros;
  else if (padName == "border")
    s.padding = Padding::Border;
  else if (padName == "reflection")
    s.padding = Padding::Reflection;
  else
    return op->emitError("grid_sample: unsupported padding_mode '")
           << padName << "'";
  s.align = op.getAlignCorners().value_or(0) != 0;

  ArrayRef<int64_t> xs = shapeOf(op.getX()), gs = shapeOf(op.getGrid()),
                    ys = shapeOf(op.getY());
  if (xs.size() != 4)
    return op->emitError("grid_sample: only 4-D X (N, C, H, W) is supported");
  if (gs.size() != 4 || gs[3] != 2 || gs[0] != xs[0])
    return op->emitError("grid_sample: grid must be [N, H_out, W_out, 2]");
  if (ArrayRef<int64_t>{xs[0], xs[1], gs[1], gs[2]} != ys)
    return op->emitError("grid_sample: Y must be [N, C, H_out, W_out]");
  Elem xe = elemOf(op.getX()), ge = elemOf(op.getGrid()),
       ye = elemOf(op.getY());
  if (!ge.isFloat)
    return op->emitError("grid_sample: grid must have a float type");
  if (numElements(ys) == 0)
    return success();
  const int64_t n = xs[0], c = xs[1], ho = gs[1], wo = gs[2];
  s.h = xs[2];
  s.w = xs[3];

  Builder b(p.loc, p.b);
  shapeBuffers(b, p);
  Value x = p.operands[0], grid = p.operands[1], y = p.results[0];
  parallelLoops(b, {n, ho, wo}, [&](Builder &b, ValueRange ivs) {
    auto gridAt = [&](int64_t k) {
      Value v = load(b, grid, {ivs[0], ivs[1], ivs[2], cIndex(b, k)});
      return toF64(b, v, ge);
    };
    Value gx = s.unnormalize(b, gridAt(0), s.w);
    Value gy = s.unnormalize(b, gridAt(1), s.h);

    // The pixels this point reads and how to combine them (the reference's
    // formula and order per mode).
    SmallVector<Tap> taps;
    std::function<Value(Builder &, ArrayRef<Value>)> combine;
    Value one = cF64(b, 1.0);
    if (mode == Mode::Bicubic) {
      // Padding applies to each of the 4x4 taps, not to the coordinate.
      const double a = -0.75; // torch's bicubic coefficient
      auto nearW = [&](Value d) {
        Value t = subF(b, mulF(b, cF64(b, a + 2), d), cF64(b, a + 3));
        return addF(b, mulF(b, mulF(b, t, d), d), one);
      };
      auto farW = [&](Value d) {
        Value t = subF(b, mulF(b, cF64(b, a), d), cF64(b, 5 * a));
        t = addF(b, mulF(b, t, d), cF64(b, 8 * a));
        return subF(b, mulF(b, t, d), cF64(b, 4 * a));
      };
      auto weights = [&](Value t) {
        return SmallVector<Value>{farW(addF(b, t, one)), nearW(t),
                                  nearW(subF(b, one, t)),
                                  farW(subF(b, cF64(b, 2.0), t))};
      };
      Value x0 = b.create<math::FloorOp>(gx), y0 = b.create<math::FloorOp>(gy);
      SmallVector<Value> wx = weights(subF(b, gx, x0)),
                         wy = weights(subF(b, gy, y0));
      SmallVector<Value> tx, ty, w;
      for (int k = 0; k < 4; ++k) {
        Value dk = cF64(b, k);
        tx.push_back(b.create<math::TruncOp>(
            s.pad(b, addF(b, subF(b, x0, one), dk), s.w)));
        ty.push_back(b.create<math::TruncOp>(
            s.pad(b, addF(b, subF(b, y0, one), dk), s.h)));
      }
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          taps.push_back(s.tap(b, tx[j], ty[i]));
          w.push_back(mulF(b, wy[i], wx[j]));
        }
      combine = [w](Builder &b, ArrayRef<Value> v) {
        Value acc = cF64(b, 0.0);
        for (auto [wk, vk] : llvm::zip(w, v))
          acc = addF(b, acc, mulF(b, wk, vk));
        return acc;
      };
    } else {
      Value ix = s.pad(b, gx, s.w), iy = s.pad(b, gy, s.h);
      if (mode == Mode::Nearest) {
        taps.push_back(s.tap(b, b.create<math::RoundEvenOp>(ix),
                             b.create<math::RoundEvenOp>(iy)));
        combine = [](Builder &, ArrayRef<Value> v) { return v[0]; };
      } else {
        Value x0 = b.create<math::FloorOp>(ix),
              y0 = b.create<math::FloorOp>(iy);
        Value x1 = addF(b, x0, one), y1 = addF(b, y0, one);
        Value lx = subF(b, ix, x0), ly = subF(b, iy, y0);
        Value hx = subF(b, one, lx), hy = subF(b, one, ly);
        taps = {s.tap(b, x0, y0), s.tap(b, x1, y0), s.tap(b, x0, y1),
                s.tap(b, x1, y1)};
        combine = [=](Builder &b, ArrayRef<Value> v) {
          Value top = addF(b, mulF(b, hx, v[0]), mulF(b, lx, v[1]));
          Value bottom = addF(b, mulF(b, hx, v[2]), mulF(b, lx, v[3]));
          return addF(b, mulF(b, hy, top), mulF(b, ly, bottom));
        };
      }
    }

    parallelLoops(b, {c}, [&](Builder &b, ValueRange ch) {
      SmallVector<Value> v;
      for (const Tap &t : taps) {
        // An empty plane has no pixel to read: every tap is outside.
        if (s.h * s.w == 0) {
          v.push_back(cF64(b, 0.0));
          continue;
        }
        Value pix = toF64(b, load(b, x, {ivs[0], ch[0], t.y, t.x}), xe);
        v.push_back(b.create<arith::SelectOp>(t.valid, pix, cF64(b, 0.0)));
      }
      store(b, fromF64(b, combine(b, v), ye), y,
            {ivs[0], ch[0], ivs[1], ivs[2]});
    });
  });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.roi_align
//===----------------------------------------------------------------------===//

/// One bilinear sample of a plane (the reference's sampleAt): four pixels
/// and their weights; all weights 0 and all pixels (0, 0) when the point
/// lies more than one pixel outside the map.
struct RoiSample {
  Value y[4], x[4], w[4];
};

RoiSample roiSampleAt(Builder &b, Value yy, Value xx, int64_t h, int64_t w) {
  auto f = [&](int64_t v) { return cF64(b, static_cast<double>(v)); };
  Value outside = cmpF(b, arith::CmpFPredicate::OLT, yy, f(-1));
  outside = b.create<arith::OrIOp>(
      outside, cmpF(b, arith::CmpFPredicate::OGT, yy, f(h)));
  outside = b.create<arith::OrIOp>(
      outside, cmpF(b, arith::CmpFPredicate::OLT, xx, f(-1)));
  outside = b.create<arith::OrIOp>(
      outside, cmpF(b, arith::CmpFPredicate::OGT, xx, f(w)));
  // At the last row or column both neighbours are the edge pixel. The
  // reference converts yy first; yy >= size - 1 is the same test, taken
  // before the conversion so that it only ever sees [0, size - 1] (a nan,
  // which the reference cannot index with, takes the edge here).
  auto low = [&](Value &v, int64_t size) {
    v = stdMax(b, v, cF64(b, 0.0));
    Value edge = cmpF(b, arith::CmpFPredicate::UGE, v, f(size - 1));
    v = b.create<arith::SelectOp>(edge, f(size - 1), v);
    return toIndex(b, v);
  };
  Value yl = low(yy, h), xl = low(xx, w);
  auto high = [&](Value l, int64_t size) {
    return b.create<arith::MinSIOp>(b.create<arith::AddIOp>(l, cIndex(b, 1)),
                                    cIndex(b, size - 1));
  };
  Value yh = high(yl, h), xh = high(xl, w);
  Value ly = subF(b, yy, indexToF64(b, yl)),
        lx = subF(b, xx, indexToF64(b, xl));
  Value one = cF64(b, 1.0);
  Value hy = subF(b, one, ly), hx = subF(b, one, lx);
  Value ys[4] = {yl, yl, yh, yh}, xs[4] = {xl, xh, xl, xh};
  Value ws[4] = {mulF(b, hy, hx), mulF(b, hy, lx), mulF(b, ly, hx),
                 mulF(b, ly, lx)};
  RoiSample s;
  for (int k = 0; k < 4; ++k) {
    s.y[k] = b.create<arith::SelectOp>(outside, cIndex(b, 0), ys[k]);
    s.x[k] = b.create<arith::SelectOp>(outside, cIndex(b, 0), xs[k]);
    s.w[k] = b.create<arith::SelectOp>(outside, cF64(b, 0.0), ws[k]);
  }
  return s;
}

/// Samples per bin along one dim: sampling_ratio, or ceil(roi / output)
/// from the roi at run time. A count the reference's int64 conversion
/// makes <= 0 (negative sizes, nan, past 2^63) samples nothing there; 0 is
/// used for all of them (the output is 0 either way).
Value samplesPerBin(Builder &b, int64_t ratio, Value roiSize, int64_t out) {
  if (ratio > 0)
    return cIndex(b, ratio);
  Value g = b.create<math::CeilOp>(
      divF(b, roiSize, cF64(b, static_cast<double>(out))));
  Value ok = b.create<arith::AndIOp>(
      cmpF(b, arith::CmpFPredicate::OGT, g, cF64(b, 0.0)),
      cmpF(b, arith::CmpFPredicate::OLT, g, cF64(b, 0x1p63)));
  return toIndex(b, b.create<arith::SelectOp>(ok, g, cF64(b, 0.0)));
}

LogicalResult lowerRoiAlign(PortableOp &p) {
  auto op = cast<graph::RoiAlignOp>(p.op);
  ArrayRef<int64_t> xs = shapeOf(op.getX()), rs = shapeOf(op.getRois()),
                    is = shapeOf(op.getBatchIndices()), ys = shapeOf(op.getY());
  Elem xe = elemOf(op.getX()), re = elemOf(op.getRois()),
       ie = elemOf(op.getBatchIndices()), ye = elemOf(op.getY());
  if (!xe.isFloat || re.storage != xe.storage)
    return op->emitError(
        "roi_align: X and rois must be float tensors of one dtype");
  if (xs.size() != 4)
    return op->emitError("roi_align: X must be 4-D (N, C, H, W)");
  if (rs.size() != 2 || rs[1] != 4)
    return op->emitError("roi_align: rois must be [num_rois, 4]");
  if (ie.isFloat || ie.isUnsigned || is.size() != 1 || is[0] != rs[0])
    return op->emitError(
        "roi_align: batch_indices must be a signed integer [num_rois]");
  StringRef modeName = op.getMode().value_or("avg");
  if (modeName != "avg" && modeName != "max")
    return op->emitError("roi_align: unsupported mode '") << modeName << "'";
  StringRef ctm = op.getCoordinateTransformationMode().value_or("half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    return op->emitError(
               "roi_align: unsupported coordinate_transformation_mode '")
           << ctm << "'";
  const auto oh = static_cast<int64_t>(op.getOutputHeight().value_or(1));
  const auto ow = static_cast<int64_t>(op.getOutputWidth().value_or(1));
  const auto ratio = static_cast<int64_t>(op.getSamplingRatio().value_or(0));
  if (oh <= 0 || ow <= 0 || ratio < 0)
    return op->emitError("roi_align: output_height and output_width must be "
                         "positive and sampling_ratio not negative");
  const int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], r = rs[0];
  if (ArrayRef<int64_t>{r, c, oh, ow} != ys)
    return op->emitError(
        "roi_align: Y must be [num_rois, C, output_height, output_width]");
  if (numElements(ys) == 0)
    return success();
  if (h * w == 0)
    return op->emitError("roi_align: X has an empty spatial extent");
  const bool isMax = modeName == "max", halfPixel = ctm == "half_pixel";
  const double scale =
      op.getSpatialScale() ? op.getSpatialScale()->convertToFloat() : 1.0f;

  Builder b(p.loc, p.b);
  shapeBuffers(b, p);
  Value x = p.operands[0], rois = p.operands[1], idx = p.operands[2],
        y = p.results[0];
  auto batchIndex = [&](Builder &b, Value roi) {
    return toI64(b, load(b, idx, {roi}), ie);
  };
  // A batch index outside [0, N) is the caller's error (the reference
  // fails); the op then runs on the clamped index.
  Value bad =
      loops(b, {r}, {b.create<arith::ConstantIntOp>(0, 1)},
            [&](Builder &b, ValueRange ivs, ValueRange acc) {
              Value bi = batchIndex(b, ivs[0]);
              Value out = b.create<arith::OrIOp>(
                  b.create<arith::CmpIOp>(arith::CmpIPredicate::slt, bi,
                                          cInt(b, b.getI64Type(), 0)),
                  b.create<arith::CmpIOp>(arith::CmpIPredicate::sge, bi,
                                          cInt(b, b.getI64Type(), n)));
              return SmallVector<Value>{b.create<arith::OrIOp>(acc[0], out)};
            })[0];
  p.failIf(bad, "a batch_indices entry is outside [0, N)");

  parallelLoops(b, {r, c, oh, ow}, [&](Builder &b, ValueRange ivs) {
    Value roi = ivs[0], ch = ivs[1];
    Value bi = b.create<arith::MaxSIOp>(
        b.create<arith::MinSIOp>(batchIndex(b, roi),
                                 cInt(b, b.getI64Type(), n - 1)),
        cInt(b, b.getI64Type(), 0));
    bi = b.create<arith::IndexCastOp>(b.getIndexType(), bi);
    Value offset = cF64(b, halfPixel ? 0.5 : 0.0);
    auto corner = [&](int64_t k) {
      Value v = toF64(b, load(b, rois, {roi, cIndex(b, k)}), re);
      return subF(b, mulF(b, v, cF64(b, scale)), offset);
    };
    Value x1 = corner(0), y1 = corner(1), x2 = corner(2), y2 = corner(3);
    Value rw = subF(b, x2, x1), rh = subF(b, y2, y1);
    if (!halfPixel) { // legacy: rois at least one pixel large
      rw = stdMax(b, rw, cF64(b, 1.0));
      rh = stdMax(b, rh, cF64(b, 1.0));
    }
    Value binH = divF(b, rh, cF64(b, static_cast<double>(oh)));
    Value binW = divF(b, rw, cF64(b, static_cast<double>(ow)));
    Value gridH = samplesPerBin(b, ratio, rh, oh);
    Value gridW = samplesPerBin(b, ratio, rw, ow);
    Value gridHf = indexToF64(b, gridH), gridWf = indexToF64(b, gridW);
    Value y0 = addF(b, y1, mulF(b, indexToF64(b, ivs[2]), binH));
    Value x0 = addF(b, x1, mulF(b, indexToF64(b, ivs[3]), binW));
    // start + (i + 0.5) * bin / samples: the i-th sample of a bin.
    auto sampleCoord = [&](Builder &b, Value start, Value i, Value bin,
                           Value samples) {
      Value t = mulF(b, addF(b, indexToF64(b, i), cF64(b, 0.5)), bin);
      return addF(b, start, divF(b, t, samples));
    };

    // avg: the sum of every weighted pixel; max: the largest weighted
    // pixel of each sample, the first sample's value to begin with. The
    // accumulator is (value, no sample yet).
    auto accumulate = [&](Builder &b, Value yy, Value xx, ValueRange acc) {
      RoiSample s = roiSampleAt(b, yy, xx, h, w);
      Value sum = acc[0], v;
      for (int k = 0; k < 4; ++k) {
        Value pix = toF64(b, load(b, x, {bi, ch, s.y[k], s.x[k]}), xe);
        Value wp = mulF(b, s.w[k], pix);
        if (isMax)
          v = k == 0 ? wp : stdMax(b, v, wp);
        else
          sum = addF(b, sum, wp);
      }
      if (isMax)
        sum = b.create<arith::SelectOp>(acc[1], v, stdMax(b, acc[0], v));
      return SmallVector<Value>{sum, b.create<arith::ConstantIntOp>(0, 1)};
    };
    Value init[2] = {cF64(b, 0.0), b.create<arith::ConstantIntOp>(1, 1)};
    Value zero = cIndex(b, 0);
    SmallVector<Value> acc = loop(
        b, zero, gridH, init, [&](Builder &b, ValueRange iy, ValueRange acc) {
          Value yy = sampleCoord(b, y0, iy[0], binH, gridHf);
          return loop(b, zero, gridW, acc,
                      [&](Builder &b, ValueRange ix, ValueRange acc) {
                        Value xx = sampleCoord(b, x0, ix[0], binW, gridWf);
                        return accumulate(b, yy, xx, acc);
                      });
        });
    Value result = acc[0];
    if (!isMax) {
      // max(gridH * gridW, 1) samples.
      Value count = b.create<arith::MaxSIOp>(
          b.create<arith::MulIOp>(gridH, gridW), cIndex(b, 1));
      result = divF(b, result, indexToF64(b, count));
    }
    store(b, fromF64(b, result, ye), y, ivs);
  });
  return success();
}

} // namespace

void registerPortableSampling(PortableRegistry &registry) {
  registry["graph.grid_sample"] = lowerGridSample;
  registry["graph.roi_align"] = lowerRoiAlign;
  registerDetLowering(registry);
}

} // namespace mlcc::portable
