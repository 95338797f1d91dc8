//===- SelectQuantConv.cpp - Quantised and bf16 2-D convs -> GEMMs --------===//
//
// ConvInteger (int32 out), QLinearConv (u8/s8 out, its int32 bias in the
// accumulators) and f32 Conv/fused_conv between DequantizeLinear ops (the
// QDQ form: f32 out with the bias, residual and activation of fused_conv),
// with group 1, on a --cpu with AVX512-VNNI (a constant weight, scales and
// zero points packed now; ConvInteger's and QLinearConv's that are graph
// inputs packed by the model's code when the op runs, from NCHW); and, under
// --precision bf16, f32 Conv and fused_conv with a constant weight, their input
// rounded to bf16. Each runs per image as one GEMM of GemmInt8.h (int8 or
// bf16): rows are output pixels, K the patch, N the output channels.
//
// Layouts: the result is written straight into NCHW16c (the GEMM's column
// blocks are the channel blocks), as the f32 convs write it, so the next
// elementwise op, QuantizeLinear (SelectQuantize.cpp) and conv read it
// there. An input of 16 channels or more is read in NCHW16c too (u8/s8,
// from a blocked QuantizeLinear or converted; bf16, rounded from the f32
// blocked buffer): a 1x1 stride-1 conv reads its rows in place (K in blocks
// of 16, a plane apart), other convs gather the patches into rows of (kh,
// kw, channel block) 16 elements at a time. K then counts the padding
// channels, whose weights are the weight zero point (0 in bf16): (a - za)
// * (zb - zb) adds nothing, whatever the lanes hold. A narrow input (the
// RGB stem) is gathered from NCHW, K = (c, kh, kw), to spare the padding.
// Spatial padding is the input's zero point (the quantised 0, or +0).
//
//===----------------------------------------------------------------------===//

#include "BlockedLayout.h"
#include "Conv.h"
#include "KernelABI.h"
#include "PackPanels.h"
#include "QuantSelection.h"
#include "Quantize.h"
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
  /// The input is gathered from NCHW whatever its channels: a weight packed
  /// at run time is read in its own (c, kh, kw) order.
  bool plainInput = false;
  /// The GEMM runs on AMX tiles, whose loads take 64 contiguous bytes of
  /// a row: 1x1 convs gather their rows too.
  bool amx = false;
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

/// Whether the input is read in NCHW16c (else gathered from NCHW).
bool blockedInput(const ConvGeometry &g) {
  return !g.plainInput && g.c >= kConvBlock;
}

/// Whether the GEMM reads its rows straight from the blocked input.
bool inPlaceInput(const ConvGeometry &g) {
  return blockedInput(g) && !g.amx && g.kh == 1 && g.kw == 1 &&
         g.strides[0] == 1 && g.strides[1] == 1 &&
         llvm::all_of(g.pads, [](int64_t p) { return p == 0; });
}

/// The GEMM of one image, B[k][oc] (into `b`) from W[oc][c][kh][kw]: k =
/// (c, kh, kw) for an NCHW input, (kh, kw, c padded to 16) for a blocked
/// one, whose padding rows of column o hold pad(o) (the weight's zero
/// point, 0 in bf16). plan.bf16 is set. The result is blocked: a plane
/// between column blocks.
/// Rows, columns and the blocked result of the GEMM of one image.
void planGemmOutput(const ConvGeometry &g, Int8GemmPlan &plan) {
  plan.m = g.oh * g.ow;
  plan.n = g.oc;
  plan.ldc = kConvBlock;
  plan.cBlockStride = plan.m * kConvBlock;
}

template <typename T, typename Pad>
void planGemm(const ConvGeometry &g, const std::vector<T> &weight, Pad pad,
              std::vector<T> &b, Int8GemmPlan &plan) {
  planGemmOutput(g, plan);
  const int64_t taps = g.kh * g.kw;
  auto w = [&](int64_t o, int64_t c, int64_t tap) {
    return weight[(o * g.c + c) * taps + tap];
  };
  if (!blockedInput(g)) {
    plan.k = g.c * taps;
    b.resize(plan.k * plan.n);
    for (int64_t o = 0; o < plan.n; ++o)
      for (int64_t kk = 0; kk < plan.k; ++kk)
        b[kk * plan.n + o] = w(o, kk / taps, kk % taps);
    return;
  }
  const int64_t padded = convBlocks(g.c) * kConvBlock;
  plan.k = taps * padded;
  b.resize(plan.k * plan.n);
  for (int64_t o = 0; o < plan.n; ++o)
    for (int64_t tap = 0; tap < taps; ++tap)
      for (int64_t c = 0; c < padded; ++c)
        b[(tap * padded + c) * plan.n + o] = c < g.c ? w(o, c, tap) : pad(o);
  if (inPlaceInput(g)) {
    plan.lda = kConvBlock;
    plan.aBlockStride = g.h * g.w * kConvBlock * (plan.bf16 ? 2 : 1);
  }
}

