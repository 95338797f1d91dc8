//===- PackPanels.cpp - Packing a run-time matrix for the GEMM kernel ------===//

#include "PackPanels.h"

#include "Gemm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mlcc::avx512 {

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIndexOp>(loc, v);
}

void emitPackedPanels(
    OpBuilder &b, Location loc, Value packed, int64_t rows, int64_t cols,
    function_ref<Value(OpBuilder &, Location, Value, Value)> load) {
  if (cols % kGemmPanel != 0) {
    Value zero = b.create<arith::ConstantOp>(loc, b.getF32FloatAttr(0));
    b.create<linalg::FillOp>(loc, zero, packed);
  }
  int64_t panels = (cols + kGemmPanel - 1) / kGemmPanel;
  Value c0 = indexConst(b, loc, 0), c1 = indexConst(b, loc, 1);
  b.create<scf::ForOp>(
      loc, c0, indexConst(b, loc, panels), c1, ValueRange{},
      [&](OpBuilder &pb, Location l, Value p, ValueRange) {
        Value first =
            pb.create<arith::MulIOp>(l, p, indexConst(pb, l, kGemmPanel));
        Value width = pb.create<arith::MinSIOp>(
            l, indexConst(pb, l, kGemmPanel),
            pb.create<arith::SubIOp>(l, indexConst(pb, l, cols), first));
        pb.create<scf::ForOp>(
            l, c0, indexConst(pb, l, rows), c1, ValueRange{},
            [&](OpBuilder &rb, Location l2, Value r, ValueRange) {
              rb.create<scf::ForOp>(
                  l2, c0, width, c1, ValueRange{},
                  [&](OpBuilder &jb, Location l3, Value j, ValueRange) {
                    Value col = jb.create<arith::AddIOp>(l3, first, j);
                    jb.create<memref::StoreOp>(l3, load(jb, l3, r, col), packed,
                                               ValueRange{p, r, j});
                    jb.create<scf::YieldOp>(l3);
                  });
              rb.create<scf::YieldOp>(l2);
            });
        pb.create<scf::YieldOp>(l);
      });
}

} // namespace mlcc::avx512
