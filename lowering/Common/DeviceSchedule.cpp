//===- DeviceSchedule.cpp - Host schedule -> device kernels + launches ----===//
//
// One walk over each host block (the entry's, and the regions of the
// graph's control flow), in order. Each op is one of:
//   host control   an scf op of the graph's control flow: its regions are
//                  walked in turn;
//   pure           scalar arithmetic, constants, views: stays on the host,
//                  and is cloned into kernels that use it;
//   load           a scalar load of device memory: cloned into the kernels
//                  that use it, or, where host code needs the value, a
//                  read-back;
//   parallel       an outermost scf.parallel: a kernel of its own;
//   device         anything else that touches device memory: joins the
//                  current one-thread kernel;
//   host           anything else (the run's status): stays.
// A read-back, a host op or host control ends the current one-thread
// kernel, so every launch sits where its ops were.
//
//===----------------------------------------------------------------------===//

#include "DeviceSchedule.h"
#include "DeviceKernelBuilder.h"
#include "HostBuilderImpl.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace mlcc::lowering {
namespace {

enum class OpKind { HostControl, Pure, Load, Parallel, Device, Host };

class DeviceScheduler {
public:
  DeviceScheduler(func::FuncOp entry, DeviceBackend &backend,
                  DeviceProgram &out, llvm::StringMap<uint32_t> &kernelIndex,
                  const DeviceScheduleOptions &options)
      : entry(entry), backend(backend), out(out), kernelIndex(kernelIndex),
        options(options), b(entry.getContext()) {}

  LogicalResult run();

private:
  bool isDeviceMemref(Value v);
  bool touchesDevice(Operation *op);
  bool isHostBlock(Block *block);
  OpKind classify(Operation *op);
  bool hostNeeds(Value v);
  LogicalResult scheduleBlock(Block &block);
  bool usesSerial(Operation *op);
  bool becomesHostLoop(Operation *op);
  void hoistViews(Operation *op);
  LogicalResult flush();
  LogicalResult launch(ArrayRef<Operation *> ops, bool parallel);
  void readBack(memref::LoadOp load);
  Value deviceAddress(Value memref);
  Value queue() { return entry.getArguments().back(); }
  Value allocaAtEntry(MemRefType type);
  Value asPointer(Value memref, Type elementType);
  void declare(StringRef name, FunctionType type);
  LogicalResult checkNothingLeft();

  func::FuncOp entry;
  DeviceBackend &backend;
  DeviceProgram &out;
  llvm::StringMap<uint32_t> &kernelIndex;
  const DeviceScheduleOptions &options;
  OpBuilder b;
  SmallVector<Operation *> serial;
  llvm::DenseMap<Operation *, bool> loadStaysOnDevice;
};

bool DeviceScheduler::isDeviceMemref(Value v) {
  if (!isa<MemRefType>(v.getType()))
    return false;
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      v = view.getViewSource();
    else if (auto cast = dyn_cast<memref::CastOp>(def))
      v = cast.getSource();
    else
      return false;
  }
  // The entry's arguments (arena, weights, inputs, outputs) are device
  // addresses; the queue (its last argument) is not a buffer.
  auto arg = cast<BlockArgument>(v);
  return arg.getOwner() == &entry.getBody().front() &&
         arg.getArgNumber() + 1 < entry.getNumArguments();
}

