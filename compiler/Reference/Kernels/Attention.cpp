//===- Attention.cpp - graph.attention reference kernel -------------------===//
//
// Y = concat over heads h of softmax(Q_h K_h^T * scale + mask) V_h, the op
// mlcc-fuse-attention forms from a BERT-style self-attention block. It
// computes exactly what that group computed: the heads are split out by
// plain copies (the group's reshapes and transposes), and the products, the
// mask add and the softmax are the registered kernels of the matmul, add
// and softmax ops themselves, on the same [B, H, S, S] tensors. The pass
// only forms the op when its scale is applied as the group applied it
// (a multiply on the scores, or a power of two), so the scaling multiply
// here rounds as the group's did.
//
//===----------------------------------------------------------------------===//

#include "FusedEpilogue.h"

namespace mlcc::ref {
namespace {

bool dimsMatch(int64_t a, int64_t b) { return isDyn(a) || isDyn(b) || a == b; }

// Inputs: Q, K, V [B, S, H*D]; mask broadcastable to [B, H, S, S] or absent.
Status inferAttention(const Attrs &attrs, const std::vector<ValueInfo> &in,
                      std::vector<ValueInfo> &out) {
  MLCC_CHECK(in.size() == 4,
             "attention: expected inputs Q, K, V and mask, got ", in.size());
  const ValueInfo &q = in[0], &k = in[1], &v = in[2], &m = in[3];
  MLCC_CHECK(q.dtype == DType::F32, "attention: Q has type ",
             dtypeName(q.dtype), ", expected f32");
  for (const ValueInfo *x : {&q, &k, &v}) {
    MLCC_CHECK(x->dtype == q.dtype && x->rank() == 3,
               "attention: Q, K and V must be f32 of rank 3, got ",
               shapeToString(x->shape));
    for (int64_t d = 0; d < 3; ++d)
      MLCC_CHECK(dimsMatch(x->shape[d], q.shape[d]),
                 "attention: Q, K and V have different shapes ",
                 shapeToString(q.shape), " and ", shapeToString(x->shape));
  }
  int64_t heads = attrs.getInt("num_heads", 0);
  MLCC_CHECK(heads > 0, "attention: num_heads must be positive");
  MLCC_CHECK(isDyn(q.shape[2]) || q.shape[2] % heads == 0,
             "attention: hidden size ", q.shape[2],
             " is not a multiple of num_heads ", heads);
  if (m.present()) {
    MLCC_CHECK(m.dtype == q.dtype && m.rank() <= 4,
               "attention: mask must be f32 of rank <= 4, got ",
               shapeToString(m.shape));
    int64_t full[4] = {q.shape[0], heads, q.shape[1], q.shape[1]};
    for (int64_t i = 0; i < m.rank(); ++i) {
      int64_t d = m.shape[m.rank() - 1 - i], f = full[3 - i];
      MLCC_CHECK(d == 1 || dimsMatch(d, f), "attention: mask of shape ",
                 shapeToString(m.shape), " does not broadcast to [B, H, S, S]");
    }
  }
  out[0].dtype = q.dtype;
  out[0].shape = q.shape;
  return Status::success();
}

/// [B, S, H, D] -> [B, H, S, D] (or [B, H, D, S] when `kTransposed`).
Tensor splitHeads(const Tensor &x, int64_t heads, bool kTransposed) {
  int64_t b = x.dim(0), s = x.dim(1), d = x.dim(2) / heads;
  Tensor t(DType::F32,
           kTransposed ? Shape{b, heads, d, s} : Shape{b, heads, s, d});
  const float *src = x.data<float>();
  float *dst = t.data<float>();
  for (int64_t ib = 0; ib < b; ++ib)
    for (int64_t is = 0; is < s; ++is)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t id = 0; id < d; ++id) {
          float val = src[((ib * s + is) * heads + h) * d + id];
          int64_t o = kTransposed ? ((ib * heads + h) * d + id) * s + is
                                  : ((ib * heads + h) * s + is) * d + id;
          dst[o] = val;
        }
  return t;
}

Status runAttention(const Attrs &attrs, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferAttention, attrs, in, out));
  const Tensor &q = in[0], &k = in[1], &v = in[2], &mask = in[3];
  int64_t heads = attrs.getInt("num_heads", 0);
  float scale = attrs.getFloat("scale", 1.0f);
  Tensor scores;
  MLCC_RETURN_IF_ERROR(fused::runRegistered(
      "attention", "matmul", Attrs(),
      {splitHeads(q, heads, false), splitHeads(k, heads, true)}, scores));
  float *sv = scores.data<float>();
  for (int64_t i = 0, n = scores.numel(); i < n; ++i)
    sv[i] = sv[i] * scale;
  if (mask.present())
    MLCC_RETURN_IF_ERROR(fused::runRegistered("attention", "add", Attrs(),
                                              {scores, mask}, scores));
  MLCC_RETURN_IF_ERROR(fused::runRegistered(
      "attention", "softmax", Attrs{{"axis", int64_t{-1}}}, {scores}, scores));
  Tensor ctx;
  MLCC_RETURN_IF_ERROR(
      fused::runRegistered("attention", "matmul", Attrs(),
                           {scores, splitHeads(v, heads, false)}, ctx));
  // [B, H, S, D] -> [B, S, H*D]
  int64_t b = q.dim(0), s = q.dim(1), d = q.dim(2) / heads;
  const float *cv = ctx.data<float>();
  float *y = out[0].data<float>();
  for (int64_t ib = 0; ib < b; ++ib)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t is = 0; is < s; ++is)
        for (int64_t id = 0; id < d; ++id)
          y[((ib * s + is) * heads + h) * d + id] =
              cv[((ib * heads + h) * s + is) * d + id];
  return Status::success();
}

} // namespace

void registerAttentionKernels(KernelRegistry &r) {
  r.add("attention", {inferAttention, runAttention});
}

} // namespace mlcc::ref
