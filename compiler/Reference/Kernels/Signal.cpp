//===- Signal.cpp - DFT, STFT, window and mel-matrix reference kernels ----===//
//
// The signal-processing ops of opset 17. Complex values are stored as a
// trailing dimension of 2 (real, imaginary); a trailing 1 marks real input.
// The DFT is the direct O(n^2) sum in double with exact twiddle indices
// (j * k mod n), which is accurate for any length, not only powers of two.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "MiscKernels.h"

#include <cmath>

namespace mlcc::ref::misc {
namespace {

const double kPi = 3.14159265358979323846;

/// ONNX TensorProto.DataType (the output_datatype attribute) to ours.

Status outputDatatype(const char *op, const Attrs &attrs, DType &t) {
  int64_t e = attrs.getInt("output_datatype", 1);
  t = dtypeFromOnnxEnum(e);
  MLCC_CHECK(t != DType::Undefined && t != DType::Bool, op,
             ": unsupported output_datatype ", e);
  return Status::success();
}

/// A one-element operand (scalar or [1]); `present` false when absent.
Status scalarOperand(const char *op, const char *what,
                     const std::vector<ValueInfo> &in, size_t i,
                     bool &present) {
  present = i < in.size() && in[i].present();
  if (present)
    MLCC_CHECK(in[i].rank() == 0 ||
                   (in[i].rank() == 1 &&
                    (isDyn(in[i].shape[0]) || in[i].shape[0] == 1)),
               op, ": ", what, " has shape ", shapeToString(in[i].shape),
               ", expected a scalar");
  return Status::success();
}

/// One DFT of `n` points. `in(j)` yields input point j (zero past the
/// signal); writes `outLen` complex bins to out[2k], out[2k+1].
template <typename InFn>
void dft(int64_t n, int64_t outLen, bool inverse, const std::vector<double> &cs,
         const std::vector<double> &sn, InFn in, double *out) {
  std::vector<double> re(n), im(n);
  for (int64_t j = 0; j < n; ++j)
    in(j, re[j], im[j]);
  double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < outLen; ++k) {
    double sr = 0, si = 0;
    for (int64_t j = 0, t = 0; j < n; ++j, t = (t + k) % n) {
      // e^{sign * 2 pi i jk/n} with jk reduced mod n: t = j * k mod n.
      double c = cs[t], s = sign * sn[t];
      sr += re[j] * c - im[j] * s;
      si += re[j] * s + im[j] * c;
    }
    if (inverse) {
      sr /= n;
      si /= n;
    }
    out[2 * k] = sr;
    out[2 * k + 1] = si;
  }
}

void twiddles(int64_t n, std::vector<double> &cs, std::vector<double> &sn) {
  cs.resize(n);
  sn.resize(n);
  for (int64_t t = 0; t < n; ++t) {
    cs[t] = std::cos(2 * kPi * t / n);
    sn[t] = std::sin(2 * kPi * t / n);
  }
}

//===----------------------------------------------------------------------===//
// graph.dft
//===----------------------------------------------------------------------===//

struct DftParams {
  int64_t axis = 1, n = kDynamic, outLen = kDynamic;
  bool inverse = false, onesided = false, complexIn = false;
};

Status resolveDft(const Attrs &attrs, const std::vector<ValueInfo> &in,
                  DftParams &p) {
  MLCC_CHECK(!in.empty() && in[0].present(), "dft: input is required");
  const ValueInfo &x = in[0];
  MLCC_CHECK(isFloatType(x.dtype), "dft: input has dtype ", dtypeName(x.dtype),
             ", expected a float type");
  MLCC_CHECK(x.rank() >= 3, "dft: input has rank ", x.rank(),
             ", expected [batch, signal dims..., 1 or 2]");
  int64_t last = x.shape.back();
  MLCC_CHECK(isDyn(last) || last == 1 || last == 2,
             "dft: the last dim of input is ", last,
             ", expected 1 (real) or 2 (complex)");
  p.complexIn = last == 2;
  Status s = normalizeAxis(attrs.getInt("axis", 1), x.rank(), p.axis);
  MLCC_CHECK(s.ok() && p.axis <= x.rank() - 2, "dft: axis ",
             attrs.getInt("axis", 1), " is not a signal axis of rank ",
             x.rank(), " input");
  p.inverse = attrs.getInt("inverse", 0) != 0;
  p.onesided = attrs.getInt("onesided", 0) != 0;
  MLCC_CHECK(!(p.onesided && p.complexIn), "dft: onesided needs real input");
  bool haveLen;
  MLCC_RETURN_IF_ERROR(scalarOperand("dft", "dft_length", in, 1, haveLen));
  p.n = x.shape[p.axis];
  if (haveLen) {
    MLCC_CHECK(isSignedInt(in[1].dtype), "dft: dft_length must be an integer");
    p.n = in[1].value ? in[1].value->getInt(0) : kDynamic;
  }
  MLCC_CHECK(isDyn(p.n) || p.n > 0, "dft: dft_length must be positive, got ",
             p.n);
  p.outLen = isDyn(p.n) ? kDynamic : p.onesided ? p.n / 2 + 1 : p.n;
  return Status::success();
}

Status inferDft(const Attrs &attrs, const std::vector<ValueInfo> &in,
                std::vector<ValueInfo> &out) {
  DftParams p;
  MLCC_RETURN_IF_ERROR(resolveDft(attrs, in, p));
  Shape s = in[0].shape;
  s[p.axis] = p.outLen;
  s.back() = 2;
  out[0] = ValueInfo{in[0].dtype, s, nullptr};
  return Status::success();
}

Status runDft(const Attrs &attrs, const std::vector<Tensor> &in,
              std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferDft, attrs, in, out));
  std::vector<ValueInfo> info;
  for (const Tensor &t : in)
    info.push_back(ValueInfo{t.dtype(), t.shape(), t.present() ? &t : nullptr});
  DftParams p;
  MLCC_RETURN_IF_ERROR(resolveDft(attrs, info, p));
  const Tensor &x = in[0];
  Tensor &y = out[0];
  const Shape &xs = x.shape();
  const int64_t comps = xs.back(), len = xs[p.axis];
  int64_t outer = 1, inner = 1; // signals: outer x inner, strided by inner
  for (int64_t d = 0; d < p.axis; ++d)
    outer *= xs[d];
  for (int64_t d = p.axis + 1; d + 1 < x.rank(); ++d)
    inner *= xs[d];
  std::vector<double> cs, sn, bins(2 * p.outLen);
  twiddles(p.n, cs, sn);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto point = [&](int64_t j, double &re, double &im) {
        re = im = 0;
        if (j >= len)
          return; // zero padding up to dft_length
        int64_t e = ((o * len + j) * inner + i) * comps;
        re = x.getDouble(e);
        im = comps == 2 ? x.getDouble(e + 1) : 0.0;
      };
      dft(p.n, p.outLen, p.inverse, cs, sn, point, bins.data());
      for (int64_t k = 0; k < p.outLen; ++k) {
        int64_t e = ((o * p.outLen + k) * inner + i) * 2;
        y.setDouble(e, bins[2 * k]);
        y.setDouble(e + 1, bins[2 * k + 1]);
      }
    }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.stft
