//===- SelectQuantConv.cpp - Quantised 2-D convs -> VNNI int8 GEMMs -------===//
//
// ConvInteger (int32 out), QLinearConv (u8/s8 out, its int32 bias in the
// accumulators) and f32 Conv/fused_conv between DequantizeLinear ops (the
// QDQ form: f32 out with the bias, residual and activation of fused_conv),
// with a constant weight, group 1 and constant scales and zero points, on
// a --cpu with AVX512-VNNI. Per image, the host code gathers the u8/s8
// input patches into rows (im2col; padding is the input's zero point, the
// quantised 0), the int8 GEMM kernel (GemmInt8.h) multiplies them by the
// packed weight into [OH*OW, OC], and the result is transposed into NCHW.
// The transposes and the gather are plain loops: correct for every stride,
// pad and dilation, but a pass over memory each; a direct int8 conv on the
// blocked layout would save them.
//
//===----------------------------------------------------------------------===//

#include "PackPanels.h"
#include "QuantSelection.h"
#include "SelectionUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mlcc::avx512 {

namespace {

struct ConvGeometry {
  int64_t n = 0, c = 0, h = 0, w = 0, oc = 0, kh = 0, kw = 0;
  int64_t strides[2] = {1, 1}, dilations[2] = {1, 1}, pads[4] = {0, 0, 0, 0};
  int64_t oh = 0, ow = 0;
};

/// Group 1, 2-D, explicit pads (or VALID), the result's shape as ONNX
/// computes it.
bool planGeometry(Operation *op, Value x, Value w, Value y, ConvGeometry &g) {
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w), ys = shapeOf(y);
  std::string autoPad = stringAttr(op, "auto_pad", "NOTSET");
  std::vector<int64_t> strides = intsAttr(op, "strides"),
                       dilations = intsAttr(op, "dilations"),
                       pads = intsAttr(op, "pads");
  if (xs.size() != 4 || ws.size() != 4 || ys.size() != 4 ||
      intAttr(op, "group", 1) != 1 || ws[1] != xs[1] ||
      (autoPad != "NOTSET" && autoPad != "VALID") ||
      (!strides.empty() && strides.size() != 2) ||
      (!dilations.empty() && dilations.size() != 2) ||
      (!pads.empty() && pads.size() != 4))
    return false;
  g.n = xs[0];
  g.c = xs[1];
  g.h = xs[2];
  g.w = xs[3];
  g.oc = ws[0];
  g.kh = ws[2];
  g.kw = ws[3];
  for (int i = 0; i < 2; ++i) {
    g.strides[i] = strides.empty() ? 1 : strides[i];
    g.dilations[i] = dilations.empty() ? 1 : dilations[i];
  }
  for (int i = 0; i < 4 && !pads.empty() && autoPad == "NOTSET"; ++i)
    g.pads[i] = pads[i];
  g.oh = ys[2];
  g.ow = ys[3];
  auto extent = [&](int64_t in, int64_t k, int axis) {
    int64_t span = g.dilations[axis] * (k - 1) + 1;
    return (in + g.pads[axis] + g.pads[axis + 2] - span) / g.strides[axis] + 1;
  };
  return ys[0] == g.n && ys[1] == g.oc && g.oh > 0 && g.ow > 0 &&
         g.oh == extent(g.h, g.kh, 0) && g.ow == extent(g.w, g.kw, 1);
}

/// The GEMM of one image: rows are output pixels, K the patch (c, kh, kw),
/// N the output channels; B[k][oc] = W[oc][k].
void planGemm(const ConvGeometry &g, const std::vector<int32_t> &weight,
              Int8GemmPlan &plan) {
  plan.m = g.oh * g.ow;
  plan.k = g.c * g.kh * g.kw;
  plan.n = g.oc;
  plan.b.resize(plan.k * plan.n);
  for (int64_t o = 0; o < plan.n; ++o)
    for (int64_t kk = 0; kk < plan.k; ++kk)
      plan.b[kk * plan.n + o] = weight[o * plan.k + kk];
}

