//===- HostParallelLoops.cpp - Portable parallel loops on the pool --------===//
//
// A portable lowering states which of its loops are independent: it emits
// them as scf.parallel (Portable/ParallelLoops.h), or as linalg ops, whose
// parallel dims become scf.parallel here. After each portable op, every
// outermost scf.parallel nest that does enough work is split over the
// model's thread pool: its leading dims, collapsed into one range, become a
// parallelFor whose body function gets what the nest reads from outside
// (buffers as addresses, scalars as bits) through the fields array and
// rebuilds it there. The rest of the nest stays scf.parallel inside, so the
// innermost loop is still the one LLVM vectorises. A nest that is too small,
// that captures more than the fields hold or a buffer of dynamic layout, or
// that writes an arena scratch buffer shared by its iterations, stays on the
// calling thread, as do nests with reductions.
//
//===----------------------------------------------------------------------===//

#include "HostBuilderImpl.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace mlcc::lowering::host {

namespace {

/// Operations (counted over every iteration of the nest's loops) below
/// which a nest is not worth a dispatch to the pool (a few microseconds).
/// This is per nest, beside the per-op estimate (oneThreadEnough): an op's
/// nests differ in size, and an op with run-time extents has no estimate.
constexpr int64_t kMinParallelWork = 1 << 16;
/// The leading dims are collapsed until they give at least this many
/// chunks to share out.
constexpr int64_t kMinParallelRange = 16;

std::optional<int64_t> constantIndex(Value v) {
  if (auto c = v.getDefiningOp<arith::ConstantIndexOp>())
    return c.value();
  return std::nullopt;
}

/// Trip counts of a nest's dims, if all are constants with lower bound 0
/// and step 1 (what parallelLoops and linalg emit).
std::optional<SmallVector<int64_t>> tripCounts(scf::ParallelOp loop) {
  SmallVector<int64_t> trips;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    std::optional<int64_t> l = constantIndex(lb), u = constantIndex(ub),
                           s = constantIndex(step);
    if (!l || !u || !s || *l != 0 || *s != 1)
      return std::nullopt;
    trips.push_back(*u);
  }
  return trips;
}

/// Trips an inner loop with bounds known only at run time is taken to make
/// (RoiAlign's adaptive sampling grid, a window clipped at the border).
constexpr int64_t kUnknownTrips = 4;

int64_t saturatingMul(int64_t a, int64_t b) {
  constexpr int64_t kMax = int64_t(1) << 40;
  return a > kMax / std::max<int64_t>(b, 1) ? kMax : a * b;
}

/// Operations `block` runs: each op once, a loop's body once per trip.
int64_t workOf(Block &block) {
  int64_t work = 0;
  for (Operation &op : block) {
    int64_t trips = 1;
    if (auto f = dyn_cast<scf::ForOp>(op)) {
      std::optional<int64_t> l = constantIndex(f.getLowerBound()),
                             u = constantIndex(f.getUpperBound()),
                             s = constantIndex(f.getStep());
      trips = l && u && s && *s > 0
                  ? std::max<int64_t>((*u - *l + *s - 1) / *s, 0)
                  : kUnknownTrips;
    } else if (auto p = dyn_cast<scf::ParallelOp>(op)) {
      std::optional<SmallVector<int64_t>> t = tripCounts(p);
      trips = t ? 1 : kUnknownTrips;
      for (int64_t d : t.value_or(SmallVector<int64_t>()))
        trips = saturatingMul(trips, d);
    } else if (isa<scf::WhileOp>(op)) {
      trips = kUnknownTrips;
    }
    int64_t inner = 0;
    for (Region &region : op.getRegions())
      for (Block &b : region)
        inner += workOf(b);
    work += 1 + saturatingMul(trips, inner);
  }
  return work;
}

/// Whether a captured value can travel through an i64 field.
bool isPassable(Value v) {
  Type t = v.getType();
  if (auto m = dyn_cast<MemRefType>(t)) {
    int64_t offset;
    SmallVector<int64_t> strides;
    return m.hasStaticShape() &&
           succeeded(getStridesAndOffset(m, strides, offset)) &&
           !ShapedType::isDynamic(offset) &&
           llvm::none_of(strides, ShapedType::isDynamic);
  }
  return t.isIndex() || (t.isIntOrFloat() && t.getIntOrFloatBitWidth() <= 64);
}

} // namespace

/// `v` as the bits of an i64 field.
static Value toField(OpBuilder &b, Location loc, Value v) {
  Type t = v.getType();
  if (isa<MemRefType>(t))
    return alignedPointer(b, loc, v);
  if (t.isIndex())
    return b.create<arith::IndexCastOp>(loc, b.getI64Type(), v);
  unsigned width = t.getIntOrFloatBitWidth();
  if (isa<FloatType>(t))
    v = b.create<arith::BitcastOp>(loc, b.getIntegerType(width), v);
  if (width < 64)
    v = b.create<arith::ExtUIOp>(loc, b.getI64Type(), v);
  return v;
}

/// The value of type `t` a field made by toField holds.
static Value fromField(OpBuilder &b, Location loc, Value field, Type t) {
  if (auto m = dyn_cast<MemRefType>(t)) {
    LLVMTypeConverter converter(b.getContext());
    Value ptr = b.create<LLVM::IntToPtrOp>(
        loc, LLVM::LLVMPointerType::get(b.getContext()), field);
    Value desc = MemRefDescriptor::fromStaticShape(b, loc, converter, m, ptr);
    return b.create<UnrealizedConversionCastOp>(loc, t, desc).getResult(0);
  }
  if (t.isIndex())
    return b.create<arith::IndexCastOp>(loc, t, field);
  unsigned width = t.getIntOrFloatBitWidth();
  if (width < 64)
    field = b.create<arith::TruncIOp>(loc, b.getIntegerType(width), field);
  if (isa<FloatType>(t))
    field = b.create<arith::BitcastOp>(loc, t, field);
  return field;
}

