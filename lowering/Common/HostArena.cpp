//===- HostArena.cpp - Buffers of the host schedule in one arena ----------===//
//
// Every value the schedule computes gets a view of the arena at an offset
// that stays a placeholder constant until the whole entry is built; then
// the arena planner, which knows every lifetime (scratch buffers and the
// portable lowerings' temporaries included), fills the offsets in.
//
//===----------------------------------------------------------------------===//

#include "HostBuilderImpl.h"
#include "ArenaPlanner.h"
#include "PortableLowering.h"

#include "GraphDialect.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

namespace mlcc::lowering::host {
namespace {

/// Ops that read each element of a full-size operand only to compute the
/// result's element at the same index, before writing it: their result may
/// take the operand's memory (in place) once nothing else needs it. Both
/// the AVX-512 chain kernels and the portable linalg.generic lowerings of
/// these ops load an element (or vector) before storing it.
bool isElementwise(Operation *op) {
  static const char *const names[] = {
      "abs",        "add",     "and",      "ceil",    "clip",  "cos",
      "div",        "elu",     "erf",      "exp",     "floor", "gelu",
      "hard_sigmoid", "hard_swish", "leaky_relu", "log",  "max",  "min",
      "mul",        "neg",     "not",      "or",      "pow",   "reciprocal",
      "relu",       "round",   "selu",     "sigmoid", "sign",  "sin",
      "softplus",   "sqrt",    "sub",      "tanh",    "xor",   "where"};
  return op->getNumResults() == 1 &&
         llvm::is_contained(names, op->getName().stripDialect());
}

uint64_t storageBytes(ShapedType type) {
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  return static_cast<uint64_t>(type.getNumElements()) * ((bits + 7) / 8);
}

} // namespace

Value HostBuilder::newSlot(ShapedType type, int64_t first, int64_t last) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&entry.getBody().front());
  auto offset = b.create<arith::ConstantIndexOp>(currentLoc, 0);
  slots.push_back({offset, storageBytes(cast<ShapedType>(
                               portable::bufferType(type))),
                   first, last});
  return viewOfSlot(slots.size() - 1, type);
}

Value HostBuilder::viewOfSlot(unsigned slot, ShapedType type) {
  Value view = b.create<memref::ViewOp>(currentLoc, portable::bufferType(type),
                                        arena, slots[slot].offset.getResult(),
                                        ValueRange{});
  slotOfView[view] = slot;
  return view;
}

int64_t HostBuilder::lastUseOf(Value v) const {
  auto used = lastUse.find(v);
  return used == lastUse.end() ? step : std::max(step, used->second);
}

// The caller's output buffer for a result returned directly, else a new
// arena slot from now to the result's last use.
Value HostBuilder::resultBuffer(Value result) {
  auto pre = preset.find(result);
  if (pre != preset.end())
    return buffers[result] = pre->second;
  auto direct = directOutput.find(result);
  if (direct != directOutput.end())
    return buffers[result] = outputArg(direct->second);
  if (Value inPlace = inPlaceBuffer(result))
    return buffers[result] = inPlace;
  Value view =
      newSlot(cast<ShapedType>(result.getType()), step, lastUseOf(result));
  slotOfValue[result] = slots.size() - 1;
  return buffers[result] = view;
}

// An elementwise result takes the slot of an operand of its shape and size
// that no later op reads (through any alias either: a slot's `last` covers
// them), so a chain of such ops reuses one buffer instead of needing two.
Value HostBuilder::inPlaceBuffer(Value result) {
  Operation *def = result.getDefiningOp();
  if (!def || !isElementwise(def))
    return nullptr;
  auto type = cast<ShapedType>(result.getType());
  uint64_t bytes = storageBytes(cast<ShapedType>(portable::bufferType(type)));
  for (Value operand : def->getOperands()) {
    auto slot = slotOfValue.find(operand);
    if (slot == slotOfValue.end() ||
        cast<ShapedType>(operand.getType()).getShape() != type.getShape())
      continue;
    // Copied out: inserting `result` may rehash the map under `slot`.
    unsigned index = slot->second;
    Slot &s = slots[index];
    if (s.last > step || s.bytes != bytes)
      continue;
    s.last = lastUseOf(result);
    slotOfValue[result] = index;
    ++entryResult.inPlaceResults;
    entryResult.intermediateBytes += bytes;
    return viewOfSlot(index, type);
  }
  return nullptr;
}

Value HostBuilder::allocate(MemRefType type, Value liveAs) {
  return newSlot(type, step, lastUseOf(liveAs));
}

Value HostBuilder::viewInside(Value buffer, int64_t byteOffset,
                              MemRefType type) {
  auto slot = slotOfView.find(buffer);
  if (slot == slotOfView.end() || byteOffset < 0 ||
      byteOffset % kAlignment != 0)
    return nullptr;
  // From where `buffer` starts: its slot's offset, or that of the buffer
  // it is itself a view inside.
  Value base = offsetInArena.lookup(buffer);
  if (!base)
    base = slots[slot->second].offset.getResult();
  Value offset = b.create<arith::AddIOp>(
      currentLoc, base,
      b.create<arith::ConstantIndexOp>(currentLoc, byteOffset));
  Value view = b.create<memref::ViewOp>(currentLoc, type, arena, offset,
                                        ValueRange{});
  slotOfView[view] = slot->second;
  offsetInArena[view] = offset;
  return view;
}

void HostBuilder::extendLifetime(Value buffer, Value liveAs) {
  auto slot = slotOfView.find(buffer);
  if (slot != slotOfView.end())
    slots[slot->second].last =
        std::max(slots[slot->second].last, lastUseOf(liveAs));
}