/// planGemm of an int8 weight: padding rows hold the weight zero point.
void planInt8Gemm(const ConvGeometry &g, const std::vector<int32_t> &weight,
                  Int8GemmPlan &plan) {
  auto zb = [&](int64_t o) { return plan.zb[plan.zb.size() == 1 ? 0 : o]; };
  planGemm(g, weight, zb, plan.b, plan);
}

/// W, zero points and scales read when the op runs (mlcc_int8_pack_b), W
/// as it is: B[(c, kh, kw)][oc], over an NCHW input. x's zero point one
/// value, w's one or one per output channel.
bool planRuntimeWeight(Value x, Value w, Value xZero, Value wZero,
                       ConvGeometry &g, Int8GemmPlan &plan) {
  if (!runtimeScalars(xZero, 1, true) || !runtimeScalars(wZero, g.oc, true))
    return false;
  g.plainInput = true;
  planGemmOutput(g, plan);
  plan.k = g.c * g.kh * g.kw;
  plan.packAtRunTime = true;
  plan.runtime.b = w;
  plan.runtime.strideK = 1;
  plan.runtime.strideN = plan.k;
  plan.runtime.aZero = xZero;
  plan.runtime.bZero = wZero;
  plan.a = x;
  plan.signedA = !isUnsignedTensor(x);
  plan.unsignedB = isUnsignedTensor(w);
  return true;
}

/// ConvInteger(x, w, x_zero_point, w_zero_point).
bool planConvInteger(Operation *op, OpLoweringContext &ctx, ConvGeometry &g,
                     Int8GemmPlan &plan) {
  Value x = op->getOperand(0), w = op->getOperand(1);
  std::vector<int32_t> weight, za;
  if (!isInt8Tensor(x) || !isInt8Tensor(w) ||
      !planGeometry(op, x, w, op->getResult(0), g))
    return false;
  plan.output = Int8GemmOutput::Int32;
  if (!constantInts(ctx, w, weight) ||
      !constantInts(ctx, op->getOperand(2), za) || za.size() != 1 ||
      !constantInts(ctx, op->getOperand(3), plan.zb) ||
      !oneOrPerSlice(plan.zb.size(), g.oc)) {
    plan = Int8GemmPlan();
    plan.output = Int8GemmOutput::Int32;
    return planRuntimeWeight(x, w, op->getOperand(2), op->getOperand(3), g,
                             plan);
  }
  plan.a = x;
  plan.za = za[0];
  plan.signedA = !isUnsignedTensor(x);
  plan.unsignedB = isUnsignedTensor(w);
  planInt8Gemm(g, weight, plan);
  return true;
}

/// QLinearConv's int32 bias B (one per output channel) as constants in
/// plan.intBias; false when it is not a constant of that shape.
bool constantIntBias(OpLoweringContext &ctx, Value bias, int64_t oc,
                     Int8GemmPlan &plan) {
  ElementsAttr attr = ctx.constantValue(bias);
  if (!attr || !attr.getElementType().isInteger(32) ||
      attr.getNumElements() != oc)
    return false;
  for (const APInt &v : attr.getValues<APInt>())
    plan.intBias.push_back(static_cast<int32_t>(v.getSExtValue()));
  return true;
}