/// One value, or one per output channel.
bool perTensorOrChannel(size_t count, int64_t oc) {
  return count == 1 || static_cast<int64_t>(count) == oc;
}

/// ConvInteger(x, w, x_zero_point, w_zero_point).
bool planConvInteger(Operation *op, OpLoweringContext &ctx, ConvGeometry &g,
                     Int8GemmPlan &plan) {
  Value x = op->getOperand(0), w = op->getOperand(1);
  std::vector<int32_t> weight, za;
  if (!isInt8Tensor(x) || !isInt8Tensor(w) ||
      !planGeometry(op, x, w, op->getResult(0), g) ||
      !constantInts(ctx, w, weight) ||
      !constantInts(ctx, op->getOperand(2), za) || za.size() != 1 ||
      !constantInts(ctx, op->getOperand(3), plan.zb) ||
      !perTensorOrChannel(plan.zb.size(), g.oc))
    return false;
  plan.a = x;
  plan.za = za[0];
  plan.signedA = !isUnsignedTensor(x);
  plan.unsignedB = isUnsignedTensor(w);
  plan.output = Int8GemmOutput::Int32;
  planGemm(g, weight, plan);
  return true;
}

/// QLinearConv(x, xs, xz, w, ws, wz, ys, yz, B):
/// y = saturate(round((acc + B) * xs * ws[o] / ys) + yz).
bool planQLinearConv(Operation *op, OpLoweringContext &ctx, ConvGeometry &g,
                     Int8GemmPlan &plan) {
  Value x = op->getOperand(0), w = op->getOperand(3), y = op->getResult(0);
  std::vector<int32_t> weight, za, zy;
  std::vector<float> ws;
  float xs, ys;
  if (!isInt8Tensor(x) || !isInt8Tensor(w) || !isInt8Tensor(y) ||
      !planGeometry(op, x, w, y, g) || !constantInts(ctx, w, weight) ||
      !constantScalar(ctx, op->getOperand(1), xs) ||
      !constantInts(ctx, op->getOperand(2), za) || za.size() != 1 ||
      !constantFloats(ctx, op->getOperand(4), ws) ||
      !perTensorOrChannel(ws.size(), g.oc) ||
      !constantInts(ctx, op->getOperand(5), plan.zb) ||
      !perTensorOrChannel(plan.zb.size(), g.oc) ||
      !constantScalar(ctx, op->getOperand(6), ys) || ys == 0 ||
      !constantInts(ctx, op->getOperand(7), zy) || zy.size() != 1)
    return false;
  Value bias = op->getNumOperands() > 8 ? op->getOperand(8) : Value();
  if (bias && !isa<NoneType>(bias.getType())) {
    ElementsAttr attr = ctx.constantValue(bias);
    if (!attr || !attr.getElementType().isInteger(32) ||
        attr.getNumElements() != g.oc)
      return false;
    for (const APInt &v : attr.getValues<APInt>())
      plan.intBias.push_back(static_cast<int32_t>(v.getSExtValue()));
  }
  plan.a = x;
  plan.za = za[0];
  plan.signedA = !isUnsignedTensor(x);
  plan.unsignedB = isUnsignedTensor(w);
  plan.output = isUnsignedTensor(y) ? Int8GemmOutput::U8 : Int8GemmOutput::S8;
  plan.outputZero = zy[0];
  planGemm(g, weight, plan);
  plan.scale.resize(g.oc);
  // The reference's order: (xs * ws) / ys, in f32.
  for (int64_t o = 0; o < g.oc; ++o)
    plan.scale[o] = xs * ws[ws.size() == 1 ? 0 : o] / ys;
  return true;
}