//===----------------------------------------------------------------------===//

struct StftParams {
  int64_t step = kDynamic, n = kDynamic, frames = kDynamic, bins = kDynamic;
  bool onesided = true;
};

Status resolveStft(const Attrs &attrs, const std::vector<ValueInfo> &in,
                   StftParams &p) {
  MLCC_CHECK(in.size() >= 2 && in[0].present() && in[1].present(),
             "stft: signal and frame_step are required");
  const ValueInfo &x = in[0];
  MLCC_CHECK(isFloatType(x.dtype), "stft: signal has dtype ",
             dtypeName(x.dtype), ", expected a float type");
  MLCC_CHECK(x.rank() == 3 &&
                 (isDyn(x.shape[2]) || x.shape[2] == 1 || x.shape[2] == 2),
             "stft: signal has shape ", shapeToString(x.shape),
             ", expected [batch, length, 1 or 2]");
  p.onesided = attrs.getInt("onesided", 1) != 0;
  MLCC_CHECK(!(p.onesided && x.shape[2] == 2),
             "stft: onesided needs a real signal");
  bool have;
  MLCC_RETURN_IF_ERROR(scalarOperand("stft", "frame_step", in, 1, have));
  if (in[1].value) {
    p.step = in[1].value->getInt(0);
    MLCC_CHECK(p.step > 0, "stft: frame_step must be positive, got ", p.step);
  }
  bool haveWindow = in.size() > 2 && in[2].present();
  if (haveWindow) {
    MLCC_CHECK(in[2].rank() == 1, "stft: window has rank ", in[2].rank(),
               ", expected 1");
    p.n = in[2].shape[0];
  }
  MLCC_RETURN_IF_ERROR(scalarOperand("stft", "frame_length", in, 3, have));
  if (have && in[3].value) {
    int64_t n = in[3].value->getInt(0);
    MLCC_CHECK(isDyn(p.n) || p.n == n, "stft: frame_length ", n,
               " differs from the window length ", p.n);
    p.n = n;
  }
  MLCC_CHECK(haveWindow || have, "stft: one of window and frame_length is "
                                 "required");
  MLCC_CHECK(isDyn(p.n) || p.n > 0, "stft: frame length must be positive");
  int64_t len = x.shape[1];
  if (!isDyn(p.n) && !isDyn(len)) {
    MLCC_CHECK(p.n <= len, "stft: frame length ", p.n,
               " exceeds the signal length ", len);
    if (!isDyn(p.step))
      p.frames = (len - p.n) / p.step + 1;
  }
  p.bins = isDyn(p.n) ? kDynamic : p.onesided ? p.n / 2 + 1 : p.n;
  return Status::success();
}

