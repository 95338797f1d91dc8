//===- Sampling.cpp - GridSample and RoiAlign reference kernels -----------===//
//
// Ops that sample a feature map at computed, fractional locations.
// GridSample follows torch.nn.functional.grid_sample (the ONNX tests are
// made with it); RoiAlign follows onnxruntime's RoiAlign, which the spec
// was written from.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "MiscKernels.h"

#include <cmath>

namespace mlcc::ref::misc {
namespace {

std::vector<ValueInfo> infosOf(const std::vector<Tensor> &in) {
  std::vector<ValueInfo> v(in.size());
  for (size_t i = 0; i < in.size(); ++i)
    v[i] = ValueInfo{in[i].dtype(), in[i].shape(),
                     in[i].present() ? &in[i] : nullptr};
  return v;
}

std::vector<double> toDoubles(const Tensor &t) {
  std::vector<double> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i)
    v[i] = t.getDouble(i);
  return v;
}

//===----------------------------------------------------------------------===//
// graph.grid_sample
//===----------------------------------------------------------------------===//

enum class Padding { Zeros, Border, Reflection };
enum class SampleMode { Bilinear, Nearest, Bicubic };

struct GridParams {
  SampleMode mode = SampleMode::Bilinear;
  Padding padding = Padding::Zeros;
  bool alignCorners = false;
};

Status resolveGrid(const Attrs &attrs, const std::vector<ValueInfo> &in,
                   GridParams &p) {
  MLCC_CHECK(in.size() >= 2 && in[0].present() && in[1].present(),
             "grid_sample: X and grid are required");
  const ValueInfo &x = in[0], &grid = in[1];
  MLCC_CHECK(x.rank() == 4, "grid_sample: X has rank ", x.rank(),
             ", expected 4 (N, C, H, W)");
  MLCC_CHECK(grid.rank() == 4 && (isDyn(grid.shape[3]) || grid.shape[3] == 2),
             "grid_sample: grid has shape ", shapeToString(grid.shape),
             ", expected [N, H_out, W_out, 2]");
  MLCC_CHECK(
      isDyn(x.shape[0]) || isDyn(grid.shape[0]) || x.shape[0] == grid.shape[0],
      "grid_sample: X has batch ", x.shape[0], " but grid has ", grid.shape[0]);
  MLCC_CHECK(isFloatType(grid.dtype), "grid_sample: grid must be float");
  std::string mode = attrs.getString("mode", "bilinear");
  if (mode == "bilinear" || mode == "linear")
    p.mode = SampleMode::Bilinear;
  else if (mode == "nearest")
    p.mode = SampleMode::Nearest;
  else if (mode == "bicubic" || mode == "cubic")
    p.mode = SampleMode::Bicubic;
  else
    return Status::error("grid_sample: unknown mode '", mode, "'");
  std::string pad = attrs.getString("padding_mode", "zeros");
  if (pad == "zeros")
    p.padding = Padding::Zeros;
  else if (pad == "border")
    p.padding = Padding::Border;
  else if (pad == "reflection")
    p.padding = Padding::Reflection;
  else
    return Status::error("grid_sample: unknown padding_mode '", pad, "'");
  p.alignCorners = attrs.getInt("align_corners", 0) != 0;
  return Status::success();
}

Status inferGridSample(const Attrs &attrs, const std::vector<ValueInfo> &in,
                       std::vector<ValueInfo> &out) {
  GridParams p;
  MLCC_RETURN_IF_ERROR(resolveGrid(attrs, in, p));
  const Shape &xs = in[0].shape, &gs = in[1].shape;
  out[0] = ValueInfo{in[0].dtype, {xs[0], xs[1], gs[1], gs[2]}, nullptr};
  return Status::success();
}

/// Grid value in [-1, 1] to a pixel coordinate.
double unnormalize(double c, int64_t size, bool align) {
  return align ? (c + 1) / 2 * (size - 1) : ((c + 1) * size - 1) / 2;
}

double clipCoord(double c, int64_t size) {
  return std::min(static_cast<double>(size - 1), std::max(c, 0.0));
}

/// Reflects c into [twiceLow / 2, twiceHigh / 2] as often as needed.
double reflectCoord(double c, double twiceLow, double twiceHigh) {
  if (twiceLow == twiceHigh)
    return 0;
  double mn = twiceLow / 2, span = (twiceHigh - twiceLow) / 2;
  c = std::fabs(c - mn);
  if (!std::isfinite(c))
    return c; // NaN stays NaN, an infinity is clipped by the caller
  double extra = std::fmod(c, span);
  // The parity in double: a grid value far out has more flips than int64.
  double flips = std::floor(c / span);
  return std::fmod(flips, 2.0) == 0 ? extra + mn : span - extra + mn;
}

/// Applies the padding mode to a pixel coordinate.
double padCoord(double c, int64_t size, const GridParams &p) {
  if (p.padding == Padding::Border)
    return clipCoord(c, size);
  if (p.padding == Padding::Reflection) {
    c = p.alignCorners ? reflectCoord(c, 0, 2.0 * (size - 1))
                       : reflectCoord(c, -1, 2.0 * size - 1);
    return clipCoord(c, size);
  }
  return c;
}

Status runGridSample(const Attrs &attrs, const std::vector<Tensor> &in,
                     std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferGridSample, attrs, in, out));
  GridParams p;
  MLCC_RETURN_IF_ERROR(resolveGrid(attrs, infosOf(in), p));
  const std::vector<double> x = toDoubles(in[0]);
  const Tensor &grid = in[1];
  Tensor &y = out[0];
  const int64_t N = in[0].dim(0), C = in[0].dim(1), H = in[0].dim(2),
                W = in[0].dim(3), Ho = grid.dim(1), Wo = grid.dim(2);
  // Pixel (xi, yi) of plane `plane`, 0 outside the input.
  // Takes integral coordinates as double so that far-off (or nan) grid
  // values are rejected before any conversion to an integer.
  auto at = [&](const double *plane, double xi, double yi) {
    if (!(xi >= 0 && xi < W && yi >= 0 && yi < H))
      return 0.0;
    return plane[static_cast<int64_t>(yi) * W + static_cast<int64_t>(xi)];
  };
  const double A = -0.75; // torch's bicubic coefficient
  auto cubicWeights = [A](double t, double w[4]) {
    auto nearW = [A](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };
    auto farW = [A](double d) {
      return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A;
    };
    w[0] = farW(t + 1);
    w[1] = nearW(t);
    w[2] = nearW(1 - t);
    w[3] = farW(2 - t);
  };
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < Ho; ++h)
      for (int64_t w = 0; w < Wo; ++w) {
        int64_t g = ((n * Ho + h) * Wo + w) * 2;
        double gx = unnormalize(grid.getDouble(g), W, p.alignCorners);
        double gy = unnormalize(grid.getDouble(g + 1), H, p.alignCorners);
        for (int64_t c = 0; c < C; ++c) {
          const double *plane = &x[(n * C + c) * H * W];
          double v = 0;
          if (p.mode == SampleMode::Bicubic) {
            // Padding applies to each of the 4x4 taps, not the coordinate.
            double x0 = std::floor(gx), y0 = std::floor(gy);
            double wx[4], wy[4];
            cubicWeights(gx - x0, wx);
            cubicWeights(gy - y0, wy);
            for (int i = 0; i < 4; ++i)
              for (int j = 0; j < 4; ++j) {
                double tx = padCoord(x0 - 1 + j, W, p);
                double ty = padCoord(y0 - 1 + i, H, p);
                v += wy[i] * wx[j] * at(plane, std::trunc(tx), std::trunc(ty));
              }
          } else {
            double ix = padCoord(gx, W, p), iy = padCoord(gy, H, p);
            if (p.mode == SampleMode::Nearest) {
              v = at(plane, std::nearbyint(ix), std::nearbyint(iy));
            } else {
              double x0 = std::floor(ix), y0 = std::floor(iy);
              double lx = ix - x0, ly = iy - y0;
              v = (1 - ly) * ((1 - lx) * at(plane, x0, y0) +
                              lx * at(plane, x0 + 1, y0)) +
                  ly * ((1 - lx) * at(plane, x0, y0 + 1) +
                        lx * at(plane, x0 + 1, y0 + 1));
            }
          }
          y.setDouble(((n * C + c) * Ho + h) * Wo + w, v);
        }
      }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.roi_align
