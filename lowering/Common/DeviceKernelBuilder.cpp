//===- DeviceKernelBuilder.cpp - Host ops -> one gpu.func -----------------===//
//
// The kernel's arguments are a parameter buffer (32-bit words) and one flat
// memref<?xT> per buffer it uses. Inside, each buffer first stands in as a
// cast of its flat memref to the host type, so the cloned ops keep their
// types; once subviews are folded into the accesses, every load and store
// is rewritten to the flat memref at (element offset + indices . strides).
// That keeps binding offsets aligned whatever view the host made.
//
//===----------------------------------------------------------------------===//

#include "DeviceKernelBuilder.h"
#include "DeviceSchedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace mlcc::lowering::device {

unsigned storageBytes(Type t) { return (t.getIntOrFloatBitWidth() + 7) / 8; }

namespace {

bool definedInside(Value v, ArrayRef<Operation *> ops) {
  Operation *owner = v.getDefiningOp();
  if (!owner)
    owner = cast<BlockArgument>(v).getOwner()->getParentOp();
  return llvm::any_of(ops, [&](Operation *g) { return g->isAncestor(owner); });
}

/// A buffer as the kernel sees it: the flat argument, the parameter word
/// of its element offset from its binding, and the host type its stand-in
/// (a cast of the flat argument, what the cloned ops use) has.
struct KernelBuffer {
  Value flat;
  unsigned offsetWord;
  MemRefType hostType;
};

class KernelBuilder {
public:
  KernelBuilder(ArrayRef<Operation *> ops, bool parallel,
                const ClonablePredicate &clonable, KernelInterface &iface)
      : ops(ops), parallel(parallel), clonable(clonable), iface(iface) {}

  OwningOpRef<ModuleOp> build(StringRef name, OpBuilder &host);

private:
  void resolve(Value v);
  Value loadWords(OpBuilder &b, Location loc, Type t);
  void buildParallelBody(OpBuilder &b, scf::ParallelOp par, OpBuilder &host);
  LogicalResult serializeInnerParallels(gpu::GPUFuncOp fn);
  LogicalResult flattenAccesses(gpu::GPUFuncOp fn);

