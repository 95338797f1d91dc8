//===- Misc.cpp - NonMaxSuppression, Det and the misc family --------------===//
//
// Holds the family's entry point registerMiscKernels, which also registers
// the ops of Resize.cpp, Quantize.cpp, Signal.cpp and Sampling.cpp.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "MiscKernels.h"

#include <cmath>
#include <numeric>

namespace mlcc::ref {
namespace {

//===----------------------------------------------------------------------===//
// graph.non_max_suppression
//===----------------------------------------------------------------------===//

Status checkNms(const std::vector<ValueInfo> &in) {
  MLCC_CHECK(in.size() >= 2 && in[0].present() && in[1].present(),
             "non_max_suppression: boxes and scores are required");
  const ValueInfo &boxes = in[0], &scores = in[1];
  MLCC_CHECK(isFloatType(boxes.dtype) && isFloatType(scores.dtype),
             "non_max_suppression: boxes and scores must be float tensors");
  MLCC_CHECK(boxes.rank() == 3 &&
                 (isDyn(boxes.shape[2]) || boxes.shape[2] == 4),
             "non_max_suppression: boxes has shape ",
             shapeToString(boxes.shape), ", expected [batches, boxes, 4]");
  MLCC_CHECK(scores.rank() == 3, "non_max_suppression: scores has rank ",
             scores.rank(), ", expected 3 ([batches, classes, boxes])");
  auto same = [](int64_t a, int64_t b) {
    return isDyn(a) || isDyn(b) || a == b;
  };
  MLCC_CHECK(same(boxes.shape[0], scores.shape[0]) &&
                 same(boxes.shape[1], scores.shape[2]),
             "non_max_suppression: scores ", shapeToString(scores.shape),
             " does not match boxes ", shapeToString(boxes.shape));
  for (size_t i = 2; i < in.size() && i < 5; ++i)
    MLCC_CHECK(!in[i].present() || numElements(in[i].shape) == 1 ||
                   in[i].rank() == 0,
               "non_max_suppression: operand ", i, " must be a scalar");
  return Status::success();
}

Status inferNms(const Attrs &, const std::vector<ValueInfo> &in,
                std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(checkNms(in));
  // The number of selected boxes depends on the data.
  out[0] = ValueInfo{DType::I64, {kDynamic, 3}, nullptr};
  return Status::success();
}

struct Box {
  double xMin, yMin, xMax, yMax;
};

/// Corner form of box `i` of batch `b`, whatever the input format.
Box boxAt(const Tensor &boxes, int64_t b, int64_t i, bool centerPoint) {
  int64_t o = (b * boxes.dim(1) + i) * 4;
  double v0 = boxes.getDouble(o), v1 = boxes.getDouble(o + 1),
         v2 = boxes.getDouble(o + 2), v3 = boxes.getDouble(o + 3);
  if (centerPoint) // [x_center, y_center, width, height]
    return {v0 - v2 / 2, v1 - v3 / 2, v0 + v2 / 2, v1 + v3 / 2};
  // [y1, x1, y2, x2], any pair of diagonal corners.
  return {std::min(v1, v3), std::min(v0, v2), std::max(v1, v3),
          std::max(v0, v2)};
}

double iou(const Box &a, const Box &b) {
  double iw = std::min(a.xMax, b.xMax) - std::max(a.xMin, b.xMin);
  double ih = std::min(a.yMax, b.yMax) - std::max(a.yMin, b.yMin);
  if (iw <= 0 || ih <= 0)
    return 0;
  double inter = iw * ih;
  double areaA = (a.xMax - a.xMin) * (a.yMax - a.yMin);
  double areaB = (b.xMax - b.xMin) * (b.yMax - b.yMin);
  double uni = areaA + areaB - inter;
  if (areaA <= 0 || areaB <= 0 || uni <= 0)
    return 0;
  return inter / uni;
}

Status runNms(const Attrs &attrs, const std::vector<Tensor> &in,
              std::vector<Tensor> &out) {
  std::vector<ValueInfo> info;
  for (const Tensor &t : in)
    info.push_back(ValueInfo{t.dtype(), t.shape(), &t});
  MLCC_RETURN_IF_ERROR(checkNms(info));
  const Tensor &boxes = in[0], &scores = in[1];
  auto scalar = [&](size_t i) {
    return i < in.size() && in[i].present() && in[i].numel() == 1 ? &in[i]
                                                                  : nullptr;
  };
  int64_t maxPerClass = scalar(2) ? scalar(2)->getInt(0) : 0;
  double iouThreshold = scalar(3) ? scalar(3)->getDouble(0) : 0.0;
  bool useScoreThreshold = scalar(4) != nullptr;
  double scoreThreshold = useScoreThreshold ? scalar(4)->getDouble(0) : 0.0;
  int64_t centerPointBox = attrs.getInt("center_point_box", 0);
  MLCC_CHECK(centerPointBox == 0 || centerPointBox == 1,
             "non_max_suppression: center_point_box must be 0 or 1, got ",
             centerPointBox);

  const int64_t numBatches = scores.dim(0), numClasses = scores.dim(1),
                numBoxes = scores.dim(2);
  std::vector<int64_t> selected; // triples
  for (int64_t b = 0; b < numBatches; ++b) {
    for (int64_t c = 0; c < numClasses; ++c) {
      const int64_t base = (b * numClasses + c) * numBoxes;
      std::vector<int64_t> order;
      for (int64_t i = 0; i < numBoxes; ++i)
        if (!useScoreThreshold || scores.getDouble(base + i) > scoreThreshold)
          order.push_back(i);
      // Highest score first; ties keep the lower box index first.
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
        return scores.getDouble(base + x) > scores.getDouble(base + y);
      });
      std::vector<Box> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= maxPerClass)
          break;
        Box box = boxAt(boxes, b, i, centerPointBox == 1);
        bool suppressed = false;
        for (const Box &k : kept)
          if (iou(box, k) > iouThreshold) {
            suppressed = true;
            break;
          }
        if (suppressed)
          continue;
        kept.push_back(box);
        selected.insert(selected.end(), {b, c, i});
      }
    }
  }
  int64_t n = static_cast<int64_t>(selected.size() / 3);
  out[0] = Tensor(DType::I64, {n, 3});
  for (int64_t i = 0; i < 3 * n; ++i)
    out[0].data<int64_t>()[i] = selected[i];
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.det
//===----------------------------------------------------------------------===//