/// QLinearConv(x, xs, xz, w, ws, wz, ys, yz, B):
/// y = saturate(round((acc + B) * xs * ws[o] / ys) + yz).
bool planQLinearConv(Operation *op, OpLoweringContext &ctx, ConvGeometry &g,
                     Int8GemmPlan &plan) {
  Value x = op->getOperand(0), w = op->getOperand(3), y = op->getResult(0);
  if (!isInt8Tensor(x) || !isInt8Tensor(w) || !isInt8Tensor(y) ||
      !planGeometry(op, x, w, y, g))
    return false;
  plan.output = isUnsignedTensor(y) ? Int8GemmOutput::U8 : Int8GemmOutput::S8;
  Value bias = op->getNumOperands() > 8 ? op->getOperand(8) : Value();
  if (bias && isa<NoneType>(bias.getType()))
    bias = Value();
  std::vector<int32_t> weight, za, zy;
  std::vector<float> ws;
  float xs, ys;
  if (constantInts(ctx, w, weight) &&
      constantScalar(ctx, op->getOperand(1), xs) &&
      constantInts(ctx, op->getOperand(2), za) && za.size() == 1 &&
      constantFloats(ctx, op->getOperand(4), ws) &&
      oneOrPerSlice(ws.size(), g.oc) &&
      constantInts(ctx, op->getOperand(5), plan.zb) &&
      oneOrPerSlice(plan.zb.size(), g.oc) &&
      constantScalar(ctx, op->getOperand(6), ys) && ys != 0 &&
      constantInts(ctx, op->getOperand(7), zy) && zy.size() == 1 &&
      (!bias || constantIntBias(ctx, bias, g.oc, plan))) {
    plan.a = x;
    plan.za = za[0];
    plan.signedA = !isUnsignedTensor(x);
    plan.unsignedB = isUnsignedTensor(w);
    plan.outputZero = zy[0];
    planInt8Gemm(g, weight, plan);
    plan.scale.resize(g.oc);
    // The reference's order: (xs * ws) / ys, in f32.
    for (int64_t o = 0; o < g.oc; ++o)
      plan.scale[o] = xs * ws[ws.size() == 1 ? 0 : o] / ys;
    return true;
  }
  Int8GemmOutput output = plan.output;
  plan = Int8GemmPlan();
  plan.output = output;
  if (!planRuntimeWeight(x, w, op->getOperand(2), op->getOperand(5), g, plan))
    return false;
  RuntimeOperands &r = plan.runtime;
  r.aScale = op->getOperand(1);
  r.bScale = op->getOperand(4);
  r.yScale = op->getOperand(6);
  r.yZero = op->getOperand(7);
  r.intBias = bias;
  auto intBias = [&](Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    return t.hasStaticShape() && t.getElementType().isInteger(32) &&
           t.getNumElements() == g.oc;
  };
  return runtimeScalars(r.aScale, 1, false) &&
         runtimeScalars(r.bScale, g.oc, false) &&
         runtimeScalars(r.yScale, 1, false) &&
         runtimeScalars(r.yZero, 1, true) && (!bias || intBias(bias));
}

/// The f32 bias of conv/fused_conv, and fused_conv's residual and
/// activation.
bool planConvEpilogue(Operation *op, OpLoweringContext &ctx,
                      const ConvGeometry &g, Int8GemmPlan &plan,
                      Value &residual) {
  Value bias = op->getOperand(2), y = op->getResult(0);
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
  planInt8Gemm(g, weight, plan);
  plan.scale.resize(g.oc);
  for (int64_t o = 0; o < g.oc; ++o)
    plan.scale[o] = dx.scale[0] * dw.scale[dw.scale.size() == 1 ? 0 : o];
  return planConvEpilogue(op, ctx, g, plan, residual);
}

/// conv/fused_conv(x, W, B (, Z)) with f32 x and a constant f32 W, in bf16
/// (--precision bf16).
bool planBf16Conv(Operation *op, OpLoweringContext &ctx, ConvGeometry &g,
                  Int8GemmPlan &plan, Value &residual) {
  Value x = op->getOperand(0), y = op->getResult(0);
  std::vector<float> weight;
  if (!isF32Tensor(x) || !isF32Tensor(y) ||
      !planGeometry(op, x, op->getOperand(1), y, g) ||
      !constantFloats(ctx, op->getOperand(1), weight))
    return false;
  plan.bf16 = true;
  plan.a = x;
  plan.output = Int8GemmOutput::Float;
  planGemm(
      g, weight, [](int64_t) { return 0.0f; }, plan.bFloat, plan);
  return planConvEpilogue(op, ctx, g, plan, residual);
}

/// The input row (axis 0) or column (1) of output `out` at tap `tap`, and
/// whether it is inside the image.
struct InputAt {
  Value at, inside;
};
InputAt inputAt(OpBuilder &b, Location loc, const ConvGeometry &g, Value out,
                Value tap, int axis, int64_t size) {
  auto idx = [&](int64_t v) { return indexConst(b, loc, v); };
  Value at = b.create<arith::AddIOp>(
      loc, b.create<arith::MulIOp>(loc, out, idx(g.strides[axis])),
      b.create<arith::MulIOp>(loc, tap, idx(g.dilations[axis])));
  at = b.create<arith::SubIOp>(loc, at, idx(g.pads[axis]));
  Value ge =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, at, idx(0));
  Value lt =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, at, idx(size));
  return {at, b.create<arith::AndIOp>(loc, ge, lt)};
}

