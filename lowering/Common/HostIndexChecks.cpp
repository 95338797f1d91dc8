//===- HostIndexChecks.cpp - Out-of-range indices -> an error status ------===//
//
// Gathers and scatters take their indices from data: an index outside its
// dim is the caller's mistake, not the compiler's. Before such an op the
// host function checks every index (one pass over the indices, which are
// small next to the data they select) and, if one is out of range, records
// a message naming the node and makes the entry return MLCC_OUT_OF_RANGE.
// The op itself still runs, on clamped indices (every lowering clamps), so
// nothing reads or writes outside its buffers.
//
// Index ranges follow ONNX: [-d, d) for a dim of d, negative counting from
// the end.
//
//===----------------------------------------------------------------------===//

#include "HostBuilderImpl.h"

#include "GraphDialect.h"
#include "RunTimeExtents.h"
#include "mlcc/status.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mlcc::lowering::host {

namespace {

/// Which operand holds indices into which dims of which operand.
struct IndexUse {
  unsigned indices = 0;
  /// The dim sizes an index at position p of a tuple may address, cycled
  /// over the indices' last dim (one dim for every op but gather_nd and
  /// scatter_nd), and which dims of operand `data` they are (whose
  /// run-time extents, where they have them, are the real ranges).
  SmallVector<int64_t> bounds;
  unsigned data = 0;
  SmallVector<int64_t> dataDims;
  std::string what;
};

int64_t normalizedAxis(Operation *op, int64_t rank) {
  auto attr = op->getAttrOfType<IntegerAttr>("axis");
  int64_t axis = attr ? attr.getInt() : 0;
  return axis < 0 ? axis + rank : axis;
}

/// The indices `op` reads and their ranges, or nothing for other ops.
std::optional<IndexUse> indexUse(Operation *op) {
  StringRef name = op->getName().stripDialect();
  auto shapeOf = [&](unsigned i) {
    return cast<ShapedType>(op->getOperand(i).getType()).getShape();
  };
  IndexUse use;
  if (name == "gather" || name == "gather_elements" || name == "scatter" ||
      name == "scatter_elements") {
    ArrayRef<int64_t> data = shapeOf(0);
    int64_t axis = normalizedAxis(op, data.size());
    if (axis < 0 || axis >= static_cast<int64_t>(data.size()))
      return std::nullopt;
    use.indices = 1;
    use.bounds = {data[axis]};
    use.dataDims = {axis};
    use.what = "axis " + std::to_string(axis);
    return use;
  }
  if (name == "gather_nd" || name == "scatter_nd") {
    ArrayRef<int64_t> data = shapeOf(0), indices = shapeOf(1);
    auto attr = op->getAttrOfType<IntegerAttr>("batch_dims");
    int64_t batch = attr ? attr.getInt() : 0;
    if (indices.empty() ||
        batch + indices.back() > static_cast<int64_t>(data.size()))
      return std::nullopt;
    use.indices = 1;
    use.bounds.assign(data.begin() + batch,
                      data.begin() + batch + indices.back());
    for (int64_t d = 0; d < indices.back(); ++d)
      use.dataDims.push_back(batch + d);
    use.what = "the index tuples' dims";
    return use;
  }
  if (name == "embed_layer_norm") {
    use.indices = 0;
    use.bounds = {shapeOf(1)[0]};
    use.data = 1;
    use.dataDims = {0};
    use.what = "the table's rows";
    return use;
  }
  return std::nullopt;
}

} // namespace