//===----------------------------------------------------------------------===//

Status checkRoiAlign(const Attrs &attrs, const std::vector<ValueInfo> &in) {
  MLCC_CHECK(in.size() >= 3 && in[0].present() && in[1].present() &&
                 in[2].present(),
             "roi_align: X, rois and batch_indices are required");
  const ValueInfo &x = in[0], &rois = in[1], &idx = in[2];
  MLCC_CHECK(isFloatType(x.dtype) && rois.dtype == x.dtype,
             "roi_align: X and rois must be float tensors of one dtype");
  MLCC_CHECK(x.rank() == 4, "roi_align: X has rank ", x.rank(),
             ", expected 4 (N, C, H, W)");
  MLCC_CHECK(rois.rank() == 2 && (isDyn(rois.shape[1]) || rois.shape[1] == 4),
             "roi_align: rois has shape ", shapeToString(rois.shape),
             ", expected [num_rois, 4]");
  MLCC_CHECK(isSignedInt(idx.dtype) && idx.rank() == 1,
             "roi_align: batch_indices must be a 1-D integer tensor");
  MLCC_CHECK(isDyn(idx.shape[0]) || isDyn(rois.shape[0]) ||
                 idx.shape[0] == rois.shape[0],
             "roi_align: batch_indices has ", idx.shape[0],
             " entries but there are ", rois.shape[0], " rois");
  std::string mode = attrs.getString("mode", "avg");
  MLCC_CHECK(mode == "avg" || mode == "max", "roi_align: unknown mode '", mode,
             "'");
  std::string ctm =
      attrs.getString("coordinate_transformation_mode", "half_pixel");
  MLCC_CHECK(ctm == "half_pixel" || ctm == "output_half_pixel",
             "roi_align: unknown coordinate_transformation_mode '", ctm, "'");
  MLCC_CHECK(attrs.getInt("output_height", 1) > 0 &&
                 attrs.getInt("output_width", 1) > 0,
             "roi_align: output_height and output_width must be positive");
  MLCC_CHECK(attrs.getInt("sampling_ratio", 0) >= 0,
             "roi_align: sampling_ratio must not be negative");
  return Status::success();
}