/// conv/fused_conv(DequantizeLinear(q), DequantizeLinear(Wq), B (, Z)).
bool planQdqConv(Operation *op, OpLoweringContext &ctx, ConvGeometry &g,
                 Int8GemmPlan &plan, Value &residual) {
  Dequantized dx, dw;
  std::vector<int32_t> weight;
  Value y = op->getResult(0);
  if (!isF32Tensor(y) || !dequantizedFrom(ctx, op->getOperand(0), dx) ||
      dx.scale.size() != 1 || !dequantizedFrom(ctx, op->getOperand(1), dw) ||
      (dw.scale.size() != 1 && dw.axis != 0) ||
      !planGeometry(op, dx.q, dw.q, y, g) || !constantInts(ctx, dw.q, weight))
    return false;
  plan.a = dx.q;
  plan.za = dx.zero[0];
  plan.signedA = !isUnsignedTensor(dx.q);
  plan.unsignedB = isUnsignedTensor(dw.q);
  plan.zb = dw.zero;
  plan.output = Int8GemmOutput::Float;
  planGemm(g, weight, plan);
  plan.scale.resize(g.oc);
  for (int64_t o = 0; o < g.oc; ++o)
    plan.scale[o] = dx.scale[0] * dw.scale[dw.scale.size() == 1 ? 0 : o];
  Value bias = op->getOperand(2);
  if (!isa<NoneType>(bias.getType()) &&
      (!isF32Tensor(bias) || !constantFloats(ctx, bias, plan.bias) ||
       static_cast<int64_t>(plan.bias.size()) != g.oc))
    return false;
  if (op->getName().stripDialect() != "fused_conv")
    return true;
  Value z = op->getOperand(3);
  if (!isa<NoneType>(z.getType())) {
    if (!isF32Tensor(z) || shapeOf(z) != shapeOf(y))
      return false;
    residual = z;
  }
  return fusedActivationOf(op, plan.epilogue);
}

/// col[p][(ci * KH + kh) * KW + kw] = x[n][ci][ih][iw], or `pad` outside.
void emitIm2col(OpBuilder &b, Location loc, const ConvGeometry &g, Value x,
                Value n, Value col, Value pad) {
  auto idx = [&](OpBuilder &lb, int64_t v) { return indexConst(lb, loc, v); };
  // The input row (axis 0) or column (1) of output `out` at tap `tap`.
  auto inputAt = [&](OpBuilder &b, Value out, Value tap, int axis) {
    Value at = b.create<arith::AddIOp>(
        loc, b.create<arith::MulIOp>(loc, out, idx(b, g.strides[axis])),
        b.create<arith::MulIOp>(loc, tap, idx(b, g.dilations[axis])));
    return b.create<arith::SubIOp>(loc, at, idx(b, g.pads[axis]));
  };
  forLoop(b, loc, g.oh * g.ow, [&](OpBuilder &b, Value p) {
    Value oh = b.create<arith::DivUIOp>(loc, p, idx(b, g.ow));
    Value ow = b.create<arith::RemUIOp>(loc, p, idx(b, g.ow));
    forLoop(b, loc, g.c, [&](OpBuilder &b, Value ci) {
      forLoop(b, loc, g.kh, [&](OpBuilder &b, Value kh) {
        Value ih = inputAt(b, oh, kh, 0);
        forLoop(b, loc, g.kw, [&](OpBuilder &b, Value kw) {
          Value iw = inputAt(b, ow, kw, 1);
          auto inside = [&](Value v, int64_t size) {
            Value ge = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge,
                                               v, idx(b, 0));
            Value lt = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt,
                                               v, idx(b, size));
            return b.create<arith::AndIOp>(loc, ge, lt);
          };
          auto clamp = [&](Value v, int64_t size) {
            return b.create<arith::MaxSIOp>(
                loc, b.create<arith::MinSIOp>(loc, v, idx(b, size - 1)),
                idx(b, 0));
          };
          Value in =
              b.create<arith::AndIOp>(loc, inside(ih, g.h), inside(iw, g.w));
          Value v = b.create<memref::LoadOp>(
              loc, x, ValueRange{n, ci, clamp(ih, g.h), clamp(iw, g.w)});
          Value k = b.create<arith::AddIOp>(
              loc,
              b.create<arith::MulIOp>(
                  loc,
                  b.create<arith::AddIOp>(
                      loc, b.create<arith::MulIOp>(loc, ci, idx(b, g.kh)), kh),
                  idx(b, g.kw)),
              kw);
          b.create<memref::StoreOp>(loc,
                                    b.create<arith::SelectOp>(loc, in, v, pad),
                                    col, ValueRange{p, k});
        });
      });
    });
  });
}

