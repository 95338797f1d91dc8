//===- Signal.cpp - DFT, STFT, window generators, MelWeightMatrix ---------===//
//
// graph.dft, graph.stft, graph.{hann,hamming,blackman}_window and
// graph.mel_weight_matrix, computing what the reference kernels do
// (compiler/Reference/Kernels/Signal.cpp): everything in double, rounded
// once to the result type. Complex values are a trailing dim of 2 (real,
// imaginary), a trailing 1 marks real input. A DFT is the direct O(n^2) sum
// per output bin with the reference's twiddles: a table of cos and sin of
// 2 pi t / n, indexed by t = j * k mod n.
//
// Scalar operands that fix a shape (a window's size, dft_length,
// frame_length, num_mel_bins) are read at run time and checked against the
// static shapes with failIf; where one disagrees, the code goes on with safe
// values that keep every access inside the buffers.
//
//===----------------------------------------------------------------------===//

#include "GraphDialect.h"
#include "NNUtils.h"
#include "ParallelLoops.h"
#include "ReductionsSupport.h"

#include <utility>

using namespace mlir;

namespace mlcc::portable {
namespace {

using red::Builder;
using red::cF64;
using red::cIndex;
using red::Elem;
using red::elemOf;
using red::load;
using red::shapeOf;
using red::store;

constexpr double kPi = 3.14159265358979323846;

/// Checks that operand `i` of `op` holds one element (a scalar or [1]).
LogicalResult checkScalar(Operation *op, unsigned i, StringRef what) {
  if (red::numElements(shapeOf(op->getOperand(i))) != 1)
    return op->emitError() << what << " must be a scalar";
  return success();
}

/// A one-element operand as i64 (floats truncated, as the reference's
/// getInt does).
Value scalarI64(Builder &b, Value buf, Value tensor) {
  Elem e = elemOf(tensor);
  Value v = nn::loadFirst(b, b.getLoc(), buf);
  if (e.isFloat)
    return b.create<arith::FPToSIOp>(b.getI64Type(), v);
  return red::toI64(b, v, e);
}

Value scalarF64(Builder &b, Value buf, Value tensor) {
  return red::toF64(b, nn::loadFirst(b, b.getLoc(), buf), elemOf(tensor));
}

Value cI64(Builder &b, int64_t v) { return red::cInt(b, b.getI64Type(), v); }

Value cmp(Builder &b, arith::CmpIPredicate pred, Value x, Value y) {
  return b.create<arith::CmpIOp>(pred, x, y);
}

/// Whether any of the i1 values holds.
Value any(Builder &b, ArrayRef<Value> conds) {
  Value r = conds.front();
  for (Value c : conds.drop_front())
    r = b.create<arith::OrIOp>(r, c);
  return r;
}

/// Whether a run-time transform length `n` (i64) does not give `bins`
/// output bins: n / 2 + 1 of them when onesided, n otherwise.
Value wrongLength(Builder &b, Value n, int64_t bins, bool onesided) {
  Value kept = n;
  if (onesided)
    kept = b.create<arith::AddIOp>(b.create<arith::DivSIOp>(n, cI64(b, 2)),
                                   cI64(b, 1));
  return any(b, {cmp(b, arith::CmpIPredicate::sle, n, cI64(b, 0)),
                 cmp(b, arith::CmpIPredicate::ne, kept, cI64(b, bins))});
}

Value toIndex(Builder &b, Value i64) {
  return b.create<arith::IndexCastOp>(b.getIndexType(), i64);
}

/// An index or integer value as f64.
Value indexToF64(Builder &b, Value v) {
  if (v.getType().isIndex())
    v = b.create<arith::IndexCastOp>(b.getI64Type(), v);
  return b.create<arith::SIToFPOp>(b.getF64Type(), v);
}

/// 2 pi t / n in the reference's order of operations.
Value angle(Builder &b, double twoPiTimes, Value t, Value n) {
  return b.create<arith::DivFOp>(
      b.create<arith::MulFOp>(cF64(b, twoPiTimes), indexToF64(b, t)),
      indexToF64(b, n));
}

//===----------------------------------------------------------------------===//
// The DFT of one signal
//===----------------------------------------------------------------------===//

struct Twiddles {
  Value cs, sn;
};

/// cos and sin of 2 pi t / n for t in [0, size), n an index value in
/// [1, size].
Twiddles twiddles(Builder &b, nn::Scratch &scratch, Value n, int64_t size) {
  Twiddles tw{scratch.alloc({size}, b.getF64Type()),
              scratch.alloc({size}, b.getF64Type())};
  parallelLoops(b, {size}, [&](Builder &b, ValueRange t) {
    Value a = angle(b, 2 * kPi, t[0], n);
    store(b, b.create<math::CosOp>(a), tw.cs, t[0]);
    store(b, b.create<math::SinOp>(a), tw.sn, t[0]);
  });
  return tw;
}

/// Point j of a signal as (re, im) in f64; im is null for a real signal.
using PointFn = llvm::function_ref<std::pair<Value, Value>(Builder &, Value j)>;

/// Bin k of the n-point DFT of the signal `point`, which is zero from
/// `count` on: sum_j x[j] e^{-+2 pi i jk/n} (divided by n when inverse),
/// with t = j * k mod n carried along (k < n). Returns (re, im).
std::pair<Value, Value> dftBin(Builder &b, const Twiddles &tw, Value n,
                               Value count, Value k, bool inverse,
                               PointFn point) {
  Value zero = cF64(b, 0.0);
  SmallVector<Value> r = red::loop(
      b, cIndex(b, 0), count, {zero, zero, cIndex(b, 0)},
      [&](Builder &b, ValueRange j, ValueRange acc) {
        Value t = acc[2];
        Value c = load(b, tw.cs, t), s = load(b, tw.sn, t);
        if (!inverse)
          s = b.create<arith::NegFOp>(s);
        auto [re, im] = point(b, j[0]);
        Value dr = b.create<arith::MulFOp>(re, c);
        Value di = b.create<arith::MulFOp>(re, s);
        if (im) {
          dr = b.create<arith::SubFOp>(dr, b.create<arith::MulFOp>(im, s));
          di = b.create<arith::AddFOp>(di, b.create<arith::MulFOp>(im, c));
        }
        Value next = b.create<arith::AddIOp>(t, k);
        Value wrapped = b.create<arith::SubIOp>(next, n);
        next = b.create<arith::SelectOp>(
            cmp(b, arith::CmpIPredicate::uge, next, n), wrapped, next);
        return SmallVector<Value>{red::accAdd(b, acc[0], dr),
                                  red::accAdd(b, acc[1], di), next};
      });
  if (!inverse)
    return {r[0], r[1]};
  Value nF = indexToF64(b, n);
  return {b.create<arith::DivFOp>(r[0], nF), b.create<arith::DivFOp>(r[1], nF)};
}

//===----------------------------------------------------------------------===//
// graph.dft
//===----------------------------------------------------------------------===//

// y[..., k, ..., :] = DFT over `axis` of x zero-padded or truncated to
// dft_length (default: the axis length); onesided keeps bins 0..n/2.

LogicalResult lowerDft(PortableOp &p) {
  auto dft = cast<graph::DFTOp>(p.op);
  Value xv = dft.getInput();
  ArrayRef<int64_t> xs = shapeOf(xv), ys = shapeOf(dft.getOutput());
  int64_t rank = xs.size();
  if (!elemOf(xv).isFloat || rank < 3 || (xs.back() != 1 && xs.back() != 2))
    return dft.emitError("input must be a float tensor [batch, signal "
                         "dims..., 1 or 2]");
  FailureOr<int64_t> axis = red::normalizeAxis(
      dft, static_cast<int64_t>(dft.getAxis().value_or(1)), rank);
  if (failed(axis))
    return failure();
  if (*axis > rank - 2)
    return dft.emitError() << "axis " << *axis << " is not a signal axis";
  bool inverse = dft.getInverse().value_or(0) != 0;
  bool onesided = dft.getOnesided().value_or(0) != 0;
  bool complexIn = xs.back() == 2;
  if (onesided && complexIn)
    return dft.emitError("onesided needs real input");
  int64_t len = xs[*axis], outLen = ys.size() == xs.size() ? ys[*axis] : 0;
  SmallVector<int64_t> expected(xs);
  expected[*axis] = outLen;
  expected.back() = 2;
  if (ArrayRef<int64_t>(expected) != ys || outLen == 0)
    return dft.emitError("output shape does not match the input's");
  bool haveLength = red::hasOperand(dft, 1);
  if (haveLength && failed(checkScalar(dft, 1, "dft_length")))
    return failure();

  // The DFT length: known statically unless dft_length is a run-time value
  // with onesided (then both 2 (bins - 1) and 2 (bins - 1) + 1 fit).
  std::optional<int64_t> n = onesided ? std::optional<int64_t>() : outLen;
  if (!haveLength)
    n = len;
  else if (auto c = red::constInts(dft.getDftLength()))
    n = (*c)[0];
  if (n && (*n <= 0 || (onesided ? *n / 2 + 1 : *n) != outLen))
    return dft.emitError() << "dft_length " << *n
                           << " does not match the output shape";

  Builder b(p.loc, p.b);
  red::shapeBuffers(b, p);
  nn::Scratch scratch(b, p.loc);
  int64_t tableSize = n ? *n : 2 * outLen - 1;
  Value nv = cIndex(b, tableSize);
  if (haveLength && !red::constInts(dft.getDftLength())) {
    Value given = scalarI64(b, p.operands[1], dft.getDftLength());
    Value bad = wrongLength(b, given, outLen, onesided);
    p.failIf(bad, "dft_length does not match the output shape");
    if (!n)
      nv = b.create<arith::SelectOp>(bad, nv, toIndex(b, given));
  }
  Twiddles tw = twiddles(b, scratch, nv, tableSize);
  Value count = b.create<arith::MinSIOp>(nv, cIndex(b, len));

  Value x = p.operands[0], y = p.results[0];
  Elem xe = elemOf(xv), ye = elemOf(dft.getOutput());
  parallelLoops(b, ys.drop_back(), [&](Builder &b, ValueRange iv) {
    auto point = [&](Builder &b, Value j) -> std::pair<Value, Value> {
      SmallVector<Value> idx(iv);
      idx[*axis] = j;
      idx.push_back(cIndex(b, 0));
      Value re = red::toF64(b, load(b, x, idx), xe);
      if (!complexIn)
        return {re, Value()};
      idx.back() = cIndex(b, 1);
      return {re, red::toF64(b, load(b, x, idx), xe)};
    };
    auto [re, im] = dftBin(b, tw, nv, count, iv[*axis], inverse, point);
    SmallVector<Value> at(iv);
    at.push_back(cIndex(b, 0));
    store(b, red::fromF64(b, re, ye), y, at);
    at.back() = cIndex(b, 1);
    store(b, red::fromF64(b, im, ye), y, at);
  });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.stft
//===----------------------------------------------------------------------===//

// y[b, f, k, :] = DFT of signal[b, f * frame_step + j, :] * window[j] over
// j in [0, n), n the window's length or frame_length; onesided (default)
// keeps bins 0..n/2.

LogicalResult lowerStft(PortableOp &p) {
  auto stft = cast<graph::STFTOp>(p.op);
  Value xv = stft.getSignal();
  ArrayRef<int64_t> xs = shapeOf(xv), ys = shapeOf(stft.getOutput());
  if (!elemOf(xv).isFloat || xs.size() != 3 || (xs[2] != 1 && xs[2] != 2))
    return stft.emitError("signal must be a float tensor [batch, length, 1 "
                          "or 2]");
  bool onesided = stft.getOnesided().value_or(1) != 0;
  bool complexIn = xs[2] == 2;
  if (onesided && complexIn)
    return stft.emitError("onesided needs a real signal");
  if (ys.size() != 4 || ys[0] != xs[0] || ys[3] != 2)
    return stft.emitError("output shape does not match the signal's");
  int64_t len = xs[1], frames = ys[1], bins = ys[2];
  bool haveWindow = red::hasOperand(stft, 2);
  bool haveLength = red::hasOperand(stft, 3);
  if (!haveWindow && !haveLength)
    return stft.emitError("one of window and frame_length is required");
  if (failed(checkScalar(stft, 1, "frame_step")) ||
      (haveLength && failed(checkScalar(stft, 3, "frame_length"))))
    return failure();
  if (haveWindow && shapeOf(stft.getWindow()).size() != 1)
    return stft.emitError("window must have rank 1");

  // The frame length: static unless it is a run-time frame_length with
  // onesided and no window.
  std::optional<int64_t> n;
  std::optional<SmallVector<int64_t>> lengthConst;
  if (haveLength)
    lengthConst = red::constInts(stft.getFrameLength());
  if (haveWindow)
    n = shapeOf(stft.getWindow())[0];
  else if (lengthConst)
    n = (*lengthConst)[0];
  else if (!onesided)
    n = bins;
  if (n && (*n <= 0 || *n > len || (onesided ? *n / 2 + 1 : *n) != bins))
    return stft.emitError() << "frame length " << *n
                            << " does not match the signal or output shape";
  if (n && lengthConst && (*lengthConst)[0] != *n)
    return stft.emitError("frame_length differs from the window length");

  Builder b(p.loc, p.b);
  red::shapeBuffers(b, p);
  nn::Scratch scratch(b, p.loc);
  int64_t tableSize = n ? *n : 2 * bins - 1;
  Value nv = cIndex(b, tableSize);
  Value bad = red::cInt(b, b.getI1Type(), 0);
  if (haveLength && !lengthConst) {
    Value given = scalarI64(b, p.operands[3], stft.getFrameLength());
    Value wrong = n ? cmp(b, arith::CmpIPredicate::ne, given, cI64(b, *n))
                    : wrongLength(b, given, bins, onesided);
    p.failIf(wrong, "frame_length does not match the window or the output "
                    "shape");
    bad = wrong;
    if (!n)
      nv = b.create<arith::SelectOp>(wrong, nv, toIndex(b, given));
  }
  // frame_step fixes the frame count: (len - n) / step + 1 frames.
  Value step = scalarI64(b, p.operands[1], stft.getFrameStep());
  Value n64 = b.create<arith::IndexCastOp>(b.getI64Type(), nv);
  Value stepBad = cmp(b, arith::CmpIPredicate::sle, step, cI64(b, 0));
  Value divisor = b.create<arith::SelectOp>(stepBad, cI64(b, 1), step);
  Value count64 = b.create<arith::AddIOp>(
      b.create<arith::DivSIOp>(b.create<arith::SubIOp>(cI64(b, len), n64),
                               divisor),
      cI64(b, 1));
  Value wrongFrames =
      any(b, {stepBad, cmp(b, arith::CmpIPredicate::sgt, n64, cI64(b, len)),
              cmp(b, arith::CmpIPredicate::ne, count64, cI64(b, frames))});
  p.failIf(wrongFrames, "frame_step and the frame length do not give " +
                            std::to_string(frames) + " frames");
  // On a mismatch every frame starts at 0 and reads at most `len` points.
  bad = b.create<arith::OrIOp>(bad, wrongFrames);
  Value stepIdx =
      b.create<arith::SelectOp>(bad, cIndex(b, 0), toIndex(b, step));
  Value count = b.create<arith::MinSIOp>(nv, cIndex(b, len));
  Twiddles tw = twiddles(b, scratch, nv, tableSize);

  Value x = p.operands[0], y = p.results[0];
  Value window = haveWindow ? p.operands[2] : Value();
  Elem xe = elemOf(xv), ye = elemOf(stft.getOutput());
  Elem we = haveWindow ? elemOf(stft.getWindow()) : xe;
  parallelLoops(b, {xs[0], frames, bins}, [&](Builder &b, ValueRange iv) {
    Value start = b.create<arith::MulIOp>(iv[1], stepIdx);
    auto point = [&](Builder &b, Value j) -> std::pair<Value, Value> {
      Value at = b.create<arith::AddIOp>(start, j);
      Value w = window ? red::toF64(b, load(b, window, j), we) : Value();
      auto part = [&](int64_t c) -> Value {
        Value v = red::toF64(b, load(b, x, {iv[0], at, cIndex(b, c)}), xe);
        return w ? b.create<arith::MulFOp>(v, w).getResult() : v;
      };
      return {part(0), complexIn ? part(1) : Value()};
    };
    auto [re, im] = dftBin(b, tw, nv, count, iv[2], /*inverse=*/false, point);
    store(b, red::fromF64(b, re, ye), y, {iv[0], iv[1], iv[2], cIndex(b, 0)});
    store(b, red::fromF64(b, im, ye), y, {iv[0], iv[1], iv[2], cIndex(b, 1)});
  });
  return success();
}

//===----------------------------------------------------------------------===//
// graph.hann_window, graph.hamming_window, graph.blackman_window
//===----------------------------------------------------------------------===//

// w[i] = a0 - a1 cos(2 pi i / N) + a2 cos(4 pi i / N), N = size (periodic)
// or size - 1 (symmetric; a one-point symmetric window is [1]). The output
// has `size` points either way.

LogicalResult lowerWindow(PortableOp &p, bool periodic, double a0, double a1,
                          double a2) {
  Operation *op = p.op;
  ArrayRef<int64_t> ys = shapeOf(op->getResult(0));
  if (elemOf(op->getOperand(0)).isFloat)
    return op->emitError("size must be an integer");
  if (failed(checkScalar(op, 0, "size")))
    return failure();
  if (ys.size() != 1)
    return op->emitError("output must have rank 1");
  int64_t size = ys[0], denom = periodic ? size : size - 1;

  Builder b(p.loc, p.b);
  red::shapeBuffers(b, p);
  Value given = scalarI64(b, p.operands[0], op->getOperand(0));
  p.failIf(cmp(b, arith::CmpIPredicate::ne, given, cI64(b, size)),
           "size differs from the output length " + std::to_string(size));
  Value y = p.results[0];
  Elem ye = elemOf(op->getResult(0));
  parallelLoops(b, {size}, [&](Builder &b, ValueRange i) {
    Value v = cF64(b, 1.0);
    if (denom != 0) {
      Value d = cIndex(b, denom);
      Value c1 = b.create<math::CosOp>(angle(b, 2 * kPi, i[0], d));
      v = b.create<arith::SubFOp>(cF64(b, a0),
                                  b.create<arith::MulFOp>(cF64(b, a1), c1));
      if (a2 != 0) {
        Value c2 = b.create<math::CosOp>(angle(b, 4 * kPi, i[0], d));
        v = b.create<arith::AddFOp>(v,
                                    b.create<arith::MulFOp>(cF64(b, a2), c2));
      }
    }
    store(b, red::fromF64(b, v, ye), y, i[0]);
  });
  return success();
}

LogicalResult lowerHann(PortableOp &p) {
  auto op = cast<graph::HannWindowOp>(p.op);
  return lowerWindow(p, op.getPeriodic().value_or(1) != 0, 0.5, 0.5, 0.0);
}

LogicalResult lowerHamming(PortableOp &p) {
  auto op = cast<graph::HammingWindowOp>(p.op);
  return lowerWindow(p, op.getPeriodic().value_or(1) != 0, 25.0 / 46.0,
                     21.0 / 46.0, 0.0);
}

LogicalResult lowerBlackman(PortableOp &p) {
  auto op = cast<graph::BlackmanWindowOp>(p.op);
  return lowerWindow(p, op.getPeriodic().value_or(1) != 0, 0.42, 0.5, 0.08);
}

//===----------------------------------------------------------------------===//
// graph.mel_weight_matrix
//===----------------------------------------------------------------------===//

// Triangular filters between num_mel_bins + 2 mel-spaced edges, each
// mapped to the spectrogram bin floor((dft_length + 1) hz / sample_rate):
// column m rises from edge m to 1 at edge m + 1 and falls to edge m + 2.

LogicalResult lowerMel(PortableOp &p) {
  auto mel = cast<graph::MelWeightMatrixOp>(p.op);
  ArrayRef<int64_t> ys = shapeOf(mel.getOutput());
  const char *names[] = {"num_mel_bins", "dft_length", "sample_rate",
                         "lower_edge_hertz", "upper_edge_hertz"};
  for (unsigned i = 0; i < 5; ++i)
    if (failed(checkScalar(mel, i, names[i])))
      return failure();
  if (ys.size() != 2)
    return mel.emitError("output must have rank 2");
  int64_t rows = ys[0], numMel = ys[1];

  Builder b(p.loc, p.b);
  red::shapeBuffers(b, p);
  nn::Scratch scratch(b, p.loc);
  auto operand = [&](unsigned i) { return mel->getOperand(i); };
  Value melBins = scalarI64(b, p.operands[0], operand(0));
  Value dftLength = scalarI64(b, p.operands[1], operand(1));
  p.failIf(any(b, {cmp(b, arith::CmpIPredicate::ne, melBins, cI64(b, numMel)),
                   wrongLength(b, dftLength, rows, /*onesided=*/true)}),
           "num_mel_bins or dft_length does not match the output shape");
  Value sampleRate = scalarF64(b, p.operands[2], operand(2));
  Value lowHz = scalarF64(b, p.operands[3], operand(3));
  Value highHz = scalarF64(b, p.operands[4], operand(4));
  auto fcmp = [&](arith::CmpFPredicate pred, Value x, Value y) -> Value {
    return b.create<arith::CmpFOp>(pred, x, y);
  };
  // The reference rejects these values; unordered compares catch nan.
  p.failIf(any(b, {fcmp(arith::CmpFPredicate::ULE, sampleRate, cF64(b, 0.0)),
                   fcmp(arith::CmpFPredicate::ULT, lowHz, cF64(b, 0.0)),
                   fcmp(arith::CmpFPredicate::UGE, lowHz, highHz)}),
           "needs sample_rate > 0 and 0 <= lower_edge_hertz < "
           "upper_edge_hertz");

  auto toMel = [&](Value hz) -> Value {
    Value r = b.create<arith::DivFOp>(hz, cF64(b, 700.0));
    r = b.create<math::Log10Op>(b.create<arith::AddFOp>(cF64(b, 1.0), r));
    return b.create<arith::MulFOp>(cF64(b, 2595.0), r);
  };
  Value lowMel = toMel(lowHz);
  Value melStep =
      b.create<arith::DivFOp>(b.create<arith::SubFOp>(toMel(highHz), lowMel),
                              cF64(b, static_cast<double>(numMel + 2)));
  Value lengthF = indexToF64(b, b.create<arith::AddIOp>(dftLength, cI64(b, 1)));

  // The filter edges as spectrogram bins.
  Value edges = scratch.alloc({numMel + 2}, b.getI64Type());
  parallelLoops(b, {numMel + 2}, [&](Builder &b, ValueRange i) {
    Value m = b.create<arith::AddFOp>(
        b.create<arith::MulFOp>(indexToF64(b, i[0]), melStep), lowMel);
    Value hz = b.create<math::PowFOp>(
        cF64(b, 10.0), b.create<arith::DivFOp>(m, cF64(b, 2595.0)));
    hz = b.create<arith::MulFOp>(cF64(b, 700.0),
                                 b.create<arith::SubFOp>(hz, cF64(b, 1.0)));
    Value bin = b.create<math::FloorOp>(b.create<arith::DivFOp>(
        b.create<arith::MulFOp>(lengthF, hz), sampleRate));
    store(b, b.create<arith::FPToSIOp>(b.getI64Type(), bin), edges, i[0]);
  });

  Value y = p.results[0];
  Elem ye = elemOf(mel.getOutput());
  parallelLoops(b, {rows, numMel}, [&](Builder &b, ValueRange iv) {
    Value j = b.create<arith::IndexCastOp>(b.getI64Type(), iv[0]);
    auto edge = [&](int64_t d) {
      Value m = b.create<arith::AddIOp>(iv[1], cIndex(b, d));
      return load(b, edges, m);
    };
    Value lo = edge(0), mid = edge(1), hi = edge(2);
    auto ratio = [&](Value num0, Value num1, Value den0, Value den1) {
      return b.create<arith::DivFOp>(
          indexToF64(b, b.create<arith::SubIOp>(num0, num1)),
          indexToF64(b, b.create<arith::SubIOp>(den0, den1)));
    };
    using P = arith::CmpIPredicate;
    Value rising =
        b.create<arith::AndIOp>(cmp(b, P::sle, lo, j), cmp(b, P::slt, j, mid));
    Value falling =
        b.create<arith::AndIOp>(cmp(b, P::slt, mid, j), cmp(b, P::slt, j, hi));
    Value v =
        b.create<arith::SelectOp>(falling, ratio(hi, j, hi, mid), cF64(b, 0.0));
    v = b.create<arith::SelectOp>(rising, ratio(j, lo, mid, lo), v);
    v = b.create<arith::SelectOp>(cmp(b, P::eq, j, mid), cF64(b, 1.0), v);
    store(b, red::fromF64(b, v, ye), y, iv);
  });
  return success();
}

} // namespace

void registerPortableSignal(PortableRegistry &registry) {
  registry["graph.dft"] = &lowerDft;
  registry["graph.stft"] = &lowerStft;
  registry["graph.hann_window"] = &lowerHann;
  registry["graph.hamming_window"] = &lowerHamming;
  registry["graph.blackman_window"] = &lowerBlackman;
  registry["graph.mel_weight_matrix"] = &lowerMel;
}

} // namespace mlcc::portable