  ArrayRef<Operation *> ops;
  bool parallel;
  const ClonablePredicate &clonable;
  KernelInterface &iface;
  llvm::SetVector<Value> buffers;
  llvm::DenseSet<Value> resolved;
  SmallVector<Operation *> cloneOrder;
  llvm::DenseSet<Operation *> cloned;
  IRMapping map;
  Value params;
  unsigned nextWord = 0;
  SmallVector<KernelBuffer> kernelBuffers;
};

// What the kernel does with a host value it uses: binds it (a memref),
// clones its computation (post-order, so operands come first), or takes it
// as parameter words.
void KernelBuilder::resolve(Value v) {
  if (!resolved.insert(v).second)
    return;
  if (isa<MemRefType>(v.getType())) {
    buffers.insert(v);
    return;
  }
  Operation *def = v.getDefiningOp();
  if (def && clonable(def)) {
    for (Value operand : def->getOperands())
      resolve(operand);
    if (cloned.insert(def).second)
      cloneOrder.push_back(def);
    return;
  }
  iface.scalars.push_back(v);
}

Value KernelBuilder::loadWords(OpBuilder &b, Location loc, Type t) {
  auto word = [&] {
    Value index = b.create<arith::ConstantIndexOp>(loc, nextWord++);
    return b.create<memref::LoadOp>(loc, params, index).getResult();
  };
  if (t.isIndex())
    return b.create<arith::IndexCastOp>(loc, t, word());
  unsigned bits = t.getIntOrFloatBitWidth();
  Type asInt = b.getIntegerType(bits);
  Value bitsValue;
  if (bits > 32) {
    Value lo = b.create<arith::ExtUIOp>(loc, asInt, word());
    Value hi = b.create<arith::ExtUIOp>(loc, asInt, word());
    Value shift = b.create<arith::ConstantIntOp>(loc, 32, bits);
    bitsValue = b.create<arith::OrIOp>(loc, lo,
                                       b.create<arith::ShLIOp>(loc, hi, shift));
  } else if (bits < 32) {
    bitsValue = b.create<arith::TruncIOp>(loc, asInt, word());
  } else {
    bitsValue = word();
  }
  if (isa<FloatType>(t))
    return b.create<arith::BitcastOp>(loc, t, bitsValue);
  return bitsValue;
}

void KernelBuilder::buildParallelBody(OpBuilder &b, scf::ParallelOp par,
                                      OpBuilder &host) {
  Location loc = par.getLoc();
  // Trip counts, in the kernel and (for the launch size) on the host.
  auto trips = [&](OpBuilder &ob, auto value) {
    SmallVector<Value> counts;
    for (auto [lb, ub, step] :
         llvm::zip(par.getLowerBound(), par.getUpperBound(), par.getStep())) {
      // Folded where the bounds are constants: the launch size is then
      // one in the host code.
      Value span = ob.createOrFold<arith::SubIOp>(loc, value(ub), value(lb));
      Value one = ob.create<arith::ConstantIndexOp>(loc, 1);
      Value rounded = ob.createOrFold<arith::AddIOp>(
          loc, span, ob.createOrFold<arith::SubIOp>(loc, value(step), one));
      counts.push_back(
          ob.createOrFold<arith::DivUIOp>(loc, rounded, value(step)));
    }
    return counts;
  };
  auto product = [&](OpBuilder &ob, ArrayRef<Value> counts) {
    Value total = ob.create<arith::ConstantIndexOp>(loc, 1);
    for (Value c : counts)
      total = ob.createOrFold<arith::MulIOp>(loc, total, c);
    return total;
  };
  SmallVector<Value> hostTrips = trips(host, [](Value v) { return v; });
  iface.iterations = product(host, hostTrips);
  SmallVector<Value> kernelTrips =
      trips(b, [&](Value v) { return map.lookupOrDefault(v); });
  Value total = product(b, kernelTrips);

  // A thread per iteration, or (a workgroup loop) a workgroup per
  // iteration; either way the grid strides over the rest.
  Value bid = b.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  Value groups = b.create<gpu::GridDimOp>(loc, gpu::Dimension::x);
  Value start = bid, stride = groups;
  if (!par->hasAttr(kWorkgroupLoopAttr)) {
    Value size = b.create<arith::ConstantIndexOp>(loc, kDeviceWorkgroupSize);
    Value tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
    start = b.create<arith::AddIOp>(
        loc, b.create<arith::MulIOp>(loc, bid, size), tid);
    stride = b.create<arith::MulIOp>(loc, groups, size);
  }
  auto loop = b.create<scf::ForOp>(loc, start, total, stride);
  OpBuilder inner = OpBuilder::atBlockBegin(loop.getBody());
  // The last dim varies fastest, as in the loop nest it replaces.
  Value rest = loop.getInductionVar();
  size_t rank = kernelTrips.size();
  SmallVector<Value> ivs(rank);
  for (size_t k = rank; k-- > 0;) {
    Value index = rest;
    if (k > 0) {
      index = inner.create<arith::RemUIOp>(loc, rest, kernelTrips[k]);
      rest = inner.create<arith::DivUIOp>(loc, rest, kernelTrips[k]);
    }
    Value lb = map.lookupOrDefault(par.getLowerBound()[k]);
    Value step = map.lookupOrDefault(par.getStep()[k]);
    ivs[k] = inner.create<arith::AddIOp>(
        loc, lb, inner.create<arith::MulIOp>(loc, index, step));
  }
  for (auto [iv, value] : llvm::zip(par.getInductionVars(), ivs))
    map.map(iv, value);
  for (Operation &op : par.getBody()->without_terminator())
    inner.clone(op, map);
}

// A thread runs the loops nested in its iteration (or in a one-thread
// kernel) in order.
LogicalResult KernelBuilder::serializeInnerParallels(gpu::GPUFuncOp fn) {
  SmallVector<scf::ParallelOp> inner;
  fn.walk([&](scf::ParallelOp p) { inner.push_back(p); });
  for (scf::ParallelOp par : inner) {
    if (par.getNumResults() != 0)
      return par.emitError("a parallel loop with reductions cannot be "
                           "placed in a kernel yet");
    OpBuilder b(par);
    scf::buildLoopNest(
        b, par.getLoc(), par.getLowerBound(), par.getUpperBound(),
        par.getStep(), [&](OpBuilder &nb, Location, ValueRange ivs) {
          IRMapping m;
          m.map(par.getInductionVars(), ivs);
          for (Operation &op : par.getBody()->without_terminator())
            nb.clone(op, m);
        });
    par.erase();
  }
  return success();
}

LogicalResult KernelBuilder::flattenAccesses(gpu::GPUFuncOp fn) {
  RewritePatternSet patterns(fn.getContext());
  memref::populateFoldMemRefAliasOpPatterns(patterns);
  memref::DimOp::getCanonicalizationPatterns(patterns, fn.getContext());
  if (failed(applyPatternsAndFoldGreedily(fn, std::move(patterns))))
    return fn.emitError("cannot fold the views of a kernel's buffers");
  // The stand-ins left (folding drops those nothing uses any more).
  SmallVector<UnrealizedConversionCastOp> standIns;
  fn.walk([&](UnrealizedConversionCastOp c) { standIns.push_back(c); });
  for (UnrealizedConversionCastOp standInOp : standIns) {
    auto arg = cast<BlockArgument>(standInOp.getOperand(0));
    KernelBuffer &kb = kernelBuffers[arg.getArgNumber() - 1];
    OpBuilder atEntry = OpBuilder::atBlockBegin(&fn.getBody().front());
    Value offset = atEntry.create<arith::IndexCastOp>(
        fn.getLoc(), atEntry.getIndexType(),
        atEntry.create<memref::LoadOp>(
            fn.getLoc(), params,
            ValueRange{atEntry.create<arith::ConstantIndexOp>(fn.getLoc(),
                                                              kb.offsetWord)}));
    SmallVector<int64_t> strides;
    int64_t staticOffset;
    if (failed(getStridesAndOffset(kb.hostType, strides, staticOffset)) ||
        llvm::any_of(strides, ShapedType::isDynamic))
      return fn.emitError("a kernel buffer of type ")
             << kb.hostType << " has dynamic strides";
    Value standIn = standInOp.getResult(0);
    for (Operation *user : llvm::make_early_inc_range(standIn.getUsers())) {
      OpBuilder b(user);
      Location loc = user->getLoc();
      auto linear = [&](ValueRange indices) {
        Value at = offset;
        for (auto [index, stride] : llvm::zip(indices, strides))
          at = b.create<arith::AddIOp>(
              loc, at,
              b.create<arith::MulIOp>(
                  loc, index, b.create<arith::ConstantIndexOp>(loc, stride)));
        return at;
      };
      if (auto load = dyn_cast<memref::LoadOp>(user)) {
        Value at = linear(load.getIndices());
        load.replaceAllUsesWith(
            b.create<memref::LoadOp>(loc, kb.flat, at).getResult());
        load.erase();
      } else if (auto store = dyn_cast<memref::StoreOp>(user)) {
        Value at = linear(store.getIndices());
        b.create<memref::StoreOp>(loc, store.getValueToStore(), kb.flat, at);
        store.erase();
      } else {
        return user->emitError("'")
               << user->getName() << "' on a buffer cannot run in a kernel yet";
      }
    }
    standInOp.erase();
  }
  return success();
}

OwningOpRef<ModuleOp> KernelBuilder::build(StringRef name, OpBuilder &host) {
  MLIRContext *ctx = ops.front()->getContext();
  Location loc = ops.front()->getLoc();
  for (Operation *op : ops)
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (!definedInside(operand, ops))
          resolve(operand);
    });
  iface.buffers.assign(buffers.begin(), buffers.end());

  SmallVector<Type> argTypes{
      MemRefType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 32))};
  for (Value buffer : iface.buffers)
    argTypes.push_back(
        MemRefType::get({ShapedType::kDynamic},
                        cast<MemRefType>(buffer.getType()).getElementType()));

  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  (*module)->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                     UnitAttr::get(ctx));
  OpBuilder b = OpBuilder::atBlockEnd(module->getBody());
  auto gpuModule = b.create<gpu::GPUModuleOp>(loc, "mlcc_kernels");
  b.setInsertionPointToStart(gpuModule.getBody());
  auto fn =
      b.create<gpu::GPUFuncOp>(loc, name, FunctionType::get(ctx, argTypes, {}));
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(ctx));
  int32_t threads = parallel ? kDeviceWorkgroupSize : 1;
  fn.setKnownBlockSizeAttr(DenseI32ArrayAttr::get(ctx, {threads, 1, 1}));
  Block &entry = fn.getBody().front();
  b.setInsertionPointToStart(&entry);
  params = entry.getArgument(0);

  for (auto [i, buffer] : llvm::enumerate(iface.buffers)) {
    KernelBuffer kb;
    kb.flat = entry.getArgument(i + 1);
    kb.offsetWord = nextWord++;
    kb.hostType = cast<MemRefType>(buffer.getType());
    auto standIn =
        b.create<UnrealizedConversionCastOp>(loc, kb.hostType, kb.flat);
    map.map(buffer, standIn.getResult(0));
    kernelBuffers.push_back(kb);
  }
  for (Value scalar : iface.scalars)
    map.map(scalar, loadWords(b, loc, scalar.getType()));
  for (Operation *op : cloneOrder)
    b.clone(*op, map);

  if (parallel)
    buildParallelBody(b, cast<scf::ParallelOp>(ops.front()), host);
  else
    for (Operation *op : ops)
      b.clone(*op, map);
  b.create<gpu::ReturnOp>(loc);

  if (failed(serializeInnerParallels(fn)) || failed(flattenAccesses(fn)))
    return nullptr;
  return module;
}

} // namespace

