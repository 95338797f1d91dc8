//===- HostExtents.cpp - Dims known only at run time, in the schedule -----===//
//
// A value with run-time extents (graph/RunTimeExtents.h) is computed in a
// buffer of its bound shape; beside it, an i64 per dim in the arena holds
// its actual dims. The data-dependent op's lowering writes them
// (PortableOp::resultExtents); an op that moves its elements copies each
// dim's extent from the operand dim it comes from. For the model's outputs
// the entry leaves every output's dims at the end of the arena, where the
// runtime reads them into the caller's descriptors, and moves the elements
// of an output padded along an inner dim together, so that the caller gets
// the dense tensor of the actual shape.
// A variant of a range of lengths reads the run's length from its arena's
// last 8 bytes, where the runtime writes it (ModelPadded.c).
//
//===----------------------------------------------------------------------===//

#include "HostBuilderImpl.h"

#include "RunTimeExtents.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mlcc::lowering::host {

Value HostBuilder::extentBuffer(Value v) {
  auto it = extentBuffers.find(v);
  if (it != extentBuffers.end())
    return it->second;
  auto rank = cast<ShapedType>(v.getType()).getRank();
  Value buf = allocate(MemRefType::get({rank}, b.getI64Type()), v);
  return extentBuffers[v] = buf;
}

Value HostBuilder::extent(Value v, int64_t dim) {
  SmallVector<int64_t> sources = graph::extentSources(v);
  if (sources.empty() || sources[dim] == graph::kStaticExtent)
    return b.create<arith::ConstantIntOp>(
        currentLoc, cast<ShapedType>(v.getType()).getDimSize(dim), 64);
  Value at = b.create<arith::ConstantIndexOp>(currentLoc, dim);
  return b.create<memref::LoadOp>(currentLoc, extentBuffer(v), ValueRange{at});
}

Value HostBuilder::runTimeLength() {
  if (lengthValue || !options.runTimeLength)
    return lengthValue;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&entry.getBody().front());
  lengthOffset = b.create<arith::ConstantIndexOp>(currentLoc, 0);
  Value slot =
      b.create<memref::ViewOp>(currentLoc, MemRefType::get({1}, b.getI64Type()),
                               arena, lengthOffset.getResult(), ValueRange{});
  Value first = b.create<arith::ConstantIndexOp>(currentLoc, 0);
  lengthValue = b.create<memref::LoadOp>(currentLoc, slot, ValueRange{first});
  return lengthValue;
}

void HostBuilder::propagateExtents(Operation *op) {
  for (Value r : op->getResults()) {
    SmallVector<int64_t> sources = graph::extentSources(r);
    for (auto [d, s] : llvm::enumerate(sources)) {
      if (s == graph::kOwnExtent)
        continue; // the op's lowering wrote it
      Value v = s == graph::kStaticExtent
                    ? extent(r, d)
                    : extent(op->getOperand(graph::extentOperand(s)),
                             graph::extentOperandDim(s));
      Value at = b.create<arith::ConstantIndexOp>(currentLoc, d);
      b.create<memref::StoreOp>(currentLoc, v, extentBuffer(r), ValueRange{at});
    }
  }
}

// Element (i0, ..., ik) of the bound-shaped `src` goes to the place it has
// in the dense tensor of the actual extents; in increasing order, which is
// safe in place (src == dst): an element never moves up, and no element
// still to be read lies below one already written.
void HostBuilder::compactOutput(Value v, Value src, Value dst) {
  auto type = cast<MemRefType>(dst.getType());
  int64_t rank = type.getRank();
  SmallVector<Value> extents, lbs, ubs, steps;
  Value zero = b.create<arith::ConstantIndexOp>(currentLoc, 0);
  Value one = b.create<arith::ConstantIndexOp>(currentLoc, 1);
  for (int64_t d = 0; d < rank; ++d) {
    extents.push_back(b.create<arith::IndexCastOp>(currentLoc, b.getIndexType(),
                                                   extent(v, d)));
    lbs.push_back(zero);
    steps.push_back(one);
  }
  ReassociationIndices all(rank);
  for (int64_t d = 0; d < rank; ++d)
    all[d] = d;
  Value flat = b.create<memref::CollapseShapeOp>(
      currentLoc, dst, ArrayRef<ReassociationIndices>{all});
  scf::buildLoopNest(
      b, currentLoc, lbs, extents, steps,
      [&](OpBuilder &nb, Location loc, ValueRange ivs) {
        Value linear = ivs[0];
        for (int64_t d = 1; d < rank; ++d)
          linear = nb.create<arith::AddIOp>(
              loc, nb.create<arith::MulIOp>(loc, linear, extents[d]), ivs[d]);
        Value x = nb.create<memref::LoadOp>(loc, src, ivs);
        nb.create<memref::StoreOp>(loc, x, flat, ValueRange{linear});
      });
}

void HostBuilder::finishOutputs(Operation *ret) {
  bool anyRunTime = false;
  for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
    Value dst = outputArg(i);
    Value src = buffer(v);
    SmallVector<int64_t> sources = graph::extentSources(v);
    bool runTime = llvm::any_of(
        sources, [](int64_t s) { return s != graph::kStaticExtent; });
    anyRunTime |= runTime;
    // Padding along the first dim only is already the dense tensor's tail.
    bool inner =
        runTime && llvm::any_of(llvm::drop_begin(sources), [](int64_t s) {
          return s != graph::kStaticExtent;
        });
    if (inner)
      compactOutput(v, src, dst);
    else if (src != dst)
      b.create<memref::CopyOp>(currentLoc, src, dst);
  }
  if (!anyRunTime)
    return;
  // Every output's dims, in order, at the end of the arena.
  int64_t total = 0;
  for (Value v : ret->getOperands())
    total += cast<ShapedType>(v.getType()).getRank();
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&entry.getBody().front());
    outputDimsOffset = b.create<arith::ConstantIndexOp>(currentLoc, 0);
  }
  outputDimsCount = total;
  Value dims = b.create<memref::ViewOp>(
      currentLoc, MemRefType::get({total}, b.getI64Type()), arena,
      outputDimsOffset.getResult(), ValueRange{});
  int64_t next = 0;
  for (Value v : ret->getOperands())
    for (int64_t d = 0; d < cast<ShapedType>(v.getType()).getRank(); ++d) {
      Value at = b.create<arith::ConstantIndexOp>(currentLoc, next++);
      b.create<memref::StoreOp>(currentLoc, extent(v, d), dims, ValueRange{at});
    }
}

} // namespace mlcc::lowering::host