Status inferStft(const Attrs &attrs, const std::vector<ValueInfo> &in,
                 std::vector<ValueInfo> &out) {
  StftParams p;
  MLCC_RETURN_IF_ERROR(resolveStft(attrs, in, p));
  out[0] =
      ValueInfo{in[0].dtype, {in[0].shape[0], p.frames, p.bins, 2}, nullptr};
  return Status::success();
}

Status runStft(const Attrs &attrs, const std::vector<Tensor> &in,
               std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferStft, attrs, in, out));
  std::vector<ValueInfo> info;
  for (const Tensor &t : in)
    info.push_back(ValueInfo{t.dtype(), t.shape(), t.present() ? &t : nullptr});
  StftParams p;
  MLCC_RETURN_IF_ERROR(resolveStft(attrs, info, p));
  const Tensor &x = in[0];
  const bool haveWindow = in.size() > 2 && in[2].present();
  const int64_t batch = x.dim(0), len = x.dim(1), comps = x.dim(2);
  std::vector<double> cs, sn, bins(2 * p.bins);
  twiddles(p.n, cs, sn);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < p.frames; ++f) {
      auto point = [&](int64_t j, double &re, double &im) {
        int64_t e = (b * len + f * p.step + j) * comps;
        double w = haveWindow ? in[2].getDouble(j) : 1.0;
        re = x.getDouble(e) * w;
        im = comps == 2 ? x.getDouble(e + 1) * w : 0.0;
      };
      dft(p.n, p.bins, false, cs, sn, point, bins.data());
      int64_t base = (b * p.frames + f) * p.bins * 2;
      for (int64_t k = 0; k < 2 * p.bins; ++k)
        out[0].setDouble(base + k, bins[k]);
    }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.hann_window, graph.hamming_window, graph.blackman_window
//===----------------------------------------------------------------------===//

Status inferWindow(const char *op, const Attrs &attrs,
                   const std::vector<ValueInfo> &in,
                   std::vector<ValueInfo> &out) {
  MLCC_CHECK(!in.empty() && in[0].present(), op, ": size is required");
  MLCC_CHECK(isSignedInt(in[0].dtype), op, ": size has dtype ",
             dtypeName(in[0].dtype), ", expected an integer");
  bool have;
  MLCC_RETURN_IF_ERROR(scalarOperand(op, "size", in, 0, have));
  DType t;
  MLCC_RETURN_IF_ERROR(outputDatatype(op, attrs, t));
  int64_t size = in[0].value ? in[0].value->getInt(0) : kDynamic;
  MLCC_CHECK(isDyn(size) || size >= 0, op, ": size is negative (", size, ")");
  out[0] = ValueInfo{t, {size}, nullptr};
  return Status::success();
}

/// Generalised cosine window a0 - a1 cos(2 pi n/N) + a2 cos(4 pi n/N), with
/// N = size (periodic) or size - 1 (symmetric).
Status runWindow(const Attrs &attrs, const std::vector<Tensor> &in,
                 std::vector<Tensor> &out, ShapeFn infer, double a0, double a1,
                 double a2) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(infer, attrs, in, out));
  int64_t size = out[0].numel();
  bool periodic = attrs.getInt("periodic", 1) != 0;
  double denom = static_cast<double>(periodic ? size : size - 1);
  for (int64_t i = 0; i < size; ++i) {
    // A symmetric window of one point is [1], as in numpy and scipy.
    double v = denom == 0 ? 1.0
                          : a0 - a1 * std::cos(2 * kPi * i / denom) +
                                a2 * std::cos(4 * kPi * i / denom);
    out[0].setDouble(i, v);
  }
  return Status::success();
}

Status inferHann(const Attrs &a, const std::vector<ValueInfo> &in,
                 std::vector<ValueInfo> &out) {
  return inferWindow("hann_window", a, in, out);
}
Status inferHamming(const Attrs &a, const std::vector<ValueInfo> &in,
                    std::vector<ValueInfo> &out) {
  return inferWindow("hamming_window", a, in, out);
}
Status inferBlackman(const Attrs &a, const std::vector<ValueInfo> &in,
                     std::vector<ValueInfo> &out) {
  return inferWindow("blackman_window", a, in, out);
}
Status runHann(const Attrs &a, const std::vector<Tensor> &in,
               std::vector<Tensor> &out) {
  return runWindow(a, in, out, inferHann, 0.5, 0.5, 0.0);
}
Status runHamming(const Attrs &a, const std::vector<Tensor> &in,
                  std::vector<Tensor> &out) {
  return runWindow(a, in, out, inferHamming, 25.0 / 46.0, 21.0 / 46.0, 0.0);
}
Status runBlackman(const Attrs &a, const std::vector<Tensor> &in,
                   std::vector<Tensor> &out) {
  return runWindow(a, in, out, inferBlackman, 0.42, 0.5, 0.08);
}

