//===- Recurrent.cpp - LSTM, GRU and RNN reference kernels ----------------===//
//
// One-layer recurrent cells as the ONNX spec writes them. All arithmetic is
// done in double on copies of the weights, whatever the tensor dtype: the
// kernels are an oracle, and the copies cost O(weights) against O(seq *
// batch * weights) for the recurrence itself.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "mlcc/Reference/RecurrentActivations.h"

#include <cmath>

namespace mlcc::ref {
namespace {

using CellKind = rnn::Cell;
using rnn::Activation;

const char *cellName(CellKind k) {
  switch (k) {
  case CellKind::Rnn:
    return "rnn";
  case CellKind::Gru:
    return "gru";
  case CellKind::Lstm:
    return "lstm";
  }
  return "?";
}

int64_t gateCount(CellKind k) {
  return k == CellKind::Lstm ? 4 : k == CellKind::Gru ? 3 : 1;
}

/// The activations attributes (RecurrentActivations.h), one per
/// (direction, slot).
Status parseActivations(CellKind kind, const Attrs &attrs, int64_t numDirs,
                        std::vector<Activation> &out) {
  std::vector<float> alphas = attrs.getFloats("activation_alpha");
  std::vector<float> betas = attrs.getFloats("activation_beta");
  std::string error = rnn::parseActivations(
      kind, attrs.getStrings("activations"),
      std::vector<double>(alphas.begin(), alphas.end()),
      std::vector<double>(betas.begin(), betas.end()), numDirs, out);
  MLCC_CHECK(error.empty(), cellName(kind), ": ", error);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

// Operand positions shared by the three ops.
enum { kX = 0, kW, kR, kB, kSeqLens, kInitH, kInitC, kP };

Status numDirections(CellKind kind, const Attrs &attrs, int64_t &dirs) {
  std::string dir = attrs.getString("direction", "forward");
  if (dir == "forward" || dir == "reverse")
    dirs = 1;
  else if (dir == "bidirectional")
    dirs = 2;
  else
    return Status::error(cellName(kind), ": unknown direction '", dir, "'");
  return Status::success();
}

/// Checks one optional operand's shape against `want` (dims that are
/// dynamic on either side are not compared).
Status checkShape(const char *op, const char *what, const ValueInfo &v,
                  const Shape &want) {
  if (!v.present())
    return Status::success();
  bool ok = v.shape.size() == want.size();
  for (size_t i = 0; ok && i < want.size(); ++i)
    ok = isDyn(v.shape[i]) || isDyn(want[i]) || v.shape[i] == want[i];
  MLCC_CHECK(ok, op, ": ", what, " has shape ", shapeToString(v.shape),
             ", expected ", shapeToString(want));
  return Status::success();
}

struct RnnDims {
  int64_t seq, batch, input, hidden, dirs, layout;
};

Status inferDims(CellKind kind, const Attrs &attrs,
                 const std::vector<ValueInfo> &in, RnnDims &d) {
  const char *op = cellName(kind);
  MLCC_CHECK(in.size() >= 3 && in[kX].present() && in[kW].present() &&
                 in[kR].present(),
             op, ": X, W and R are required");
  const ValueInfo &x = in[kX], &w = in[kW], &r = in[kR];
  MLCC_CHECK(isFloatType(x.dtype), op, ": X has dtype ", dtypeName(x.dtype),
             ", expected a float type");
  MLCC_CHECK(w.dtype == x.dtype && r.dtype == x.dtype, op,
             ": W and R must have the dtype of X");
  MLCC_CHECK(x.rank() == 3, op, ": X has rank ", x.rank(), ", expected 3");
  MLCC_CHECK(w.rank() == 3, op, ": W has rank ", w.rank(), ", expected 3");
  MLCC_CHECK(r.rank() == 3, op, ": R has rank ", r.rank(), ", expected 3");
  d.layout = attrs.getInt("layout", 0);
  MLCC_CHECK(d.layout == 0 || d.layout == 1, op,
             ": layout must be 0 or 1, got ", d.layout);
  MLCC_RETURN_IF_ERROR(numDirections(kind, attrs, d.dirs));
  d.seq = d.layout == 0 ? x.shape[0] : x.shape[1];
  d.batch = d.layout == 0 ? x.shape[1] : x.shape[0];
  d.input = x.shape[2];
  int64_t g = gateCount(kind);
  d.hidden = attrs.getInt("hidden_size", kDynamic);
  if (isDyn(d.hidden))
    d.hidden = !isDyn(r.shape[2])   ? r.shape[2]
               : !isDyn(w.shape[1]) ? w.shape[1] / g
                                    : kDynamic;
  MLCC_CHECK(isDyn(d.hidden) || d.hidden > 0, op,
             ": hidden_size must be positive, got ", d.hidden);
  int64_t gh = isDyn(d.hidden) ? kDynamic : g * d.hidden;
  MLCC_RETURN_IF_ERROR(checkShape(op, "W", w, {d.dirs, gh, d.input}));
  MLCC_RETURN_IF_ERROR(checkShape(op, "R", r, {d.dirs, gh, d.hidden}));
  auto opt = [&](size_t i) -> const ValueInfo & {
    static const ValueInfo absent;
    return i < in.size() ? in[i] : absent;
  };
  MLCC_RETURN_IF_ERROR(
      checkShape(op, "B", opt(kB), {d.dirs, isDyn(gh) ? kDynamic : 2 * gh}));
  if (opt(kSeqLens).present()) {
    MLCC_CHECK(isSignedInt(opt(kSeqLens).dtype), op,
               ": sequence_lens must be an integer tensor");
    MLCC_RETURN_IF_ERROR(
        checkShape(op, "sequence_lens", opt(kSeqLens), {d.batch}));
  }
  Shape stateShape = d.layout == 0 ? Shape{d.dirs, d.batch, d.hidden}
                                   : Shape{d.batch, d.dirs, d.hidden};
  MLCC_RETURN_IF_ERROR(checkShape(op, "initial_h", opt(kInitH), stateShape));
  if (kind == CellKind::Lstm) {
    MLCC_RETURN_IF_ERROR(checkShape(op, "initial_c", opt(kInitC), stateShape));
    MLCC_RETURN_IF_ERROR(checkShape(
        op, "P", opt(kP), {d.dirs, isDyn(d.hidden) ? kDynamic : 3 * d.hidden}));
  }
  return Status::success();
}

Status inferRecurrent(CellKind kind, const Attrs &attrs,
                      const std::vector<ValueInfo> &in,
                      std::vector<ValueInfo> &out) {
  RnnDims d;
  MLCC_RETURN_IF_ERROR(inferDims(kind, attrs, in, d));
  std::vector<Activation> acts;
  MLCC_RETURN_IF_ERROR(parseActivations(kind, attrs, d.dirs, acts));
  DType t = in[kX].dtype;
  Shape y = d.layout == 0 ? Shape{d.seq, d.dirs, d.batch, d.hidden}
                          : Shape{d.batch, d.seq, d.dirs, d.hidden};
  Shape state = d.layout == 0 ? Shape{d.dirs, d.batch, d.hidden}
                              : Shape{d.batch, d.dirs, d.hidden};
  size_t nOut = kind == CellKind::Lstm ? 3 : 2;
  MLCC_CHECK(out.size() >= 1 && out.size() <= nOut, cellName(kind), ": has ",
             out.size(), " results, expected at most ", nOut);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = ValueInfo{t, i == 0 ? y : state, nullptr};
  return Status::success();
}

Status inferLstm(const Attrs &a, const std::vector<ValueInfo> &in,
                 std::vector<ValueInfo> &out) {
  return inferRecurrent(CellKind::Lstm, a, in, out);
}
Status inferGru(const Attrs &a, const std::vector<ValueInfo> &in,
                std::vector<ValueInfo> &out) {
  return inferRecurrent(CellKind::Gru, a, in, out);
}
Status inferRnn(const Attrs &a, const std::vector<ValueInfo> &in,
                std::vector<ValueInfo> &out) {
  return inferRecurrent(CellKind::Rnn, a, in, out);
}

//===----------------------------------------------------------------------===//
// The recurrence
//===----------------------------------------------------------------------===//

std::vector<double> toDoubles(const Tensor &t) {
  std::vector<double> v(t.numel());
  if (t.dtype() == DType::F32) {
    const float *p = t.data<float>();
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = p[i];
  } else {
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = t.getDouble(static_cast<int64_t>(i));
  }
  return v;
}

/// out[b][j] (+)= sum_k a[b][k] * w[j][k]: a is [rows x k], w is [n x k],
/// out is [rows x n]. W is stored row-major as ONNX gives it, so the inner
/// loop runs over contiguous memory on both sides.
void matmulTransB(const double *a, const double *w, double *out, int64_t rows,
                  int64_t n, int64_t k) {
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t j = 0; j < n; ++j) {
      const double *x = a + b * k, *wr = w + j * k;
      double s = 0;
      for (int64_t i = 0; i < k; ++i)
        s += x[i] * wr[i];
      out[b * n + j] += s;
    }
}

Status runRecurrent(CellKind kind, const Attrs &attrs,
                    const std::vector<Tensor> &inputs,
                    std::vector<Tensor> &outputs) {
  const char *op = cellName(kind);
  ShapeFn infer = kind == CellKind::Lstm  ? inferLstm
                  : kind == CellKind::Gru ? inferGru
                                          : inferRnn;
  MLCC_RETURN_IF_ERROR(allocateOutputs(infer, attrs, inputs, outputs));
  std::vector<ValueInfo> info(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    info[i] = ValueInfo{inputs[i].dtype(), inputs[i].shape(), &inputs[i]};
  RnnDims d;
  MLCC_RETURN_IF_ERROR(inferDims(kind, attrs, info, d));
  std::vector<Activation> acts;
  MLCC_RETURN_IF_ERROR(parseActivations(kind, attrs, d.dirs, acts));
  auto opt = [&](size_t i) {
    return i < inputs.size() && inputs[i].present() ? inputs[i] : Tensor();
  };

  const int64_t S = d.seq, N = d.batch, I = d.input, H = d.hidden, D = d.dirs,
                G = gateCount(kind);
  const bool reverseOnly = attrs.getString("direction", "forward") == "reverse";
  const double clip = attrs.getFloat("clip", 0.0f);
  const bool useClip = attrs.has("clip");
  MLCC_CHECK(!useClip || clip > 0, op, ": clip must be positive, got ", clip);
  const bool lbr = attrs.getInt("linear_before_reset", 0) != 0;
  const bool inputForget = attrs.getInt("input_forget", 0) != 0;

  std::vector<int64_t> lens(N, S);
  if (Tensor sl = opt(kSeqLens); sl.present()) {
    for (int64_t b = 0; b < N; ++b) {
      lens[b] = sl.getInt(b);
      MLCC_CHECK(lens[b] >= 0 && lens[b] <= S, op, ": sequence_lens[", b,
                 "] = ", lens[b], " is outside [0, ", S, "]");
    }
  }

  const std::vector<double> X = toDoubles(inputs[kX]);
  const std::vector<double> W = toDoubles(inputs[kW]);
  const std::vector<double> R = toDoubles(inputs[kR]);
  Tensor bT = opt(kB), hT = opt(kInitH), cT = opt(kInitC), pT = opt(kP);
  const std::vector<double> B =
      bT.present() ? toDoubles(bT) : std::vector<double>(D * 2 * G * H, 0.0);
  const std::vector<double> P =
      pT.present() ? toDoubles(pT) : std::vector<double>(D * 3 * H, 0.0);
  const std::vector<double> H0 =
      hT.present() ? toDoubles(hT) : std::vector<double>(D * N * H);
  const std::vector<double> C0 =
      cT.present() ? toDoubles(cT) : std::vector<double>(D * N * H);

  auto xAt = [&](int64_t t, int64_t b) {
    return &X[(d.layout == 0 ? t * N + b : b * S + t) * I];
  };
  auto yIndex = [&](int64_t t, int64_t dir, int64_t b) {
    return (d.layout == 0 ? (t * D + dir) * N + b : (b * S + t) * D + dir) * H;
  };
  auto stateIndex = [&](int64_t dir, int64_t b) {
    return (d.layout == 0 ? dir * N + b : b * D + dir) * H;
  };
  auto clipped = [&](double v) {
    return useClip ? std::min(std::max(v, -clip), clip) : v;
  };

  Tensor &Y = outputs[0];
  for (int64_t dir = 0; dir < D; ++dir) {
    const bool reverse = reverseOnly || dir == 1;
    const double *w = &W[dir * G * H * I], *r = &R[dir * G * H * H];
    const double *wb = &B[dir * 2 * G * H], *rb = wb + G * H;
    const double *p = &P[dir * 3 * H];
    const Activation *act = &acts[dir * rnn::activationCount(kind)];

    // Batch rows of the running state, [N x H].
    std::vector<double> h(N * H), c(N * H);
    for (int64_t b = 0; b < N; ++b)
      for (int64_t j = 0; j < H; ++j) {
        h[b * H + j] = H0[stateIndex(dir, b) + j];
        c[b * H + j] = C0[stateIndex(dir, b) + j];
      }

    std::vector<double> xin(N * I), xw(N * G * H), hr(N * G * H), rh(N * H);
    for (int64_t step = 0; step < S; ++step) {
      // Rows whose sequence is still running; the others keep their state
      // and leave their rows of Y zero.
      std::vector<int64_t> live;
      for (int64_t b = 0; b < N; ++b)
        if (step < lens[b])
          live.push_back(b);
      if (live.empty())
        break;
      const int64_t L = static_cast<int64_t>(live.size());
      for (int64_t li = 0; li < L; ++li) {
        int64_t b = live[li];
        int64_t t = reverse ? lens[b] - 1 - step : step;
        std::copy(xAt(t, b), xAt(t, b) + I, &xin[li * I]);
        std::copy(&h[b * H], &h[b * H] + H, &rh[li * H]);
      }
      // xw = X W^T + Wb; hr = H R^T + Rb (hr of GRU's h gate is used only
      // with linear_before_reset).
      for (int64_t li = 0; li < L; ++li)
        for (int64_t j = 0; j < G * H; ++j) {
          xw[li * G * H + j] = wb[j];
          hr[li * G * H + j] = rb[j];
        }
      matmulTransB(xin.data(), w, xw.data(), L, G * H, I);
      matmulTransB(rh.data(), r, hr.data(), L, G * H, H);

      for (int64_t li = 0; li < L; ++li) {
        int64_t b = live[li];
        double *hb = &h[b * H], *cb = &c[b * H];
        const double *gx = &xw[li * G * H], *gh = &hr[li * G * H];
        if (kind == CellKind::Rnn) {
          for (int64_t j = 0; j < H; ++j)
            hb[j] = act[0](clipped(gx[j] + gh[j]));
        } else if (kind == CellKind::Lstm) {
          // Gate order i, o, f, c.
          for (int64_t j = 0; j < H; ++j) {
            double gi = gx[j] + gh[j], go = gx[H + j] + gh[H + j],
                   gf = gx[2 * H + j] + gh[2 * H + j],
                   gc = gx[3 * H + j] + gh[3 * H + j];
            double it = act[0](clipped(gi + p[j] * cb[j]));
            double ft = inputForget
                            ? 1.0 - it
                            : act[0](clipped(gf + p[2 * H + j] * cb[j]));
            double ct = act[1](clipped(gc));
            double cNew = ft * cb[j] + it * ct;
            double ot = act[0](clipped(go + p[H + j] * cNew));
            cb[j] = cNew;
            hb[j] = ot * act[2](cNew);
          }
        } else {
          // GRU, gate order z, r, h.
          std::vector<double> rt(H), rHprev(H, 0.0);
          for (int64_t j = 0; j < H; ++j)
            rt[j] = act[0](clipped(gx[H + j] + gh[H + j]));
          if (!lbr) {
            // (r . H) Rh^T + Rbh: needs its own product.
            std::vector<double> rhv(H);
            for (int64_t j = 0; j < H; ++j)
              rhv[j] = rt[j] * hb[j];
            for (int64_t j = 0; j < H; ++j)
              rHprev[j] = rb[2 * H + j];
            matmulTransB(rhv.data(), r + 2 * H * H, rHprev.data(), 1, H, H);
          }
          for (int64_t j = 0; j < H; ++j) {
            double zt = act[0](clipped(gx[j] + gh[j]));
            double pre = lbr ? gx[2 * H + j] + rt[j] * gh[2 * H + j]
                             : gx[2 * H + j] + rHprev[j];
            double ht = act[1](clipped(pre));
            hb[j] = (1 - zt) * ht + zt * hb[j];
          }
        }
        int64_t t = reverse ? lens[b] - 1 - step : step;
        if (Y.present())
          for (int64_t j = 0; j < H; ++j)
            Y.setDouble(yIndex(t, dir, b) + j, hb[j]);
      }
    }
    for (int64_t b = 0; b < N; ++b)
      for (int64_t j = 0; j < H; ++j) {
        if (outputs.size() > 1 && outputs[1].present())
          outputs[1].setDouble(stateIndex(dir, b) + j, h[b * H + j]);
        if (outputs.size() > 2 && outputs[2].present())
          outputs[2].setDouble(stateIndex(dir, b) + j, c[b * H + j]);
      }
  }
  return Status::success();
}

// graph.lstm
Status runLstm(const Attrs &a, const std::vector<Tensor> &in,
               std::vector<Tensor> &out) {
  return runRecurrent(CellKind::Lstm, a, in, out);
}
// graph.gru
Status runGru(const Attrs &a, const std::vector<Tensor> &in,
              std::vector<Tensor> &out) {
  return runRecurrent(CellKind::Gru, a, in, out);
}
// graph.rnn
Status runRnn(const Attrs &a, const std::vector<Tensor> &in,
              std::vector<Tensor> &out) {
  return runRecurrent(CellKind::Rnn, a, in, out);
}

} // namespace

void registerRecurrentKernels(KernelRegistry &r) {
  r.add("lstm", {inferLstm, runLstm});
  r.add("gru", {inferGru, runGru});
  r.add("rnn", {inferRnn, runRnn});
}

} // namespace mlcc::ref
