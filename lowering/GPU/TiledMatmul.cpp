//===- TiledMatmul.cpp - A workgroup-tiled matrix product -----------------===//
//
// Per step along k, the workgroup's threads copy a [rows x depth] slice of
// A and a [depth x cols] slice of B into workgroup memory (zeros past the
// edges), meet at a barrier, each multiply-add their register block from
// the slices, and meet again before the next step overwrites them. The
// slices are stored k-major, so a step's loads of one k are contiguous
// across threads; consecutive threads own consecutive columns of C, so
// their global stores are too.
//
//===----------------------------------------------------------------------===//

#include "TiledMatmul.h"
#include "DeviceSchedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cassert>

using namespace mlir;

namespace mlcc::gpukernels {
namespace {

using lowering::kDeviceWorkgroupSize;

/// C's tile of one workgroup, the k step, and the block of one thread.
struct TileShape {
  int64_t rows, cols, depth;
  int64_t blockRows, blockCols;

  int64_t threadCols() const { return cols / blockCols; }
  int64_t threadRows() const { return rows / blockRows; }
};

// A 64 x 64 tile in 4 x 4 blocks; for a product of few rows (a batch-1
// classifier's fc) 16 x 128 in 2 x 4 blocks, so that fewer threads idle on
// rows that do not exist.
TileShape chooseTile(int64_t rows) {
  TileShape t =
      rows <= 16 ? TileShape{16, 128, 16, 2, 4} : TileShape{64, 64, 16, 4, 4};
  assert(t.threadCols() * t.threadRows() == kDeviceWorkgroupSize &&
         t.rows * t.depth % kDeviceWorkgroupSize == 0 &&
         t.depth * t.cols % kDeviceWorkgroupSize == 0);
  return t;
}

class TiledMatmulBuilder {
public:
  TiledMatmulBuilder(Location loc, const MatmulProblem &p)
      : loc(loc), p(p), tile(chooseTile(p.rows)) {}

  void build(OpBuilder &b);

private:
  Value index(OpBuilder &b, int64_t v) {
    return b.create<arith::ConstantIndexOp>(loc, v);
  }
  Value below(OpBuilder &b, Value v, int64_t bound) {
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, v,
                                   index(b, bound));
  }
  /// Copies one slice into `slice` ([depth x extent], k-major): element
  /// e of the slice is (k, i) = at(e) and holds load(k0 + k, base + i),
  /// or zero where that is past `depth` or `extent`.
  void stage(OpBuilder &b, Value slice, int64_t extent, Value k0, Value base,
             int64_t globalExtent, bool kFastest,
             const std::function<Value(OpBuilder &, Value k, Value i)> &load);
  /// The workgroup's body: a tile of C.
  void buildTile(OpBuilder &b, ValueRange ivs);

  Location loc;
  const MatmulProblem &p;
  TileShape tile;
  Value tid;
};

void TiledMatmulBuilder::stage(
    OpBuilder &b, Value slice, int64_t extent, Value k0, Value base,
    int64_t globalExtent, bool kFastest,
    const std::function<Value(OpBuilder &, Value k, Value i)> &load) {
  Type f32 = b.getF32Type();
  int64_t count = tile.depth * extent;
  for (int64_t first = 0; first < count; first += kDeviceWorkgroupSize) {
    Value e = b.create<arith::AddIOp>(loc, tid, index(b, first));
    int64_t fast = kFastest ? tile.depth : extent;
    Value hi = b.create<arith::DivUIOp>(loc, e, index(b, fast));
    Value lo = b.create<arith::RemUIOp>(loc, e, index(b, fast));
    Value k = kFastest ? lo : hi, i = kFastest ? hi : lo;
    Value globalK = b.create<arith::AddIOp>(loc, k0, k);
    Value globalI = b.create<arith::AddIOp>(loc, base, i);
    Value inRange = b.create<arith::AndIOp>(loc, below(b, globalK, p.depth),
                                            below(b, globalI, globalExtent));
    auto value = b.create<scf::IfOp>(
        loc, inRange,
        [&](OpBuilder &tb, Location l) {
          tb.create<scf::YieldOp>(l, load(tb, globalK, globalI));
        },
        [&](OpBuilder &eb, Location l) {
          eb.create<scf::YieldOp>(l,
                                  ValueRange{eb.create<arith::ConstantFloatOp>(
                                      l, APFloat(0.0f), cast<FloatType>(f32))});
        });
    b.create<memref::StoreOp>(loc, value.getResult(0), slice, ValueRange{k, i});
  }
}

void TiledMatmulBuilder::buildTile(OpBuilder &b, ValueRange ivs) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  Value g = ivs[0];
  Value rowBase = b.create<arith::MulIOp>(loc, ivs[1], index(b, tile.rows));
  Value colBase = b.create<arith::MulIOp>(loc, ivs[2], index(b, tile.cols));
  tid = b.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value threadCol =
      b.create<arith::RemUIOp>(loc, tid, index(b, tile.threadCols()));
  Value threadRow =
      b.create<arith::DivUIOp>(loc, tid, index(b, tile.threadCols()));
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto sliceType = [&](int64_t extent) {
    return MemRefType::get({tile.depth, extent}, f32,
                           MemRefLayoutAttrInterface{}, workgroup);
  };
  Value aSlice = b.create<memref::AllocOp>(loc, sliceType(tile.rows));
  Value bSlice = b.create<memref::AllocOp>(loc, sliceType(tile.cols));

