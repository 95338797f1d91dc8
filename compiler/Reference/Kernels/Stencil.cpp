//===- Stencil.cpp - graph.stencil: weighted windowed reductions ----------===//
//
// out[o] = reduce_w( in[o * stride + offset + w * dilation] * weight[w] )
// over every window position w, with out-of-range coordinates resolved by the
// padding mode. The reference for the generated stencil kernels.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "mlcc/Reference/StencilModes.h"

#include <cmath>
#include <limits>

namespace mlcc::ref {
namespace {

using Reduction = StencilReduction;
using Padding = StencilPadding;

Status parseModes(const Attrs &attrs, Reduction &red, Padding &pad) {
  std::string r = attrs.getString("reduction", "sum");
  std::string p = attrs.getString("padding", "zero");
  MLCC_CHECK(parseStencilReduction(r, red), "stencil: unknown reduction '",
             r, "'");
  MLCC_CHECK(parseStencilPadding(p, pad), "stencil: unknown padding '", p,
             "'");
  return Status::success();
}

/// Per-dim window parameters, defaulted and checked against the rank.
struct Window {
  std::vector<int64_t> offsets, strides, dilations;
};

Status windowOf(const Attrs &attrs, const Shape &kernel, Window &w) {
  size_t rank = kernel.size();
  w.strides = attrs.getInts("strides", std::vector<int64_t>(rank, 1));
  w.dilations = attrs.getInts("dilations", std::vector<int64_t>(rank, 1));
  if (w.strides.size() != rank || w.dilations.size() != rank)
    return Status::error("stencil: strides and dilations need ", rank,
                         " entries");
  std::vector<int64_t> centred(rank);
  for (size_t d = 0; d < rank; ++d)
    centred[d] = -((kernel[d] - 1) * w.dilations[d]) / 2;
  w.offsets = attrs.getInts("offsets", centred);
  if (w.offsets.size() != rank)
    return Status::error("stencil: offsets need ", rank, " entries");
  for (size_t d = 0; d < rank; ++d)
    if (w.strides[d] < 1 || w.dilations[d] < 1)
      return Status::error("stencil: strides and dilations must be >= 1");
  return Status::success();
}

Status inferStencil(const Attrs &attrs, const std::vector<ValueInfo> &in,
                    std::vector<ValueInfo> &out) {
  MLCC_CHECK(in.size() == 2 && in[0].present() && in[1].present(),
             "stencil: needs an input and weights");
  MLCC_CHECK(in[0].rank() == in[1].rank(), "stencil: weights have rank ",
             in[1].rank(), ", expected the input's rank ", in[0].rank());
  Reduction red;
  Padding pad;
  MLCC_RETURN_IF_ERROR(parseModes(attrs, red, pad));
  Window w;
  MLCC_RETURN_IF_ERROR(windowOf(attrs, in[1].shape, w));
  out[0].dtype = (red == Reduction::ArgMin || red == Reduction::ArgMax)
                     ? DType::I64
                     : in[0].dtype;
  out[0].shape.clear();
  for (int64_t d = 0; d < in[0].rank(); ++d) {
    int64_t n = in[0].shape[d];
    out[0].shape.push_back(isDyn(n) ? kDynamic
                                    : (n + w.strides[d] - 1) / w.strides[d]);
  }
  return Status::success();
}

/// Maps a coordinate outside [0, n) into it; -1 for zero padding.
int64_t resolve(int64_t i, int64_t n, Padding pad) {
  if (i >= 0 && i < n)
    return i;
  switch (pad) {
  case Padding::Zero:
    return -1;
  case Padding::Clamp:
    return i < 0 ? 0 : n - 1;
  case Padding::Reflect: { // ... 2 1 | 0 1 2 ... n-1 | n-2 ...
    if (n == 1)
      return 0;
    int64_t period = 2 * (n - 1);
    int64_t m = ((i % period) + period) % period;
    return m < n ? m : period - m;
  }
  case Padding::Mirror: { // ... 1 0 | 0 1 2 ... n-1 | n-1 n-2 ...
    int64_t period = 2 * n;
    int64_t m = ((i % period) + period) % period;
    return m < n ? m : period - 1 - m;
  }
  }
  return -1;
}

Status runStencil(const Attrs &attrs, const std::vector<Tensor> &in,
                  std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferStencil, attrs, in, out));
  Reduction red;
  Padding pad;
  MLCC_RETURN_IF_ERROR(parseModes(attrs, red, pad));
  Window w;
  MLCC_RETURN_IF_ERROR(windowOf(attrs, in[1].shape(), w));
  const Tensor &x = in[0], &k = in[1];
  Tensor &y = out[0];
  double padValue = attrs.getFloat("padding_value", 0.0f);
  std::vector<int64_t> xStrides = stridesOf(x.shape());
  std::vector<double> weights(k.numel());
  for (int64_t i = 0; i < k.numel(); ++i)
    weights[i] = k.getDouble(i);
  size_t rank = x.shape().size();
  forEachIndex(y.shape(), [&](const std::vector<int64_t> &o, int64_t linear) {
    double acc = red == Reduction::Sum ? 0.0
                 : (red == Reduction::Min || red == Reduction::ArgMin)
                     ? std::numeric_limits<double>::infinity()
                     : -std::numeric_limits<double>::infinity();
    int64_t best = 0;
    forEachIndex(k.shape(), [&](const std::vector<int64_t> &wi, int64_t wl) {
      int64_t offset = 0;
      bool outside = false;
      for (size_t d = 0; d < rank; ++d) {
        int64_t c = resolve(o[d] * w.strides[d] + w.offsets[d] +
                                wi[d] * w.dilations[d],
                            x.dim(d), pad);
        if (c < 0) {
          outside = true;
          break;
        }
        offset += c * xStrides[d];
      }
      double v = (outside ? padValue : x.getDouble(offset)) * weights[wl];
      switch (red) {
      case Reduction::Sum:
        acc += v;
        break;
      case Reduction::Min:
      case Reduction::ArgMin:
        if (v < acc) { // first minimum wins
          acc = v;
          best = wl;
        }
        break;
      case Reduction::Max:
      case Reduction::ArgMax:
        if (v > acc) {
          acc = v;
          best = wl;
        }
        break;
      }
    });
    if (red == Reduction::ArgMin || red == Reduction::ArgMax)
      y.setInt(linear, best);
    else
      y.setDouble(linear, acc);
  });
  return Status::success();
}

} // namespace

void registerStencilKernels(KernelRegistry &r) {
  r.add("stencil", {inferStencil, runStencil});
}

} // namespace mlcc::ref
