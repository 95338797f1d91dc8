//===- HostBuilderImpl.h - The host builder's class, for its files -*- C++ -*-===//
//
// HostBuilder (the OpLoweringContext every target lowers against) is
// defined over three files: HostBuilder.cpp walks the graph function,
// HostArena.cpp gives values their buffers in the arena, HostSymbols.cpp
// adds weights, kernels, calls and parallel loops. Private to
// lowering/Common.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_HOSTBUILDERIMPL_H
#define MLCC_LOWERING_COMMON_HOSTBUILDERIMPL_H

#include "HostBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlcc::lowering::host {

using namespace mlir;

/// Ops whose result is their operand's buffer seen with another shape
/// (reshape, flatten, squeeze, unsqueeze, identity).
bool isAliasOp(Operation *op);

/// The aligned pointer of memref `m`'s descriptor as an i64: for a buffer
/// of identity layout, the address of its first element.
Value alignedPointer(OpBuilder &b, Location loc, Value m);

/// Of every arena buffer, weight and weights-file range (a device target may
/// ask for more: where its kernels bind buffers).
constexpr uint64_t kAlignment = 64;

class HostBuilder : public OpLoweringContext {
public:
  HostBuilder(func::FuncOp graph, Target &target, StringRef modelName,
              const HostOptions &options, HostModule &out)
      : graph(graph), target(target), modelName(modelName.str()),
        options(options), out(out),
        b(graph.getContext()), currentLoc(graph.getLoc()) {}

  LogicalResult build();

  // OpLoweringContext.
  OpBuilder &builder() override { return b; }
  Location loc() override { return currentLoc; }
  Value buffer(Value v) override;
  Value address(Value buffer) override;
  Value memrefAt(Value address, MemRefType type) override;
  Value scratch(MemRefType type) override;
  Value allocate(MemRefType type, Value liveAs) override;
  Value viewInside(Value buffer, int64_t byteOffset,
                   MemRefType type) override;
  void extendLifetime(Value buffer, Value liveAs) override;
  void deferBuffer(Value v, std::function<void(Value)> materialize) override;
  ElementsAttr constantValue(Value v) override;
  Value addData(StringRef hint, std::vector<uint8_t> bytes) override;
  std::string addKernel(StringRef hint, std::vector<uint8_t> code) override;
  void callKernel(StringRef symbol, ArrayRef<Value> fields) override;
  void callRuntime(StringRef symbol, ArrayRef<Value> fields) override;
  void parallelFor(int64_t n, ArrayRef<Value> fields,
                   std::function<void(Value, ValueRange)> body) override;
  void parallelForRanges(
      int64_t n, ArrayRef<Value> fields,
      std::function<void(Value, Value, ValueRange)> body) override;
  Value numThreads() override;
  Value runTimeLength() override;
  bool oneThread() override { return oneThreadOp; }
  void noteProductPrecision(WorkPrecision precision) override;
  void noteWorkDoneFor(Operation *later) override;

private:
  struct Slot {
    arith::ConstantIndexOp offset;
    uint64_t bytes;
    int64_t first, last;
  };

