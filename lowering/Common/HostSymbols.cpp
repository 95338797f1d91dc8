//===- HostSymbols.cpp - Weights, kernels, calls and parallel loops -------===//
//
// The services a target's kernels need beyond buffers: weights as globals of
// the object (or ranges of the weights file), kernels as functions of the
// object, calls to them, and loops split over the runtime's thread pool.
// Identical weights and kernels are stored once, across the entries of one
// object too.
//
//===----------------------------------------------------------------------===//

#include "HostBuilderImpl.h"
#include "PortableLowering.h"

#include "GraphDialect.h"
#include "mlcc/Reference/MlirBridge.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/xxhash.h"

#include <limits>

using namespace mlir;

namespace mlcc::lowering::host {
namespace {

std::string sanitize(StringRef s) {
  std::string out;
  for (char c : s)
    out += (isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return out.empty() ? "x" : out.substr(0, 40);
}

} // namespace

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
      offset = llvm::alignTo(out.weights.size(), alignment());
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
    source = dataGlobal(name, byteType);
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

void HostBuilder::callRuntime(StringRef symbol, ArrayRef<Value> fields) {
  declareRuntime(symbol,
                 b.getFunctionType({MemRefType::get({1}, b.getI64Type())}, {}));
  callKernel(symbol, fields);
}

void HostBuilder::declareRuntime(StringRef name, FunctionType type) {
  if (host.lookupSymbol(name))
    return;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(entry);
  b.create<func::FuncOp>(currentLoc, name, type).setPrivate();
}

// The global `name` of the object's data (declared once: no initial
// value, the object writer supplies the bytes), here.
Value HostBuilder::dataGlobal(StringRef name, MemRefType byteType) {
  if (!host.lookupSymbol(name)) {
    OpBuilder::InsertionGuard atModule(b);
    b.setInsertionPoint(entry);
    b.create<memref::GlobalOp>(currentLoc, name, b.getStringAttr("public"),
                               byteType, Attribute(), /*constant=*/false,
                               b.getI64IntegerAttr(kAlignment));
  }
  return b.create<memref::GetGlobalOp>(currentLoc, byteType, name);
}

Value HostBuilder::hostData(StringRef hint, std::vector<uint8_t> bytes) {
  auto byteType =
      MemRefType::get({static_cast<int64_t>(bytes.size())}, b.getI8Type());
  std::string name = uniqueSymbol("d", hint);
  out.data.push_back({name, std::move(bytes)});
  return address(dataGlobal(name, byteType));
}

void HostBuilder::failIf(Value cond, int32_t status,
                         const std::string &message) {
  if (target.device())
    return deviceFailIf(cond, status, message);
  if (!statusBuffer) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&entry.getBody().front());
    statusBuffer = b.create<memref::AllocaOp>(
        currentLoc, MemRefType::get({}, b.getI32Type()));
    Value ok = b.create<arith::ConstantIntOp>(currentLoc, 0, 32);
    b.create<memref::StoreOp>(currentLoc, ok, statusBuffer, ValueRange{});
  }
  // The message's address is an i64: the C function takes a const char *,
  // passed in the same register.
  FunctionType type = b.getFunctionType({b.getI32Type(), b.getI64Type()},
                                        {b.getI32Type()});
  declareRuntime("mlcc_model_fail", type);
  std::vector<uint8_t> text(message.begin(), message.end());
  text.push_back(0);
  auto ifOp = b.create<scf::IfOp>(currentLoc, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  Value code = b.create<arith::ConstantIntOp>(currentLoc, status, 32);
  Value recorded =
      b.create<func::CallOp>(currentLoc, "mlcc_model_fail",
                             TypeRange{b.getI32Type()},
                             ValueRange{code, addData("message", text)})
          .getResult(0);
  b.create<memref::StoreOp>(currentLoc, recorded, statusBuffer, ValueRange{});
}

void HostBuilder::deviceFailIf(Value cond, int32_t status,
                               const std::string &message) {
  if (!failWord) {
    // Zeroed at the start of every run; lives for the whole entry.
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&entry.getBody().front());
    failWord = newSlot(MemRefType::get({}, b.getI32Type()), 0,
                       std::numeric_limits<int32_t>::max());
    Value zero = b.create<arith::ConstantIntOp>(currentLoc, 0, 32);
    b.create<memref::StoreOp>(currentLoc, zero, failWord, ValueRange{});
  }
  failSites.push_back({status, message});
  auto ifOp = b.create<scf::IfOp>(currentLoc, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  Value site = b.create<arith::ConstantIntOp>(currentLoc, failSites.size(), 32);
  b.create<memref::StoreOp>(currentLoc, site, failWord, ValueRange{});
}

// The status of a device target's run: 0, or what mlcc_model_fail gives
// for the site whose number is in the fail word (any one of them when
// several failed: the kernels race to write it).
Value HostBuilder::finishDeviceStatus() {
  Value zero = b.create<arith::ConstantIntOp>(currentLoc, 0, 32);
  if (!failWord)
    return zero;
  FunctionType type =
      b.getFunctionType({b.getI32Type(), b.getI64Type()}, {b.getI32Type()});
  declareRuntime("mlcc_model_fail", type);
  statusBuffer = b.create<memref::AllocaOp>(
      currentLoc, MemRefType::get({}, b.getI32Type()));
  b.create<memref::StoreOp>(currentLoc, zero, statusBuffer, ValueRange{});
  Value word = b.create<memref::LoadOp>(currentLoc, failWord, ValueRange{});
  for (auto [i, site] : llvm::enumerate(failSites)) {
    Value isSite = b.create<arith::CmpIOp>(
        currentLoc, arith::CmpIPredicate::eq, word,
        b.create<arith::ConstantIntOp>(currentLoc, i + 1, 32));
    auto ifOp = b.create<scf::IfOp>(currentLoc, isSite, false);
    ifOp->setAttr(kHostControlAttr, b.getUnitAttr());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    std::vector<uint8_t> text(site.second.begin(), site.second.end());
    text.push_back(0);
    Value code = b.create<arith::ConstantIntOp>(currentLoc, site.first, 32);
    Value recorded =
        b.create<func::CallOp>(currentLoc, "mlcc_model_fail",
                               TypeRange{b.getI32Type()},
                               ValueRange{code, hostData("message", text)})
            .getResult(0);
    b.create<memref::StoreOp>(currentLoc, recorded, statusBuffer, ValueRange{});
  }
  return b.create<memref::LoadOp>(currentLoc, statusBuffer, ValueRange{});
}

Value HostBuilder::numThreads() {
  if (oneThreadOp)
    return b.create<arith::ConstantIntOp>(currentLoc, 1, 64);
  FunctionType type = b.getFunctionType({poolType()}, {b.getI32Type()});
  declareRuntime("mlcc_threadpool_num_threads", type);
  Value n = b.create<func::CallOp>(currentLoc, "mlcc_threadpool_num_threads",
                                   TypeRange{b.getI32Type()},
                                   ValueRange{pool()})
                .getResult(0);
  return b.create<arith::ExtSIOp>(currentLoc, b.getI64Type(), n);
}

// body(i, fields) for i in [0, n): parallelForRanges' body loops over its
// chunk.
void HostBuilder::parallelFor(int64_t n, ArrayRef<Value> fields,
                              std::function<void(Value, ValueRange)> body) {
  parallelForRanges(n, fields, [&](Value begin, Value end, ValueRange loaded) {
    auto toIndex = [&](Value v) {
      return b.create<arith::IndexCastOp>(currentLoc, b.getIndexType(), v);
    };
    auto loop =
        b.create<scf::ForOp>(currentLoc, toIndex(begin), toIndex(end),
                             b.create<arith::ConstantIndexOp>(currentLoc, 1));
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = b.create<arith::IndexCastOp>(currentLoc, b.getI64Type(),
                                           loop.getInductionVar());
    body(i, loaded);
  });
}

// A function `void body(i64 *fields, i64 begin, i64 end)` handed to
// mlcc_threadpool_parallel_for with the fields in an array on this stack.
void HostBuilder::parallelForRanges(
    int64_t n, ArrayRef<Value> fields,
    std::function<void(Value, Value, ValueRange)> body) {
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
    body(block->getArgument(1), block->getArgument(2), loaded);
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
  Value count = b.create<arith::ConstantIntOp>(currentLoc, n, 64);
  if (oneThreadOp) {
    Value zero = b.create<arith::ConstantIntOp>(currentLoc, 0, 64);
    b.create<func::CallOp>(currentLoc, function,
                           ValueRange{array, zero, count});
    return;
  }
  FunctionType parallelForType = b.getFunctionType(
      {poolType(), b.getI64Type(), bodyType, fieldsType}, {b.getI32Type()});
  declareRuntime("mlcc_threadpool_parallel_for", parallelForType);
  Value fn = b.create<func::ConstantOp>(currentLoc, bodyType, name);
  b.create<func::CallOp>(currentLoc, "mlcc_threadpool_parallel_for",
                         TypeRange{b.getI32Type()},
                         ValueRange{pool(), count, fn, array});
}

} // namespace mlcc::lowering::host