bool DeviceScheduler::touchesDevice(Operation *op) {
  return op
      ->walk([&](Operation *inner) {
        if (isa<ViewLikeOpInterface, memref::CastOp>(inner) && inner != op)
          return WalkResult::advance();
        for (Value operand : inner->getOperands())
          if (isDeviceMemref(operand))
            return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

bool DeviceScheduler::isHostBlock(Block *block) {
  Operation *parent = block->getParentOp();
  return parent == entry.getOperation() || parent->hasAttr(kHostControlAttr);
}

// Whether host code (not a kernel) uses `v`: control flow, a host op, a
// read-back, a parallel loop's bounds (the launch size is the host's).
bool DeviceScheduler::hostNeeds(Value v) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (user->hasTrait<OpTrait::IsTerminator>() &&
        isHostBlock(user->getBlock()))
      return true;
    bool nested = false;
    while (!isHostBlock(user->getBlock())) {
      user = user->getParentOp();
      nested = true;
    }
    switch (classify(user)) {
    case OpKind::Pure:
      for (Value r : user->getResults())
        if (hostNeeds(r))
          return true;
      break;
    case OpKind::Parallel:
      if (!nested)
        return true;
      break;
    case OpKind::Device:
      break;
    case OpKind::Load:
      if (!loadStaysOnDevice.lookup(user))
        return true;
      break;
    default:
      return true;
    }
  }
  return false;
}

OpKind DeviceScheduler::classify(Operation *op) {
  if (op->hasAttr(kHostControlAttr))
    return OpKind::HostControl;
  if (isa<ViewLikeOpInterface, memref::CastOp, memref::ExtractStridedMetadataOp,
          memref::ExtractAlignedPointerAsIndexOp, memref::DimOp>(op))
    return OpKind::Pure;
  if (auto load = dyn_cast<memref::LoadOp>(op)) {
    if (!isDeviceMemref(load.getMemref()))
      return OpKind::Host;
    auto known = loadStaysOnDevice.find(op);
    if (known == loadStaysOnDevice.end()) {
      // Assumed on the device while its uses are looked at (a use cannot
      // reach the load again).
      loadStaysOnDevice[op] = true;
      loadStaysOnDevice[op] = !hostNeeds(load.getResult());
    }
    return OpKind::Load;
  }
  if (touchesDevice(op)) {
    auto par = dyn_cast<scf::ParallelOp>(op);
    return par && par.getNumResults() == 0 ? OpKind::Parallel : OpKind::Device;
  }
  if (op->getNumRegions() == 0 && isMemoryEffectFree(op))
    return OpKind::Pure;
  return OpKind::Host;
}

Value DeviceScheduler::allocaAtEntry(MemRefType type) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&entry.getBody().front());
  return b.create<memref::AllocaOp>(entry.getLoc(), type,
                                    b.getI64IntegerAttr(8));
}

// A host memref as the bare pointer the runtime's functions take (declared
// as memref<1xT>).
Value DeviceScheduler::asPointer(Value memref, Type elementType) {
  return b.create<memref::ReinterpretCastOp>(
      memref.getLoc(), MemRefType::get({1}, elementType), memref, 0,
      ArrayRef<int64_t>{1}, ArrayRef<int64_t>{1});
}

void DeviceScheduler::declare(StringRef name, FunctionType type) {
  auto module = entry->getParentOfType<ModuleOp>();
  if (module.lookupSymbol(name))
    return;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(entry);
  b.create<func::FuncOp>(entry.getLoc(), name, type).setPrivate();
}

// The device address of a memref's first element: its aligned pointer (a
// device address: the entry's arguments are) plus its layout's offset.
Value DeviceScheduler::deviceAddress(Value memref) {
  Location loc = memref.getLoc();
  Value address = host::alignedPointer(b, loc, memref);
  auto type = cast<MemRefType>(memref.getType());
  if (type.getLayout().isIdentity())
    return address;
  auto metadata = b.create<memref::ExtractStridedMetadataOp>(loc, memref);
  Value bytes = b.create<arith::MulIOp>(
      loc, metadata.getOffset(),
      b.create<arith::ConstantIndexOp>(
          loc, device::storageBytes(type.getElementType())));
  return b.create<arith::AddIOp>(
      loc, address, b.create<arith::IndexCastOp>(loc, b.getI64Type(), bytes));
}

// load %m[i...] on the host: the runtime copies the element into a stack
// slot once the launches before it have run.
void DeviceScheduler::readBack(memref::LoadOp load) {
  Location loc = load.getLoc();
  b.setInsertionPoint(load);
  auto type = cast<MemRefType>(load.getMemref().getType());
  Type element = type.getElementType();
  SmallVector<int64_t> strides;
  int64_t offset;
  (void)getStridesAndOffset(type, strides, offset);
  Value linear = b.create<arith::ConstantIndexOp>(loc, 0);
  for (auto [index, stride] : llvm::zip(load.getIndices(), strides))
    linear = b.create<arith::AddIOp>(
        loc, linear,
        b.create<arith::MulIOp>(loc, index,
                                b.create<arith::ConstantIndexOp>(loc, stride)));
  unsigned bytes = device::storageBytes(element);
  Value byteOffset = b.create<arith::MulIOp>(
      loc, linear, b.create<arith::ConstantIndexOp>(loc, bytes));
  Value address = b.create<arith::AddIOp>(
      loc, deviceAddress(load.getMemref()),
      b.create<arith::IndexCastOp>(loc, b.getI64Type(), byteOffset));
  Type i8 = b.getI8Type();
  Value slot = allocaAtEntry(MemRefType::get({8}, i8));
  declare(kDeviceReadFn,
          b.getFunctionType({MemRefType::get({1}, i8), b.getI64Type(),
                             MemRefType::get({1}, i8), b.getI64Type()},
                            {}));
  b.create<func::CallOp>(
      loc, kDeviceReadFn, TypeRange{},
      ValueRange{queue(), address, asPointer(slot, i8),
                 b.create<arith::ConstantIntOp>(loc, bytes, 64)});
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value typed = b.create<memref::ViewOp>(loc, MemRefType::get({1}, element),
                                         slot, zero, ValueRange{});
  load.replaceAllUsesWith(
      b.create<memref::LoadOp>(loc, typed, zero).getResult());
  load.erase();
  ++out.readBackSites;
}

