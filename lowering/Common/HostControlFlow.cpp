//===- HostControlFlow.cpp - graph.if/for/while -> host branches and loops -===//
//
// The region ops become scf.if, scf.for and scf.while in the host function:
// the whole loop runs in compiled code, with no return to a driver per
// iteration.
//
// Loop-carried values alternate between two arena slots (A and B) per
// value. The loop carries the byte offset of the slot that holds the
// current value; each iteration reads that one and computes the value it
// yields straight into the other (the yielded value's buffer is preset to
// it), then hands the other's offset to the next iteration. So no carried
// tensor is copied, except a value that is passed through from elsewhere
// (an outer value, another carried value, a reshape's view), which is
// copied into the other slot. The loop's initial values are copied into A
// once, before the loop.
//
// An if's branches compute what they yield straight into the if's result
// buffers the same way; only one branch runs.
//
// Liveness (HostBuilder::computeLastUses): every op, nested ones included,
// has an index in pre-order and a region op spans its nested ops; a value
// read inside a region op but defined outside lives until the region op's
// end, since every iteration reads it. The A and B slots live from the
// loop's start to the last use of its result.
//
//===----------------------------------------------------------------------===//

#include "HostBuilderImpl.h"
#include "PortableLowering.h"

#include "GraphDialect.h"
#include "mlcc/status.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mlcc::lowering::host {

LogicalResult HostBuilder::lowerControlFlow(Operation *op) {
  // Outer values the regions read get their buffers here, before the scf
  // op: made inside a region, a buffer would not dominate a later use.
  materializeCaptures(op);
  if (isa<graph::IfOp>(op))
    return lowerIf(op);
  if (isa<graph::ForOp>(op))
    return lowerFor(op);
  if (isa<graph::WhileOp>(op))
    return lowerWhile(op);
  return op->emitError() << op->getName() << ": no lowering for --target "
                         << target.name() << " yet";
}

void HostBuilder::materializeCaptures(Operation *regionOp) {
  regionOp->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (!regionOp->isProperAncestor(v.getParentBlock()->getParentOp()) &&
          v.getParentBlock()->getParentOp() != regionOp)
        (void)buffer(v);
  });
}

Value HostBuilder::loadScalar(Value v) {
  return b.create<memref::LoadOp>(currentLoc, buffer(v), ValueRange{});
}

/// src into row `row` (an index) of the stacked buffer: a scan output.
void HostBuilder::copyScanRow(Value src, Value stacked, Value row) {
  auto type = cast<MemRefType>(stacked.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  offsets[0] = row;
  SmallVector<OpFoldResult> sizes{b.getIndexAttr(1)};
  for (int64_t d : type.getShape().drop_front())
    sizes.push_back(b.getIndexAttr(d));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  auto rowType =
      cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
          type.getShape().drop_front(), type, offsets, sizes, strides));
  Value dst = b.create<memref::SubViewOp>(currentLoc, rowType, stacked,
                                          offsets, sizes, strides);
  b.create<linalg::CopyOp>(currentLoc, src, dst);
}

Value HostBuilder::viewAt(Value byteShift, Type type) {
  return b.create<memref::ViewOp>(currentLoc, portable::bufferType(type),
                                  arena, byteShift, ValueRange{});
}

/// Lowers the ops of a region's block with the target told, so that what it
/// caches about values inside stays inside.
LogicalResult HostBuilder::lowerRegionBlock(Block &block) {
  target.enterRegion();
  LogicalResult result = lowerBlock(block);
  target.exitRegion();
  return result;
}

/// The values `block`'s terminator passes on (its operands from `first`,
/// targets.size() of them) that an op of the block computes get targets[i]
/// as their buffer. Constants and views (reshapes) are copied at the
/// terminator instead.
static void presetYields(Block &block, unsigned first,
                         ArrayRef<Value> targets,
                         DenseMap<Value, Value> &preset,
                         const DenseMap<Value, unsigned> &directOutput) {
  Operation *terminator = block.getTerminator();
  for (auto [i, target] : llvm::enumerate(targets)) {
    Value v = terminator->getOperand(first + i);
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != &block || isAliasOp(def) ||
        isa<graph::ConstantOp, graph::NoneOp>(def) || preset.count(v) ||
        directOutput.count(v))
      continue;
    preset[v] = target;
  }
}