/// `v` clamped into [0, size): an address that is safe to load from.
Value clampIndex(OpBuilder &b, Location loc, Value v, int64_t size) {
  return b.create<arith::MaxSIOp>(
      loc, b.create<arith::MinSIOp>(loc, v, indexConst(b, loc, size - 1)),
      indexConst(b, loc, 0));
}

/// col[p][((kh * KW + kw) * CB + cb) * 16 + l] = x[n][cb][ih][iw][l], or
/// `pad` outside: rows of 16-byte runs, which LLVM copies as vectors.
void emitBlockedIm2col(OpBuilder &b, Location loc, const ConvGeometry &g,
                       Value x, Value n, Value col, Value pad) {
  auto idx = [&](OpBuilder &lb, int64_t v) { return indexConst(lb, loc, v); };
  const int64_t blocks = convBlocks(g.c);
  forLoop(b, loc, g.oh * g.ow, [&](OpBuilder &b, Value p) {
    Value oh = b.create<arith::DivUIOp>(loc, p, idx(b, g.ow));
    Value ow = b.create<arith::RemUIOp>(loc, p, idx(b, g.ow));
    forLoop(b, loc, g.kh, [&](OpBuilder &b, Value kh) {
      InputAt ih = inputAt(b, loc, g, oh, kh, 0, g.h);
      forLoop(b, loc, g.kw, [&](OpBuilder &b, Value kw) {
        InputAt iw = inputAt(b, loc, g, ow, kw, 1, g.w);
        Value in = b.create<arith::AndIOp>(loc, ih.inside, iw.inside);
        Value h = clampIndex(b, loc, ih.at, g.h);
        Value w = clampIndex(b, loc, iw.at, g.w);
        Value tap = b.create<arith::AddIOp>(
            loc, b.create<arith::MulIOp>(loc, kh, idx(b, g.kw)), kw);
        Value base =
            b.create<arith::MulIOp>(loc, tap, idx(b, blocks * kConvBlock));
        forLoop(b, loc, blocks, [&](OpBuilder &b, Value cb) {
          Value run = b.create<arith::AddIOp>(
              loc, base, b.create<arith::MulIOp>(loc, cb, idx(b, kConvBlock)));
          forLoop(b, loc, kConvBlock, [&](OpBuilder &b, Value l) {
            Value v =
                b.create<memref::LoadOp>(loc, x, ValueRange{n, cb, h, w, l});
            b.create<memref::StoreOp>(
                loc, b.create<arith::SelectOp>(loc, in, v, pad), col,
                ValueRange{p, b.create<arith::AddIOp>(loc, run, l)});
          });
        });
      });
    });
  });
}

