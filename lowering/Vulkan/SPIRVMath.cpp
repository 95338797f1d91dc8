//===- SPIRVMath.cpp - Math the GLSL extended instructions lack -----------===//
//
// GLSL.std.450 has no erf, trunc or hyperbolic inverses, and its
// transcendental functions (sin, exp, pow, ...) take 16- and 32-bit floats
// only. Before the SPIR-V conversion: the missing functions become
// arithmetic (MLIR's expansions), f64 sin and cos are series in f64
// arithmetic (DFT twiddles), the other f64 transcendentals are computed in
// f32 (Vulkan devices have none; ~1e-7 relative), and acos/asin/atan,
// which MLIR 19's
// math-to-spirv leaves out, map to their GL instructions.
//
//===----------------------------------------------------------------------===//

#include "SPIRVMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/Transforms/SPIRVConversion.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace mlcc::vulkan {
namespace {

/// Math ops GLSL.std.450 computes only on 16/32-bit floats.
bool isNarrowOnly(Operation *op) {
  return isa<math::SinOp, math::CosOp, math::TanOp, math::AsinOp, math::AcosOp,
             math::AtanOp, math::Atan2Op, math::SinhOp, math::CoshOp,
             math::TanhOp, math::AsinhOp, math::AcoshOp, math::AtanhOp,
             math::ExpOp, math::Exp2Op, math::ExpM1Op, math::LogOp,
             math::Log2Op, math::Log10Op, math::Log1pOp, math::PowFOp,
             math::ErfOp>(op);
}

void narrowF64(ModuleOp module) {
  SmallVector<Operation *> wide;
  module.walk([&](Operation *op) {
    if (isNarrowOnly(op) && op->getNumResults() == 1 &&
        op->getResult(0).getType().isF64())
      wide.push_back(op);
  });
  for (Operation *op : wide) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    IRMapping map;
    for (Value operand : op->getOperands())
      map.map(operand, b.create<arith::TruncFOp>(loc, b.getF32Type(), operand));
    Operation *narrow = b.clone(*op, map);
    narrow->getResult(0).setType(b.getF32Type());
    op->getResult(0).replaceAllUsesWith(
        b.create<arith::ExtFOp>(loc, b.getF64Type(), narrow->getResult(0)));
    op->erase();
  }
}

/// f64 sin and cos in f64 arithmetic (DFT twiddles need more than f32's
/// 1e-7): x = k pi/2 + r with k = floor(x 2/pi + 1/2) and r reduced by pi/2
/// in three parts (Cody-Waite, exact for the |k| < 2^20 of any tensor
/// index), then sin r and cos r on [-pi/4, pi/4] by their Taylor series to
/// r^15 and r^16 (terms below 1e-16), picked and signed by k mod 4.
void expandF64SinCos(ModuleOp module) {
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (isa<math::SinOp, math::CosOp>(op) && op->getResult(0).getType().isF64())
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Type f64 = b.getF64Type();
    auto cst = [&](double v) {
      return b.create<arith::ConstantFloatOp>(loc, APFloat(v),
                                              cast<FloatType>(f64));
    };
    auto mul = [&](Value x, Value y) {
      return b.create<arith::MulFOp>(loc, x, y).getResult();
    };
    auto add = [&](Value x, Value y) {
      return b.create<arith::AddFOp>(loc, x, y).getResult();
    };
    Value x = op->getOperand(0);
    Value k = b.create<math::FloorOp>(
        loc, add(mul(x, cst(0.636619772367581343076)), cst(0.5)));
    Value r = x;
    for (double part : {1.57079632673412561417e+00, 6.07710050630396597660e-11,
                        2.02226624871116645580e-21})
      r = b.create<arith::SubFOp>(loc, r, mul(k, cst(part)));
    Value r2 = mul(r, r);
    // Horner from the highest term: sum of c_i r2^i.
    auto series = [&](ArrayRef<double> coefficients) {
      Value acc = cst(coefficients.back());
      for (double c : llvm::reverse(coefficients.drop_back()))
        acc = add(mul(acc, r2), cst(c));
      return acc;
    };
    double sinTerms[8], cosTerms[9];
    double factorial = 1;
    for (int n = 1, i = 0, j = 0; n <= 16; ++n) {
      factorial *= n;
      double sign = (n / 2) % 2 ? -1.0 : 1.0;
      if (n % 2)
        sinTerms[i++] = sign / factorial;
      else
        cosTerms[++j] = sign / factorial;
    }
    cosTerms[0] = 1.0;
    Value sinR = mul(r, series(sinTerms));
    Value cosR = series(cosTerms);
    // Quadrant k mod 4 (two's complement: also for negative k); cos x is
    // sin(x + pi/2), one quadrant on.
    Type i32 = b.getI32Type();
    Value q = b.create<arith::FPToSIOp>(loc, i32, k);
    if (isa<math::CosOp>(op))
      q = b.create<arith::AddIOp>(loc, q,
                                  b.create<arith::ConstantIntOp>(loc, 1, 32));
    auto bit = [&](int64_t v) {
      Value masked = b.create<arith::AndIOp>(
          loc, q, b.create<arith::ConstantIntOp>(loc, v, 32));
      return b.create<arith::CmpIOp>(
          loc, arith::CmpIPredicate::ne, masked,
          b.create<arith::ConstantIntOp>(loc, 0, 32));
    };
    Value v = b.create<arith::SelectOp>(loc, bit(1), cosR, sinR);
    v = b.create<arith::SelectOp>(loc, bit(2), b.create<arith::NegFOp>(loc, v),
                                  v);
    op->getResult(0).replaceAllUsesWith(v);
    op->erase();
  }
}

