//===- SelectGather.cpp - graph.gather, graph.gather_nd -> AVX-512 --------===//
//
// Gathers on static tensors of any int or float element type, with int32
// or int64 (signless or signed) indices, become one row gather kernel
// (Kernels/Gather.h):
// - graph.gather on axis a: outer = data dims before a, one index per
//   tuple into dim a, the row is the block of the dims after a;
// - graph.gather_nd with batch_dims b and tuples of k: outer = the b batch
//   dims (each with its own tuples), the tuple components index dims
//   [b, b + k) with their row-major strides, the row is the block of the
//   dims after them.
// Unsigned indices, dynamic shapes, empty outputs or rows, and a gathered
// dim of size 0 go to the portable lowering. The host function checks the
// indices before the op (HostIndexChecks.cpp); the kernel clamps them.
//
//===----------------------------------------------------------------------===//

#include "Gather.h"
#include "KernelABI.h"
#include "SelectionUtils.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// Bytes of one element of a static int or float tensor, or 0 when `v` is
/// anything else.
int64_t elementBytes(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.hasStaticShape() || !t.getElementType().isIntOrFloat())
    return 0;
  return (t.getElementType().getIntOrFloatBitWidth() + 7) / 8;
}

/// Bytes of one index of a static int32 or int64 tensor, or 0.
int indexBytes(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  auto it = t ? dyn_cast<IntegerType>(t.getElementType()) : IntegerType();
  if (!t || !t.hasStaticShape() || !it || it.isUnsigned())
    return 0;
  return it.getWidth() == 32 || it.getWidth() == 64 ? it.getWidth() / 8 : 0;
}

int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

/// The spec of a graph.gather, or false to decline it.
bool gatherSpec(Operation *op, GatherSpec &spec) {
  ArrayRef<int64_t> ds = shapeOf(op->getOperand(0));
  const int64_t rank = static_cast<int64_t>(ds.size());
  int64_t axis = intAttr(op, "axis", 0);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return false;
  const int64_t elem = elementBytes(op->getOperand(0));
  spec.outer = product(ds.take_front(axis));
  spec.rowBytes = product(ds.drop_front(axis + 1)) * elem;
  spec.outerBytes = ds[axis] * spec.rowBytes;
  spec.tuples = numElements(op->getOperand(1));
  spec.tuplesPerOuter = false;
  spec.dims = {ds[axis]};
  spec.strides = {1};
  return true;
}

/// The spec of a graph.gather_nd, or false to decline it.
bool gatherNDSpec(Operation *op, GatherSpec &spec) {
  ArrayRef<int64_t> ds = shapeOf(op->getOperand(0)),
                    is = shapeOf(op->getOperand(1));
  const int64_t r = static_cast<int64_t>(ds.size()),
                q = static_cast<int64_t>(is.size());
  const int64_t b = intAttr(op, "batch_dims", 0);
  if (q < 1 || b < 0 || b >= std::min(q, r))
    return false;
  const int64_t k = is[q - 1];
  if (k < 1 || k > r - b || ds.take_front(b) != is.take_front(b))
    return false;
  const int64_t elem = elementBytes(op->getOperand(0));
  spec.outer = product(ds.take_front(b));
  spec.outerBytes = product(ds.drop_front(b)) * elem;
  spec.tuples = product(is.drop_front(b).drop_back());
  spec.tuplesPerOuter = true;
  spec.dims.assign(ds.begin() + b, ds.begin() + b + k);
  spec.strides.assign(k, 1);
  for (int64_t j = k - 2; j >= 0; --j)
    spec.strides[j] = spec.strides[j + 1] * spec.dims[j + 1];
  spec.rowBytes = product(ds.drop_front(b + k)) * elem;
  return true;
}

} // namespace

TargetLowering selectGather(Operation *op, OpLoweringContext &ctx,
                            SelectionState &) {
  StringRef name = op->getName().stripDialect();
  if ((name != "gather" && name != "gather_nd") || op->getNumOperands() != 2 ||
      op->getNumResults() != 1)
    return TargetLowering::Declined;
  Value data = op->getOperand(0), indices = op->getOperand(1),
        out = op->getResult(0);
  GatherSpec spec;
  spec.indexBytes = indexBytes(indices);
  auto outType = dyn_cast<RankedTensorType>(out.getType());
  if (!elementBytes(data) || !spec.indexBytes || !outType ||
      !outType.hasStaticShape() || numElements(out) == 0)
    return TargetLowering::Declined;
  if (!(name == "gather" ? gatherSpec(op, spec) : gatherNDSpec(op, spec)))
    return TargetLowering::Declined;
  // Nothing to copy, or a dim an index cannot address: portable.
  if (spec.rowBytes == 0 || spec.tuples == 0 ||
      llvm::is_contained(spec.dims, 0) ||
      spec.outer * spec.tuples * spec.rowBytes !=
          numElements(out) * elementBytes(out))
    return TargetLowering::Declined;
  spec.name = nodeName(op);
  std::vector<uint8_t> code;
  if (ref::Status s = generateGather(spec, code); s.failed())
    return failed(op, s);
  std::string symbol = ctx.addKernel(spec.name, std::move(code));
  // mlcc_gather_args: data, indices, dst.
  ctx.callKernel(symbol, {ctx.address(ctx.buffer(data)),
                          ctx.address(ctx.buffer(indices)),
                          ctx.address(ctx.buffer(out))});
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
