//===- Fused.cpp - Portable lowering of the fused ops ---------------------===//
//
// The ops of GraphFusedOps.td (graph.fused_conv, graph.attention, ...)
// stand for groups of ONNX-level ops, each of which has a portable
// lowering. So a fused op that the target declines is computed as its
// group: decomposeFusedOp (dialects/Graph/IR) builds the group's graph ops
// in a block of their own, outside the function, and each is lowered here
// with its own portable lowering; intermediate results go to memref.alloc
// buffers, which the host builder turns into arena scratch, and the last op
// writes the fused op's result. One mechanism for every fused op, and no
// second copy of a convolution or of an activation's math.
//
//===----------------------------------------------------------------------===//

#include "PortableLowering.h"

#include "FusedOpDecomposition.h"
#include "GraphDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace mlcc::portable {
namespace {

/// A buffer holding the value of a small graph.constant (the decompositions
/// make scalars only: clip's bounds).
FailureOr<Value> materializeConstant(PortableOp &p, graph::ConstantOp c) {
  auto attr = dyn_cast<DenseElementsAttr>(c.getValue());
  constexpr int64_t kMaxElements = 64;
  if (!attr || attr.getNumElements() > kMaxElements)
    return failure();
  MemRefType type = bufferType(attr.getType());
  Value buffer = p.b.create<memref::AllocOp>(p.loc, type);
  ArrayRef<int64_t> shape = attr.getType().getShape();
  int64_t i = 0;
  for (Attribute e : attr.getValues<Attribute>()) {
    auto typed = dyn_cast<TypedAttr>(e);
    if (!typed || typed.getType() != type.getElementType())
      return failure();
    SmallVector<Value> index;
    for (int64_t d = shape.size() - 1, rest = i; d >= 0; --d) {
      index.insert(index.begin(),
                   p.b.create<arith::ConstantIndexOp>(p.loc, rest % shape[d]));
      rest /= shape[d];
    }
    Value v = p.b.create<arith::ConstantOp>(p.loc, typed);
    p.b.create<memref::StoreOp>(p.loc, v, buffer, index);
    ++i;
  }
  return buffer;
}

LogicalResult lowerDecomposed(PortableOp &p) {
  Operation *op = p.op;
  if (op->getNumResults() != 1)
    return op->emitError() << op->getName() << ": expected one result";
  // The group's ops live here, never in the graph function; the block drops
  // them (and their uses of the function's values) when it goes.
  Block group;
  OpBuilder gb(op->getContext()); // the block has no region to ask
  gb.setInsertionPointToEnd(&group);
  FailureOr<Value> result = graph::decomposeFusedOp(op, gb);
  if (failed(result))
    return op->emitError() << op->getName()
                           << ": no decomposition into ops the portable "
                              "lowering knows";

  const PortableRegistry &registry = portableRegistry();
  DenseMap<Value, Value> buffers;
  for (auto [v, buffer] : llvm::zip(op->getOperands(), p.operands))
    buffers[v] = buffer;
  bool wroteResult = false;
  for (Operation &g : group) {
    if (isa<graph::NoneOp>(g)) {
      buffers[g.getResult(0)] = Value();
      continue;
    }
    if (auto c = dyn_cast<graph::ConstantOp>(g)) {
      FailureOr<Value> buffer = materializeConstant(p, c);
      if (failed(buffer))
        return op->emitError() << op->getName()
                               << ": its decomposition has a constant the "
                                  "portable lowering cannot materialize";
      buffers[c.getResult()] = *buffer;
      continue;
    }
    auto fn = registry.find(g.getName().getStringRef());
    if (fn == registry.end())
      return op->emitError() << op->getName() << ": no portable lowering for "
                             << g.getName() << " in its decomposition";
    PortableOp sub{&g, p.b, p.loc, {}, {}};
    for (Value v : g.getOperands())
      sub.operands.push_back(buffers.lookup(v));
    for (Value r : g.getResults()) {
      Value buffer;
      if (r == *result) {
        buffer = p.results[0];
        wroteResult = true;
      } else if (isa<NoneType>(r.getType())) {
        // An optional result the decomposition does not produce.
      } else {
        buffer = p.b.create<memref::AllocOp>(p.loc, bufferType(r.getType()));
      }
      buffers[r] = buffer;
      sub.results.push_back(buffer);
    }
    if (failed(fn->second(sub)))
      return failure();
  }
  if (!wroteResult)
    return op->emitError() << op->getName()
                           << ": its decomposition computes no new value";
  return success();
}

} // namespace

void registerPortableFused(PortableRegistry &registry) {
  registry["graph.fused_conv"] = lowerDecomposed;
  registry["graph.attention"] = lowerDecomposed;
  registry["graph.embed_layer_norm"] = lowerDecomposed;
  registry["graph.skip_layer_norm"] = lowerDecomposed;
}

} // namespace mlcc::portable