LogicalResult DeviceScheduler::launch(ArrayRef<Operation *> ops,
                                      bool parallel) {
  Location loc = ops.front()->getLoc();
  // After every value the ops use from the host (only pure ops can be
  // between them).
  b.setInsertionPoint(ops.back());
  auto clonable = [&](Operation *op) {
    if (auto load = dyn_cast<memref::LoadOp>(op))
      return loadStaysOnDevice.lookup(op) && isDeviceMemref(load.getMemref());
    return op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
           !isa<memref::AllocaOp>(op);
  };
  device::KernelInterface iface;
  OwningOpRef<ModuleOp> kernel =
      device::buildKernel(ops, parallel, "mlcc_kernel", clonable, b, iface);
  if (!kernel)
    return failure();
  if (options.fault == DeviceFault::NoBarriers)
    kernel->walk([](gpu::BarrierOp barrier) { barrier.erase(); });
  for (Value buffer : iface.buffers)
    if (!isDeviceMemref(buffer))
      return ops.front()->emitError(
          "a kernel would use a host buffer; this op cannot run on the "
          "device yet");
  for (Operation *op : ops)
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers())
        if (!llvm::any_of(ops,
                          [&](Operation *g) { return g->isAncestor(user); }))
          return op->emitError("a value computed in a kernel is used on the "
                               "host; this op cannot run on the device yet");

  // Identical kernels (the same loops on other buffers) are compiled once.
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    kernel->print(os);
  }
  auto [it, added] = kernelIndex.try_emplace(text, out.kernels.size());
  if (added) {
    gpu::GPUFuncOp fn;
    kernel->walk([&](gpu::GPUFuncOp f) { fn = f; });
    fn.setName(("mlcc_k" + std::to_string(out.kernels.size())));
    if (options.kernelsOut)
      kernel->print(*options.kernelsOut);
    DeviceKernelCode code;
    if (failed(backend.compileKernel(*kernel, code)))
      return ops.front()->emitError("cannot compile a kernel of this op for "
                                    "the device");
    out.kernels.push_back(std::move(code));
  }

  // The launch: buffers at their aligned bases, each one's element offset
  // first in the parameter words, then the scalars.
  uint64_t alignment = backend.bufferAlignment();
  SmallVector<Value> bases, words;
  for (Value buffer : iface.buffers) {
    Value address = deviceAddress(buffer);
    Value base = b.create<arith::AndIOp>(
        loc, address,
        b.create<arith::ConstantIntOp>(loc, ~(alignment - 1), 64));
    Value elementBytes = b.create<arith::ConstantIntOp>(
        loc,
        device::storageBytes(
            cast<MemRefType>(buffer.getType()).getElementType()),
        64);
    Value offset = b.create<arith::DivUIOp>(
        loc, b.create<arith::SubIOp>(loc, address, base), elementBytes);
    if (options.fault == DeviceFault::ElementOffset)
      offset = b.create<arith::AddIOp>(
          loc, offset, b.create<arith::ConstantIntOp>(loc, 1, 64));
    bases.push_back(base);
    words.push_back(b.create<arith::TruncIOp>(loc, b.getI32Type(), offset));
  }
  for (Value scalar : iface.scalars)
    device::appendHostWords(b, loc, scalar, words);

  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto array = [&](ArrayRef<Value> values, Type element) {
    Value slot = allocaAtEntry(
        MemRefType::get({std::max<int64_t>(1, values.size())}, element));
    for (auto [i, v] : llvm::enumerate(values))
      b.create<memref::StoreOp>(
          loc, v, slot, ValueRange{b.create<arith::ConstantIndexOp>(loc, i)});
    return asPointer(slot, element);
  };
  Value groups = b.create<arith::ConstantIntOp>(loc, 1, 32);
  if (parallel) {
    // A workgroup per iteration of a workgroup loop, else a thread.
    Value count = iface.iterations;
    if (!ops.front()->hasAttr(kWorkgroupLoopAttr)) {
      Value size = b.create<arith::ConstantIndexOp>(loc, kDeviceWorkgroupSize);
      Value rounded = b.createOrFold<arith::AddIOp>(
          loc, count,
          b.create<arith::ConstantIndexOp>(loc, kDeviceWorkgroupSize - 1));
      count = b.createOrFold<arith::DivUIOp>(loc, rounded, size);
    }
    count = b.createOrFold<arith::MinUIOp>(
        loc, count,
        b.create<arith::ConstantIndexOp>(loc, kDeviceMaxWorkgroups));
    groups = b.createOrFold<arith::IndexCastOp>(loc, i32, count);
  }
  MemRefType words32 = MemRefType::get({1}, i32);
  MemRefType words64 = MemRefType::get({1}, i64);
  declare(kDeviceLaunchFn,
          b.getFunctionType({MemRefType::get({1}, b.getI8Type()), i32, i32, i32,
                             i32, words64, i32, words32, i32},
                            {}));
  Value one = b.create<arith::ConstantIntOp>(loc, 1, 32);
  b.create<func::CallOp>(
      loc, kDeviceLaunchFn, TypeRange{},
      ValueRange{queue(), b.create<arith::ConstantIntOp>(loc, it->second, 32),
                 groups, one, one, array(bases, i64),
                 b.create<arith::ConstantIntOp>(loc, bases.size(), 32),
                 array(words, i32),
                 b.create<arith::ConstantIntOp>(loc, words.size(), 32)});
  for (Operation *op : llvm::reverse(ops))
    op->erase();
  ++out.launchSites;
  if (!parallel)
    ++out.serialSites;
  return success();
}