  // Row i and column j of a thread's block: rows strided by the threads
  // down the tile, columns by those across it.
  auto blockRow = [&](OpBuilder &ob, int64_t i) {
    return ob.create<arith::AddIOp>(loc, threadRow,
                                    index(ob, i * tile.threadRows()));
  };
  auto blockCol = [&](OpBuilder &ob, int64_t j) {
    return ob.create<arith::AddIOp>(loc, threadCol,
                                    index(ob, j * tile.threadCols()));
  };
  int64_t blockSize = tile.blockRows * tile.blockCols;
  Value zero = b.create<arith::ConstantFloatOp>(loc, APFloat(0.0f),
                                                cast<FloatType>(f32));
  SmallVector<Value> init(blockSize, zero);
  auto steps = b.create<scf::ForOp>(
      loc, index(b, 0), index(b, p.depth), index(b, tile.depth), init,
      [&](OpBuilder &sb, Location, Value k0, ValueRange sums) {
        stage(sb, aSlice, tile.rows, k0, rowBase, p.rows, /*kFastest=*/true,
              [&](OpBuilder &lb, Value k, Value row) {
                return p.loadA(lb, loc, g, row, k);
              });
        stage(sb, bSlice, tile.cols, k0, colBase, p.cols, /*kFastest=*/false,
              [&](OpBuilder &lb, Value k, Value col) {
                return p.loadB(lb, loc, g, k, col);
              });
        sb.create<gpu::BarrierOp>(loc);
        auto inner = sb.create<scf::ForOp>(
            loc, index(sb, 0), index(sb, tile.depth), index(sb, 1), sums,
            [&](OpBuilder &ib, Location, Value k, ValueRange acc) {
              SmallVector<Value> a, w, next;
              for (int64_t i = 0; i < tile.blockRows; ++i)
                a.push_back(ib.create<memref::LoadOp>(
                    loc, aSlice, ValueRange{k, blockRow(ib, i)}));
              for (int64_t j = 0; j < tile.blockCols; ++j)
                w.push_back(ib.create<memref::LoadOp>(
                    loc, bSlice, ValueRange{k, blockCol(ib, j)}));
              for (int64_t i = 0; i < tile.blockRows; ++i)
                for (int64_t j = 0; j < tile.blockCols; ++j)
                  next.push_back(ib.create<arith::AddFOp>(
                      loc, acc[i * tile.blockCols + j],
                      ib.create<arith::MulFOp>(loc, a[i], w[j])));
              ib.create<scf::YieldOp>(loc, next);
            });
        // The next step overwrites the slices.
        sb.create<gpu::BarrierOp>(loc);
        sb.create<scf::YieldOp>(loc, inner.getResults());
      });

  for (int64_t i = 0; i < tile.blockRows; ++i)
    for (int64_t j = 0; j < tile.blockCols; ++j) {
      Value row = b.create<arith::AddIOp>(loc, rowBase, blockRow(b, i));
      Value col = b.create<arith::AddIOp>(loc, colBase, blockCol(b, j));
      Value inRange = b.create<arith::AndIOp>(loc, below(b, row, p.rows),
                                              below(b, col, p.cols));
      Value sum = steps.getResult(i * tile.blockCols + j);
      b.create<scf::IfOp>(loc, inRange, [&](OpBuilder &tb, Location l) {
        p.store(tb, l, g, row, col, sum);
        tb.create<scf::YieldOp>(l);
      });
    }
}

void TiledMatmulBuilder::build(OpBuilder &b) {
  auto ceilDiv = [](int64_t a, int64_t d) { return (a + d - 1) / d; };
  Value zero = index(b, 0), one = index(b, 1);
  auto loop = b.create<scf::ParallelOp>(
      loc, ValueRange{zero, zero, zero},
      ValueRange{index(b, p.groups), index(b, ceilDiv(p.rows, tile.rows)),
                 index(b, ceilDiv(p.cols, tile.cols))},
      ValueRange{one, one, one},
      [&](OpBuilder &lb, Location, ValueRange ivs) { buildTile(lb, ivs); });
  loop->setAttr(lowering::kWorkgroupLoopAttr, b.getUnitAttr());
}

/// C[g, i, j] by one thread each.
void buildThreadPerElement(OpBuilder &b, Location loc, const MatmulProblem &p) {
  auto index = [&](OpBuilder &ib, int64_t v) {
    return ib.create<arith::ConstantIndexOp>(loc, v).getResult();
  };
  Value zero = index(b, 0), one = index(b, 1);
  b.create<scf::ParallelOp>(
      loc, ValueRange{zero, zero, zero},
      ValueRange{index(b, p.groups), index(b, p.rows), index(b, p.cols)},
      ValueRange{one, one, one}, [&](OpBuilder &lb, Location, ValueRange ivs) {
        Value init = lb.create<arith::ConstantFloatOp>(
            loc, APFloat(0.0f), cast<FloatType>(lb.getF32Type()));
        auto sum = lb.create<scf::ForOp>(
            loc, index(lb, 0), index(lb, p.depth), index(lb, 1),
            ValueRange{init},
            [&](OpBuilder &fb, Location, Value k, ValueRange acc) {
              Value a = p.loadA(fb, loc, ivs[0], ivs[1], k);
              Value w = p.loadB(fb, loc, ivs[0], k, ivs[2]);
              fb.create<scf::YieldOp>(
                  loc, ValueRange{fb.create<arith::AddFOp>(
                           loc, acc[0], fb.create<arith::MulFOp>(loc, a, w))});
            });
        p.store(lb, loc, ivs[0], ivs[1], ivs[2], sum.getResult(0));
      });
}

} // namespace

void buildMatmul(OpBuilder &b, Location loc, const MatmulProblem &problem) {
  if (problem.cols < kMinTiledCols)
    buildThreadPerElement(b, loc, problem);
  else
    TiledMatmulBuilder(loc, problem).build(b);
}

} // namespace mlcc::gpukernels