/// log10(x) = log(x) / ln(10).
struct ExpandLog10 : OpRewritePattern<math::Log10Op> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::Log10Op op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value scale = rewriter.create<arith::ConstantOp>(
        loc, rewriter.getFloatAttr(op.getType(), 0.43429448190325176));
    rewriter.replaceOpWithNewOp<arith::MulFOp>(
        op, rewriter.create<math::LogOp>(loc, op.getOperand()), scale);
    return success();
  }
};

/// trunc(x) = x < 0 ? ceil(x) : floor(x).
struct ExpandTrunc : OpRewritePattern<math::TruncOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::TruncOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getOperand();
    Value zero = rewriter.create<arith::ConstantOp>(
        loc, rewriter.getFloatAttr(x.getType(), 0.0));
    Value negative =
        rewriter.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, x, zero);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(
        op, negative, rewriter.create<math::CeilOp>(loc, x),
        rewriter.create<math::FloorOp>(loc, x));
    return success();
  }
};

template <typename MathOp, typename GLOp>
struct UnaryToGL : OpConversionPattern<MathOp> {
  using OpConversionPattern<MathOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MathOp op, typename MathOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = this->getTypeConverter()->convertType(op.getType());
    if (!type)
      return failure();
    rewriter.replaceOpWithNewOp<GLOp>(op, type, adaptor.getOperand());
    return success();
  }
};

} // namespace

LogicalResult prepareMathForSPIRV(ModuleOp module) {
  RewritePatternSet patterns(module.getContext());
  populatePolynomialApproximateErfPattern(patterns);
  populateExpandTanPattern(patterns);
  populateExpandSinhPattern(patterns);
  populateExpandCoshPattern(patterns);
  populateExpandAsinhPattern(patterns);
  populateExpandAcoshPattern(patterns);
  populateExpandAtanhPattern(patterns);
  populateExpandFPowIPattern(patterns);
  populateExpandRoundEvenPattern(patterns);
  patterns.add<ExpandTrunc, ExpandLog10>(module.getContext());
  // f64 first: sin and cos in f64, the rest in f32, whose expansions then
  // apply.
  expandF64SinCos(module);
  narrowF64(module);
  return applyPatternsAndFoldGreedily(module, std::move(patterns));
}

void populateMathExtrasToSPIRV(SPIRVTypeConverter &converter,
                               RewritePatternSet &patterns) {
  patterns.add<UnaryToGL<math::AcosOp, spirv::GLAcosOp>,
               UnaryToGL<math::AsinOp, spirv::GLAsinOp>,
               UnaryToGL<math::AtanOp, spirv::GLAtanOp>>(converter,
                                                         patterns.getContext());
}

} // namespace mlcc::vulkan
