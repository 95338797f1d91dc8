//===- EmbedLayerNorm.cpp - graph.embed_layer_norm reference kernel -------===//
//
// Y = layer_norm(Table[Ids] + Addend) over the last axis, the op
// mlcc-fuse-embed-layer-norm forms from a BERT export's embeddings. It runs
// the registered gather, add and layer_norm kernels in that order, so it
// computes what that group computes (the pass sums the group's two addends
// into one first).
//
//===----------------------------------------------------------------------===//

#include "FusedEpilogue.h"

namespace mlcc::ref {
namespace {

// Inputs: Ids [B, S] (integers), Table [V, D] f32, Addend broadcasting to
// [B, S, D], Scale [D], B [D] or absent.
Status inferEmbedLayerNorm(const Attrs &, const std::vector<ValueInfo> &in,
                           std::vector<ValueInfo> &out) {
  MLCC_CHECK(in.size() == 5,
             "embed_layer_norm: expected inputs Ids, Table, "
             "Addend, Scale and B, got ",
             in.size());
  const ValueInfo &ids = in[0], &table = in[1];
  MLCC_CHECK(isSignedInt(ids.dtype) && ids.rank() == 2,
             "embed_layer_norm: Ids must be signed integers of rank 2, got ",
             dtypeName(ids.dtype), " ", shapeToString(ids.shape));
  MLCC_CHECK(table.dtype == DType::F32 && table.rank() == 2,
             "embed_layer_norm: Table must be f32 of rank 2, got ",
             dtypeName(table.dtype), " ", shapeToString(table.shape));
  for (size_t i = 2; i < 5; ++i)
    MLCC_CHECK(!in[i].present() || in[i].dtype == DType::F32,
               "embed_layer_norm: input ", i, " must be f32");
  out.resize(1);
  out[0].dtype = DType::F32;
  out[0].shape = {ids.shape[0], ids.shape[1], table.shape[1]};
  return Status::success();
}

Status runEmbedLayerNorm(const Attrs &attrs, const std::vector<Tensor> &in,
                         std::vector<Tensor> &out) {
  Tensor e;
  MLCC_RETURN_IF_ERROR(fused::runRegistered("embed_layer_norm", "gather",
                                            Attrs{{"axis", int64_t{0}}},
                                            {in[1], in[0]}, e));
  MLCC_RETURN_IF_ERROR(
      fused::runRegistered("embed_layer_norm", "add", Attrs(), {e, in[2]}, e));
  Attrs norm{{"axis", int64_t{-1}},
             {"epsilon", attrs.getFloat("epsilon", 1e-5f)}};
  out.resize(1);
  return fused::runRegistered("embed_layer_norm", "layer_norm", norm,
                              {e, in[3], in[4]}, out[0]);
}

} // namespace

void registerEmbedLayerNormKernels(KernelRegistry &r) {
  r.add("embed_layer_norm", {inferEmbedLayerNorm, runEmbedLayerNorm});
}

} // namespace mlcc::ref
