//===- SelectLrn.cpp - graph.lrn -> one AVX-512 stencil kernel ------------===//
//
// ONNX LRN, y = x / (bias + alpha / size * square_sum)^beta with the sum
// over the channels c - floor((size - 1) / 2) .. c + ceil((size - 1) / 2),
// is a stencil (lrnStencilSpec, Kernels/Stencil.h): the input viewed as
// N x C x S (S the product of the spatial dims), a window of `size` taps
// along C at offset -floor((size - 1) / 2), zero padding, every weight
// alpha / size, the square prologue and the lrn epilogue. So it is one
// generated kernel, vectorised along S; with S = 1 the input is viewed as
// N x C and the window runs along the vectors instead. Batches split over
// the threads, one kernel call per image, as graph.stencil's do.
//
// Declined (the portable lowering, lowering/Common/Portable/
// NormalizationMisc.cpp, takes them): anything but static f32, rank < 2,
// empty tensors, bias <= 0 or alpha < 0 (the kernel needs bias + s > 0;
// pow of a negative base is the reference's business), a non-finite
// attribute, a size past the generator's window limit.
//
//===----------------------------------------------------------------------===//

#include "ChunkedKernelCalls.h"
#include "KernelABI.h"
#include "SelectionUtils.h"
#include "Stencil.h"

using namespace mlir;

namespace mlcc::avx512 {

TargetLowering selectLrn(Operation *op, OpLoweringContext &ctx,
                         SelectionState &) {
  if (op->getName().stripDialect() != "lrn" || op->getNumOperands() != 1 ||
      op->getNumResults() != 1)
    return TargetLowering::Declined;
  Value x = op->getOperand(0), y = op->getResult(0);
  if (!isF32Tensor(x) || !isF32Tensor(y) || shapeOf(x) != shapeOf(y) ||
      shapeOf(x).size() < 2 || numElements(x) == 0)
    return TargetLowering::Declined;
  // The reference reads the float attributes as f32, then computes in
  // double.
  ArrayRef<int64_t> shape = shapeOf(x);
  StencilSpec spec;
  if (lrnStencilSpec(nodeName(op), {shape.begin(), shape.end()},
                     intAttr(op, "size", 0), floatAttr(op, "alpha", 1e-4f),
                     floatAttr(op, "beta", 0.75f), floatAttr(op, "bias", 1.0f),
                     spec)
          .failed())
    return TargetLowering::Declined;
  const int64_t n = shape[0], c = shape[1], s = numElements(x) / (n * c);
  std::vector<uint8_t> code;
  if (ref::Status st = generateStencil(spec, code); st.failed())
    return failed(op, st);
  std::string symbol = ctx.addKernel(spec.name, std::move(code));
  // mlcc_stencil_args: src, dst.
  SmallVector<Value> fields{ctx.address(ctx.buffer(x)),
                            ctx.address(ctx.buffer(y))};
  if (ctx.oneThread() || n < 2) {
    ctx.callKernel(symbol, fields);
    return TargetLowering::Lowered;
  }
  // One image per call on several threads.
  StencilSpec image = spec;
  for (std::vector<int64_t> *v : {&image.shape, &image.kernel, &image.offsets})
    v->erase(v->begin());
  std::vector<uint8_t> imageCode;
  if (ref::Status st = generateStencil(image, imageCode); st.failed())
    return failed(op, st);
  std::string imageSymbol =
      ctx.addKernel(spec.name + "_image", std::move(imageCode));
  const int64_t imageBytes = 4 * c * s;
  emitChunkedKernelCalls(ctx, {symbol, imageSymbol, "", n}, fields,
                         {imageBytes, imageBytes});
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
