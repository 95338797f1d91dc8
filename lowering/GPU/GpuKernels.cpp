//===- GpuKernels.cpp - Hand-structured kernels of the GPU targets --------===//

#include "GpuKernels.h"

#include "FusedActivation.h"
#include "NNUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace mlcc::gpukernels {

bool allF32(Operation *op) {
  auto f32 = [](Type t) {
    auto shaped = dyn_cast<ShapedType>(t);
    return !shaped || shaped.getElementType().isF32();
  };
  return llvm::all_of(op->getOperandTypes(), f32) &&
         llvm::all_of(op->getResultTypes(), f32);
}

Epilogue Epilogue::activationOf(Operation *op) {
  Epilogue e;
  e.activation = portable::nn::stringAttr(op, "activation", "none");
  e.alpha = portable::nn::floatAttr(op, "activation_alpha", 0.0);
  e.beta = portable::nn::floatAttr(op, "activation_beta", 0.0);
  return e;
}

Value Epilogue::apply(OpBuilder &b, Location loc, Value sum, Value channel,
                      ValueRange at) const {
  Value v = sum;
  if (bias)
    v = b.create<arith::AddFOp>(
        loc, v, b.create<memref::LoadOp>(loc, bias, ValueRange{channel}));
  if (residual)
    v = b.create<arith::AddFOp>(loc, v,
                                b.create<memref::LoadOp>(loc, residual, at));
  return portable::fusedActivation(b, loc, activation, alpha, beta, v);
}

lowering::TargetLowering lowerHotOp(Operation *op,
                                    lowering::OpLoweringContext &ctx,
                                    const GpuTraits &traits) {
  op->getContext()->getOrLoadDialect<gpu::GPUDialect>();
  StringRef name = op->getName().getStringRef();
  if (name == "graph.fc")
    return lowerFc(op, ctx);
  if (name == "graph.matmul")
    return lowerMatmul(op, ctx);
  if (name == "graph.gemm")
    return lowerGemm(op, ctx);
  if (name == "graph.conv" || name == "graph.fused_conv")
    return lowerConv(op, ctx);
  if (name == "graph.conv_transpose")
    return lowerConvTranspose(op, ctx);
  if (name == "graph.softmax" || name == "graph.log_softmax")
    return lowerSoftmax(op, ctx, traits);
  if (name == "graph.layer_norm" || name == "graph.skip_layer_norm")
    return lowerLayerNorm(op, ctx, traits);
  if (name == "graph.embed_layer_norm")
    return lowerEmbedLayerNorm(op, ctx, traits);
  if (name == "graph.attention")
    return lowerAttention(op, ctx, traits);
  return lowering::TargetLowering::Declined;
}

} // namespace mlcc::gpukernels
