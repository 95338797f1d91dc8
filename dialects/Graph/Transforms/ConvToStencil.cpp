//===- ConvToStencil.cpp - single-channel convolution -> graph.stencil ----===//
//
// A convolution from one channel to one channel (a Laplacian or blur on an
// image, a solver's neighbour sum) is a weighted window sum: graph.stencil
// with `sum` and zero padding computes it exactly. As a stencil it keeps
// its plain layout; as a conv, a backend with blocked channel layouts pads
// the single channel to a block (AVX-512: 16x the work, and a reorder each
// way around it, which is most of a Jacobi iteration's time).
//
// Fires for f32 convs with constant weights [1, 1, k...], no bias, group 1,
// explicit pads, and an output the size ceil(input / stride) a stencil
// gives (the "same" padding such filters use).
//
//===----------------------------------------------------------------------===//

#include "Passes.h"
#include "PatternUtils.h"

#include "GraphDialect.h"

namespace mlcc::graph {
#define GEN_PASS_DEF_CONVTOSTENCIL
#include "Passes.h.inc"
} // namespace mlcc::graph

using namespace mlir;

namespace mlcc::graph {
namespace {

SmallVector<int64_t> intsOr(Operation *op, StringRef name, size_t n,
                            int64_t dflt) {
  SmallVector<int64_t> v(n, dflt);
  if (auto attr = op->getAttrOfType<ArrayAttr>(name)) {
    if (attr.size() != n)
      return {};
    for (auto [i, a] : llvm::enumerate(attr))
      v[i] = cast<IntegerAttr>(a).getInt();
  }
  return v;
}

bool rewrite(ConvOp conv) {
  Operation *op = conv.getOperation();
  auto x = dyn_cast<RankedTensorType>(conv.getX().getType());
  auto w = dyn_cast<RankedTensorType>(conv.getW().getType());
  auto y = dyn_cast<RankedTensorType>(conv.getY().getType());
  ref::Tensor weights;
  if (!x || !w || !y || !x.hasStaticShape() || !y.hasStaticShape() ||
      !x.getElementType().isF32() || x.getRank() < 3 ||
      w.getRank() != x.getRank() || x.getDimSize(1) != 1 ||
      w.getDimSize(0) != 1 || w.getDimSize(1) != 1 ||
      !isa<NoneType>(conv.getB().getType()) ||
      !constantF32(conv.getW(), weights))
    return false;
  if (auto group = op->getAttrOfType<IntegerAttr>("group"))
    if (group.getInt() != 1)
      return false;
  if (auto autoPad = op->getAttrOfType<StringAttr>("auto_pad"))
    if (autoPad.getValue() != "NOTSET")
      return false;

  size_t spatial = x.getRank() - 2;
  SmallVector<int64_t> strides = intsOr(op, "strides", spatial, 1);
  SmallVector<int64_t> dilations = intsOr(op, "dilations", spatial, 1);
  SmallVector<int64_t> pads = intsOr(op, "pads", 2 * spatial, 0);
  if (strides.empty() || dilations.empty() || pads.empty())
    return false;
  // The stencil's window attributes cover every dim: N and C get a window
  // of 1 at offset 0.
  SmallVector<int64_t> offsets{0, 0}, allStrides{1, 1}, allDilations{1, 1};
  for (size_t d = 0; d < spatial; ++d) {
    int64_t n = x.getDimSize(2 + d);
    if (y.getDimSize(2 + d) != (n + strides[d] - 1) / strides[d])
      return false;
    offsets.push_back(-pads[d]);
    allStrides.push_back(strides[d]);
    allDilations.push_back(dilations[d]);
  }

  OpBuilder b(op);
  auto stencil = b.create<StencilOp>(
      op->getLoc(), y, conv.getX(), conv.getW(), b.getStringAttr("sum"),
      b.getStringAttr("zero"), b.getF32FloatAttr(0.0f),
      b.getI64ArrayAttr(offsets), b.getI64ArrayAttr(allStrides),
      b.getI64ArrayAttr(allDilations));
  conv.getY().replaceAllUsesWith(stencil.getOutput());
  op->erase();
  return true;
}

struct ConvToStencil : impl::ConvToStencilBase<ConvToStencil> {
  void runOnOperation() override {
    SmallVector<ConvOp> convs;
    getOperation().walk([&](ConvOp op) { convs.push_back(op); });
    for (ConvOp conv : convs)
      rewrite(conv);
  }
};

} // namespace
} // namespace mlcc::graph