/// dst[n][o][p] = src[p][o] (toImage), or dst[p][o] = src[n][o][p].
void emitTranspose(OpBuilder &b, Location loc, int64_t channels, int64_t pixels,
                   Value image, Value n, Value rows, bool toImage) {
  forLoop(b, loc, channels, [&](OpBuilder &b, Value o) {
    forLoop(b, loc, pixels, [&](OpBuilder &b, Value p) {
      if (toImage)
        b.create<memref::StoreOp>(
            loc, b.create<memref::LoadOp>(loc, rows, ValueRange{p, o}), image,
            ValueRange{n, o, p});
      else
        b.create<memref::StoreOp>(
            loc, b.create<memref::LoadOp>(loc, image, ValueRange{n, o, p}),
            rows, ValueRange{p, o});
    });
  });
}

} // namespace

TargetLowering selectQuantConv(Operation *op, OpLoweringContext &ctx,
                               SelectionState &state) {
  StringRef name = op->getName().stripDialect();
  if ((name != "conv_integer" && name != "qlinear_conv" && name != "conv" &&
       name != "fused_conv") ||
      !state.cpu.has(MLCC_CPU_AVX512_VNNI))
    return TargetLowering::Declined;
  ConvGeometry g;
  Int8GemmPlan plan;
  Value residual;
  bool planned = name == "conv_integer" ? planConvInteger(op, ctx, g, plan)
                 : name == "qlinear_conv"
                     ? planQLinearConv(op, ctx, g, plan)
                     : planQdqConv(op, ctx, g, plan, residual);
  if (!planned || plan.k == 0)
    return TargetLowering::Declined;
  plan.residual = residual;
  Int8GemmKernels kernels;
  if (!prepareInt8Gemm(op, ctx, plan, /*threaded=*/true, kernels))
    return TargetLowering::Failed;

  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Value y = op->getResult(0);
  Type i8 = b.getIntegerType(8);
  auto outType = cast<MemRefType>(ctx.buffer(y).getType()).getElementType();
  int64_t pixels = g.oh * g.ow;
  Value col = ctx.scratch(MemRefType::get({pixels, plan.k}, i8));
  Value rows = ctx.scratch(MemRefType::get({pixels, g.oc}, outType));
  Value residualRows =
      residual ? ctx.scratch(MemRefType::get({pixels, g.oc}, b.getF32Type()))
               : Value();
  Value x = ctx.buffer(plan.a);
  Value image = view(b, loc, ctx.buffer(y), {g.n, g.oc, pixels});
  Value residualImage =
      residual ? view(b, loc, ctx.buffer(residual), {g.n, g.oc, pixels})
               : Value();
  Value pad = b.create<arith::ConstantIntOp>(loc, plan.za, 8);
  Value colAddress = ctx.address(col), rowsAddress = ctx.address(rows);
  Value residualAddress = residual ? ctx.address(residualRows) : Value();
  // Built first and filled after: the kernel calls need the loop to be in
  // the function already.
  auto loop =
      b.create<scf::ForOp>(loc, indexConst(b, loc, 0), indexConst(b, loc, g.n),
                           indexConst(b, loc, 1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value n = loop.getInductionVar();
  emitIm2col(b, loc, g, x, n, col, pad);
  if (residual)
    emitTranspose(b, loc, g.oc, pixels, residualImage, n, residualRows,
                  /*toImage=*/false);
  callInt8Gemm(ctx, kernels, colAddress, rowsAddress, residualAddress);
  emitTranspose(b, loc, g.oc, pixels, image, n, rows, /*toImage=*/true);
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