LogicalResult HostBuilder::lowerIf(Operation *op) {
  auto ifOp = cast<graph::IfOp>(op);
  Location loc = currentLoc;
  int64_t ifStep = step;
  Value cond = loadScalar(ifOp.getCond());
  SmallVector<Value> results;
  for (Value r : op->getResults())
    results.push_back(resultBuffer(r));
  auto scfIf = b.create<scf::IfOp>(loc, TypeRange{}, cond,
                                   /*withElseRegion=*/true);
  scfIf->setAttr(kHostControlAttr, b.getUnitAttr());
  b.setInsertionPointAfter(scfIf);
  for (auto [region, block] :
       {std::pair{&ifOp.getThenRegion(), scfIf.thenBlock()},
        {&ifOp.getElseRegion(), scfIf.elseBlock()}}) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(block->getTerminator());
    Block &branch = region->front();
    presetYields(branch, 0, results, preset, directOutput);
    if (failed(lowerRegionBlock(branch)))
      return failure();
    currentLoc = branch.getTerminator()->getLoc();
    for (auto [v, dst] :
         llvm::zip(branch.getTerminator()->getOperands(), results)) {
      Value src = buffer(v);
      if (src != dst)
        b.create<memref::CopyOp>(currentLoc, src, dst);
    }
  }
  step = ifStep;
  currentLoc = loc;
  return success();
}

SmallVector<HostBuilder::CarriedSlots>
HostBuilder::allocateCarried(Operation *op, ValueRange init,
                             SmallVector<Value> &shifts) {
  SmallVector<CarriedSlots> carried;
  for (auto [i, initial] : llvm::enumerate(init)) {
    Value result = op->getResult(i);
    int64_t last = std::max(opEnd[op], lastUseOf(result));
    auto type = cast<ShapedType>(result.getType());
    Value a = newSlot(type, step, last);
    Value aShift = slots.back().offset;
    (void)newSlot(type, step, last);
    carried.push_back({aShift, slots.back().offset, type});
    shifts.push_back(aShift);
    b.create<memref::CopyOp>(currentLoc, buffer(initial), a);
  }
  return carried;
}

HostBuilder::Iteration
HostBuilder::beginIteration(ArrayRef<CarriedSlots> carried, ValueRange shifts,
                            Block &block, unsigned firstArg) {
  Iteration it;
  it.shifts.assign(shifts.begin(), shifts.end());
  for (auto [i, slots] : llvm::enumerate(carried)) {
    buffers[block.getArgument(firstArg + i)] = viewAt(shifts[i], slots.type);
    Value isA = b.create<arith::CmpIOp>(currentLoc, arith::CmpIPredicate::eq,
                                        shifts[i], slots.a);
    it.nextShifts.push_back(
        b.create<arith::SelectOp>(currentLoc, isA, slots.b, slots.a));
    it.nextViews.push_back(viewAt(it.nextShifts.back(), slots.type));
  }
  unsigned first = isa<graph::ConditionOp>(block.getTerminator()) ? 1 : 0;
  presetYields(block, first, it.nextViews, preset, directOutput);
  return it;
}

SmallVector<Value> HostBuilder::endIteration(const Iteration &it,
                                             Block &block, unsigned firstArg,
                                             unsigned firstOperand) {
  Operation *terminator = block.getTerminator();
  currentLoc = terminator->getLoc();
  SmallVector<Value> passed;
  for (unsigned i = 0; i < it.shifts.size(); ++i) {
    Value v = terminator->getOperand(firstOperand + i);
    if (v == block.getArgument(firstArg + i)) {
      passed.push_back(it.shifts[i]);
      continue;
    }
    Value src = buffer(v);
    if (src != it.nextViews[i])
      b.create<memref::CopyOp>(currentLoc, src, it.nextViews[i]);
    passed.push_back(it.nextShifts[i]);
  }
  return passed;
}