void appendHostWords(OpBuilder &b, Location loc, Value scalar,
                     SmallVectorImpl<Value> &words) {
  Type t = scalar.getType();
  Type i32 = b.getI32Type();
  if (t.isIndex()) {
    words.push_back(b.create<arith::IndexCastOp>(loc, i32, scalar));
    return;
  }
  unsigned bits = t.getIntOrFloatBitWidth();
  Value asInt = scalar;
  if (isa<FloatType>(t))
    asInt = b.create<arith::BitcastOp>(loc, b.getIntegerType(bits), scalar);
  if (bits > 32) {
    words.push_back(b.create<arith::TruncIOp>(loc, i32, asInt));
    Value shift = b.create<arith::ConstantIntOp>(loc, 32, bits);
    words.push_back(b.create<arith::TruncIOp>(
        loc, i32, b.create<arith::ShRUIOp>(loc, asInt, shift)));
  } else if (bits < 32) {
    words.push_back(b.create<arith::ExtUIOp>(loc, i32, asInt));
  } else {
    words.push_back(asInt);
  }
}

OwningOpRef<ModuleOp> buildKernel(ArrayRef<Operation *> ops, bool parallel,
                                  StringRef name,
                                  const ClonablePredicate &clonable,
                                  OpBuilder &hostBuilder,
                                  KernelInterface &iface) {
  KernelBuilder builder(ops, parallel, clonable, iface);
  return builder.build(name, hostBuilder);
}

} // namespace mlcc::lowering::device
