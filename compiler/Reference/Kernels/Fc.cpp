//===- Fc.cpp - graph.fc reference kernel ---------------------------------===//
//
// Y = act(X W + B + Z), the op mlcc-fuse-fc forms from MatMul, Add (bias),
// Add (residual) and an activation. It computes exactly what that group
// computed: the product is the matmul kernel's (rows of X times W in one
// matmulAcc), the bias and the residual are added in that order, and the
// activation is the registered kernel of the activation op itself, so the
// fused op cannot drift from the ops it replaces. f32 runs in place; other
// float types go through the matmul and add kernels.
//
//===----------------------------------------------------------------------===//

#include "FusedEpilogue.h"
#include "ConvPoolUtils.h"

#include <cfloat>
#include <cmath>

namespace mlcc::ref {
namespace {

using namespace nn;

//===----------------------------------------------------------------------===//
// graph.fc
//===----------------------------------------------------------------------===//

// Inputs: X [..., K], W [K, N], B [N] or absent, Z [..., N] or absent.
Status inferFc(const Attrs &attrs, const std::vector<ValueInfo> &in,
               std::vector<ValueInfo> &out) {
  MLCC_CHECK(in.size() == 4, "fc: expected inputs X, W, B and Z, got ",
             in.size());
  const ValueInfo &x = in[0], &w = in[1], &b = in[2], &z = in[3];
  MLCC_RETURN_IF_ERROR(checkFloat("fc", "X", x.dtype));
  MLCC_CHECK(w.dtype == x.dtype, "fc: W has type ", dtypeName(w.dtype),
             ", expected ", dtypeName(x.dtype), " like X");
  MLCC_CHECK(x.rank() >= 2, "fc: X has shape ", shapeToString(x.shape),
             ", expected rank >= 2");
  MLCC_CHECK(w.rank() == 2, "fc: W has shape ", shapeToString(w.shape),
             ", expected K x N");
  int64_t k = x.shape.back(), n = w.shape[1];
  MLCC_CHECK(isDyn(k) || isDyn(w.shape[0]) || k == w.shape[0],
             "fc: X has shape ", shapeToString(x.shape), " but W is ",
             shapeToString(w.shape));
  std::string act = attrs.getString("activation", "none");
  MLCC_RETURN_IF_ERROR(fused::checkActivation("fc", act));
  out[0].dtype = x.dtype;
  out[0].shape.assign(x.shape.begin(), x.shape.end() - 1);
  out[0].shape.push_back(n);
  if (b.present()) {
    MLCC_CHECK(b.dtype == x.dtype, "fc: B has type ", dtypeName(b.dtype),
               ", expected ", dtypeName(x.dtype));
    MLCC_CHECK(
        b.rank() == 1 && (isDyn(b.shape[0]) || isDyn(n) || b.shape[0] == n),
        "fc: B has shape ", shapeToString(b.shape), ", expected [", n, "]");
  }
  if (z.present()) {
    MLCC_CHECK(z.dtype == x.dtype, "fc: Z has type ", dtypeName(z.dtype),
               ", expected ", dtypeName(x.dtype));
    bool same = z.rank() == static_cast<int64_t>(out[0].shape.size());
    for (size_t i = 0; same && i < z.shape.size(); ++i)
      same = isDyn(z.shape[i]) || isDyn(out[0].shape[i]) ||
             z.shape[i] == out[0].shape[i];
    MLCC_CHECK(same, "fc: Z has shape ", shapeToString(z.shape),
               ", expected the result's ", shapeToString(out[0].shape));
  }
  return Status::success();
}

Status runFc(const Attrs &attrs, const std::vector<Tensor> &in,
             std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferFc, attrs, in, out));
  const Tensor &x = in[0], &w = in[1], &b = in[2], &z = in[3];
  Tensor &y = out[0];
  if (y.dtype() != DType::F32) {
    MLCC_RETURN_IF_ERROR(
        fused::runRegistered("fc", "matmul", Attrs(), {x, w}, y));
    if (b.present())
      MLCC_RETURN_IF_ERROR(
          fused::runRegistered("fc", "add", Attrs(), {y, b}, y));
    if (z.present())
      MLCC_RETURN_IF_ERROR(
          fused::runRegistered("fc", "add", Attrs(), {y, z}, y));
    return fused::applyActivation("fc", attrs, y);
  }
  // f32: the matmul kernel's product (the output starts at zero), then the
  // adds in place.
  int64_t k = w.dim(0), n = w.dim(1);
  int64_t rows = n ? y.numel() / n : 0;
  float *yv = y.data<float>();
  matmulAcc(x.data<float>(), w.data<float>(), yv, rows, k, n);
  const float *bv = b.present() ? b.data<float>() : nullptr;
  const float *zv = z.present() ? z.data<float>() : nullptr;
  if (bv || zv)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float v = yv[i * n + j];
        if (bv)
          v = v + bv[j];
        if (zv)
          v = v + zv[i * n + j];
        yv[i * n + j] = v;
      }
  return fused::applyActivation("fc", attrs, y);
}

} // namespace

void registerFcKernels(KernelRegistry &r) { r.add("fc", {inferFc, runFc}); }

} // namespace mlcc::ref
