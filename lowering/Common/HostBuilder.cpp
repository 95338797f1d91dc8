//===- HostBuilder.cpp - Graph function -> host schedule ------------------===//
//
// One walk over the graph function, in order. Each value gets a buffer:
// inputs and outputs are the entry's arguments, weights are globals, and
// every other value is a view of the arena at an offset that is a
// placeholder constant until the whole function is built; then the arena
// planner, which knows every lifetime (including the scratch buffers kernels
// asked for), fills the offsets in.
//
//===----------------------------------------------------------------------===//

#include "HostBuilderImpl.h"
#include "PortableLowering.h"
#include "RunTimeExtents.h"

#include "GraphDialect.h"
#include "mlcc/Reference/MlirBridge.h"
#include "mlcc/status.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace mlcc::lowering {

void registerHostDialects(DialectRegistry &registry) {
  registry.insert<affine::AffineDialect, arith::ArithDialect,
                  cf::ControlFlowDialect, func::FuncDialect,
                  index::IndexDialect, linalg::LinalgDialect,
                  LLVM::LLVMDialect, math::MathDialect, memref::MemRefDialect,
                  scf::SCFDialect, vector::VectorDialect>();
}

namespace host {

/// Ops whose result has the operand's bytes in the same order: in the arena
/// the result is the operand's buffer seen with another shape.
bool isAliasOp(Operation *op) {
  return isa<graph::ReshapeOp, graph::FlattenOp, graph::SqueezeOp,
             graph::UnsqueezeOp, graph::IdentityOp>(op);
}

namespace {

std::string tensorName(func::FuncOp f, unsigned i, bool input) {
  auto attr = input ? f.getArgAttrOfType<StringAttr>(i, "graph.name")
                    : f.getResultAttrOfType<StringAttr>(i, "graph.name");
  if (attr)
    return attr.str();
  return (input ? "input_" : "output_") + std::to_string(i);
}

/// What one core does per microsecond, for the estimate of an op's time:
/// about half of a Zen 5 core's f32 FMA peak, and of its L2 copy bandwidth.
constexpr double kOpsPerMicro = 100e3;
constexpr double kBytesPerMicro = 40e3;

/// Whether `op`'s work (estimateOpWork) takes less than `minMicros` on one
/// core: never for tensors of run-time extents, whose estimate counts them
/// as empty.
bool oneThreadEnough(Operation *op, double minMicros) {
  auto dynamic = [](Value v) {
    auto t = dyn_cast<ShapedType>(v.getType());
    return t && !t.hasStaticShape();
  };
  if (llvm::any_of(op->getOperands(), dynamic) ||
      llvm::any_of(op->getResults(), dynamic))
    return false;
  OpWork work = estimateOpWork(op);
  double micros = std::max(work.product ? work.ops / kOpsPerMicro : 0.0,
                           work.bytes / kBytesPerMicro);
  return micros < minMicros;
}

} // namespace

LogicalResult HostBuilder::checkSupported() {
  auto isStatic = [](Type t) {
    auto shaped = dyn_cast<RankedTensorType>(t);
    return shaped && shaped.hasStaticShape();
  };
  FunctionType type = graph.getFunctionType();
  // One line per symbolic dim of the inputs, with the flag that fixes it.
  bool dynamicInputs = false;
  llvm::StringSet<> named;
  for (auto [i, t] : llvm::enumerate(type.getInputs())) {
    if (isStatic(t))
      continue;
    dynamicInputs = true;
    auto params = graph.getArgAttrOfType<ArrayAttr>(i, "graph.dim_params");
    std::string input = "input '" + tensorName(graph, i, true) + "' (" +
                        graph::describeType(t, params) + ")";
    auto ranked = dyn_cast<RankedTensorType>(t);
    if (!ranked) {
      graph.emitError() << input << " has no rank; --target " << target.name()
                        << " needs static shapes";
      continue;
    }
    for (int64_t d = 0; d < ranked.getRank(); ++d) {
      if (!ranked.isDynamicDim(d))
        continue;
      StringRef name = graph::dimParamName(params, d);
      if (name.empty())
        graph.emitError() << input << ": dim " << d << " has no name, so "
                          << "--dim cannot fix it; --target " << target.name()
                          << " needs static shapes: `mlcc run --data` and "
                          << "`mlcc bench --data` take it from the data";
      else if (named.insert(name).second)
        graph.emitError() << input << ": dim " << d << " is symbolic ('" << name
                          << "'); --target " << target.name()
                          << " needs static shapes: pass --dim " << name
                          << "=1 (or one object for several values, --dim "
                          << name << "=1,8"
                          << (target.device() ? std::string()
                              : d == 0
                                  ? "; for each value of a range, --dim " +
                                        name.str() + "=1..64"
                                  : "; for every length up to 512, --dim " +
                                        name.str() + "=1..512")
                          << ")";
    }
  }
  if (dynamicInputs)
    return failure();
  for (auto [i, t] : llvm::enumerate(type.getResults()))
    if (!isStatic(t))
      return graph.emitError("output '")
             << tensorName(graph, i, false) << "' has type " << t
             << "; --target " << target.name() << " needs static shapes";
  WalkResult result = graph.getBody().walk([&](Operation *op) {
    if (op->getNumRegions() != 0 &&
        !isa<graph::IfOp, graph::ForOp, graph::WhileOp>(op)) {
      op->emitError() << describeOp(op)
                      << ": control flow is not supported by --target "
                      << target.name() << " yet";
      return WalkResult::interrupt();
    }
    for (Type t : op->getResultTypes())
      if (!isa<NoneType>(t) && !isStatic(t)) {
        op->emitError() << describeOp(op) << ": result type " << t
                        << " is not static; --target " << target.name()
                        << " needs static shapes";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

void HostBuilder::createModuleAndEntry() {
  MLIRContext *ctx = graph.getContext();
  if (!out.module)
    out.module = ModuleOp::create(graph.getLoc());
  host = *out.module;
  b.setInsertionPointToEnd(host.getBody());

  // The arena's size is set once it is planned, the weights' (the data of
  // the weights file; 0 bytes when they are globals) once all are added.
  SmallVector<Type> args{MemRefType::get({0}, b.getI8Type()),
                         MemRefType::get({0}, b.getI8Type())};
  FunctionType type = graph.getFunctionType();
  for (Type t : type.getInputs())
    args.push_back(portable::bufferType(t));
  for (Type t : type.getResults())
    args.push_back(portable::bufferType(t));
  // Last: the thread pool (an opaque pointer, may be null).
  args.push_back(poolType());
  entryResult.symbol = "mlcc_" + modelName + "_entry";
  if (!out.entries.empty())
    entryResult.symbol += std::to_string(out.entries.size());
  entry = b.create<func::FuncOp>(graph.getLoc(), entryResult.symbol,
                                 FunctionType::get(ctx, args, b.getI32Type()));
  entry.setPrivate();
  out.symbols.insert(entryResult.symbol);
  Block *body = entry.addEntryBlock();
  b.setInsertionPointToStart(body);
  arena = body->getArgument(0);
  weights = body->getArgument(1);
  for (unsigned i = 0; i < type.getNumInputs(); ++i)
    buffers[graph.getArgument(i)] = inputArg(i);
}

void HostBuilder::numberOps(Block &block, int64_t &next) {
  for (Operation &op : block) {
    opIndex[&op] = next++;
    for (Region &region : op.getRegions())
      for (Block &inner : region)
        numberOps(inner, next);
    opEnd[&op] = next - 1;
  }
}

void HostBuilder::computeLastUses() {
  int64_t next = 0;
  numberOps(graph.getBody().front(), next);
  // A value used inside a region op but defined outside it is read by every
  // run of the region: it lives until the region op's end.
  graph.getBody().walk([&](Operation *op) {
    for (Value operand : op->getOperands()) {
      Operation *user = op;
      while (user && user->getBlock() != operand.getParentBlock())
        user = user->getParentOp();
      if (user)
        lastUse[operand] = std::max(lastUse[operand], opEnd[user]);
    }
  });
  // A DequantizeLinear's input lives as long as its result: a target's
  // int8 kernel for a consumer of the result reads the quantised input
  // instead (lowering/AVX512/SelectQdqGemm.cpp). Latest first, so a chain
  // of them passes the lifetime on.
  SmallVector<Operation *> dequantizes;
  graph.getBody().walk(
      [&](graph::DequantizeLinearOp op) { dequantizes.push_back(op); });
  for (Operation *op : llvm::reverse(dequantizes)) {
    Value in = op->getOperand(0);
    lastUse[in] = std::max(lastUse[in], lastUseOf(op->getResult(0)));
  }
  // A value returned once, made by an op that writes its own buffer, is
  // computed straight into the caller's output buffer.
  Operation *ret = graph.getBody().front().getTerminator();
  for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
    Operation *def = v.getDefiningOp();
    if (!def || isa<graph::ConstantOp>(def) || isAliasOp(def) ||
        directOutput.count(v))
      continue;
    directOutput[v] = i;
  }
}

LogicalResult HostBuilder::lowerOp(Operation *op) {
  currentLoc = op->getLoc();
  if (isa<graph::ConstantOp, graph::NoneOp>(op))
    return success();

  if (op->getNumRegions() != 0)
    return lowerControlFlow(op);

  // The `after` values are computed by now (their producers come first in
  // the block) and in their buffers; the results are the values' buffers.
  if (auto dep = dyn_cast<graph::ControlDependencyOp>(op)) {
    for (Value after : dep.getAfter())
      (void)buffer(after);
    for (auto [v, result] : llvm::zip(dep.getValues(), dep.getResults())) {
      buffers[result] = buffer(v);
      auto slot = slotOfValue.find(v);
      if (slot != slotOfValue.end()) {
        unsigned index = slot->second;
        Slot &s = slots[index];
        s.last = std::max(s.last, lastUseOf(result));
        slotOfValue[result] = index;
      }
    }
    return success();
  }

  if (isAliasOp(op)) {
    Value src = op->getOperand(0);
    Value result = op->getResult(0);
    (void)buffer(src);
    auto slot = slotOfValue.find(src);
    if (slot != slotOfValue.end() && !directOutput.count(result) &&
        !preset.count(result)) {
      // Copied out: inserting `result` may rehash the map under `slot`.
      unsigned index = slot->second;
      Slot &s = slots[index];
      s.last = std::max(s.last, lastUse.lookup(result));
      slotOfValue[result] = index;
      buffers[result] = viewOfSlot(index, cast<ShapedType>(result.getType()));
      return success();
    }
  }

  // Nothing to compute when every result is empty.
  if (llvm::all_of(op->getResultTypes(), [](Type t) {
        return isa<NoneType>(t) || cast<ShapedType>(t).getNumElements() == 0;
      }))
    return success();

  checkIndices(op);
  oneThreadOp = oneThreadEnough(op, options.minParallelMicros);
  // A data-dependent op's extents are the portable lowering's to compute.
  bool ownExtents = llvm::any_of(op->getResults(), [](Value r) {
    return llvm::is_contained(graph::extentSources(r), graph::kOwnExtent);
  });
  switch (options.targetKernels && !ownExtents ? target.lowerOp(op, *this)
                                               : TargetLowering::Declined) {
  case TargetLowering::Lowered:
    return success();
  case TargetLowering::Failed:
    return failure();
  case TargetLowering::Declined:
    break;
  }
  // The portable lowerings compute over the static extents: on the padding
  // of a range of lengths, which this op must not read.
  if (op->hasAttr(graph::kRunTimeLengthAttr))
    return op->emitError()
           << describeOp(op)
           << ": mixes positions along a range of lengths, which only "
              "--target avx512's kernels for it take yet (they run over the "
              "run's length); give --dim values instead";
  const portable::PortableRegistry &registry = portable::portableRegistry();
  auto fn = registry.find(op->getName().getStringRef());
  if (fn == registry.end())
    return op->emitError() << describeOp(op) << ": no lowering for --target "
                           << target.name() << " yet";
  for (Value result : op->getResults())
    (void)buffer(result);
  portable::PortableOp p{op, b, currentLoc};
  p.failIf = [this, op](Value cond, const std::string &what) {
    failIf(cond, MLCC_SHAPE_MISMATCH, describeOp(op) + ": " + what);
  };
  for (Value operand : op->getOperands()) {
    p.operands.push_back(buffer(operand));
    if (!isa<NoneType>(operand.getType()) && !p.operands.back())
      return op->emitError() << describeOp(op) << ": operand has no buffer";
  }
  for (Value result : op->getResults()) {
    p.results.push_back(buffer(result));
    p.resultExtents.push_back(
        llvm::is_contained(graph::extentSources(result), graph::kOwnExtent)
            ? extentBuffer(result)
            : Value());
  }
  for (Value operand : op->getOperands())
    p.operandExtents.push_back(
        graph::hasRunTimeExtents(operand) ? extentBuffer(operand) : Value());
  Block::iterator at = b.getInsertionPoint();
  Operation *last =
      at == b.getInsertionBlock()->begin() ? nullptr : &*std::prev(at);
  if (failed(fn->second(p)))
    return failure();
  moveAllocationsToArena(last);
  // On a device every loop becomes a kernel (DeviceSchedule.cpp) instead.
  if (!target.device())
    distributeParallelLoops(last);
  return success();
}

LogicalResult HostBuilder::lowerBlock(Block &block) {
  for (Operation &op : block.without_terminator()) {
    step = opIndex[&op];
    if (failed(lowerOp(&op)))
      return failure();
  }
  step = opIndex[block.getTerminator()];
  return success();
}

void HostBuilder::emitProfileHook(Operation *op) {
  if (!host.lookupSymbol(kProfileHook)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(entry);
    b.create<func::FuncOp>(currentLoc, kProfileHook,
                           b.getFunctionType({b.getI32Type()}, {}))
        .setPrivate();
  }
  Value index =
      b.create<arith::ConstantIntOp>(currentLoc, out.profiledOps.size(), 32);
  b.create<func::CallOp>(currentLoc, kProfileHook, TypeRange{},
                         ValueRange{index});
  if (op)
    out.profiledOps.push_back({describeOp(op), workDoneEarlier.contains(op)
                                                   ? OpWork{}
                                                   : estimateOpWork(op)});
}

void HostBuilder::noteProductPrecision(WorkPrecision precision) {
  if (options.profile && !out.profiledOps.empty())
    out.profiledOps.back().work.precision = precision;
}

void HostBuilder::noteWorkDoneFor(Operation *later) {
  if (!options.profile || out.profiledOps.empty())
    return;
  OpWork added = chainedOpWork(later);
  OpWork &work = out.profiledOps.back().work;
  work.ops += added.ops;
  work.bytes += added.bytes;
  work.product = work.product || added.product;
  workDoneEarlier.insert(later);
}

LogicalResult HostBuilder::build() {
  if (failed(checkSupported()))
    return failure();
  createModuleAndEntry();
  computeLastUses();

  Block &body = graph.getBody().front();
  for (Operation &op : body.without_terminator()) {
    step = opIndex[&op];
    if (options.profile && !isa<graph::ConstantOp, graph::NoneOp>(op))
      emitProfileHook(&op);
    if (failed(lowerOp(&op)))
      return failure();
    propagateExtents(&op);
  }
  step = opIndex[body.getTerminator()];
  if (options.profile)
    emitProfileHook(nullptr);

  currentLoc = body.getTerminator()->getLoc();
  finishOutputs(body.getTerminator());
  Value status =
      target.device() ? finishDeviceStatus()
      : statusBuffer
          ? b.create<memref::LoadOp>(currentLoc, statusBuffer, ValueRange{})
                .getResult()
          : b.create<arith::ConstantIntOp>(currentLoc, 0, 32).getResult();
  b.create<func::ReturnOp>(currentLoc, status);
  if (failed(finishArena()))
    return failure();

  ModelInterface &iface = entryResult.interface;
  iface.name = modelName;
  auto describeTensor = [](std::string name, Type t) {
    auto shaped = cast<ShapedType>(t);
    InterfaceTensor tensor;
    tensor.name = std::move(name);
    tensor.dtype = ref::dtypeName(dtypeFromMlir(shaped.getElementType()));
    for (int64_t d : shaped.getShape())
      tensor.dims.push_back({d, ""});
    return tensor;
  };
  FunctionType type = graph.getFunctionType();
  for (auto [i, t] : llvm::enumerate(type.getInputs()))
    iface.inputs.push_back(describeTensor(tensorName(graph, i, true), t));
  for (auto [i, t] : llvm::enumerate(type.getResults())) {
    iface.outputs.push_back(describeTensor(tensorName(graph, i, false), t));
    for (int64_t d : graph::runTimeOutputDims(graph, i)) {
      InterfaceDim &dim = iface.outputs.back().dims[d];
      dim.bound = dim.size;
      dim.size = -1;
    }
  }
  out.entries.push_back(std::move(entryResult));
  return success();
}

} // namespace host

LogicalResult buildHostModule(func::FuncOp graph, Target &target,
                              StringRef modelName, const HostOptions &options,
                              HostModule &out) {
  DialectRegistry registry;
  registerHostDialects(registry);
  MLIRContext *ctx = graph.getContext();
  ctx->appendDialectRegistry(registry);
  for (StringRef name : registry.getDialectNames())
    ctx->getOrLoadDialect(name);
  host::HostBuilder builder(graph, target, modelName, options, out);
  return builder.build();
}

} // namespace mlcc::lowering
