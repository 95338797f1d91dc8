//===- FoldPad.cpp - zero padding folded into the window op after it ------===//
//
// Exporters write some padded windows as an explicit Pad: torch's AvgPool2d
// with count_include_pad (Inception v3's pool branches), a conv with
// "same" padding from TensorFlow. Each Pad is a copy of its whole tensor,
// and on a backend with blocked layouts a reorder to the plain layout and
// back around it (Inception v3, 2 threads on Zen 5: 2.2 of 36 ms in Pads).
//
// A zero Pad of the spatial dims before a conv is the conv's pads made
// larger. Before an average pool it is the pool's pads with
// count_include_pad = 1: the zeros count, as they did when they were data.
// Then the users read the Pad's input and the Pad goes. The results are
// the same sums over the same values. A Pad of zero pads (torch's export of
// AvgPool2d(2, 2) has one, DenseNet's transitions) is its input.
//
// Fires when the Pad is constant mode with value 0 (or none), constant pads
// >= 0 and none on N and C, and every user reads it as its input (X) and
// is a conv or an average pool with explicit pads (auto_pad NOTSET or
// VALID); a pool also needs ceil_mode 0 (ceil_mode would keep a last window
// that starts in pads but not one that starts in data) and
// count_include_pad = 1 or no pads of its own (its own pads must count the
// same way as the Pad's).
//
//===----------------------------------------------------------------------===//

#include "Passes.h"
#include "PatternUtils.h"

#include "GraphDialect.h"

namespace mlcc::graph {
#define GEN_PASS_DEF_FOLDPAD
#include "Passes.h.inc"
} // namespace mlcc::graph

using namespace mlir;

namespace mlcc::graph {
namespace {

/// The spatial pads (ONNX order: every dim's begin, then every end) of a
/// Pad that adds zeros to the spatial dims only; empty otherwise.
SmallVector<int64_t> spatialZeroPads(PadOp pad) {
  auto type = dyn_cast<RankedTensorType>(pad.getData().getType());
  if (!type || type.getRank() < 3 || !isa<FloatType>(type.getElementType()))
    return {};
  if (auto mode = pad.getModeAttr(); mode && mode.getValue() != "constant")
    return {};
  if (!isa<NoneType>(pad.getConstantValue().getType())) {
    ref::Tensor value;
    if (!constantTensor(pad.getConstantValue(), value) || value.numel() != 1 ||
        value.getDouble(0) != 0.0)
      return {};
  }
  ref::Tensor pads;
  const int64_t rank = type.getRank();
  if (!constantTensor(pad.getPads(), pads) || pads.numel() != 2 * rank)
    return {};
  std::vector<int64_t> all = pads.toInt64Vector();
  if (all[0] != 0 || all[1] != 0 || all[rank] != 0 || all[rank + 1] != 0 ||
      llvm::any_of(all, [](int64_t p) { return p < 0; }) ||
      llvm::all_of(all, [](int64_t p) { return p == 0; }))
    return {};
  SmallVector<int64_t> spatial(all.begin() + 2, all.begin() + rank);
  spatial.append(all.begin() + rank + 2, all.end());
  return spatial;
}

/// The window op's own pads (zeros for VALID or none given); empty when it
/// cannot take more.
SmallVector<int64_t> ownPads(Operation *op, size_t count) {
  auto autoPad = op->getAttrOfType<StringAttr>("auto_pad");
  const bool valid = autoPad && autoPad.getValue() == "VALID";
  if (autoPad && autoPad.getValue() != "NOTSET" && !valid)
    return {};
  SmallVector<int64_t> pads(count, 0);
  auto attr = op->getAttrOfType<ArrayAttr>("pads");
  if (attr && !valid) {
    if (attr.size() != count)
      return {};
    for (auto [i, a] : llvm::enumerate(attr))
      pads[i] = cast<IntegerAttr>(a).getInt();
  }
  if (isa<AveragePoolOp>(op)) {
    auto ceil = op->getAttrOfType<IntegerAttr>("ceil_mode");
    auto include = op->getAttrOfType<IntegerAttr>("count_include_pad");
    bool counts = include && include.getInt() != 0;
    if ((ceil && ceil.getInt() != 0) ||
        (!counts && llvm::any_of(pads, [](int64_t p) { return p != 0; })))
      return {};
  }
  return pads;
}

/// A Pad that adds nothing: all its pads constant zeros.
bool padsNothing(PadOp pad) {
  ref::Tensor pads;
  return pad.getData().getType() == pad.getOutput().getType() &&
         constantTensor(pad.getPads(), pads) &&
         llvm::all_of(pads.toInt64Vector(), [](int64_t p) { return p == 0; });
}

bool fold(PadOp pad) {
  if (padsNothing(pad)) {
    pad.getOutput().replaceAllUsesWith(pad.getData());
    pad->erase();
    return true;
  }
  SmallVector<int64_t> added = spatialZeroPads(pad);
  Value padded = pad.getOutput();
  if (added.empty() || padded.use_empty())
    return false;
  SmallVector<std::pair<Operation *, SmallVector<int64_t>>> users;
  for (OpOperand &use : padded.getUses()) {
    Operation *user = use.getOwner();
    if (!isa<ConvOp, AveragePoolOp>(user) || use.getOperandNumber() != 0)
      return false;
    SmallVector<int64_t> pads = ownPads(user, added.size());
    if (pads.empty())
      return false;
    users.push_back({user, pads});
  }
  Builder b(pad.getContext());
  for (auto &[user, pads] : users) {
    for (size_t i = 0; i < pads.size(); ++i)
      pads[i] += added[i];
    user->setAttr("pads", b.getI64ArrayAttr(pads));
    user->removeAttr("auto_pad");
    if (isa<AveragePoolOp>(user))
      user->setAttr("count_include_pad", b.getI64IntegerAttr(1));
    user->setOperand(0, pad.getData());
  }
  pad->erase();
  return true;
}

struct FoldPad : impl::FoldPadBase<FoldPad> {
  void runOnOperation() override {
    SmallVector<PadOp> pads;
    getOperation().walk([&](PadOp op) { pads.push_back(op); });
    for (PadOp pad : pads)
      fold(pad);
  }
};

} // namespace
} // namespace mlcc::graph