Value HostBuilder::memrefAt(Value address, MemRefType type) {
  return fromField(b, currentLoc, address, type);
}

bool HostBuilder::distributeParallelLoop(scf::ParallelOp loop) {
  if (oneThreadOp)
    return false;
  if (loop.getNumResults() != 0)
    return false;
  std::optional<SmallVector<int64_t>> trips = tripCounts(loop);
  if (!trips)
    return false;
  int64_t iterations = 1;
  for (int64_t t : *trips)
    iterations = saturatingMul(iterations, t);
  if (saturatingMul(iterations, workOf(*loop.getBody())) < kMinParallelWork)
    return false;
  // A buffer of the arena made inside the nest is one slot for every
  // iteration: not private to a thread.
  bool sharedScratch = false;
  loop.getBody()->walk(
      [&](memref::ViewOp view) { sharedScratch |= view.getSource() == arena; });
  if (sharedScratch)
    return false;

  // What the nest reads from outside: constants are re-made in the body,
  // everything else travels in a field.
  SetVector<Value> captured;
  getUsedValuesDefinedAbove(loop.getRegion(), captured);
  SmallVector<Value> passed;
  SmallVector<Operation *> constants;
  for (Value v : captured) {
    Operation *def = v.getDefiningOp();
    if (def && def->hasTrait<OpTrait::ConstantLike>())
      constants.push_back(def);
    else if (isPassable(v))
      passed.push_back(v);
    else
      return false;
  }
  if (passed.size() > static_cast<size_t>(kMaxParallelFields))
    return false;

  // Leading dims collapsed into the pool's range.
  size_t lead = 0;
  int64_t range = 1;
  while (lead < trips->size() && range < kMinParallelRange)
    range *= (*trips)[lead++];
  if (range < 2)
    return false;

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop);
  Location loc = loop.getLoc();
  SmallVector<Value> fields;
  for (Value v : passed)
    fields.push_back(toField(b, loc, v));
  parallelFor(range, fields, [&](Value i, ValueRange loaded) {
    IRMapping map;
    for (Operation *c : constants)
      map.map(c->getResult(0), b.clone(*c)->getResult(0));
    for (auto [v, field] : llvm::zip(passed, loaded))
      map.map(v, fromField(b, loc, field, v.getType()));
    // i -> the leading dims' induction variables, innermost fastest.
    Value rest = b.create<arith::IndexCastOp>(loc, b.getIndexType(), i);
    SmallVector<Value> leadIvs(lead);
    for (size_t d = lead; d-- > 0;) {
      Value size = b.create<arith::ConstantIndexOp>(loc, (*trips)[d]);
      leadIvs[d] = d == 0 ? rest : b.create<arith::RemUIOp>(loc, rest, size);
      if (d > 0)
        rest = b.create<arith::DivUIOp>(loc, rest, size);
    }
    Block *body = loop.getBody();
    auto cloneBody = [&](OpBuilder &ob, ValueRange innerIvs) {
      for (size_t d = 0; d < lead; ++d)
        map.map(body->getArgument(d), leadIvs[d]);
      for (auto [d, iv] : llvm::enumerate(innerIvs))
        map.map(body->getArgument(lead + d), iv);
      for (Operation &op : body->without_terminator())
        ob.clone(op, map);
    };
    if (lead == trips->size()) {
      cloneBody(b, {});
      return;
    }
    // The inner dims' bounds are constants of the outer function: made
    // anew here (lower bounds 0, steps 1, as tripCounts checked).
    auto index = [&](int64_t v) -> Value {
      return b.create<arith::ConstantIndexOp>(loc, v);
    };
    SmallVector<Value> lbs, ubs, steps;
    for (int64_t t : ArrayRef<int64_t>(*trips).drop_front(lead)) {
      lbs.push_back(index(0));
      ubs.push_back(index(t));
      steps.push_back(index(1));
    }
    b.create<scf::ParallelOp>(
        loc, lbs, ubs, steps, [&](OpBuilder &ob, Location, ValueRange ivs) {
          OpBuilder::InsertionGuard inner(b);
          b.setInsertionPoint(ob.getInsertionBlock(), ob.getInsertionPoint());
          cloneBody(b, ivs);
        });
  });
  loop.erase();
  return true;
}

void HostBuilder::distributeParallelLoops(Operation *after) {
  Block *block = b.getInsertionBlock();
  auto opsOfThisOp = [&] {
    auto begin = after ? std::next(Block::iterator(after)) : block->begin();
    return llvm::make_range(begin, b.getInsertionPoint());
  };
  // Linalg ops state their parallel dims: make those scf.parallel first.
  SmallVector<linalg::LinalgOp> linalgOps;
  for (Operation &op : opsOfThisOp())
    op.walk([&](linalg::LinalgOp l) {
      if (l.hasPureBufferSemantics())
        linalgOps.push_back(l);
    });
  IRRewriter rewriter(b.getContext());
  for (linalg::LinalgOp l : linalgOps) {
    rewriter.setInsertionPoint(l);
    if (succeeded(linalg::linalgOpToParallelLoops(rewriter, l)))
      rewriter.eraseOp(l);
  }
  SmallVector<scf::ParallelOp> outermost;
  for (Operation &op : opsOfThisOp())
    op.walk<WalkOrder::PreOrder>([&](scf::ParallelOp loop) {
      outermost.push_back(loop);
      return WalkResult::skip();
    });
  for (scf::ParallelOp loop : outermost)
    (void)distributeParallelLoop(loop);
}

} // namespace mlcc::lowering::host