  LogicalResult checkSupported();
  uint64_t alignment() {
    DeviceBackend *device = target.device();
    return device ? std::max(kAlignment, device->bufferAlignment())
                  : kAlignment;
  }
  MemRefType poolType() { return MemRefType::get({1}, b.getI8Type()); }
  Value pool() { return entry.getArguments().back(); }
  /// The entry's arguments: arena, weights, inputs..., outputs..., pool.
  Value inputArg(unsigned i) { return entry.getArgument(2 + i); }
  Value outputArg(unsigned i) {
    return entry.getArgument(2 + graph.getNumArguments() + i);
  }
  void declareRuntime(StringRef name, FunctionType type);
  void createModuleAndEntry();
  void numberOps(Block &block, int64_t &next);
  void computeLastUses();
  LogicalResult lowerBlock(Block &block);
  LogicalResult lowerOp(Operation *op);
  // Control flow (HostControlFlow.cpp).
  LogicalResult lowerControlFlow(Operation *op);
  LogicalResult lowerIf(Operation *op);
  LogicalResult lowerFor(Operation *op);
  LogicalResult lowerWhile(Operation *op);
  LogicalResult lowerRegionBlock(Block &block);
  /// A loop-carried value's two arena slots (their offset constants) and
  /// its type.
  struct CarriedSlots {
    Value a, b;
    Type type;
  };
  /// Slots A and B for each of `op`'s first init.size() results, A
  /// holding the initial values; *shifts gets A's offsets.
  SmallVector<CarriedSlots> allocateCarried(Operation *op, ValueRange init,
                                            SmallVector<Value> &shifts);
  /// One iteration's buffers: the current slots' offsets and the others'.
  struct Iteration {
    SmallVector<Value> shifts, nextShifts, nextViews;
  };
  /// Binds `block`'s arguments from `firstArg` on to the current slots
  /// (offsets `shifts`) and presets the values its terminator passes on
  /// to the other slots.
  Iteration beginIteration(ArrayRef<CarriedSlots> carried, ValueRange shifts,
                           Block &block, unsigned firstArg);
  /// The offsets of what `block`'s terminator passes on (its operands from
  /// `firstOperand`): a block argument passed through keeps its slot,
  /// anything else is in (or is copied to) the other slot.
  SmallVector<Value> endIteration(const Iteration &it, Block &block,
                                  unsigned firstArg, unsigned firstOperand);
  void materializeCaptures(Operation *regionOp);
  Value loadScalar(Value v);
  Value viewAt(Value byteShift, Type type);
  void copyScanRow(Value src, Value stacked, Value row);
  /// Where `cond` (i1) holds at run time: records `message` through the
  /// runtime's mlcc_model_fail and makes the entry return `status`.
  void failIf(Value cond, int32_t status, const std::string &message);
  /// failIf for a device target, whose kernels cannot call the runtime:
  /// the check stores its site's number into a word of the device arena,
  /// and the end of the entry reads it back and records that site's
  /// message (finishDeviceStatus).
  void deviceFailIf(Value cond, int32_t status, const std::string &message);
  Value finishDeviceStatus();
  /// Read-only data the host function itself reads (a message), kept in
  /// the object even where weights are a device's or a file's.
  Value hostData(StringRef hint, std::vector<uint8_t> bytes);
  /// The object's data global `name` (declared on first use).
  Value dataGlobal(StringRef name, MemRefType byteType);
  /// For a gather or scatter: the check of its indices (HostIndexChecks.cpp).
  void checkIndices(Operation *op);
  Value newSlot(ShapedType type, int64_t first, int64_t last);
  Value resultBuffer(Value result);
  Value inPlaceBuffer(Value result);
  int64_t lastUseOf(Value v) const;
  Value viewOfSlot(unsigned slot, ShapedType type);
  Value constantBuffer(Value v);
  Value dataBuffer(StringRef hint, std::vector<uint8_t> bytes,
                   MemRefType type);
  /// Places the slots; fails when they could not be placed in an arena
  /// whose size fits in int64.
  mlir::LogicalResult finishArena();
  /// The call to the profile hook before `op` (whose ProfiledOp it adds),
  /// or after the last op (null).
  void emitProfileHook(Operation *op);
  void moveAllocationsToArena(Operation *after);
  /// The outermost scf.parallel nests (and linalg ops) a portable lowering
  /// emitted after `after`, split over the pool where they are big enough
  /// (HostParallelLoops.cpp).
  void distributeParallelLoops(Operation *after);
  bool distributeParallelLoop(scf::ParallelOp loop);
  // Run-time extents (HostExtents.cpp).
  /// The i64 per dim holding `v`'s actual dims.
  Value extentBuffer(Value v);
  /// Dim `dim` of `v` as an i64: its run-time extent or its static size.
  Value extent(Value v, int64_t dim);
  /// Stores the extents of `op`'s results that come from its operands.
  void propagateExtents(Operation *op);
  void compactOutput(Value v, Value src, Value dst);
  /// Writes the outputs from their buffers and, when some output has
  /// run-time extents, every output's dims at the arena's end.
  void finishOutputs(Operation *ret);
  std::string uniqueSymbol(StringRef kind, StringRef hint);

  func::FuncOp graph;
  Target &target;
  std::string modelName;
  HostOptions options;
  HostModule &out;
  OpBuilder b;
  Location currentLoc;
  ModuleOp host;
  func::FuncOp entry;
  Value arena;
  Value weights;
  /// The entry's status (memref<i32>), once some op can fail at run time.
  Value statusBuffer;
  /// A device target's fail word (an i32 in the arena) and its sites.
  Value failWord;
  std::vector<std::pair<int32_t, std::string>> failSites;
  /// The current op's index in the pre-order numbering of every op
  /// (nested ones included); liveness is in these indices.
  int64_t step = 0;
  DenseMap<Operation *, int64_t> opIndex, opEnd;

  DenseMap<Value, Value> buffers;
  DenseMap<Value, unsigned> slotOfValue;
  DenseMap<Value, int64_t> lastUse;
  DenseMap<Value, unsigned> directOutput;
  /// Values a region yields, computed straight into the buffer they are
  /// yielded to (a loop's next carried buffer, an if's result).
  DenseMap<Value, Value> preset;
  DenseMap<Value, unsigned> slotOfView;
  /// Of the views made by viewInside: their byte offset in the arena.
  DenseMap<Value, Value> offsetInArena;
  DenseMap<Value, std::function<void(Value)>> deferred;
  /// Ops whose work an earlier op's kernels did (noteWorkDoneFor).
  llvm::DenseSet<Operation *> workDoneEarlier;
  /// The op being lowered does too little work to share with the pool
  /// (oneThreadEnough): numThreads() is 1 and parallel loops run inline.
  bool oneThreadOp = false;
  DenseMap<Value, Value> extentBuffers;
  /// Where the outputs' dims go (set with the arena plan), and how many.
  arith::ConstantIndexOp outputDimsOffset;
  int64_t outputDimsCount = 0;
  /// With HostOptions::runTimeLength: the arena offset of the run's length
  /// (set by finishArena) and its value, read at the entry's start.
  arith::ConstantIndexOp lengthOffset;
  Value lengthValue;
  std::vector<Slot> slots;
  HostEntry entryResult;
};

} // namespace mlcc::lowering::host

#endif // MLCC_LOWERING_COMMON_HOSTBUILDERIMPL_H