void HostBuilder::deferBuffer(Value v,
                              std::function<void(Value)> materialize) {
  buffers.erase(v);
  deferred[v] = std::move(materialize);
}

Value HostBuilder::buffer(Value v) {
  if (!v || isa<NoneType>(v.getType()))
    return nullptr;
  auto it = buffers.find(v);
  if (it != buffers.end())
    return it->second;
  if (v.getDefiningOp<graph::ConstantOp>())
    return buffers[v] = constantBuffer(v);
  auto pending = deferred.find(v);
  if (pending != deferred.end()) {
    std::function<void(Value)> materialize = std::move(pending->second);
    deferred.erase(pending);
    Value plain = resultBuffer(v);
    materialize(plain);
    return plain;
  }
  if (isa<OpResult>(v))
    return resultBuffer(v);
  return nullptr;
}

Value alignedPointer(OpBuilder &b, Location loc, Value m) {
  // MLIR 19's lowering of extract_aligned_pointer_as_index on a memref.view
  // returns the source's pointer, without the shift: it is added here.
  // Other view-like ops keep their source's pointer (the position is in the
  // layout's offset).
  Value shift;
  while (auto viewLike = m.getDefiningOp<ViewLikeOpInterface>()) {
    if (auto view = dyn_cast<memref::ViewOp>(viewLike.getOperation())) {
      shift = view.getByteShift();
      m = view.getSource();
      break;
    }
    m = viewLike.getViewSource();
  }
  Value index = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, m);
  if (shift)
    index = b.create<arith::AddIOp>(loc, index, shift);
  return b.create<arith::IndexCastOp>(loc, b.getI64Type(), index);
}

Value HostBuilder::address(Value buf) {
  return alignedPointer(b, currentLoc, buf);
}

Value HostBuilder::scratch(MemRefType type) {
  return newSlot(type, step, step);
}

LogicalResult HostBuilder::finishArena() {
  // Every offset the planner gives is below the slots' sizes added up, so
  // that sum bounds the arena: when it fits, no offset wraps around.
  constexpr uint64_t kMaxArenaBytes = uint64_t(1) << 62;
  std::vector<ArenaRequest> requests;
  uint64_t total = 0;
  for (const Slot &s : slots) {
    requests.push_back({s.bytes, s.first, s.last});
    uint64_t rounded = llvm::alignTo(s.bytes, alignment());
    if (rounded < s.bytes || __builtin_add_overflow(total, rounded, &total) ||
        total > kMaxArenaBytes)
      return graph.emitError()
             << "the intermediates need more than 2^62 bytes of arena; "
                "no machine holds that";
    entryResult.intermediateBytes += s.bytes;
  }
  ArenaPlan plan = planArena(requests, alignment());
  for (auto [slot, offset] : llvm::zip(slots, plan.offsets))
    slot.offset.setValueAttr(b.getIndexAttr(offset));
  if (outputDimsOffset) {
    uint64_t offset = llvm::alignTo(plan.bytes, sizeof(int64_t));
    outputDimsOffset.setValueAttr(b.getIndexAttr(offset));
    entryResult.interface.outputDimsOffset = offset;
    plan.bytes = offset + outputDimsCount * sizeof(int64_t);
  }
  if (options.runTimeLength) {
    // The length the runtime writes before each run: the arena's last 8
    // bytes (ModelPadded.c), whether or not an op reads it.
    uint64_t offset = llvm::alignTo(plan.bytes, sizeof(int64_t));
    if (lengthOffset)
      lengthOffset.setValueAttr(b.getIndexAttr(offset));
    plan.bytes = offset + sizeof(int64_t);
  }
  entryResult.interface.arenaBytes = plan.bytes;
  entryResult.arenaLowerBound = plan.lowerBound;

  auto arenaType = MemRefType::get({static_cast<int64_t>(plan.bytes)},
                                   b.getI8Type());
  arena.setType(arenaType);
  auto weightsType = MemRefType::get(
      {static_cast<int64_t>(out.weights.size())}, b.getI8Type());
  weights.setType(weightsType);
  SmallVector<Type> args(entry.getArgumentTypes());
  args[0] = arenaType;
  args[1] = weightsType;
  entry.setFunctionType(
      FunctionType::get(entry.getContext(), args, entry.getResultTypes()));
  return success();
}

// A portable lowering's temporary buffers (memref.alloc/dealloc: a padded
// input, an accumulator) become arena slots that live for the op's step, so
// the object never calls malloc.
void HostBuilder::moveAllocationsToArena(Operation *after) {
  Block *block = b.getInsertionBlock();
  auto begin = after ? std::next(Block::iterator(after)) : block->begin();
  SmallVector<memref::AllocOp> allocs;
  for (Operation &op : llvm::make_range(begin, b.getInsertionPoint()))
    op.walk([&](memref::AllocOp alloc) {
      if (alloc.getType().hasStaticShape() &&
          alloc.getType().getLayout().isIdentity())
        allocs.push_back(alloc);
    });
  for (memref::AllocOp alloc : allocs) {
    MemRefType type = alloc.getType();
    if (type.getNumElements() == 0 ||
        !type.getElementType().isIntOrFloat())
      continue;
    // On a device each iteration of a parallel loop is a thread of its
    // own: a temporary made inside one is the thread's (private memory),
    // not one arena slot every thread would share.
    if (target.device() && alloc->getParentOfType<scf::ParallelOp>()) {
      OpBuilder at(alloc);
      Value own = at.create<memref::AllocaOp>(alloc.getLoc(), type);
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      alloc.replaceAllUsesWith(own);
      alloc.erase();
      continue;
    }
    Value slot = scratch(type);
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    alloc.replaceAllUsesWith(slot);
    alloc.erase();
  }
}

} // namespace mlcc::lowering::host