LogicalResult HostBuilder::lowerFor(Operation *op) {
  auto forOp = cast<graph::ForOp>(op);
  Location loc = currentLoc;
  int64_t forStep = step;
  Block &body = forOp.getBody().front();
  unsigned numCarried = forOp.getInit().size();
  int64_t numScan = forOp.getNumScanOutputs();

  SmallVector<Value> initShifts;
  SmallVector<CarriedSlots> carried =
      allocateCarried(op, forOp.getInit(), initShifts);
  SmallVector<Value> stacked;
  for (int64_t j = 0; j < numScan; ++j)
    stacked.push_back(resultBuffer(op->getResult(numCarried + j)));
  // The iteration number, for a body that reads it.
  Value iterBuffer;
  if (!body.getArgument(0).use_empty())
    iterBuffer = newSlot(cast<ShapedType>(body.getArgument(0).getType()),
                         step, opEnd[op]);

  Value trip = b.create<arith::IndexCastOp>(
      loc, b.getIndexType(), loadScalar(forOp.getTripCount()));
  if (numScan > 0) {
    // The stacked outputs hold the iterations the graph's types promise:
    // a longer run stops there (the importer types scan outputs from
    // static trip counts only).
    int64_t rows = cast<ShapedType>(stacked[0].getType()).getDimSize(0);
    trip = b.create<arith::MinSIOp>(
        loc, trip, b.create<arith::ConstantIndexOp>(loc, rows));
  }
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  auto loop = b.create<scf::ForOp>(loc, zero, trip, one, initShifts);
  loop->setAttr(kHostControlAttr, b.getUnitAttr());
  b.setInsertionPointAfter(loop);
  {
    OpBuilder::InsertionGuard guard(b);
    Block *loopBody = loop.getBody();
    if (!loopBody->empty())
      loopBody->getTerminator()->erase();
    b.setInsertionPointToEnd(loopBody);
    Value iv = loop.getInductionVar();
    if (iterBuffer) {
      Value i64 = b.create<arith::IndexCastOp>(loc, b.getI64Type(), iv);
      b.create<memref::StoreOp>(loc, i64, iterBuffer, ValueRange{});
      buffers[body.getArgument(0)] = iterBuffer;
    }
    Iteration it =
        beginIteration(carried, loop.getRegionIterArgs(), body, 1);
    if (failed(lowerRegionBlock(body)))
      return failure();
    SmallVector<Value> yielded = endIteration(it, body, 1, 0);
    Operation *yield = body.getTerminator();
    for (int64_t j = 0; j < numScan; ++j)
      copyScanRow(buffer(yield->getOperand(numCarried + j)), stacked[j], iv);
    b.create<scf::YieldOp>(currentLoc, yielded);
  }
  step = forStep;
  currentLoc = loc;
  for (auto [i, slots] : llvm::enumerate(carried))
    buffers[op->getResult(i)] = viewAt(loop.getResult(i), slots.type);
  return success();
}

