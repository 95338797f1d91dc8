//===- SelectConvTranspose.cpp - ConvTranspose -> direct conv kernels -----===//
//
// A transposed conv of stride s scatters each input pixel's taps onto
// outputs s apart. Taken by output phase r (the outputs o with o mod s == r,
// per spatial dim) it gathers instead: output q of phase r is
//
//   sum_t x[q + d - t] * W[k0 + s t],   k0 = (r + pad) mod s,
//                                        d = (r + pad) div s,
//
// a stride-1 conv over x with the taps k0, k0 + s, ... of the kernel in
// reverse order and its input and output channels swapped. So a 2-D
// transposed conv runs as s x s direct conv kernels, each writing its
// lattice of the output (ConvSpec::dstFrame): no zeros inserted into the
// input (s x s times the FLOPs) and no scatter. A 1-D one is a 2-D one of
// height 1.
//
// Declined (the portable scatter takes them): dilations, 3-D, groups the
// conv kernels do not cover, a phase without taps (a stride above the
// kernel) and pads so large that a phase would need negative ones.
//
//===----------------------------------------------------------------------===//

#include "BlockedLayout.h"
#include "Conv.h"
#include "SelectionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// A transposed conv's geometry on the spec's two spatial dims.
struct TransposedWindow {
  int64_t in[2] = {1, 1}, kernel[2] = {1, 1}, strides[2] = {1, 1},
          padBegin[2] = {0, 0}, out[2] = {1, 1};
};

/// Reads the window as the reference does (pads, output_padding,
/// output_shape, auto_pad); false for what the kernels do not cover or a
/// result shape that does not follow.
bool readTransposedWindow(Operation *op, ArrayRef<int64_t> xs,
                          ArrayRef<int64_t> ws, ArrayRef<int64_t> ys,
                          TransposedWindow &win) {
  const size_t dims = xs.size() - 2;
  std::vector<int64_t> strides = intsAttr(op, "strides"),
                       dilations = intsAttr(op, "dilations"),
                       pads = intsAttr(op, "pads"),
                       outPad = intsAttr(op, "output_padding"),
                       outShape = intsAttr(op, "output_shape"),
                       kernelShape = intsAttr(op, "kernel_shape");
  if (outShape.size() == dims + 2)
    outShape.erase(outShape.begin(), outShape.begin() + 2);
  if (strides.empty())
    strides.assign(dims, 1);
  if (dilations.empty())
    dilations.assign(dims, 1);
  if (pads.empty())
    pads.assign(2 * dims, 0);
  if (outPad.empty())
    outPad.assign(dims, 0);
  if (strides.size() != dims || dilations.size() != dims ||
      pads.size() != 2 * dims || outPad.size() != dims ||
      (!outShape.empty() && outShape.size() != dims) ||
      (!kernelShape.empty() &&
       ArrayRef<int64_t>(kernelShape) != ws.drop_front(2)) ||
      llvm::any_of(dilations, [](int64_t d) { return d != 1; }))
    return false;
  const std::string autoPad = stringAttr(op, "auto_pad", "NOTSET");
  const bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  for (size_t i = 0; i < dims; ++i) {
    const int slot = static_cast<int>(i + 2 - dims);
    const int64_t in = xs[2 + i], k = ws[2 + i], s = strides[i];
    if (s < 1 || s > 1024 || outPad[i] < 0)
      return false;
    const int64_t full = s * (in - 1) + outPad[i] + k;
    int64_t begin = pads[i], o;
    if (!outShape.empty() || same) {
      o = !outShape.empty() ? outShape[i] : in * s;
      const int64_t total = std::max<int64_t>(0, full - o);
      begin = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else {
      if (autoPad == "VALID")
        begin = 0;
      o = full - begin - (autoPad == "VALID" ? 0 : pads[dims + i]);
    }
    if (o != ys[2 + i] || begin < 0)
      return false;
    win.in[slot] = in;
    win.kernel[slot] = k;
    win.strides[slot] = s;
    win.padBegin[slot] = begin;
    win.out[slot] = o;
  }
  return true;
}

/// One output phase along one dim: how many outputs it has, and its conv's
/// taps (firstTap, firstTap + stride, ...) and pads.
struct PhaseDim {
  int64_t outputs = 0, firstTap = 0, taps = 0, padBegin = 0, padEnd = 0;
};

/// Phase `r` along `dim`; false when its conv is not one the kernel takes
/// (no taps, or negative pads).
bool planPhase(const TransposedWindow &win, int dim, int64_t r,
               PhaseDim &phase) {
  const int64_t s = win.strides[dim], in = win.in[dim];
  phase.outputs = r < win.out[dim] ? (win.out[dim] - r + s - 1) / s : 0;
  if (phase.outputs == 0)
    return true;
  phase.firstTap = (r + win.padBegin[dim]) % s;
  const int64_t shift = (r + win.padBegin[dim]) / s;
  if (phase.firstTap >= win.kernel[dim])
    return false;
  phase.taps = (win.kernel[dim] - phase.firstTap + s - 1) / s;
  phase.padBegin = phase.taps - 1 - shift;
  phase.padEnd = phase.outputs - 1 + phase.taps - in - phase.padBegin;
  return phase.padBegin >= 0 && phase.padEnd >= 0;
}

/// One phase's conv weights [M, C / group, taps, taps] from the transposed
/// conv's W [C, M / group, K0, K1]: input and output channels swap within
/// each group, and the phase's taps run backwards.
std::vector<float> phaseWeights(const std::vector<float> &w, int64_t c,
                                int64_t m, int64_t group,
                                const TransposedWindow &win,
                                const PhaseDim (&phase)[2]) {
  const int64_t cg = c / group, mg = m / group;
  const int64_t t0 = phase[0].taps, t1 = phase[1].taps;
  const int64_t k0 = win.kernel[0], k1 = win.kernel[1];
  std::vector<float> out(static_cast<size_t>(m * cg * t0 * t1));
  size_t at = 0;
  for (int64_t o = 0; o < m; ++o) {
    const int64_t g = o / mg, mo = o % mg;
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t j0 = 0; j0 < t0; ++j0)
        for (int64_t j1 = 0; j1 < t1; ++j1) {
          const int64_t kh = phase[0].firstTap + win.strides[0] * (t0 - 1 - j0);
          const int64_t kw = phase[1].firstTap + win.strides[1] * (t1 - 1 - j1);
          out[at++] = w[static_cast<size_t>(
              (((g * cg + ci) * mg + mo) * k0 + kh) * k1 + kw)];
        }
  }
  return out;
}

} // namespace