Status inferDet(const Attrs &, const std::vector<ValueInfo> &in,
                std::vector<ValueInfo> &out) {
  MLCC_CHECK(!in.empty() && in[0].present(), "det: X is required");
  const ValueInfo &x = in[0];
  MLCC_CHECK(isFloatType(x.dtype), "det: X has dtype ", dtypeName(x.dtype),
             ", expected a float type");
  MLCC_CHECK(x.rank() >= 2, "det: X has rank ", x.rank(),
             ", expected at least 2");
  int64_t m = x.shape[x.rank() - 2], n = x.shape[x.rank() - 1];
  MLCC_CHECK(isDyn(m) || isDyn(n) || m == n, "det: X has shape ",
             shapeToString(x.shape), ", its last two dims must be equal");
  out[0] =
      ValueInfo{x.dtype, Shape(x.shape.begin(), x.shape.end() - 2), nullptr};
  return Status::success();
}

Status runDet(const Attrs &attrs, const std::vector<Tensor> &in,
              std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferDet, attrs, in, out));
  const Tensor &x = in[0];
  const int64_t n = x.dim(x.rank() - 1);
  const int64_t count = out[0].numel();
  std::vector<double> a(n * n);
  for (int64_t m = 0; m < count; ++m) {
    for (int64_t i = 0; i < n * n; ++i)
      a[i] = x.getDouble(m * n * n + i);
    // LU decomposition with partial pivoting: det = sign * prod(diagonal).
    double det = 1.0;
    for (int64_t k = 0; k < n && det != 0; ++k) {
      int64_t p = k;
      for (int64_t i = k + 1; i < n; ++i)
        if (std::fabs(a[i * n + k]) > std::fabs(a[p * n + k]))
          p = i;
      if (a[p * n + k] == 0) {
        det = 0;
        break;
      }
      if (p != k) {
        for (int64_t j = 0; j < n; ++j)
          std::swap(a[k * n + j], a[p * n + j]);
        det = -det;
      }
      det *= a[k * n + k];
      for (int64_t i = k + 1; i < n; ++i) {
        double f = a[i * n + k] / a[k * n + k];
        for (int64_t j = k + 1; j < n; ++j)
          a[i * n + j] -= f * a[k * n + j];
      }
    }
    out[0].setDouble(m, det);
  }
  return Status::success();
}

} // namespace

void registerMiscKernels(KernelRegistry &r) {
  misc::registerResizeKernels(r);
  misc::registerQuantizeKernels(r);
  misc::registerSignalKernels(r);
  misc::registerSamplingKernels(r);
  r.add("non_max_suppression", {inferNms, runNms});
  r.add("det", {inferDet, runDet});
}

} // namespace mlcc::ref
