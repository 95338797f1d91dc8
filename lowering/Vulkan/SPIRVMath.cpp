//===- SPIRVMath.cpp - Math the GLSL extended instructions lack -----------===//
//
// GLSL.std.450 has no erf, trunc or hyperbolic inverses, and its
// transcendental functions (sin, exp, pow, ...) take 16- and 32-bit floats
// only. Before the SPIR-V conversion: the missing functions become
// arithmetic (MLIR's expansions), f64 transcendentals are computed in f32
// (Vulkan devices have no f64 sin; the error, ~1e-7 relative, is far inside
// every tolerance the tests use), and acos/asin/atan, which MLIR 19's
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
  // f64 first: the expansions then work in f32 too.
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
