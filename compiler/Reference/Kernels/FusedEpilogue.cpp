//===- FusedEpilogue.cpp - What the fused ops' reference kernels share ----===//

#include "FusedEpilogue.h"

namespace mlcc::ref::fused {

Status runRegistered(const char *caller, const char *name, const Attrs &attrs,
                     const std::vector<Tensor> &in, Tensor &out) {
  const KernelDef *def = KernelRegistry::get().find(name);
  MLCC_CHECK(def && def->run, caller, ": no reference kernel for graph.", name);
  std::vector<Tensor> results(1);
  MLCC_RETURN_IF_ERROR(def->run(attrs, in, results));
  out = std::move(results[0]);
  return Status::success();
}

Status checkActivation(const char *caller, const std::string &act) {
  for (const char *known : {"none", "relu", "leaky_relu", "clip", "sigmoid",
                            "tanh", "silu", "gelu", "gelu_tanh", "hard_swish"})
    if (act == known)
      return Status::success();
  return Status::error(caller, ": unknown activation '", act, "'");
}

Status applyActivation(const char *caller, const Attrs &attrs, Tensor &y) {
  std::string act = attrs.getString("activation", "none");
  float alpha = attrs.getFloat("activation_alpha", 0.0f);
  float beta = attrs.getFloat("activation_beta", 0.0f);
  auto run = [&](const char *name, const Attrs &a,
                 const std::vector<Tensor> &in, Tensor &out) {
    return runRegistered(caller, name, a, in, out);
  };
  if (act == "none")
    return Status::success();
  if (act == "relu" || act == "sigmoid" || act == "tanh" || act == "hard_swish")
    return run(act.c_str(), Attrs(), {y}, y);
  if (act == "leaky_relu")
    return run("leaky_relu", Attrs{{"alpha", alpha}}, {y}, y);
  if (act == "clip") {
    Tensor lo(y.dtype(), {}), hi(y.dtype(), {});
    lo.setDouble(0, alpha);
    hi.setDouble(0, beta);
    return run("clip", Attrs(), {y, lo, hi}, y);
  }
  if (act == "silu") { // x * sigmoid(x), as Sigmoid then Mul
    Tensor s;
    MLCC_RETURN_IF_ERROR(run("sigmoid", Attrs(), {y}, s));
    return run("mul", Attrs(), {y, s}, y);
  }
  if (act == "gelu" || act == "gelu_tanh")
    return run(
        "gelu",
        Attrs{{"approximate", std::string(act == "gelu" ? "none" : "tanh")}},
        {y}, y);
  return checkActivation(caller, act);
}

} // namespace mlcc::ref::fused
