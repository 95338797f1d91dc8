//===- FusedConv.cpp - graph.fused_conv reference kernel ------------------===//
//
// Y = act(conv(X, W, B) + Z). The kernel runs the very kernels of the ops
// that mlcc-fuse-conv-epilogue replaced, in their order: graph.conv, then
// graph.add with the residual, then the activation's own kernel (silu is
// sigmoid then mul, as the x * sigmoid(x) it was formed from). So the fused
// op computes bit for bit what the group computed, in every dtype the group
// accepted, and the oracle keeps one definition of each function.
//
//===----------------------------------------------------------------------===//

#include "ConvKernels.h"
#include "FusedEpilogue.h"

#include <cmath>
#include <string>

namespace mlcc::ref {
namespace {

// graph.fused_conv: X, W, B (or none), Z (or none).
Status inferFusedConv(const Attrs &attrs, const std::vector<ValueInfo> &in,
                      std::vector<ValueInfo> &out) {
  MLCC_CHECK(in.size() >= 2, "fused_conv: expected inputs X and W");
  std::vector<ValueInfo> convIn(in.begin(),
                                in.begin() + std::min<size_t>(in.size(), 3));
  MLCC_RETURN_IF_ERROR(nn::inferConv(attrs, convIn, out));
  MLCC_RETURN_IF_ERROR(fused::checkActivation(
      "fused_conv", attrs.getString("activation", "none")));
  if (in.size() < 4 || !in[3].present())
    return Status::success();
  const ValueInfo &z = in[3];
  MLCC_CHECK(z.dtype == out[0].dtype, "fused_conv: residual has type ",
             dtypeName(z.dtype), ", expected ", dtypeName(out[0].dtype));
  bool same = z.shape.size() == out[0].shape.size();
  for (size_t i = 0; same && i < z.shape.size(); ++i)
    same = isDyn(z.shape[i]) || isDyn(out[0].shape[i]) ||
           z.shape[i] == out[0].shape[i];
  MLCC_CHECK(same, "fused_conv: residual has shape ", shapeToString(z.shape),
             ", expected the result's ", shapeToString(out[0].shape));
  // A residual may know dims the conv's shape helper leaves dynamic.
  for (size_t i = 0; i < z.shape.size(); ++i)
    if (isDyn(out[0].shape[i]))
      out[0].shape[i] = z.shape[i];
  return Status::success();
}

Status runFusedConv(const Attrs &attrs, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferFusedConv, attrs, in, out));
  std::vector<Tensor> convIn(in.begin(),
                             in.begin() + std::min<size_t>(in.size(), 3));
  std::vector<Tensor> conv(1);
  MLCC_RETURN_IF_ERROR(nn::runConv(attrs, convIn, conv));
  Tensor y = std::move(conv[0]);
  if (in.size() > 3 && in[3].present())
    MLCC_RETURN_IF_ERROR(
        fused::runRegistered("fused_conv", "add", Attrs(), {y, in[3]}, y));
  MLCC_RETURN_IF_ERROR(fused::applyActivation("fused_conv", attrs, y));
  out[0] = std::move(y);
  return Status::success();
}

} // namespace

void registerFusedConvKernels(KernelRegistry &r) {
  r.add("fused_conv", {inferFusedConv, runFusedConv});
}

} // namespace mlcc::ref
