//===- SkipLayerNorm.cpp - graph.skip_layer_norm reference kernel ---------===//
//
// Y = layer_norm(X + Skip) over the last axis, the op
// mlcc-fuse-skip-layer-norm forms from a transformer's "add & norm". It
// runs the registered add and layer_norm kernels, so it computes exactly
// what that pair computes.
//
//===----------------------------------------------------------------------===//

#include "FusedEpilogue.h"

namespace mlcc::ref {
namespace {

// Inputs: X and Skip of one shape, Scale [D], B [D] or absent; all f32.
Status inferSkipLayerNorm(const Attrs &, const std::vector<ValueInfo> &in,
                          std::vector<ValueInfo> &out) {
  MLCC_CHECK(in.size() == 4,
             "skip_layer_norm: expected inputs X, Skip, Scale and B, got ",
             in.size());
  const ValueInfo &x = in[0], &skip = in[1];
  MLCC_CHECK(x.dtype == DType::F32 && x.rank() >= 1,
             "skip_layer_norm: X must be f32 of rank >= 1, got ",
             dtypeName(x.dtype), " ", shapeToString(x.shape));
  MLCC_CHECK(skip.dtype == DType::F32 && skip.shape == x.shape,
             "skip_layer_norm: Skip must be f32 of X's shape ",
             shapeToString(x.shape), ", got ", dtypeName(skip.dtype), " ",
             shapeToString(skip.shape));
  for (size_t i = 2; i < 4; ++i)
    MLCC_CHECK(!in[i].present() || in[i].dtype == DType::F32,
               "skip_layer_norm: input ", i, " must be f32");
  out.resize(1);
  out[0] = x;
  return Status::success();
}

Status runSkipLayerNorm(const Attrs &attrs, const std::vector<Tensor> &in,
                        std::vector<Tensor> &out) {
  Tensor sum;
  MLCC_RETURN_IF_ERROR(fused::runRegistered("skip_layer_norm", "add", Attrs(),
                                            {in[0], in[1]}, sum));
  Attrs norm{{"axis", int64_t{-1}},
             {"epsilon", attrs.getFloat("epsilon", 1e-5f)}};
  out.resize(1);
  return fused::runRegistered("skip_layer_norm", "layer_norm", norm,
                              {sum, in[2], in[3]}, out[0]);
}

} // namespace

void registerSkipLayerNormKernels(KernelRegistry &r) {
  r.add("skip_layer_norm", {inferSkipLayerNorm, runSkipLayerNorm});
}

} // namespace mlcc::ref