void HostBuilder::checkIndices(Operation *op) {
  std::optional<IndexUse> use = indexUse(op);
  if (!use || use->bounds.empty())
    return;
  Value indices = op->getOperand(use->indices);
  auto type = cast<ShapedType>(indices.getType());
  auto elem = dyn_cast<IntegerType>(type.getElementType());
  int64_t tuple = use->bounds.size();
  if (!elem || type.getNumElements() == 0 ||
      type.getNumElements() % tuple != 0)
    return;

  Location loc = currentLoc;
  Value flat = buffer(indices);
  if (type.getRank() > 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < type.getRank(); ++d)
      all[0].push_back(d);
    flat = b.create<memref::CollapseShapeOp>(loc, flat, all);
  }
  auto i64 = [&](int64_t v) {
    return b.create<arith::ConstantIntOp>(loc, v, 64).getResult();
  };
  auto index = [&](int64_t v) {
    return b.create<arith::ConstantIndexOp>(loc, v).getResult();
  };
  // Where the data has run-time extents, they are the ranges; where the
  // indices have them, only the tuples inside are indices (the rest is
  // padding).
  SmallVector<Value> ranges;
  for (int64_t dim : use->dataDims)
    ranges.push_back(extent(op->getOperand(use->data), dim));
  bool paddedIndices = graph::hasRunTimeExtents(indices);
  // The dims that count tuples: all but the tuples' own (gather_nd's last).
  ArrayRef<int64_t> tupleDims = type.getShape();
  if (isa<graph::GatherNDOp, graph::ScatterNDOp>(op))
    tupleDims = tupleDims.drop_back();
  Value none = b.create<arith::ConstantIntOp>(loc, 0, 1);
  auto loop = b.create<scf::ForOp>(loc, index(0),
                                   index(type.getNumElements() / tuple),
                                   index(1), ValueRange{none});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value bad = loop.getRegionIterArgs()[0];
    Value base = b.create<arith::MulIOp>(loc, loop.getInductionVar(),
                                         index(tuple));
    // Whether tuple t lies inside the indices' extents.
    Value inside;
    if (paddedIndices) {
      inside = b.create<arith::ConstantIntOp>(loc, 1, 1);
      Value rest = loop.getInductionVar();
      for (int64_t d = tupleDims.size(); d-- > 0;) {
        Value size = index(tupleDims[d]);
        Value coord = b.create<arith::RemUIOp>(loc, rest, size);
        rest = b.create<arith::DivUIOp>(loc, rest, size);
        Value extentD = b.create<arith::IndexCastOp>(loc, b.getIndexType(),
                                                     extent(indices, d));
        inside = b.create<arith::AndIOp>(
            loc, inside,
            b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, coord,
                                    extentD));
      }
    }
    for (auto [j, range] : llvm::enumerate(ranges)) {
      Value at = b.create<arith::AddIOp>(loc, base, index(j));
      Value v = type.getRank() == 0
                    ? b.create<memref::LoadOp>(loc, flat, ValueRange{})
                    : b.create<memref::LoadOp>(loc, flat, ValueRange{at});
      if (elem.getWidth() < 64)
        v = b.create<arith::ExtSIOp>(loc, b.getI64Type(), v);
      Value negRange = b.create<arith::SubIOp>(loc, i64(0), range);
      Value low =
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, v, negRange);
      Value high =
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, v, range);
      Value wrong = b.create<arith::OrIOp>(loc, low, high);
      if (inside)
        wrong = b.create<arith::AndIOp>(loc, wrong, inside);
      bad = b.create<arith::OrIOp>(loc, bad, wrong);
    }
    b.create<scf::YieldOp>(loc, bad);
  }
  std::string message;
  if (auto name = dyn_cast<NameLoc>(op->getLoc()))
    message = "node '" + name.getName().str() + "' ";
  message += "(" + op->getName().getStringRef().str() +
             "): an index is out of range for " + use->what + " (sizes";
  SmallVector<int64_t> sources =
      graph::extentSources(op->getOperand(use->data));
  for (auto [bound, dim] : llvm::zip(use->bounds, use->dataDims))
    message +=
        (sources.empty() || sources[dim] == graph::kStaticExtent ? " "
                                                                 : " <=") +
        std::to_string(bound);
  message += "; an index i must have -size <= i < size)";
  failIf(loop.getResult(0), MLCC_OUT_OF_RANGE, message);
}

} // namespace mlcc::lowering::host
