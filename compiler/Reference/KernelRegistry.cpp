//===- KernelRegistry.cpp - Reference kernels by op mnemonic --------------===//

#include "mlcc/Reference/Kernel.h"

#include <algorithm>

namespace mlcc::ref {

const KernelRegistry &KernelRegistry::get() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    registerElementwiseKernels(r);
    registerReductionKernels(r);
    registerShapeKernels(r);
    registerIndexingKernels(r);
    registerNNKernels(r);
    registerMatmulKernels(r);
    registerRecurrentKernels(r);
    registerMiscKernels(r);
    registerStencilKernels(r);
    registerFcKernels(r);
    registerFusedConvKernels(r);
    registerGeluKernels(r);
    registerAttentionKernels(r);
    registerEmbedLayerNormKernels(r);
    registerSkipLayerNormKernels(r);
    return r;
  }();
  return registry;
}

const KernelDef *KernelRegistry::find(const std::string &mnemonic) const {
  auto it = kernels_.find(mnemonic);
  return it == kernels_.end() ? nullptr : &it->second;
}

std::vector<std::string> KernelRegistry::names() const {
  std::vector<std::string> out;
  for (auto &kv : kernels_)
    out.push_back(kv.first);
  std::sort(out.begin(), out.end());
  return out;
}

Status allocateOutputs(ShapeFn inferShapes, const Attrs &attrs,
                       const std::vector<Tensor> &inputs,
                       std::vector<Tensor> &outputs) {
  std::vector<ValueInfo> in(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    in[i].dtype = inputs[i].dtype();
    in[i].shape = inputs[i].shape();
    in[i].value = inputs[i].present() ? &inputs[i] : nullptr;
  }
  std::vector<ValueInfo> out(outputs.size());
  MLCC_RETURN_IF_ERROR(inferShapes(attrs, in, out));
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].present())
      continue;
    for (int64_t d : out[i].shape)
      MLCC_CHECK(d >= 0, "output ", i, " has unresolved shape ",
                 shapeToString(out[i].shape));
    outputs[i] = Tensor(out[i].dtype, out[i].shape);
  }
  return Status::success();
}

} // namespace mlcc::ref
