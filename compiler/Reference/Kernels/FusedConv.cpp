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
#include "KernelUtils.h"

#include <cmath>
#include <string>

namespace mlcc::ref {
namespace {

const char *const kActivations[] = {
    "none", "relu", "leaky_relu", "clip",      "sigmoid",
    "tanh", "silu", "gelu",       "gelu_tanh", "hard_swish"};

Status checkActivation(const std::string &act) {
  for (const char *a : kActivations)
    if (act == a)
      return Status::success();
  return Status::error("fused_conv: unknown activation '", act, "'");
}

/// out = mnemonic(in) with the registered reference kernel.
Status runKernel(const char *mnemonic, const Attrs &attrs,
                 std::vector<Tensor> in, Tensor &out) {
  const KernelDef *k = KernelRegistry::get().find(mnemonic);
  MLCC_CHECK(k && k->run, "fused_conv: no reference kernel for graph.",
             mnemonic);
  std::vector<Tensor> results(1);
  MLCC_RETURN_IF_ERROR(k->run(attrs, in, results));
  out = std::move(results[0]);
  return Status::success();
}

/// A rank-0 tensor of `dtype` holding `v`: clip's bounds.
Tensor scalar(DType dtype, double v) {
  Tensor t(dtype, {});
  t.setDouble(0, v);
  return t;
}

Status applyActivation(const Attrs &attrs, Tensor &y) {
  std::string act = attrs.getString("activation", "none");
  float alpha = attrs.getFloat("activation_alpha", 0.0f);
  float beta = attrs.getFloat("activation_beta", 0.0f);
  if (act == "none")
    return Status::success();
  if (act == "relu" || act == "sigmoid" || act == "tanh" || act == "hard_swish")
    return runKernel(act.c_str(), Attrs(), {y}, y);
  if (act == "leaky_relu")
    return runKernel("leaky_relu", Attrs{{"alpha", alpha}}, {y}, y);
  if (act == "clip")
    return runKernel("clip", Attrs(),
                     {y, scalar(y.dtype(), alpha), scalar(y.dtype(), beta)}, y);
  if (act == "gelu" || act == "gelu_tanh")
    return runKernel(
        "gelu",
        Attrs{{"approximate", std::string(act == "gelu" ? "none" : "tanh")}},
        {y}, y);
  if (act == "silu") {
    Tensor s;
    MLCC_RETURN_IF_ERROR(runKernel("sigmoid", Attrs(), {y}, s));
    return runKernel("mul", Attrs(), {y, s}, y);
  }
  return checkActivation(act);
}

// graph.fused_conv: X, W, B (or none), Z (or none).
Status inferFusedConv(const Attrs &attrs, const std::vector<ValueInfo> &in,
                      std::vector<ValueInfo> &out) {
  MLCC_CHECK(in.size() >= 2, "fused_conv: expected inputs X and W");
  std::vector<ValueInfo> convIn(in.begin(),
                                in.begin() + std::min<size_t>(in.size(), 3));
  MLCC_RETURN_IF_ERROR(nn::inferConv(attrs, convIn, out));
  MLCC_RETURN_IF_ERROR(checkActivation(attrs.getString("activation", "none")));
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
    MLCC_RETURN_IF_ERROR(runKernel("add", Attrs(), {y, in[3]}, y));
  MLCC_RETURN_IF_ERROR(applyActivation(attrs, y));
  out[0] = std::move(y);
  return Status::success();
}

} // namespace

void registerFusedConvKernels(KernelRegistry &r) {
  r.add("fused_conv", {inferFusedConv, runFusedConv});
}

} // namespace mlcc::ref