TargetLowering selectConvTranspose(Operation *op, OpLoweringContext &ctx,
                                   SelectionState &state) {
  if (op->getName().stripDialect() != "conv_transpose")
    return TargetLowering::Declined;
  Value x = op->getOperand(0), weight = op->getOperand(1), y = op->getResult(0);
  Value bias = op->getNumOperands() > 2 ? op->getOperand(2) : Value();
  const bool hasBias = bias && !isa<NoneType>(bias.getType());
  std::vector<float> w;
  if (!isF32Tensor(x) || !isF32Tensor(y) || (hasBias && !isF32Tensor(bias)) ||
      !constantFloats(ctx, weight, w))
    return TargetLowering::Declined;
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(weight), ys = shapeOf(y);
  const int64_t group = intAttr(op, "group", 1);
  if ((xs.size() != 3 && xs.size() != 4) || ws.size() != xs.size() ||
      ys.size() != xs.size() || xs[0] < 0 ||
      llvm::any_of(xs.drop_front(), [](int64_t d) { return d < 1; }) ||
      group < 1 || xs[1] != ws[0] || xs[1] % group != 0 ||
      ys[1] != ws[1] * group ||
      (hasBias && shapeOf(bias) != ArrayRef<int64_t>{ys[1]}))
    return TargetLowering::Declined;
  TransposedWindow win;
  if (!readTransposedWindow(op, xs, ws, ys, win))
    return TargetLowering::Declined;

  // Every phase's conv first: declining after emitting nothing.
  struct Phase {
    ConvSpec spec;
    std::vector<float> weights;
  };
  std::vector<Phase> phases;
  EltwiseOp act;
  Operation *activation = fusableActivation(y, ctx, act);
  for (int64_t r0 = 0; r0 < win.strides[0]; ++r0)
    for (int64_t r1 = 0; r1 < win.strides[1]; ++r1) {
      PhaseDim phase[2];
      if (!planPhase(win, 0, r0, phase[0]) || !planPhase(win, 1, r1, phase[1]))
        return TargetLowering::Declined;
      if (phase[0].outputs == 0 || phase[1].outputs == 0)
        continue;
      ConvSpec spec;
      spec.name = nodeName(op) + "_phase" + std::to_string(r0) + "_" +
                  std::to_string(r1);
      spec.n = xs[0];
      spec.c = xs[1];
      spec.oc = ys[1];
      spec.h = win.in[0];
      spec.w = win.in[1];
      spec.group = group;
      spec.bias = hasBias;
      for (int i = 0; i < 2; ++i) {
        spec.kernel[i] = phase[i].taps;
        spec.pads[i] = phase[i].padBegin;
        spec.pads[2 + i] = phase[i].padEnd;
        spec.dstFrame[i] = win.out[i];
        spec.dstStrides[i] = win.strides[i];
      }
      spec.dstOffsets[0] = r0;
      spec.dstOffsets[1] = r1;
      if (activation)
        spec.epilogue.push_back(act);
      spec.plainInput =
          group == 1 && spec.c < kConvBlock && !state.blocked.contains(x);
      if (!directConvGroupSupported(spec))
        return TargetLowering::Declined;
      phases.push_back(
          {spec, phaseWeights(w, spec.c, spec.oc, group, win, phase)});
    }
  if (phases.empty())
    return TargetLowering::Declined;

  OpBuilder &b = ctx.builder();
  Value src = ctx.address(phases.front().spec.plainInput
                              ? ctx.buffer(x)
                              : blockedOperand(x, ctx, state));
  Value yBlocked =
      allocateBlocked(activation ? activation->getResult(0) : y, ctx, state);
  Value dst = ctx.address(yBlocked);
  Value none = b.create<arith::ConstantIntOp>(ctx.loc(), 0, 64);
  Value biasAddress = hasBias ? ctx.address(ctx.buffer(bias)) : none;
  for (const Phase &phase : phases)
    if (failed(emitConvCalls(op, ctx, phase.spec, phase.weights, src,
                             biasAddress, dst, none)))
      return TargetLowering::Failed;
  setBlockedResultOrFused(y, activation, yBlocked, ctx, state);
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