//===----------------------------------------------------------------------===//
// graph.mel_weight_matrix
//===----------------------------------------------------------------------===//

enum { kMelBins = 0, kDftLength, kSampleRate, kLowerHz, kUpperHz };

Status inferMel(const Attrs &attrs, const std::vector<ValueInfo> &in,
                std::vector<ValueInfo> &out) {
  const char *names[] = {"num_mel_bins", "dft_length", "sample_rate",
                         "lower_edge_hertz", "upper_edge_hertz"};
  for (size_t i = 0; i < 5; ++i) {
    bool have;
    MLCC_RETURN_IF_ERROR(
        scalarOperand("mel_weight_matrix", names[i], in, i, have));
    MLCC_CHECK(have, "mel_weight_matrix: ", names[i], " is required");
  }
  DType t;
  MLCC_RETURN_IF_ERROR(outputDatatype("mel_weight_matrix", attrs, t));
  int64_t bins = in[kMelBins].value ? in[kMelBins].value->getInt(0) : kDynamic;
  int64_t len =
      in[kDftLength].value ? in[kDftLength].value->getInt(0) : kDynamic;
  MLCC_CHECK(isDyn(bins) || bins > 0,
             "mel_weight_matrix: num_mel_bins must be positive, got ", bins);
  MLCC_CHECK(isDyn(len) || len > 0,
             "mel_weight_matrix: dft_length must be positive, got ", len);
  out[0] = ValueInfo{t, {isDyn(len) ? kDynamic : len / 2 + 1, bins}, nullptr};
  return Status::success();
}

/// Triangular filters between mel-spaced edges, each peaking at 1. The
/// edges follow the ONNX reference implementation: num_mel_bins + 2 points
/// with the mel step (high - low) / (num_mel_bins + 2), each mapped to the
/// spectrogram bin floor((dft_length + 1) * hz / sample_rate).
Status runMel(const Attrs &attrs, const std::vector<Tensor> &in,
              std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferMel, attrs, in, out));
  const int64_t numMel = in[kMelBins].getInt(0);
  const int64_t dftLength = in[kDftLength].getInt(0);
  const double sampleRate = in[kSampleRate].getDouble(0);
  const double lowHz = in[kLowerHz].getDouble(0);
  const double highHz = in[kUpperHz].getDouble(0);
  MLCC_CHECK(sampleRate > 0, "mel_weight_matrix: sample_rate must be positive");
  MLCC_CHECK(0 <= lowHz && lowHz < highHz,
             "mel_weight_matrix: need 0 <= lower_edge_hertz < "
             "upper_edge_hertz, got ",
             lowHz, " and ", highHz);
  const int64_t rows = dftLength / 2 + 1;
  auto toMel = [](double hz) { return 2595.0 * std::log10(1 + hz / 700); };
  double lowMel = toMel(lowHz), highMel = toMel(highHz);
  double step = (highMel - lowMel) / static_cast<double>(numMel + 2);
  std::vector<int64_t> edge(numMel + 2);
  for (int64_t i = 0; i < numMel + 2; ++i) {
    double hz = 700 * (std::pow(10.0, (i * step + lowMel) / 2595) - 1);
    edge[i] =
        static_cast<int64_t>(std::floor((dftLength + 1) * hz / sampleRate));
  }
  Tensor &y = out[0];
  auto set = [&](int64_t row, int64_t col, double v) {
    if (row >= 0 && row < rows)
      y.setDouble(row * numMel + col, v);
  };
  for (int64_t m = 0; m < numMel; ++m) {
    int64_t lo = edge[m], mid = edge[m + 1], hi = edge[m + 2];
    if (mid == lo)
      set(mid, m, 1.0);
    else
      for (int64_t j = lo; j <= mid; ++j)
        set(j, m, static_cast<double>(j - lo) / (mid - lo));
    for (int64_t j = mid; j < hi; ++j)
      set(j, m, static_cast<double>(hi - j) / (hi - mid));
  }
  return Status::success();
}

} // namespace

void registerSignalKernels(KernelRegistry &r) {
  r.add("dft", {inferDft, runDft});
  r.add("stft", {inferStft, runStft});
  r.add("hann_window", {inferHann, runHann});
  r.add("hamming_window", {inferHamming, runHamming});
  r.add("blackman_window", {inferBlackman, runBlackman});
  r.add("mel_weight_matrix", {inferMel, runMel});
}

} // namespace mlcc::ref::misc