LogicalResult DeviceScheduler::flush() {
  if (serial.empty())
    return success();
  SmallVector<Operation *> ops = std::move(serial);
  serial.clear();
  return launch(ops, /*parallel=*/false);
}

// A serial loop with parallel loops inside (a recurrent op's time steps)
// runs on the host, its parallel loops as kernels, rather than all of it
// in one thread: when it carries no values and its bounds are constants.
bool DeviceScheduler::becomesHostLoop(Operation *op) {
  auto loop = dyn_cast<scf::ForOp>(op);
  if (!loop || loop.getNumResults() != 0 || usesSerial(op) ||
      !matchPattern(loop.getLowerBound(), m_Constant()) ||
      !matchPattern(loop.getUpperBound(), m_Constant()) ||
      !matchPattern(loop.getStep(), m_Constant()))
    return false;
  return loop.getBody()
      ->walk([](scf::ParallelOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

// Whether `op` (or an op inside it) uses a value the current one-thread
// kernel computes.
bool DeviceScheduler::usesSerial(Operation *op) {
  return op
      ->walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          if (Operation *def = v.getDefiningOp())
            if (llvm::any_of(serial,
                             [&](Operation *s) { return s->isAncestor(def); }))
              return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

// Views the ops inside `op` make of host buffers (a reshape in a branch, a
// view of the arena in a loop) move in front of it: then the kernel binds
// the view itself, with its own type, as it binds any buffer.
void DeviceScheduler::hoistViews(Operation *op) {
  bool moved = true;
  while (moved) {
    moved = false;
    op->walk([&](Operation *inner) {
      if (inner == op || !isa<ViewLikeOpInterface, memref::CastOp>(inner))
        return WalkResult::advance();
      bool invariant = llvm::all_of(inner->getOperands(), [&](Value v) {
        Operation *owner = v.getDefiningOp();
        if (!owner)
          owner = cast<BlockArgument>(v).getOwner()->getParentOp();
        return !op->isAncestor(owner);
      });
      if (!invariant)
        return WalkResult::advance();
      inner->moveBefore(op);
      moved = true;
      return WalkResult::interrupt();
    });
  }
}

LogicalResult DeviceScheduler::scheduleBlock(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block.without_terminator())) {
    if (op.getNumRegions() != 0 && !op.hasAttr(kHostControlAttr))
      hoistViews(&op);
    OpKind kind = classify(&op);
    // What uses a value computed in the current one-thread kernel (a sum a
    // serial loop carried) joins it: values do not leave a kernel.
    if (!serial.empty() && kind != OpKind::HostControl &&
        kind != OpKind::Host && usesSerial(&op)) {
      serial.push_back(&op);
      continue;
    }
    switch (kind) {
    case OpKind::HostControl:
      if (failed(flush()))
        return failure();
      for (Region &region : op.getRegions())
        for (Block &inner : region)
          if (failed(scheduleBlock(inner)))
            return failure();
      break;
    case OpKind::Pure:
      break;
    case OpKind::Load:
      if (!loadStaysOnDevice.lookup(&op)) {
        if (failed(flush()))
          return failure();
        readBack(cast<memref::LoadOp>(op));
      } else if (failed(flush())) {
        // Cloned into the kernels that use it, a load runs where they
        // start: after every earlier launch, so the open one-thread
        // kernel (which may write what it reads) ends here.
        return failure();
      }
      break;
    case OpKind::Parallel:
      if (failed(flush()) || failed(launch({&op}, /*parallel=*/true)))
        return failure();
      break;
    case OpKind::Device:
      if (becomesHostLoop(&op)) {
        if (failed(flush()))
          return failure();
        op.setAttr(kHostControlAttr, b.getUnitAttr());
        if (failed(scheduleBlock(*cast<scf::ForOp>(op).getBody())))
          return failure();
        break;
      }
      serial.push_back(&op);
      break;
    case OpKind::Host:
      if (failed(flush()))
        return failure();
      break;
    }
  }
  return flush();
}

// After scheduling, the host function may only compute addresses of device
// memory, never read or write it.
LogicalResult DeviceScheduler::checkNothingLeft() {
  WalkResult result = entry.walk([&](Operation *op) {
    if (isa<ViewLikeOpInterface, memref::CastOp,
            memref::ExtractStridedMetadataOp,
            memref::ExtractAlignedPointerAsIndexOp, memref::DimOp>(op))
      return WalkResult::advance();
    for (Value operand : op->getOperands())
      if (isDeviceMemref(operand)) {
        op->emitError("internal: '")
            << op->getName() << "' reads device memory on the host";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

// Every parallel dim of a linalg op outermost, its reductions inside: then
// a thread computes one result element (its reduction serially), rather
// than one row of them. (A thread's long serial loop is also what lavapipe
// cannot run: it stops any loop after 65535 iterations in all.)
static linalg::LinalgOp parallelDimsFirst(RewriterBase &rewriter,
                                          linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> order;
  for (auto [i, it] : llvm::enumerate(iterators))
    if (it == utils::IteratorType::parallel)
      order.push_back(i);
  for (auto [i, it] : llvm::enumerate(iterators))
    if (it != utils::IteratorType::parallel)
      order.push_back(i);
  if (llvm::equal(order, llvm::seq<unsigned>(0, order.size())))
    return op;
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic) {
    FailureOr<linalg::GenericOp> general =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(general))
      return op;
    generic = *general;
  }
  FailureOr<linalg::GenericOp> interchanged =
      linalg::interchangeGenericOp(rewriter, generic, order);
  return succeeded(interchanged) ? *interchanged : generic;
}

LogicalResult DeviceScheduler::run() {
  // Linalg ops state their parallel dims: the outermost become parallel
  // loops (kernels), nested ones (in a serial loop) plain loops; copies
  // first become linalg copies.
  SmallVector<memref::CopyOp> copies;
  entry.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
  for (memref::CopyOp copy : copies) {
    b.setInsertionPoint(copy);
    b.create<linalg::CopyOp>(copy.getLoc(), copy.getSource(), copy.getTarget());
    copy.erase();
  }
  SmallVector<linalg::LinalgOp> linalgOps;
  entry.walk([&](linalg::LinalgOp l) { linalgOps.push_back(l); });
  IRRewriter rewriter(entry.getContext());
  for (linalg::LinalgOp l : linalgOps) {
    rewriter.setInsertionPoint(l);
    bool outermost = isHostBlock(l->getBlock());
    if (outermost)
      l = parallelDimsFirst(rewriter, l);
    if (failed(outermost ? linalg::linalgOpToParallelLoops(rewriter, l)
                         : linalg::linalgOpToLoops(rewriter, l)))
      return l->emitError("cannot lower this linalg op to loops");
    rewriter.eraseOp(l);
  }
  if (failed(scheduleBlock(entry.getBody().front())))
    return failure();
  // Pure ops and loads whose users all moved into kernels.
  IRRewriter cleaner(entry.getContext());
  (void)runRegionDCE(cleaner, entry->getRegions());
  return checkNothingLeft();
}

} // namespace

LogicalResult scheduleOnDevice(HostModule &host, DeviceBackend &backend,
                               DeviceProgram &out,
                               const DeviceScheduleOptions &options) {
  MLIRContext *ctx = host.module->getContext();
  ctx->getOrLoadDialect<gpu::GPUDialect>();
  llvm::StringMap<uint32_t> kernelIndex;
  for (const HostEntry &e : host.entries) {
    auto entry = host.module->lookupSymbol<func::FuncOp>(e.symbol);
    DeviceScheduler scheduler(entry, backend, out, kernelIndex, options);
    if (failed(scheduler.run()))
      return failure();
  }
  return success();
}

} // namespace mlcc::lowering
