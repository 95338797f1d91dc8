//===- ParallelLoops.cpp - Independent iterations as scf.parallel ---------===//

#include "ParallelLoops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mlcc::portable {

void parallelLoops(
    ImplicitLocOpBuilder &b, ArrayRef<int64_t> ubs,
    function_ref<void(ImplicitLocOpBuilder &, ValueRange)> body) {
  if (ubs.empty()) {
    body(b, ValueRange{});
    return;
  }
  SmallVector<Value> lbv, ubv, steps;
  Value zero = b.create<arith::ConstantIndexOp>(0);
  Value one = b.create<arith::ConstantIndexOp>(1);
  for (int64_t ub : ubs) {
    lbv.push_back(zero);
    ubv.push_back(b.create<arith::ConstantIndexOp>(ub));
    steps.push_back(one);
  }
  b.create<scf::ParallelOp>(lbv, ubv, steps,
                            [&](OpBuilder &ob, Location loc, ValueRange ivs) {
                              ImplicitLocOpBuilder nb(loc, ob);
                              body(nb, ivs);
                            });
}

} // namespace mlcc::portable