Status inferRoiAlign(const Attrs &attrs, const std::vector<ValueInfo> &in,
                     std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(checkRoiAlign(attrs, in));
  out[0] = ValueInfo{in[0].dtype,
                     {in[1].shape[0], in[0].shape[1],
                      attrs.getInt("output_height", 1),
                      attrs.getInt("output_width", 1)},
                     nullptr};
  return Status::success();
}

Status runRoiAlign(const Attrs &attrs, const std::vector<Tensor> &in,
                   std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferRoiAlign, attrs, in, out));
  const std::vector<double> x = toDoubles(in[0]);
  const Tensor &rois = in[1], &batchIdx = in[2];
  Tensor &y = out[0];
  const int64_t N = in[0].dim(0), C = in[0].dim(1), H = in[0].dim(2),
                W = in[0].dim(3), R = rois.dim(0);
  const int64_t oh = attrs.getInt("output_height", 1),
                ow = attrs.getInt("output_width", 1),
                ratio = attrs.getInt("sampling_ratio", 0);
  const double scale = attrs.getFloat("spatial_scale", 1.0f);
  const bool isMax = attrs.getString("mode", "avg") == "max";
  const bool halfPixel = attrs.getString("coordinate_transformation_mode",
                                         "half_pixel") == "half_pixel";
  const double offset = halfPixel ? 0.5 : 0.0;
  MLCC_CHECK(R == 0 || C == 0 || (H > 0 && W > 0),
             "roi_align: X has an empty spatial extent ",
             shapeToString(in[0].shape()));

  // One bilinear sample: four (index, weight) pairs in a plane; all weights
  // 0 when the point lies more than one pixel outside the map.
  struct Sample {
    int64_t pos[4];
    double w[4];
  };
  auto sampleAt = [&](double yy, double xx) {
    Sample s{{0, 0, 0, 0}, {0, 0, 0, 0}};
    if (yy < -1.0 || yy > H || xx < -1.0 || xx > W)
      return s;
    yy = std::max(yy, 0.0);
    xx = std::max(xx, 0.0);
    int64_t yl = static_cast<int64_t>(yy), xl = static_cast<int64_t>(xx);
    // At the last row or column both neighbours are the edge pixel.
    if (yl >= H - 1) {
      yl = H - 1;
      yy = static_cast<double>(yl);
    }
    if (xl >= W - 1) {
      xl = W - 1;
      xx = static_cast<double>(xl);
    }
    int64_t yh = std::min(yl + 1, H - 1), xh = std::min(xl + 1, W - 1);
    double ly = yy - yl, lx = xx - xl, hy = 1 - ly, hx = 1 - lx;
    s = Sample{{yl * W + xl, yl * W + xh, yh * W + xl, yh * W + xh},
               {hy * hx, hy * lx, ly * hx, ly * lx}};
    return s;
  };

  for (int64_t r = 0; r < R; ++r) {
    int64_t b = batchIdx.getInt(r);
    MLCC_CHECK(b >= 0 && b < N, "roi_align: batch_indices[", r, "] = ", b,
               " is outside [0, ", N, ")");
    double x1 = rois.getDouble(r * 4) * scale - offset;
    double y1 = rois.getDouble(r * 4 + 1) * scale - offset;
    double x2 = rois.getDouble(r * 4 + 2) * scale - offset;
    double y2 = rois.getDouble(r * 4 + 3) * scale - offset;
    double rw = x2 - x1, rh = y2 - y1;
    if (!halfPixel) // legacy: rois at least one pixel large
      rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    double binH = rh / oh, binW = rw / ow;
    int64_t gridH =
        ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rh / oh));
    int64_t gridW =
        ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rw / ow));
    double count = static_cast<double>(std::max<int64_t>(gridH * gridW, 1));
    for (int64_t c = 0; c < C; ++c) {
      const double *plane = &x[(b * C + c) * H * W];
      for (int64_t ph = 0; ph < oh; ++ph)
        for (int64_t pw = 0; pw < ow; ++pw) {
          double acc = 0;
          bool first = true;
          for (int64_t iy = 0; iy < gridH; ++iy) {
            double yy = y1 + ph * binH + (iy + 0.5) * binH / gridH;
            for (int64_t ix = 0; ix < gridW; ++ix) {
              double xx = x1 + pw * binW + (ix + 0.5) * binW / gridW;
              Sample s = sampleAt(yy, xx);
              if (isMax) {
                // onnxruntime's max mode: the largest weighted corner.
                double v = s.w[0] * plane[s.pos[0]];
                for (int k = 1; k < 4; ++k)
                  v = std::max(v, s.w[k] * plane[s.pos[k]]);
                acc = first ? v : std::max(acc, v);
                first = false;
              } else {
                for (int k = 0; k < 4; ++k)
                  acc += s.w[k] * plane[s.pos[k]];
              }
            }
          }
          y.setDouble(((r * C + c) * oh + ph) * ow + pw,
                      isMax ? acc : acc / count);
        }
    }
  }
  return Status::success();
}

} // namespace

void registerSamplingKernels(KernelRegistry &r) {
  r.add("grid_sample", {inferGridSample, runGridSample});
  r.add("roi_align", {inferRoiAlign, runRoiAlign});
}

} // namespace mlcc::ref::misc
