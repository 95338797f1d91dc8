//===- WorkgroupReduce.cpp - Rows reduced by whole workgroups -------------===//

#include "WorkgroupReduce.h"
#include "DeviceSchedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mlcc::gpukernels {

using lowering::kDeviceWorkgroupSize;

RowGroup::RowGroup(OpBuilder &b, Location loc, int64_t length,
                   unsigned subgroupSize)
    : loc(loc), length(length), subgroupSize(subgroupSize) {
  tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  tree = b.create<memref::AllocOp>(
      loc, MemRefType::get({kDeviceWorkgroupSize}, b.getF32Type(),
                           MemRefLayoutAttrInterface{}, workgroup));
}

Value RowGroup::reduce(
    OpBuilder &b, Value init, const Combine &combine,
    const std::function<Value(OpBuilder &, Value k)> &element) {
  auto index = [&](int64_t v) {
    return b.create<arith::ConstantIndexOp>(loc, v).getResult();
  };
  auto strided = b.create<scf::ForOp>(
      loc, tid, index(length), index(kDeviceWorkgroupSize), ValueRange{init},
      [&](OpBuilder &fb, Location, Value k, ValueRange acc) {
        fb.create<scf::YieldOp>(
            loc, ValueRange{combine(fb, loc, acc[0], element(fb, k))});
      });
  b.create<memref::StoreOp>(loc, strided.getResult(0), tree, tid);
  b.create<gpu::BarrierOp>(loc);
  int64_t shuffled =
      subgroupSize > 1 && kDeviceWorkgroupSize % subgroupSize == 0
          ? subgroupSize
          : 1;
  for (int64_t half = kDeviceWorkgroupSize / 2; half >= shuffled; half /= 2) {
    Value active = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, tid,
                                           index(half));
    b.create<scf::IfOp>(loc, active, [&](OpBuilder &tb, Location) {
      Value other = tb.create<arith::AddIOp>(
          loc, tid, tb.create<arith::ConstantIndexOp>(loc, half));
      Value mine = tb.create<memref::LoadOp>(loc, tree, tid);
      Value theirs = tb.create<memref::LoadOp>(loc, tree, other);
      tb.create<memref::StoreOp>(loc, combine(tb, loc, mine, theirs), tree,
                                 tid);
      tb.create<scf::YieldOp>(loc);
    });
    b.create<gpu::BarrierOp>(loc);
  }
  if (shuffled > 1) {
    // The first subgroup holds the tree's last `shuffled` partials. Thread
    // i < half takes thread i ^ half = i + half's value, as the tree's step
    // combines them (xor, not down: SPIR-V has it too); the values the
    // threads at and above half make are never read.
    Value first = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, tid,
                                          index(shuffled));
    b.create<scf::IfOp>(loc, first, [&](OpBuilder &tb, Location) {
      Value v = tb.create<memref::LoadOp>(loc, tree, tid);
      for (int64_t half = shuffled / 2; half >= 1; half /= 2) {
        auto other = tb.create<gpu::ShuffleOp>(
            loc, v, int32_t(half), int32_t(shuffled), gpu::ShuffleMode::XOR);
        v = combine(tb, loc, v, other.getShuffleResult());
      }
      Value zero = tb.create<arith::ConstantIndexOp>(loc, 0);
      Value isRoot =
          tb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tid, zero);
      tb.create<scf::IfOp>(loc, isRoot, [&](OpBuilder &rb, Location) {
        rb.create<memref::StoreOp>(loc, v, tree, zero);
        rb.create<scf::YieldOp>(loc);
      });
      tb.create<scf::YieldOp>(loc);
    });
    b.create<gpu::BarrierOp>(loc);
  }
  Value result = b.create<memref::LoadOp>(loc, tree, index(0));
  // Every thread reads the root before the next reduction writes the tree.
  b.create<gpu::BarrierOp>(loc);
  return result;
}

void RowGroup::forEach(OpBuilder &b,
                       const std::function<void(OpBuilder &, Value k)> &body) {
  Value end = b.create<arith::ConstantIndexOp>(loc, length);
  Value step = b.create<arith::ConstantIndexOp>(loc, kDeviceWorkgroupSize);
  b.create<scf::ForOp>(loc, tid, end, step, ValueRange{},
                       [&](OpBuilder &fb, Location, Value k, ValueRange) {
                         body(fb, k);
                         fb.create<scf::YieldOp>(loc);
                       });
}

Value RowGroup::isFirstThread(OpBuilder &b) {
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tid,
                                 b.create<arith::ConstantIndexOp>(loc, 0));
}

void buildRowLoop(OpBuilder &b, Location loc, int64_t rows,
                  const std::function<void(OpBuilder &, Value row)> &body) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  auto loop = b.create<scf::ParallelOp>(
      loc, ValueRange{zero},
      ValueRange{b.create<arith::ConstantIndexOp>(loc, rows)}, ValueRange{one},
      [&](OpBuilder &lb, Location, ValueRange ivs) { body(lb, ivs[0]); });
  loop->setAttr(lowering::kWorkgroupLoopAttr, b.getUnitAttr());
}

} // namespace mlcc::gpukernels