LogicalResult HostBuilder::lowerWhile(Operation *op) {
  auto whileOp = cast<graph::WhileOp>(op);
  Location loc = currentLoc;
  int64_t whileStep = step;
  unsigned numCarried = whileOp.getInit().size();
  int64_t numScan = whileOp.getNumScanOutputs();
  SmallVector<Value> initShifts;
  SmallVector<CarriedSlots> carried =
      allocateCarried(op, whileOp.getInit(), initShifts);
  // Scan outputs have the length their (static) type declares (the
  // importer takes it from the model's declared output shape): the loop
  // also carries the number of rows written, checked after it.
  SmallVector<Value> stacked;
  for (int64_t j = 0; j < numScan; ++j)
    stacked.push_back(resultBuffer(op->getResult(numCarried + j)));
  int64_t rows = numScan ? cast<MemRefType>(stacked[0].getType()).getDimSize(0)
                         : 0;
  if (numScan)
    initShifts.push_back(b.create<arith::ConstantIndexOp>(loc, 0));

  SmallVector<Type> shiftTypes(initShifts.size(), b.getIndexType());
  SmallVector<Location> locs(initShifts.size(), loc);
  auto loop = b.create<scf::WhileOp>(loc, shiftTypes, initShifts);
  loop->setAttr(kHostControlAttr, b.getUnitAttr());
  b.setInsertionPointAfter(loop);

  // One region of the graph op in one of the scf op: the carried values
  // read from the current slots, what the terminator passes on computed
  // into (or copied to) the other ones. Returns the offsets passed on.
  auto lowerPart = [&](Region &scfRegion, Block &graphBlock,
                       SmallVector<Value> &passed) -> LogicalResult {
    Block *block = b.createBlock(&scfRegion, {}, shiftTypes, locs);
    Iteration it = beginIteration(
        carried, block->getArguments().take_front(numCarried), graphBlock, 0);
    if (failed(lowerRegionBlock(graphBlock)))
      return failure();
    unsigned first = isa<graph::ConditionOp>(graphBlock.getTerminator());
    passed = endIteration(it, graphBlock, 0, first);
    return success();
  };
  {
    OpBuilder::InsertionGuard guard(b);
    SmallVector<Value> passed;
    Block &condBlock = whileOp.getCondRegion().front();
    if (failed(lowerPart(loop.getBefore(), condBlock, passed)))
      return failure();
    auto condition = cast<graph::ConditionOp>(condBlock.getTerminator());
    Value pred = loadScalar(condition.getCond());
    if (numScan)
      passed.push_back(loop.getBefore().front().getArgument(numCarried));
    b.create<scf::ConditionOp>(currentLoc, pred, passed);

    passed.clear();
    Block &body = whileOp.getBodyRegion().front();
    if (failed(lowerPart(loop.getAfter(), body, passed)))
      return failure();
    if (numScan) {
      // Rows past the declared length are not written (the check after
      // the loop reports them).
      Value count = loop.getAfter().front().getArgument(numCarried);
      Value inside = b.create<arith::CmpIOp>(
          currentLoc, arith::CmpIPredicate::slt, count,
          b.create<arith::ConstantIndexOp>(currentLoc, rows));
      auto write = b.create<scf::IfOp>(currentLoc, inside,
                                       /*withElseRegion=*/false);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(write.thenBlock()->getTerminator());
        for (int64_t j = 0; j < numScan; ++j)
          copyScanRow(
              buffer(body.getTerminator()->getOperand(numCarried + j)),
              stacked[j], count);
      }
      passed.push_back(b.create<arith::AddIOp>(
          currentLoc, count,
          b.create<arith::ConstantIndexOp>(currentLoc, 1)));
    }
    b.create<scf::YieldOp>(currentLoc, passed);
  }
  step = whileStep;
  currentLoc = loc;
  if (numScan) {
    Value wrong = b.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::ne, loop.getResult(numCarried),
        b.create<arith::ConstantIndexOp>(loc, rows));
    std::string name;
    if (auto nameLoc = dyn_cast<NameLoc>(op->getLoc()))
      name = "node '" + nameLoc.getName().str() + "' ";
    failIf(wrong, MLCC_SHAPE_MISMATCH,
           name + "(graph.while): the loop ran a number of iterations other "
                  "than the " +
               std::to_string(rows) +
               " rows its scan outputs were compiled for (the model's "
               "declared output shape)");
  }
  for (auto [i, slots] : llvm::enumerate(carried))
    buffers[op->getResult(i)] = viewAt(loop.getResult(i), slots.type);
  return success();
}

} // namespace mlcc::lowering::host
