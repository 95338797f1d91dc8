//===- SelectGridSample.cpp - GridSample -> AVX-512 kernels ---------------===//
//
// f32 4-D graph.grid_sample, bilinear or nearest, with zeros or border
// padding, either align_corners: the kernel of Kernels/GridSample.h, which
// works out each block of 16 points' taps once for all channels.
// Reflection padding and bicubic go to the portable lowering.
//
//===----------------------------------------------------------------------===//

#include "GridSample.h"
#include "KernelABI.h"
#include "SelectionUtils.h"

using namespace mlir;

namespace mlcc::avx512 {

TargetLowering selectGridSample(Operation *op, OpLoweringContext &ctx,
                                SelectionState &) {
  if (op->getName().stripDialect() != "grid_sample")
    return TargetLowering::Declined;
  Value x = op->getOperand(0), grid = op->getOperand(1), y = op->getResult(0);
  if (!isF32Tensor(x) || !isF32Tensor(grid) || !isF32Tensor(y) ||
      shapeOf(x).size() != 4 || shapeOf(grid).size() != 4)
    return TargetLowering::Declined;
  GridSampleSpec spec;
  std::string mode = stringAttr(op, "mode", "bilinear");
  std::string padding = stringAttr(op, "padding_mode", "zeros");
  if (mode == "bilinear" || mode == "linear")
    spec.mode = GridSampleMode::Bilinear;
  else if (mode == "nearest")
    spec.mode = GridSampleMode::Nearest;
  else
    return TargetLowering::Declined;
  if (padding == "zeros")
    spec.padding = GridSamplePadding::Zeros;
  else if (padding == "border")
    spec.padding = GridSamplePadding::Border;
  else
    return TargetLowering::Declined;
  spec.alignCorners = intAttr(op, "align_corners", 0) != 0;
  ArrayRef<int64_t> xs = shapeOf(x), gs = shapeOf(grid);
  if (gs[0] != xs[0] || gs[3] != 2)
    return TargetLowering::Declined;
  spec.name = nodeName(op);
  spec.n = xs[0];
  spec.c = xs[1];
  spec.h = xs[2];
  spec.w = xs[3];
  spec.ho = gs[1];
  spec.wo = gs[2];
  std::vector<uint8_t> code;
  if (ref::Status s = generateGridSample(spec, code); s.failed())
    return failed(op, s);
  std::string symbol = ctx.addKernel(spec.name, std::move(code));
  // mlcc_grid_sample_args: src, grid, dst.
  ctx.callKernel(symbol, {ctx.address(ctx.buffer(x)),
                          ctx.address(ctx.buffer(grid)),
                          ctx.address(ctx.buffer(y))});
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