/// col[p][(ci * KH + kh) * KW + kw] = x[n][ci][ih][iw], or `pad` outside.
void emitIm2col(OpBuilder &b, Location loc, const ConvGeometry &g, Value x,
                Value n, Value col, Value pad) {
  auto idx = [&](OpBuilder &lb, int64_t v) { return indexConst(lb, loc, v); };
  forLoop(b, loc, g.oh * g.ow, [&](OpBuilder &b, Value p) {
    Value oh = b.create<arith::DivUIOp>(loc, p, idx(b, g.ow));
    Value ow = b.create<arith::RemUIOp>(loc, p, idx(b, g.ow));
    forLoop(b, loc, g.c, [&](OpBuilder &b, Value ci) {
      forLoop(b, loc, g.kh, [&](OpBuilder &b, Value kh) {
        InputAt ih = inputAt(b, loc, g, oh, kh, 0, g.h);
        forLoop(b, loc, g.kw, [&](OpBuilder &b, Value kw) {
          InputAt iw = inputAt(b, loc, g, ow, kw, 1, g.w);
          Value in = b.create<arith::AndIOp>(loc, ih.inside, iw.inside);
          Value v = b.create<memref::LoadOp>(
              loc, x,
              ValueRange{n, ci, clampIndex(b, loc, ih.at, g.h),
                         clampIndex(b, loc, iw.at, g.w)});
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

/// `address` + i * `bytes`, as an i64 address.
Value offsetAddress(OpBuilder &b, Location loc, Value address, Value i,
                    int64_t bytes) {
  Value i64 = b.create<arith::IndexCastOp>(loc, b.getI64Type(), i);
  return b.create<arith::AddIOp>(
      loc, address,
      b.create<arith::MulIOp>(loc, i64,
                              b.create<arith::ConstantIntOp>(loc, bytes, 64)));
}

} // namespace

TargetLowering selectQuantConv(Operation *op, OpLoweringContext &ctx,
                               SelectionState &state) {
  StringRef name = op->getName().stripDialect();
  const bool vnni = state.cpu.has(MLCC_CPU_AVX512_VNNI);
  if ((name != "conv_integer" && name != "qlinear_conv" && name != "conv" &&
       name != "fused_conv") ||
      (!vnni && !state.bf16Precision))
    return TargetLowering::Declined;
  ConvGeometry g;
  Int8GemmPlan plan;
  Value residual;
  bool planned = false;
  // The geometry is planned first: whether the GEMM goes on tiles decides
  // how its rows are read.
  auto amxFor = [&](bool bf16) {
    ArrayRef<int64_t> ys = shapeOf(op->getResult(0)),
                      ws = shapeOf(op->getOperand(1));
    return ys.size() == 4 && ws.size() == 4 &&
           useAmx(state.cpu, bf16, ys[2] * ys[3], ws[1] * ws[2] * ws[3]);
  };
  g.amx = amxFor(/*bf16=*/false);
  if (vnni)
    planned = name == "conv_integer" ? planConvInteger(op, ctx, g, plan)
              : name == "qlinear_conv"
                  ? planQLinearConv(op, ctx, g, plan)
                  : planQdqConv(op, ctx, g, plan, residual);
  if (!planned && state.bf16Precision &&
      (name == "conv" || name == "fused_conv")) {
    plan = Int8GemmPlan();
    residual = Value();
    g.amx = amxFor(/*bf16=*/true);
    planned = planBf16Conv(op, ctx, g, plan, residual);
  }
  if (!planned || plan.k == 0)
    return TargetLowering::Declined;
  plan.residual = residual;
  plan.amx = g.amx;
  Int8GemmKernels kernels;
  if (!prepareInt8Gemm(op, ctx, plan, kernels))
    return TargetLowering::Failed;

  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  Value y = op->getResult(0);
  const int64_t pixels = g.oh * g.ow;
  const int64_t inputBlocks = convBlocks(g.c);
  const int inputBytes = plan.bf16 ? 2 : 1;
  Type inputElement = b.getIntegerType(8 * inputBytes);
  // The int8 (or bf16) input: blocked (in place, or gathered into `col`)
  // or NCHW.
  Value x =
      blockedInput(g) ? blockedOperand(plan.a, ctx, state) : ctx.buffer(plan.a);
  if (plan.bf16 && !(x = emitToBf16(op, ctx, state, plan.a, x)))
    return TargetLowering::Failed;
  Value col =
      inPlaceInput(g)
          ? Value()
          : ctx.scratch(MemRefType::get({pixels, plan.k}, inputElement));
  auto outElement =
      outputBytes(plan.output) == 1
          ? Type(b.getIntegerType(8))
          : (plan.output == Int8GemmOutput::Int32 ? Type(b.getI32Type())
                                                  : Type(b.getF32Type()));
  Value out =
      ctx.allocate(blockedType(MemRefType::get(shapeOf(y), outElement)), y);
  const int64_t outImage = convBlocks(g.oc) * pixels * kConvBlock;
  Value xAddress = ctx.address(x), outAddress = ctx.address(out);
  Value colAddress = col ? ctx.address(col) : Value();
  Value residualAddress =
      residual ? ctx.address(blockedOperand(residual, ctx, state)) : Value();
  // Spatial padding: the quantised 0 (bf16 +0 is all zero bits).
  Value pad =
      plan.packAtRunTime
          ? b.create<arith::TruncIOp>(loc, inputElement,
                                      loadZeroPoint(ctx, plan.runtime.aZero))
                .getResult()
          : b.create<arith::ConstantIntOp>(loc, plan.za, 8 * inputBytes)
                .getResult();
  if (plan.packAtRunTime)
    packAtRunTime(ctx, plan, kernels);
  // Built first and filled after: the kernel calls need the loop to be in
  // the function already.
  auto loop =
      b.create<scf::ForOp>(loc, indexConst(b, loc, 0), indexConst(b, loc, g.n),
                           indexConst(b, loc, 1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value n = loop.getInductionVar();
  Value a = colAddress;
  if (!col)
    a = offsetAddress(b, loc, xAddress, n,
                      inputBlocks * g.h * g.w * kConvBlock * inputBytes);
  else if (blockedInput(g))
    emitBlockedIm2col(b, loc, g, x, n, col, pad);
  else
    emitIm2col(b, loc, g, x, n, col, pad);
  callInt8Gemm(
      ctx, kernels, a,
      offsetAddress(b, loc, outAddress, n, outImage * outputBytes(plan.output)),
      residual ? offsetAddress(b, loc, residualAddress, n, outImage * 4)
               : Value());
  setBlockedResult(y, out, ctx, state);
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
