//===- Conv.cpp - Convolution reference kernels ---------------------------===//
//
// conv, conv_transpose, conv_integer and qlinear_conv over 1 to 3 spatial
// dims. The float kernels avoid im2col: for a block of output channels they
// accumulate each kernel tap over whole output rows, so the innermost loop
// runs along a contiguous output row and vectorises. The integer ops shift
// their operands by the zero points into int32 and reuse the same loops.
//
//===----------------------------------------------------------------------===//

#include "ConvKernels.h"
#include "ConvPoolUtils.h"

namespace mlcc::ref {
namespace {

using namespace nn;

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

/// Kernel dims of a conv-like op: the weight's spatial dims, or the
/// kernel_shape attribute where the weight's are unknown.
Status kernelDims(const char *op, const Attrs &attrs, const Shape &fromW,
                  Shape &kernel) {
  kernel = fromW;
  if (!attrs.has("kernel_shape"))
    return Status::success();
  std::vector<int64_t> ks = attrs.getInts("kernel_shape");
  MLCC_CHECK(ks.size() == fromW.size(), op, ": kernel_shape has ", ks.size(),
             " values, expected ", fromW.size());
  for (size_t i = 0; i < ks.size(); ++i) {
    MLCC_CHECK(isDyn(fromW[i]) || fromW[i] == ks[i], op, ": kernel_shape ",
               shapeToString(ks), " does not match the weight's kernel dims ",
               shapeToString(fromW));
    kernel[i] = ks[i];
  }
  return Status::success();
}

/// Output shape and resolved window of conv, conv_integer and qlinear_conv:
/// X [N, C, D...] and W [M, C/group, K...] give Y [N, M, O...].
Status inferConvLike(const char *op, const Attrs &attrs, const ValueInfo &x,
                     const ValueInfo &w, Shape &out, Window &win) {
  MLCC_CHECK(x.rank() >= 3, op, ": input has rank ", x.rank(),
             ", expected at least 3 (N, C, spatial dims)");
  MLCC_CHECK(w.rank() == x.rank(), op, ": weight has rank ", w.rank(),
             ", expected rank ", x.rank(), " like the input");
  int64_t group = attrs.getInt("group", 1);
  MLCC_CHECK(group >= 1, op, ": group ", group, " must be >= 1");
  int64_t c = x.shape[1], cw = w.shape[1], m = w.shape[0];
  MLCC_CHECK(isDyn(c) || isDyn(cw) || c == cw * group, op, ": input has ", c,
             " channels but weight expects ", cw, " x group ", group);
  MLCC_CHECK(isDyn(m) || m % group == 0, op, ": ", m,
             " output channels are not divisible by group ", group);
  Shape kernel;
  MLCC_RETURN_IF_ERROR(
      kernelDims(op, attrs, Shape(w.shape.begin() + 2, w.shape.end()), kernel));
  MLCC_RETURN_IF_ERROR(readWindow(op, attrs, kernel, win));
  AutoPad autoPad;
  MLCC_RETURN_IF_ERROR(parseAutoPad(op, attrs, autoPad));
  Shape spatial;
  MLCC_RETURN_IF_ERROR(windowOutputDims(
      op, autoPad, false, Shape(x.shape.begin() + 2, x.shape.end()), win,
      spatial));
  out = {x.shape[0], m};
  out.insert(out.end(), spatial.begin(), spatial.end());
  return Status::success();
}

/// Checks an optional bias of M elements.
Status checkBias(const char *op, const ValueInfo &b, int64_t m) {
  if (!b.present())
    return Status::success();
  MLCC_CHECK(b.rank() == 1, op, ": bias has rank ", b.rank(), ", expected 1");
  MLCC_CHECK(isDyn(b.shape[0]) || isDyn(m) || b.shape[0] == m, op,
             ": bias has ", b.shape[0], " elements, expected ", m,
             " (one per output channel)");
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Direct convolution loops
//===----------------------------------------------------------------------===//

/// How convBlock finds input rows. With a width stride s > 1 each input row
/// is stored as s phases (elements r, r+s, r+2s, ... for r < s), so that
/// every kernel tap reads a contiguous run; with s = 1 this is the plain
/// row-major layout.
struct InputLayout {
  int64_t plane;      // elements per channel
  int64_t rowPitch;   // elements per input row (s phases)
  int64_t phaseWidth; // elements per phase: ceil(W / s)
};

/// Output elements per plane a band of rows may span: four planes of a band
/// (16 KB for f32) stay in L1 while every channel and tap sweeps over them.
constexpr int64_t kBandBytes = 4096;

/// Adds the contribution of `cg` input channels `x` to BM output planes `y`
/// (outSize() apart) whose weights `w` are cg * kSize() apart. For each band
/// of output rows, every channel and kernel tap is applied to all rows of
/// the band it reaches, the inner loop running along one output row.
template <typename T, int BM>
void convBlock(const Geom3 &g, const InputLayout &in, const T *x, int64_t cg,
               const T *w, T *y) {
  const int64_t outPlane = g.outSize(), ks = g.kSize();
  const int64_t h = g.in[1], oh = g.out[1], ow = g.out[2], sw = g.s[2];
  const int64_t rows = g.out[0] * oh;
  const int64_t band =
      std::max<int64_t>(1, kBandBytes / static_cast<int64_t>(sizeof(T)) / ow);
  for (int64_t r0 = 0; r0 < rows; r0 += band) {
    const int64_t r1 = std::min(rows, r0 + band);
    for (int64_t c = 0; c < cg; ++c) {
      const T *xc = x + c * in.plane;
      for (int64_t kd = 0; kd < g.k[0]; ++kd) {
        int64_t offD = kd * g.d[0] - g.pb[0], dLo, dHi;
        validRange(g.in[0], g.s[0], offD, g.out[0], dLo, dHi);
        for (int64_t kh = 0; kh < g.k[1]; ++kh) {
          int64_t offH = kh * g.d[1] - g.pb[1], hLo, hHi;
          validRange(h, g.s[1], offH, oh, hLo, hHi);
          for (int64_t kw = 0; kw < g.k[2]; ++kw) {
            int64_t offW = kw * g.d[2] - g.pb[2], wLo, wHi;
            validRange(g.in[2], sw, offW, ow, wLo, wHi);
            if (wLo >= wHi)
              continue;
            // Output column j reads input column j * sw + offW: phase
            // offW mod sw, position j + floor(offW / sw) in that phase.
            int64_t xOff = (offW - floorDiv(offW, sw) * sw) * in.phaseWidth +
                           floorDiv(offW, sw) + wLo;
            int64_t tap = (kd * g.k[1] + kh) * g.k[2] + kw;
            T wv[BM];
            for (int b = 0; b < BM; ++b)
              wv[b] = w[b * cg * ks + c * ks + tap];
            int64_t od = r0 / oh, o = r0 % oh;
            for (int64_t r = r0; r < r1; ++r) {
              if (od >= dLo && od < dHi && o >= hLo && o < hHi) {
                int64_t id = od * g.s[0] + offD, ih = o * g.s[1] + offH;
                const T *xr = xc + (id * h + ih) * in.rowPitch + xOff;
                T *yr = y + r * ow + wLo;
                if constexpr (BM == 4)
                  axpy4(yr, yr + outPlane, yr + 2 * outPlane, yr + 3 * outPlane,
                        xr, wv[0], wv[1], wv[2], wv[3], wHi - wLo);
                else
                  for (int b = 0; b < BM; ++b)
                    axpy1(yr + b * outPlane, xr, wv[b], wHi - wLo);
              }
              if (++o == oh) {
                o = 0;
                ++od;
              }
            }
          }
        }
      }
    }
  }
}

/// Y[N, M, O] = conv(X[N, C, I], W[M, C/groups, K]) + bias (may be null).
template <typename T>
void convForward(Geom3 g, int64_t n, int64_t c, int64_t m, int64_t groups,
                 const T *x, const T *w, const T *bias, T *y) {
  // A 1x1 kernel with unit strides and no padding maps each input plane to
  // the output plane elementwise: view the plane as rows as long as a band
  // allows, so small spatial dims (7x7) still get long inner loops.
  if (g.kSize() == 1 && g.s[0] == 1 && g.s[1] == 1 && g.s[2] == 1 &&
      g.pb[0] + g.pb[1] + g.pb[2] + g.pe[0] + g.pe[1] + g.pe[2] == 0) {
    int64_t plane = g.inSize(), width = 1;
    int64_t maxWidth = kBandBytes / static_cast<int64_t>(sizeof(T));
    for (int64_t d = std::min(plane, maxWidth); d >= 1; --d)
      if (plane % d == 0) {
        width = d;
        break;
      }
    if (width < 64)
      width = plane;
    g = Geom3();
    g.in[1] = g.out[1] = plane / std::max<int64_t>(width, 1);
    g.in[2] = g.out[2] = width;
  }
  const int64_t inPlane = g.inSize(), outPlane = g.outSize(), ks = g.kSize();
  const int64_t cg = c / groups, mg = m / groups, sw = g.s[2];
  InputLayout layout{inPlane, g.in[2], g.in[2]};
  std::vector<T> phased;
  if (sw > 1) {
    layout.phaseWidth = ceilDiv(g.in[2], sw);
    layout.rowPitch = sw * layout.phaseWidth;
    layout.plane = g.in[0] * g.in[1] * layout.rowPitch;
    phased.assign(c * layout.plane, T(0));
  }
  for (int64_t b = 0; b < n; ++b) {
    const T *xb = x + b * c * inPlane;
    if (sw > 1) {
      // Split every input row into its sw phases.
      int64_t inRows = c * g.in[0] * g.in[1];
      for (int64_t r = 0; r < inRows; ++r)
        for (int64_t iw = 0; iw < g.in[2]; ++iw)
          phased[r * layout.rowPitch + (iw % sw) * layout.phaseWidth +
                 iw / sw] = xb[r * g.in[2] + iw];
      xb = phased.data();
    }
    for (int64_t gr = 0; gr < groups; ++gr) {
      const T *xg = xb + gr * cg * layout.plane;
      for (int64_t m0 = 0; m0 < mg; m0 += 4) {
        int64_t oc = gr * mg + m0;
        T *yb = y + (b * m + oc) * outPlane;
        int64_t bm = std::min<int64_t>(4, mg - m0);
        for (int64_t i = 0; i < bm; ++i)
          std::fill(yb + i * outPlane, yb + (i + 1) * outPlane,
                    bias ? bias[oc + i] : T(0));
        const T *wb = w + oc * cg * ks;
        if (bm == 4) {
          convBlock<T, 4>(g, layout, xg, cg, wb, yb);
          continue;
        }
        for (int64_t i = 0; i < bm; ++i)
          convBlock<T, 1>(g, layout, xg, cg, wb + i * cg * ks,
                          yb + i * outPlane);
      }
    }
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// graph.conv (ConvKernels.h: graph.fused_conv runs it too)
//===----------------------------------------------------------------------===//

namespace nn {

Status inferConv(const Attrs &attrs, const std::vector<ValueInfo> &in,
                 std::vector<ValueInfo> &out) {
  MLCC_CHECK(in.size() >= 2, "conv: expected inputs X and W");
  MLCC_RETURN_IF_ERROR(checkFloat("conv", "input", in[0].dtype));
  MLCC_CHECK(in[1].dtype == in[0].dtype, "conv: weight has type ",
             dtypeName(in[1].dtype), ", expected ", dtypeName(in[0].dtype),
             " like the input");
  Window win;
  MLCC_RETURN_IF_ERROR(
      inferConvLike("conv", attrs, in[0], in[1], out[0].shape, win));
  if (in.size() > 2) {
    MLCC_RETURN_IF_ERROR(checkBias("conv", in[2], in[1].shape[0]));
    MLCC_CHECK(!in[2].present() || in[2].dtype == in[0].dtype,
               "conv: bias has type ", dtypeName(in[2].dtype), ", expected ",
               dtypeName(in[0].dtype));
  }
  out[0].dtype = in[0].dtype;
  return Status::success();
}

/// The resolved geometry of a conv-like op with concrete shapes.
Status concreteConvGeom(const char *op, const Attrs &attrs, const Tensor &x,
                        const Tensor &w, const Tensor &y, Geom3 &g) {
  ValueInfo xi{x.dtype(), x.shape(), &x}, wi{w.dtype(), w.shape(), &w};
  Shape shape;
  Window win;
  MLCC_RETURN_IF_ERROR(inferConvLike(op, attrs, xi, wi, shape, win));
  return makeGeom3(op, Shape(x.shape().begin() + 2, x.shape().end()),
                   Shape(y.shape().begin() + 2, y.shape().end()), win, g);
}

Status runConv(const Attrs &attrs, const std::vector<Tensor> &in,
               std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferConv, attrs, in, out));
  Tensor x = widenHalf(in[0]), w = widenHalf(in[1]);
  Tensor b = in.size() > 2 ? widenHalf(in[2]) : Tensor();
  bool half = isHalfType(out[0].dtype());
  Tensor y = half ? Tensor(DType::F32, out[0].shape()) : out[0];
  Geom3 g;
  MLCC_RETURN_IF_ERROR(concreteConvGeom("conv", attrs, x, w, y, g));
  int64_t groups = attrs.getInt("group", 1);
  if (x.dtype() == DType::F64)
    convForward<double>(g, x.dim(0), x.dim(1), w.dim(0), groups,
                        x.data<double>(), w.data<double>(),
                        b.present() ? b.data<double>() : nullptr,
                        y.data<double>());
  else
    convForward<float>(g, x.dim(0), x.dim(1), w.dim(0), groups, x.data<float>(),
                       w.data<float>(), b.present() ? b.data<float>() : nullptr,
                       y.data<float>());
  if (half)
    narrowHalf(y, out[0]);
  return Status::success();
}

} // namespace nn

namespace {

//===----------------------------------------------------------------------===//
// graph.conv_integer
//===----------------------------------------------------------------------===//

Status inferConvInteger(const Attrs &attrs, const std::vector<ValueInfo> &in,
                        std::vector<ValueInfo> &out) {
  MLCC_CHECK(in.size() >= 2, "conv_integer: expected inputs x and w");
  MLCC_RETURN_IF_ERROR(check8Bit("conv_integer", "input", in[0].dtype));
  MLCC_RETURN_IF_ERROR(check8Bit("conv_integer", "weight", in[1].dtype));
  Window win;
  MLCC_RETURN_IF_ERROR(
      inferConvLike("conv_integer", attrs, in[0], in[1], out[0].shape, win));
  out[0].dtype = DType::I32;
  return Status::success();
}

Status runConvInteger(const Attrs &attrs, const std::vector<Tensor> &in,
                      std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferConvInteger, attrs, in, out));
  const char *op = "conv_integer";
  Tensor none;
  const Tensor &xzp = in.size() > 2 ? in[2] : none;
  const Tensor &wzp = in.size() > 3 ? in[3] : none;
  MLCC_CHECK(!xzp.present() || xzp.numel() == 1, op,
             ": x_zero_point must be a scalar");
  std::vector<int32_t> x, w;
  MLCC_RETURN_IF_ERROR(subtractZeroPoint(op, "input", in[0], xzp, -1, x));
  MLCC_RETURN_IF_ERROR(subtractZeroPoint(op, "weight", in[1], wzp, 0, w));
  Geom3 g;
  MLCC_RETURN_IF_ERROR(concreteConvGeom(op, attrs, in[0], in[1], out[0], g));
  convForward<int32_t>(g, in[0].dim(0), in[0].dim(1), in[1].dim(0),
                       attrs.getInt("group", 1), x.data(), w.data(), nullptr,
                       out[0].data<int32_t>());
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.qlinear_conv
//===----------------------------------------------------------------------===//

// Operands: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
// y_zero_point, B.
Status inferQLinearConv(const Attrs &attrs, const std::vector<ValueInfo> &in,
                        std::vector<ValueInfo> &out) {
  const char *op = "qlinear_conv";
  MLCC_CHECK(in.size() >= 8, op, ": expected at least 8 inputs");
  MLCC_RETURN_IF_ERROR(check8Bit(op, "input", in[0].dtype));
  MLCC_RETURN_IF_ERROR(check8Bit(op, "weight", in[3].dtype));
  MLCC_RETURN_IF_ERROR(check8Bit(op, "y_zero_point", in[7].dtype));
  for (int i : {1, 4, 6})
    MLCC_CHECK(in[i].dtype == DType::F32, op, ": scale operand ", i,
               " has type ", dtypeName(in[i].dtype), ", expected f32");
  Window win;
  MLCC_RETURN_IF_ERROR(
      inferConvLike(op, attrs, in[0], in[3], out[0].shape, win));
  if (in.size() > 8) {
    MLCC_RETURN_IF_ERROR(checkBias(op, in[8], in[3].shape[0]));
    MLCC_CHECK(!in[8].present() || in[8].dtype == DType::I32, op,
               ": bias has type ", dtypeName(in[8].dtype), ", expected i32");
  }
  out[0].dtype = in[7].dtype;
  return Status::success();
}

Status runQLinearConv(const Attrs &attrs, const std::vector<Tensor> &in,
                      std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferQLinearConv, attrs, in, out));
  const char *op = "qlinear_conv";
  int64_t m = in[3].dim(0);
  for (int i : {1, 2, 6, 7})
    MLCC_CHECK(in[i].numel() == 1, op, ": operand ", i,
               " must be a scalar (per-tensor quantization)");
  MLCC_CHECK(in[4].numel() == 1 || in[4].numel() == m, op, ": w_scale has ",
             in[4].numel(), " elements, expected 1 or ", m);
  std::vector<int32_t> x, w;
  MLCC_RETURN_IF_ERROR(subtractZeroPoint(op, "input", in[0], in[2], -1, x));
  MLCC_RETURN_IF_ERROR(subtractZeroPoint(op, "weight", in[3], in[5], 0, w));
  Tensor &y = out[0];
  Geom3 g;
  MLCC_RETURN_IF_ERROR(concreteConvGeom(op, attrs, in[0], in[3], y, g));
  std::vector<int32_t> acc(y.numel());
  const Tensor *b = in.size() > 8 && in[8].present() ? &in[8] : nullptr;
  convForward<int32_t>(g, in[0].dim(0), in[0].dim(1), m,
                       attrs.getInt("group", 1), x.data(), w.data(),
                       b ? b->data<int32_t>() : nullptr, acc.data());
  // Requantize in f32 like the usual runtimes: scale = xs * ws[m] / ys.
  float xs = in[1].data<float>()[0], ys = in[6].data<float>()[0];
  int64_t yzp = in[7].getInt(0), plane = g.outSize();
  for (int64_t i = 0, e = y.numel(); i < e; ++i) {
    int64_t oc = (i / plane) % m;
    float scale = xs * static_cast<float>(paramAt(in[4], oc)) / ys;
    y.setInt(i, requantize(static_cast<float>(acc[i]) * scale, yzp, y.dtype()));
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.conv_transpose
//===----------------------------------------------------------------------===//

/// Output shape and window of conv_transpose: X [N, C, I...] and
/// W [C, M/group, K...] give Y [N, M, O...] with
/// O = stride * (I - 1) + output_padding + dilated K - pads, or the
/// output_shape attribute (the pads then follow from it).
Status inferConvTransposeShape(const Attrs &attrs, const ValueInfo &x,
                               const ValueInfo &w, Shape &out, Window &win) {
  const char *op = "conv_transpose";
  MLCC_CHECK(x.rank() >= 3, op, ": input has rank ", x.rank(),
             ", expected at least 3 (N, C, spatial dims)");
  MLCC_CHECK(w.rank() == x.rank(), op, ": weight has rank ", w.rank(),
             ", expected rank ", x.rank(), " like the input");
  int64_t group = attrs.getInt("group", 1);
  MLCC_CHECK(group >= 1, op, ": group ", group, " must be >= 1");
  int64_t c = x.shape[1], cw = w.shape[0];
  MLCC_CHECK(isDyn(c) || isDyn(cw) || c == cw, op, ": input has ", c,
             " channels but weight has ", cw);
  MLCC_CHECK(isDyn(cw) || cw % group == 0, op, ": ", cw,
             " input channels are not divisible by group ", group);
  size_t nd = x.shape.size() - 2;
  Shape kernel;
  MLCC_RETURN_IF_ERROR(
      kernelDims(op, attrs, Shape(w.shape.begin() + 2, w.shape.end()), kernel));
  MLCC_RETURN_IF_ERROR(readWindow(op, attrs, kernel, win));
  AutoPad autoPad;
  MLCC_RETURN_IF_ERROR(parseAutoPad(op, attrs, autoPad));
  std::vector<int64_t> outPad = attrs.getInts("output_padding");
  if (outPad.empty())
    outPad.assign(nd, 0);
  MLCC_CHECK(outPad.size() == nd, op, ": output_padding has ", outPad.size(),
             " values, expected ", nd);
  std::vector<int64_t> outShape = attrs.getInts("output_shape");
  // output_shape may also be given with the N and C dims.
  if (outShape.size() == nd + 2)
    outShape.erase(outShape.begin(), outShape.begin() + 2);
  MLCC_CHECK(outShape.empty() || outShape.size() == nd, op,
             ": output_shape has ", outShape.size(), " values, expected ", nd);

  int64_t channels = kDynamic;
  MLCC_CHECK(isDyn(w.shape[1]) || mulDims(w.shape[1], group, channels), op,
             ": weight channels ", w.shape[1], " times group ", group,
             " overflow int64");
  out = {x.shape[0], channels};
  for (size_t i = 0; i < nd; ++i) {
    MLCC_CHECK(outPad[i] >= 0, op, ": output_padding must be >= 0");
    int64_t in = x.shape[i + 2];
    bool known = !isDyn(in) && !isDyn(kernel[i]);
    // strides * (in - 1) + output_padding + span, each step checked.
    int64_t full = kDynamic;
    MLCC_CHECK(!known || (mulDims(win.strides[i], in - 1, full) &&
                          addDims(full, outPad[i], full) &&
                          addDims(full, win.span(i), full)),
               op, ": the output size of spatial dim ", i, " overflows int64");
    int64_t o = kDynamic;
    if (!outShape.empty() || autoPad == AutoPad::SameUpper ||
        autoPad == AutoPad::SameLower) {
      if (!outShape.empty())
        o = outShape[i];
      MLCC_CHECK(
          !outShape.empty() || isDyn(in) || mulDims(in, win.strides[i], o), op,
          ": the output size of spatial dim ", i, " overflows int64");
      MLCC_CHECK(isDyn(o) || o >= 0, op, ": output_shape must be >= 0");
      if (known) {
        // A larger output than the full one gets zeros (+bias) at the end.
        int64_t total = std::max<int64_t>(0, full - o);
        int64_t small = total / 2;
        win.padBegin[i] = autoPad == AutoPad::SameUpper ? small : total - small;
        win.padEnd[i] = total - win.padBegin[i];
      }
    } else {
      if (autoPad == AutoPad::Valid)
        win.padBegin[i] = win.padEnd[i] = 0;
      o = known ? full - win.padBegin[i] - win.padEnd[i] : kDynamic;
      MLCC_CHECK(isDyn(o) || o >= 0, op, ": pads remove more than the ", full,
                 " output elements of spatial dim ", i);
    }
    out.push_back(o);
  }
  return Status::success();
}

Status inferConvTranspose(const Attrs &attrs, const std::vector<ValueInfo> &in,
                          std::vector<ValueInfo> &out) {
  MLCC_CHECK(in.size() >= 2, "conv_transpose: expected inputs X and W");
  MLCC_RETURN_IF_ERROR(checkFloat("conv_transpose", "input", in[0].dtype));
  MLCC_CHECK(in[1].dtype == in[0].dtype, "conv_transpose: weight has type ",
             dtypeName(in[1].dtype), ", expected ", dtypeName(in[0].dtype),
             " like the input");
  Window win;
  MLCC_RETURN_IF_ERROR(
      inferConvTransposeShape(attrs, in[0], in[1], out[0].shape, win));
  if (in.size() > 2) {
    MLCC_RETURN_IF_ERROR(checkBias("conv_transpose", in[2], out[0].shape[1]));
    MLCC_CHECK(!in[2].present() || in[2].dtype == in[0].dtype,
               "conv_transpose: bias has type ", dtypeName(in[2].dtype),
               ", expected ", dtypeName(in[0].dtype));
  }
  out[0].dtype = in[0].dtype;
  return Status::success();
}

/// Y[N, M, O] = conv_transpose(X[N, C, I], W[C, M/groups, K]) + bias: every
/// input element scatters into the outputs its kernel taps reach. `g.in`
/// holds the input dims and `g.out` the output dims.
template <typename T>
void convTransposeForward(const Geom3 &g, int64_t n, int64_t c, int64_t m,
                          int64_t groups, const T *x, const T *w, const T *bias,
                          T *y) {
  const int64_t inPlane = g.inSize(), outPlane = g.outSize(), ks = g.kSize();
  const int64_t cg = c / groups, mg = m / groups;
  const int64_t h = g.in[1], wd = g.in[2], oh = g.out[1], ow = g.out[2];
  const int64_t sw = g.s[2];
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t gr = 0; gr < groups; ++gr) {
      for (int64_t mi = 0; mi < mg; ++mi) {
        int64_t oc = gr * mg + mi;
        T *yp = y + (b * m + oc) * outPlane;
        std::fill(yp, yp + outPlane, bias ? bias[oc] : T(0));
        for (int64_t ci = 0; ci < cg; ++ci) {
          const T *xc = x + (b * c + gr * cg + ci) * inPlane;
          const T *wc = w + ((gr * cg + ci) * mg + mi) * ks;
          for (int64_t kd = 0; kd < g.k[0]; ++kd) {
            int64_t offD = kd * g.d[0] - g.pb[0], dLo, dHi;
            validRange(g.out[0], g.s[0], offD, g.in[0], dLo, dHi);
            for (int64_t kh = 0; kh < g.k[1]; ++kh) {
              int64_t offH = kh * g.d[1] - g.pb[1], hLo, hHi;
              validRange(oh, g.s[1], offH, h, hLo, hHi);
              for (int64_t kw = 0; kw < g.k[2]; ++kw) {
                int64_t offW = kw * g.d[2] - g.pb[2], wLo, wHi;
                validRange(ow, sw, offW, wd, wLo, wHi);
                T wv = wc[(kd * g.k[1] + kh) * g.k[2] + kw];
                for (int64_t id = dLo; id < dHi; ++id) {
                  int64_t od = id * g.s[0] + offD;
                  for (int64_t ih = hLo; ih < hHi; ++ih) {
                    int64_t o = ih * g.s[1] + offH;
                    const T *xr = xc + (id * h + ih) * wd;
                    T *yr = yp + (od * oh + o) * ow;
                    for (int64_t j = wLo; j < wHi; ++j)
                      yr[j * sw + offW] += wv * xr[j];
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

Status runConvTranspose(const Attrs &attrs, const std::vector<Tensor> &in,
                        std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferConvTranspose, attrs, in, out));
  Tensor x = widenHalf(in[0]), w = widenHalf(in[1]);
  Tensor b = in.size() > 2 ? widenHalf(in[2]) : Tensor();
  bool half = isHalfType(out[0].dtype());
  Tensor y = half ? Tensor(DType::F32, out[0].shape()) : out[0];
  ValueInfo xi{x.dtype(), x.shape(), &x}, wi{w.dtype(), w.shape(), &w};
  Shape shape;
  Window win;
  MLCC_RETURN_IF_ERROR(inferConvTransposeShape(attrs, xi, wi, shape, win));
  Geom3 g;
  MLCC_RETURN_IF_ERROR(
      makeGeom3("conv_transpose", Shape(x.shape().begin() + 2, x.shape().end()),
                Shape(y.shape().begin() + 2, y.shape().end()), win, g));
  int64_t groups = attrs.getInt("group", 1);
  if (x.dtype() == DType::F64)
    convTransposeForward<double>(g, x.dim(0), x.dim(1), y.dim(1), groups,
                                 x.data<double>(), w.data<double>(),
                                 b.present() ? b.data<double>() : nullptr,
                                 y.data<double>());
  else
    convTransposeForward<float>(g, x.dim(0), x.dim(1), y.dim(1), groups,
                                x.data<float>(), w.data<float>(),
                                b.present() ? b.data<float>() : nullptr,
                                y.data<float>());
  if (half)
    narrowHalf(y, out[0]);
  return Status::success();
}

} // namespace

void registerNNKernels(KernelRegistry &r) {
  r.add("conv", {nn::inferConv, nn::runConv});
  r.add("conv_transpose", {inferConvTranspose, runConvTranspose});
  r.add("conv_integer", {inferConvInteger, runConvInteger});
  r.add("qlinear_conv", {inferQLinearConv, runQLinearConv});
  nn::registerPoolKernels(r);
}

} // namespace mlcc::ref
