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

#include "HostBuilder.h"
#include "ArenaPlanner.h"
#include "PortableLowering.h"

#include "GraphDialect.h"
#include "mlcc/Reference/MlirBridge.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;

namespace mlcc::lowering {

void registerHostDialects(DialectRegistry &registry) {
  registry.insert<affine::AffineDialect, arith::ArithDialect,
                  cf::ControlFlowDialect, func::FuncDialect,
                  index::IndexDialect, linalg::LinalgDialect,
                  LLVM::LLVMDialect, math::MathDialect, memref::MemRefDialect,
                  scf::SCFDialect, vector::VectorDialect>();
}

namespace {

constexpr uint64_t kAlignment = 64;

/// Ops whose result has the operand's bytes in the same order: in the arena
/// the result is the operand's buffer seen with another shape.
bool isAliasOp(Operation *op) {
  return isa<graph::ReshapeOp, graph::FlattenOp, graph::SqueezeOp,
             graph::UnsqueezeOp, graph::IdentityOp>(op);
}

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

std::string sanitize(StringRef s) {
  std::string out;
  for (char c : s)
    out += (isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return out.empty() ? "x" : out.substr(0, 40);
}

std::string tensorName(func::FuncOp f, unsigned i, bool input) {
  auto attr = input ? f.getArgAttrOfType<StringAttr>(i, "graph.name")
                    : f.getResultAttrOfType<StringAttr>(i, "graph.name");
  if (attr)
    return attr.str();
  return (input ? "input_" : "output_") + std::to_string(i);
}

/// "node 'conv1' (graph.conv)" when the importer kept the node's name.
std::string describe(Operation *op) {
  std::string s;
  if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
    s = "node '" + loc.getName().str() + "' ";
  return s + "(" + op->getName().getStringRef().str() + ")";
}

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
  Value scratch(MemRefType type) override;
  Value allocate(MemRefType type, Value liveAs) override;
  void extendLifetime(Value buffer, Value liveAs) override;
  void deferBuffer(Value v, std::function<void(Value)> materialize) override;
  ElementsAttr constantValue(Value v) override;
  Value addData(StringRef hint, std::vector<uint8_t> bytes) override;
  std::string addKernel(StringRef hint, std::vector<uint8_t> code) override;
  void callKernel(StringRef symbol, ArrayRef<Value> fields) override;
  void parallelFor(int64_t n, ArrayRef<Value> fields,
                   std::function<void(Value, ValueRange)> body) override;
  Value numThreads() override;

private:
  struct Slot {
    arith::ConstantIndexOp offset;
    uint64_t bytes;
    int64_t first, last;
  };

  LogicalResult checkSupported();
  MemRefType poolType() { return MemRefType::get({1}, b.getI8Type()); }
  Value pool() { return entry.getArguments().back(); }
  /// The entry's arguments: arena, weights, inputs..., outputs..., pool.
  Value inputArg(unsigned i) { return entry.getArgument(2 + i); }
  Value outputArg(unsigned i) {
    return entry.getArgument(2 + graph.getNumArguments() + i);
  }
  void declareRuntime(StringRef name, FunctionType type);
  void createModuleAndEntry();
  void computeLastUses();
  LogicalResult lowerOp(Operation *op);
  Value newSlot(ShapedType type, int64_t first, int64_t last);
  Value resultBuffer(Value result);
  Value inPlaceBuffer(Value result);
  int64_t lastUseOf(Value v) const;
  Value viewOfSlot(unsigned slot, ShapedType type);
  Value constantBuffer(Value v);
  Value dataBuffer(StringRef hint, std::vector<uint8_t> bytes,
                   MemRefType type);
  void finishArena();
  void emitProfileHook(const std::string &what);
  void moveAllocationsToArena(Operation *after);
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
  int64_t step = 0;

  DenseMap<Value, Value> buffers;
  DenseMap<Value, unsigned> slotOfValue;
  DenseMap<Value, int64_t> lastUse;
  DenseMap<Value, unsigned> directOutput;
  DenseMap<Value, unsigned> slotOfView;
  DenseMap<Value, std::function<void(Value)>> deferred;
  std::vector<Slot> slots;
  HostEntry entryResult;
};

LogicalResult HostBuilder::checkSupported() {
  auto isStatic = [](Type t) {
    auto shaped = dyn_cast<RankedTensorType>(t);
    return shaped && shaped.hasStaticShape();
  };
  FunctionType type = graph.getFunctionType();
  for (auto [i, t] : llvm::enumerate(type.getInputs()))
    if (!isStatic(t))
      return graph.emitError("input '")
             << tensorName(graph, i, true) << "' has type " << t
             << "; --target " << target.name()
             << " needs static shapes (fix dynamic dims with --dim NAME=VALUE)";
  for (auto [i, t] : llvm::enumerate(type.getResults()))
    if (!isStatic(t))
      return graph.emitError("output '")
             << tensorName(graph, i, false) << "' has type " << t
             << "; --target " << target.name() << " needs static shapes";
  WalkResult result = graph.getBody().walk([&](Operation *op) {
    if (op->getNumRegions() != 0) {
      op->emitError() << describe(op) << ": control flow is not supported by --target "
                      << target.name() << " yet";
      return WalkResult::interrupt();
    }
    for (Type t : op->getResultTypes())
      if (!isa<NoneType>(t) && !isStatic(t)) {
        op->emitError() << describe(op) << ": result type " << t
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

void HostBuilder::computeLastUses() {
  int64_t index = 0;
  for (Operation &op : graph.getBody().front()) {
    for (Value operand : op.getOperands())
      lastUse[operand] = index;
    ++index;
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
    Slot &s = slots[slot->second];
    if (s.last > step || s.bytes != bytes)
      continue;
    s.last = lastUseOf(result);
    slotOfValue[result] = slot->second;
    ++entryResult.inPlaceResults;
    entryResult.intermediateBytes += bytes;
    return viewOfSlot(slot->second, type);
  }
  return nullptr;
}

Value HostBuilder::allocate(MemRefType type, Value liveAs) {
  return newSlot(type, step, lastUseOf(liveAs));
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

Value HostBuilder::address(Value buf) {
  // The pointer of a view is its source's plus the byte shift, computed
  // here: MLIR 19's lowering of extract_aligned_pointer_as_index on a
  // memref.view returns the source's pointer, without the shift.
  Value shift;
  if (auto view = buf.getDefiningOp<memref::ViewOp>()) {
    shift = view.getByteShift();
    buf = view.getSource();
  }
  Value index =
      b.create<memref::ExtractAlignedPointerAsIndexOp>(currentLoc, buf);
  if (shift)
    index = b.create<arith::AddIOp>(currentLoc, index, shift);
  return b.create<arith::IndexCastOp>(currentLoc, b.getI64Type(), index);
}

Value HostBuilder::scratch(MemRefType type) {
  return newSlot(type, step, step);
}

ElementsAttr HostBuilder::constantValue(Value v) {
  if (auto c = v.getDefiningOp<graph::ConstantOp>())
    return c.getValue();
  return nullptr;
}

std::string HostBuilder::uniqueSymbol(StringRef kind, StringRef hint) {
  std::string name;
  do {
    name = "mlcc_" + modelName + "_" + kind.str() +
           std::to_string(out.symbolCounter++) + "_" + sanitize(hint);
  } while (!out.symbols.insert(name).second);
  return name;
}

// Weights are either globals in the object or ranges of the weights file
// (--weights external), whose data the entry gets as its second argument.
// Either way the buffer is made at the top of the entry: its first use may
// be inside a loop.
Value HostBuilder::dataBuffer(StringRef hint, std::vector<uint8_t> bytes,
                              MemRefType type) {
  auto byteType = MemRefType::get({static_cast<int64_t>(bytes.size())},
                                  b.getI8Type());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&entry.getBody().front());
  // Identical bytes (a weight shared by two ops, or by the entries of
  // several shapes) are stored once.
  auto &sameHash = out.weightsByHash[llvm::xxh3_64bits(bytes)];
  const StoredWeight *stored = nullptr;
  for (const StoredWeight &candidate : sameHash) {
    const uint8_t *p = options.externalWeights
                           ? out.weights.data() + candidate.offset
                           : out.data[candidate.offset].bytes.data();
    if (candidate.size == bytes.size() &&
        std::equal(bytes.begin(), bytes.end(), p)) {
      stored = &candidate;
      break;
    }
  }
  Value source;
  uint64_t offset = 0;
  if (options.externalWeights) {
    if (stored) {
      offset = stored->offset;
    } else {
      offset = llvm::alignTo(out.weights.size(), kAlignment);
      out.weights.resize(offset);
      out.weights.insert(out.weights.end(), bytes.begin(), bytes.end());
      sameHash.push_back({"", offset, bytes.size()});
    }
    source = weights;
  } else {
    std::string name;
    if (stored) {
      name = stored->name;
    } else {
      name = uniqueSymbol("w", hint);
      sameHash.push_back({name, out.data.size(), bytes.size()});
      out.data.push_back({name, std::move(bytes)});
    }
    if (!host.lookupSymbol(name)) {
      OpBuilder::InsertionGuard atModule(b);
      b.setInsertionPoint(entry);
      // No initial value: a declaration; the object writer supplies the
      // bytes.
      b.create<memref::GlobalOp>(currentLoc, name, b.getStringAttr("public"),
                                 byteType, Attribute(), /*constant=*/false,
                                 b.getI64IntegerAttr(kAlignment));
    }
    source = b.create<memref::GetGlobalOp>(currentLoc, byteType, name);
    if (!type)
      return source;
  }
  Value shift = b.create<arith::ConstantIndexOp>(currentLoc, offset);
  return b.create<memref::ViewOp>(currentLoc, type ? type : byteType, source,
                                  shift, ValueRange{});
}

Value HostBuilder::addData(StringRef hint, std::vector<uint8_t> bytes) {
  return address(dataBuffer(hint, std::move(bytes), nullptr));
}

Value HostBuilder::constantBuffer(Value v) {
  ref::Tensor t;
  if (tensorFromElementsAttr(constantValue(v), t).failed())
    return nullptr;
  const auto *p = static_cast<const uint8_t *>(t.raw());
  std::string hint = "const";
  if (auto loc = dyn_cast<NameLoc>(v.getLoc()))
    hint = loc.getName().str();
  return dataBuffer(hint, std::vector<uint8_t>(p, p + t.byteSize()),
                    cast<MemRefType>(portable::bufferType(v.getType())));
}

std::string HostBuilder::addKernel(StringRef hint, std::vector<uint8_t> code) {
  std::string key(code.begin(), code.end());
  auto it = out.kernelByCode.find(key);
  if (it != out.kernelByCode.end())
    return it->second;
  std::string name = uniqueSymbol("k", hint);
  out.kernelByCode[key] = name;
  out.kernels.push_back({name, std::move(code)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(entry);
  auto args = MemRefType::get({1}, b.getI64Type());
  auto decl = b.create<func::FuncOp>(currentLoc, name,
                                     b.getFunctionType({args}, {}));
  decl.setPrivate();
  return name;
}

void HostBuilder::callKernel(StringRef symbol, ArrayRef<Value> fields) {
  auto argsType = MemRefType::get({static_cast<int64_t>(fields.size())},
                                  b.getI64Type());
  Value args;
  {
    // Allocas at the top: one stack slot per call site, not per iteration.
    // In whichever function the call is (the entry or a parallel body).
    auto function = b.getInsertionBlock()
                        ->getParent()
                        ->getParentOfType<func::FuncOp>();
    if (!function)
      function = cast<func::FuncOp>(b.getInsertionBlock()->getParentOp());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&function.getBody().front());
    args = b.create<memref::AllocaOp>(currentLoc, argsType,
                                      b.getI64IntegerAttr(8));
  }
  for (auto [i, field] : llvm::enumerate(fields)) {
    Value index = b.create<arith::ConstantIndexOp>(currentLoc, i);
    b.create<memref::StoreOp>(currentLoc, field, args, index);
  }
  // Kernels are declared to take memref<1xi64>: the bare pointer is all the
  // call passes.
  Value cast = b.create<memref::ReinterpretCastOp>(
      currentLoc, MemRefType::get({1}, b.getI64Type()), args, 0,
      ArrayRef<int64_t>{1}, ArrayRef<int64_t>{1});
  b.create<func::CallOp>(currentLoc, symbol, TypeRange{}, ValueRange{cast});
}

void HostBuilder::declareRuntime(StringRef name, FunctionType type) {
  if (host.lookupSymbol(name))
    return;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(entry);
  b.create<func::FuncOp>(currentLoc, name, type).setPrivate();
}

Value HostBuilder::numThreads() {
  FunctionType type = b.getFunctionType({poolType()}, {b.getI32Type()});
  declareRuntime("mlcc_threadpool_num_threads", type);
  Value n = b.create<func::CallOp>(currentLoc, "mlcc_threadpool_num_threads",
                                   TypeRange{b.getI32Type()},
                                   ValueRange{pool()})
                .getResult(0);
  return b.create<arith::ExtSIOp>(currentLoc, b.getI64Type(), n);
}

// body(i, fields) for i in [0, n): a function `void body(i64 *fields, i64
// begin, i64 end)` that loops over its chunk, handed to
// mlcc_threadpool_parallel_for with the fields in an array on this stack.
void HostBuilder::parallelFor(int64_t n, ArrayRef<Value> fields,
                              std::function<void(Value, ValueRange)> body) {
  auto fieldsType = MemRefType::get({kMaxParallelFields}, b.getI64Type());
  FunctionType bodyType = b.getFunctionType(
      {fieldsType, b.getI64Type(), b.getI64Type()}, {});
  std::string name = uniqueSymbol("parallel", "body");
  func::FuncOp function;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(entry);
    function = b.create<func::FuncOp>(currentLoc, name, bodyType);
    function.setPrivate();
    Block *block = function.addEntryBlock();
    b.setInsertionPointToStart(block);
    SmallVector<Value> loaded;
    for (size_t i = 0; i < fields.size(); ++i)
      loaded.push_back(b.create<memref::LoadOp>(
          currentLoc, block->getArgument(0),
          ValueRange{b.create<arith::ConstantIndexOp>(currentLoc, i)}));
    auto toIndex = [&](Value v) {
      return b.create<arith::IndexCastOp>(currentLoc, b.getIndexType(), v);
    };
    auto loop = b.create<scf::ForOp>(
        currentLoc, toIndex(block->getArgument(1)),
        toIndex(block->getArgument(2)),
        b.create<arith::ConstantIndexOp>(currentLoc, 1));
    b.setInsertionPointToStart(loop.getBody());
    Value i = b.create<arith::IndexCastOp>(currentLoc, b.getI64Type(),
                                           loop.getInductionVar());
    body(i, loaded);
    b.setInsertionPointToEnd(block);
    b.create<func::ReturnOp>(currentLoc);
  }

  Value array;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&entry.getBody().front());
    array = b.create<memref::AllocaOp>(currentLoc, fieldsType,
                                       b.getI64IntegerAttr(8));
  }
  for (auto [i, field] : llvm::enumerate(fields))
    b.create<memref::StoreOp>(
        currentLoc, field, array,
        ValueRange{b.create<arith::ConstantIndexOp>(currentLoc, i)});
  FunctionType parallelForType = b.getFunctionType(
      {poolType(), b.getI64Type(), bodyType, fieldsType}, {b.getI32Type()});
  declareRuntime("mlcc_threadpool_parallel_for", parallelForType);
  Value fn = b.create<func::ConstantOp>(currentLoc, bodyType, name);
  Value count = b.create<arith::ConstantIntOp>(currentLoc, n, 64);
  b.create<func::CallOp>(currentLoc, "mlcc_threadpool_parallel_for",
                         TypeRange{b.getI32Type()},
                         ValueRange{pool(), count, fn, array});
}

LogicalResult HostBuilder::lowerOp(Operation *op) {
  currentLoc = op->getLoc();
  if (isa<graph::ConstantOp, graph::NoneOp>(op))
    return success();

  if (isAliasOp(op)) {
    Value src = op->getOperand(0);
    Value result = op->getResult(0);
    (void)buffer(src);
    auto slot = slotOfValue.find(src);
    if (slot != slotOfValue.end() && !directOutput.count(result)) {
      Slot &s = slots[slot->second];
      s.last = std::max(s.last, lastUse.lookup(result));
      slotOfValue[result] = slot->second;
      buffers[result] = viewOfSlot(slot->second, cast<ShapedType>(result.getType()));
      return success();
    }
  }

  // Nothing to compute when every result is empty.
  if (llvm::all_of(op->getResultTypes(), [](Type t) {
        return isa<NoneType>(t) || cast<ShapedType>(t).getNumElements() == 0;
      }))
    return success();

  switch (options.targetKernels ? target.lowerOp(op, *this)
                                 : TargetLowering::Declined) {
  case TargetLowering::Lowered:
    return success();
  case TargetLowering::Failed:
    return failure();
  case TargetLowering::Declined:
    break;
  }
  const portable::PortableRegistry &registry = portable::portableRegistry();
  auto fn = registry.find(op->getName().getStringRef());
  if (fn == registry.end())
    return op->emitError() << describe(op) << ": no lowering for --target "
                           << target.name() << " yet";
  for (Value result : op->getResults())
    (void)buffer(result);
  portable::PortableOp p{op, b, currentLoc, {}, {}};
  for (Value operand : op->getOperands()) {
    p.operands.push_back(buffer(operand));
    if (!isa<NoneType>(operand.getType()) && !p.operands.back())
      return op->emitError() << describe(op) << ": operand has no buffer";
  }
  for (Value result : op->getResults())
    p.results.push_back(buffer(result));
  Operation *last = b.getInsertionBlock()->empty()
                        ? nullptr
                        : &b.getInsertionBlock()->back();
  if (failed(fn->second(p)))
    return failure();
  moveAllocationsToArena(last);
  return success();
}

void HostBuilder::finishArena() {
  std::vector<ArenaRequest> requests;
  for (const Slot &s : slots) {
    requests.push_back({s.bytes, s.first, s.last});
    entryResult.intermediateBytes += s.bytes;
  }
  ArenaPlan plan = planArena(requests, kAlignment);
  for (auto [slot, offset] : llvm::zip(slots, plan.offsets))
    slot.offset.setValueAttr(b.getIndexAttr(offset));
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
}

// A portable lowering's temporary buffers (memref.alloc/dealloc: a padded
// input, an accumulator) become arena slots that live for the op's step, so
// the object never calls malloc.
void HostBuilder::moveAllocationsToArena(Operation *after) {
  Block *block = b.getInsertionBlock();
  auto begin = after ? std::next(Block::iterator(after)) : block->begin();
  SmallVector<memref::AllocOp> allocs;
  for (Operation &op : llvm::make_range(begin, block->end()))
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
    Value slot = scratch(type);
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    alloc.replaceAllUsesWith(slot);
    alloc.erase();
  }
}

void HostBuilder::emitProfileHook(const std::string &what) {
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
  if (!what.empty())
    out.profiledOps.push_back(what);
}

LogicalResult HostBuilder::build() {
  if (failed(checkSupported()))
    return failure();
  createModuleAndEntry();
  computeLastUses();

  Block &body = graph.getBody().front();
  for (Operation &op : body.without_terminator()) {
    if (options.profile && !isa<graph::ConstantOp, graph::NoneOp>(op))
      emitProfileHook(describe(&op));
    if (failed(lowerOp(&op)))
      return failure();
    ++step;
  }
  if (options.profile)
    emitProfileHook("");

  // Outputs that are not computed in place: copy them.
  currentLoc = body.getTerminator()->getLoc();
  for (auto [i, v] : llvm::enumerate(body.getTerminator()->getOperands())) {
    Value dst = outputArg(i);
    Value src = buffer(v);
    if (src != dst)
      b.create<memref::CopyOp>(currentLoc, src, dst);
  }
  Value ok = b.create<arith::ConstantIntOp>(currentLoc, 0, 32);
  b.create<func::ReturnOp>(currentLoc, ok);
  finishArena();

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
  for (auto [i, t] : llvm::enumerate(type.getResults()))
    iface.outputs.push_back(describeTensor(tensorName(graph, i, false), t));
  out.entries.push_back(std::move(entryResult));
  return success();
}

} // namespace

LogicalResult buildHostModule(func::FuncOp graph, Target &target,
                              StringRef modelName, const HostOptions &options,
                              HostModule &out) {
  DialectRegistry registry;
  registerHostDialects(registry);
  MLIRContext *ctx = graph.getContext();
  ctx->appendDialectRegistry(registry);
  for (StringRef name : registry.getDialectNames())
    ctx->getOrLoadDialect(name);
  HostBuilder builder(graph, target, modelName, options, out);
  return builder.build();
}

} // namespace mlcc::lowering
