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

Status checkShapeFits(const Shape &shape, DType dtype) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end())
    return Status::success(); // no elements, whatever the other dims say
  int64_t bytes = static_cast<int64_t>(dtypeSize(dtype));
  for (int64_t d : shape) {
    if (d == kDynamic)
      continue;
    MLCC_CHECK(d >= 0, "shape ", shapeToString(shape), " has negative dim ", d);
    MLCC_CHECK(!__builtin_mul_overflow(bytes, d, &bytes), "shape ",
               shapeToString(shape), " of ", dtypeName(dtype),
               ": its byte size overflows int64");
  }
  return Status::success();
}

Status inferShapesChecked(ShapeFn inferShapes, const Attrs &attrs,
                          const std::vector<ValueInfo> &inputs,
                          std::vector<ValueInfo> &outputs) {
  MLCC_RETURN_IF_ERROR(inferShapes(attrs, inputs, outputs));
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].present())
      continue;
    Status s = checkShapeFits(outputs[i].shape, outputs[i].dtype);
    if (s.failed())
      return Status::error("result #", i, ": ", s.message());
  }
  return Status::success();
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
  MLCC_RETURN_IF_ERROR(inferShapesChecked(inferShapes, attrs, in, out));
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].present())
      continue;
    for (int64_t d : out[i].shape)
      MLCC_CHECK(d >= 0, "output ", i, " has unresolved shape ",
                 shapeToString(out[i].shape));
    MLCC_CHECK(Tensor::allocate(out[i].dtype, out[i].shape, outputs[i]),
               "out of memory: output ", i, " of shape ",
               shapeToString(out[i].shape), " needs ",
               numElements(out[i].shape) *
                   static_cast<int64_t>(dtypeSize(out[i].dtype)),
               " bytes");
  }
  return Status::success();
}

} // namespace mlcc::ref
