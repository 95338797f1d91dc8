//===- QuantizeGraph.cpp - Q/DQ around the layers calibration measured ----===//

#include "QuantizeGraph.h"

#include "FusedOpDecomposition.h"
#include "GraphDialect.h"
#include "PatternUtils.h"
#include "mlcc/Reference/MlirBridge.h"

#include "mlir/IR/Builders.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace mlir;

namespace mlcc::graph {

namespace {

bool isConstantF32(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return v.getDefiningOp<ConstantOp>() && t && t.getElementType().isF32() &&
         t.hasStaticShape();
}

bool isF32(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.getElementType().isF32();
}

/// The weight's axis of output channels: N of a K x N matmul weight, or of
/// an N x K one under transB; OC of a conv's.
int64_t outputAxis(Operation *op) {
  if (auto gemm = dyn_cast<GemmOp>(op))
    return gemm.getTransB().value_or(0) ? 0 : 1;
  return isa<ConvOp, FusedConvOp>(op) ? 0 : 1;
}

bool isConv(Operation *op) { return isa<ConvOp, FusedConvOp>(op); }

/// A 2-D conv of one group with explicit pads, which the int8 kernels take.
bool isPlainConv(Operation *op) {
  auto group = op->getAttrOfType<IntegerAttr>("group");
  auto autoPad = op->getAttrOfType<StringAttr>("auto_pad");
  return cast<RankedTensorType>(op->getOperand(1).getType()).getRank() == 4 &&
         (!group || group.getInt() == 1) &&
         (!autoPad || autoPad.getValue() == "NOTSET" ||
          autoPad.getValue() == "VALID");
}

/// x -> DequantizeLinear(QuantizeLinear(x)) with u8 over `range`.
Value quantizeActivation(OpBuilder &b, Location loc, Value x,
                         ActivationRange range) {
  ActivationQuantization a = activationQuantization(range);
  Value s = constantOf(
      b, loc, ref::Tensor::fromVector<float>(ref::DType::F32, {}, {a.scale}));
  Value z = constantOf(
      b, loc, ref::Tensor::fromVector<uint8_t>(ref::DType::U8, {}, {a.zero}));
  auto type = cast<RankedTensorType>(x.getType());
  auto qType = RankedTensorType::get(type.getShape(),
                                     b.getIntegerType(8, /*isSigned=*/false));
  Value q = b.create<QuantizeLinearOp>(loc, qType, x, s, z, IntegerAttr());
  return b.create<DequantizeLinearOp>(loc, type, q, s, z, IntegerAttr());
}

/// A constant f32 weight as s8, symmetric per slice of `axis`, behind a
/// DequantizeLinear.
Value quantizeWeight(OpBuilder &b, Location loc, Value w, int64_t axis) {
  ref::Tensor t;
  if (tensorFromElementsAttr(w.getDefiningOp<ConstantOp>().getValue(), t)
          .failed())
    return {};
  std::vector<int8_t> q;
  std::vector<float> scale;
  quantizeWeightPerChannel(t, axis, q, scale);
  int64_t channels = static_cast<int64_t>(scale.size());
  Value qv = constantOf(
      b, loc, ref::Tensor::fromVector<int8_t>(ref::DType::I8, t.shape(), q));
  Value s = constantOf(
      b, loc,
      ref::Tensor::fromVector<float>(ref::DType::F32, {channels}, scale));
  Value z = constantOf(
      b, loc,
      ref::Tensor::fromVector<int8_t>(ref::DType::I8, {channels},
                                      std::vector<int8_t>(channels, 0)));
  return b.create<DequantizeLinearOp>(loc, w.getType(), qv, s, z,
                                      b.getI64IntegerAttr(axis));
}

std::string nameOf(Operation *op) {
  auto loc = dyn_cast<NameLoc>(op->getLoc());
  return loc ? loc.getName().str() : std::string();
}

} // namespace

ActivationQuantization activationQuantization(ActivationRange range) {
  float lo = std::min(range.min, 0.0f), hi = std::max(range.max, 0.0f);
  ActivationQuantization a;
  a.scale = hi > lo ? (hi - lo) / 255.0f : 1.0f;
  a.zero = static_cast<uint8_t>(
      std::clamp(std::nearbyint(-lo / a.scale), 0.0f, 255.0f));
  return a;
}

void quantizeWeightPerChannel(const ref::Tensor &t, int64_t axis,
                              std::vector<int8_t> &q,
                              std::vector<float> &scale) {
  const ref::Shape &shape = t.shape();
  int64_t channels = shape[axis], inner = 1;
  for (size_t i = axis + 1; i < shape.size(); ++i)
    inner *= shape[i];
  scale.assign(channels, 0.0f);
  const float *v = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t c = (i / inner) % channels;
    scale[c] = std::max(scale[c], std::fabs(v[i]));
  }
  for (float &s : scale)
    s = s > 0 ? s / 127.0f : 1.0f;
  q.resize(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) {
    float r = std::nearbyint(v[i] / scale[(i / inner) % channels]);
    q[i] = static_cast<int8_t>(std::clamp(r, -127.0f, 127.0f));
  }
}

void decomposeAttention(func::FuncOp func) {
  SmallVector<AttentionOp> attentions;
  for (Operation &op : func.getBody().front())
    if (auto attention = dyn_cast<AttentionOp>(op))
      attentions.push_back(attention);
  for (AttentionOp attention : attentions) {
    Operation *before = attention->getPrevNode();
    OpBuilder b(attention);
    FailureOr<Value> group = decomposeFusedOp(attention, b);
    if (failed(group))
      continue;
    // The group's ops come right before the attention; its two matmuls
    // are the scores' and the context's.
    std::string name = nameOf(attention);
    const char *suffixes[] = {"/scores", "/context"};
    int matmuls = 0;
    for (Operation *op = before ? before->getNextNode()
                                : &func.getBody().front().front();
         op != attention.getOperation(); op = op->getNextNode())
      if (isa<MatMulOp>(op) && matmuls < 2)
        op->setLoc(NameLoc::get(
            StringAttr::get(op->getContext(), name + suffixes[matmuls++])));
    attention.getResult().replaceAllUsesWith(*group);
    attention->erase();
  }
}

bool isActivationMatmul(Operation *op) {
  if (!isa<func::FuncOp>(op->getParentOp()) || !isa<MatMulOp>(op) ||
      !isF32(op->getResult(0)))
    return false;
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!isF32(v) || v.getDefiningOp<ConstantOp>() || t.getRank() < 2)
      return false;
  }
  return true;
}

Value quantizableActivation(Operation *op) {
  if (!isa<func::FuncOp>(op->getParentOp()) ||
      !isa<MatMulOp, GemmOp, FcOp, ConvOp, FusedConvOp>(op) ||
      !isF32(op->getResult(0)))
    return {};
  Value x = op->getOperand(0), w = op->getOperand(1);
  if (!isF32(x) || !isConstantF32(w) ||
      (isConv(op) ? !isPlainConv(op)
                  : cast<RankedTensorType>(w.getType()).getRank() != 2))
    return {};
  if (auto gemm = dyn_cast<GemmOp>(op); gemm && gemm.getTransA().value_or(0))
    return {};
  return x;
}

SmallVector<Value, 2> quantizedInputs(Operation *op) {
  if (isActivationMatmul(op))
    return {op->getOperand(0), op->getOperand(1)};
  if (Value x = quantizableActivation(op))
    return {x};
  return {};
}

std::vector<Value> quantizableActivations(func::FuncOp func) {
  std::vector<Value> values;
  llvm::DenseSet<Value> seen;
  for (Operation &op : func.getBody().front())
    for (Value x : quantizedInputs(&op))
      if (seen.insert(x).second)
        values.push_back(x);
  return values;
}

namespace {

/// The ranges of all of `op`'s quantised inputs, or false when one was not
/// calibrated.
bool rangesOf(Operation *op,
              const llvm::DenseMap<Value, ActivationRange> &ranges,
              SmallVectorImpl<ActivationRange> &out) {
  for (Value x : quantizedInputs(op)) {
    auto range = ranges.find(x);
    if (range == ranges.end())
      return false;
    out.push_back(range->second);
  }
  return !out.empty();
}

} // namespace

std::vector<std::pair<Value, Value>>
insertQuantizedCopies(func::FuncOp func,
                      const llvm::DenseMap<Value, ActivationRange> &ranges) {
  std::vector<std::pair<Value, Value>> pairs;
  for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
    SmallVector<ActivationRange, 2> inputRanges;
    if (!rangesOf(&op, ranges, inputRanges))
      continue;
    OpBuilder b(op.getContext());
    b.setInsertionPointAfter(&op);
    Value w =
        inputRanges.size() == 2
            ? quantizeActivation(b, op.getLoc(), op.getOperand(1),
                                 inputRanges[1])
            : quantizeWeight(b, op.getLoc(), op.getOperand(1), outputAxis(&op));
    if (!w)
      continue;
    Value dx =
        quantizeActivation(b, op.getLoc(), op.getOperand(0), inputRanges[0]);
    Operation *copy = b.clone(op);
    copy->setOperand(0, dx);
    copy->setOperand(1, w);
    pairs.emplace_back(op.getResult(0), copy->getResult(0));
  }
  return pairs;
}

QuantizationReport insertQuantDequant(
    func::FuncOp func, const llvm::DenseMap<Value, ActivationRange> &ranges,
    const llvm::DenseMap<Operation *, double> &errors, double maxError) {
  QuantizationReport report;
  llvm::DenseMap<Value, Value> dequantized;
  for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
    if (isConv(&op) && isConstantF32(op.getOperand(1)) && !isPlainConv(&op)) {
      report.kept.push_back(describeOp(&op) +
                            ": grouped or auto-padded convs have no int8 "
                            "kernel yet");
      continue;
    }
    SmallVector<Value, 2> inputs = quantizedInputs(&op);
    if (inputs.empty())
      continue;
    SmallVector<ActivationRange, 2> inputRanges;
    if (!rangesOf(&op, ranges, inputRanges)) {
      report.kept.push_back(describeOp(&op) + ": its input was not calibrated");
      continue;
    }
    auto measured = errors.find(&op);
    std::string error;
    if (measured != errors.end()) {
      char text[32];
      std::snprintf(text, sizeof text, "%.4f", measured->second);
      error = text;
    }
    if (measured != errors.end() && !(measured->second <= maxError)) {
      char limit[32];
      std::snprintf(limit, sizeof limit, "%g", maxError);
      report.kept.push_back(describeOp(&op) + ": its int8 error " + error +
                            " is above " + limit + " (--max-layer-error)");
      continue;
    }
    // One Q/DQ pair per activation, shared by the layers that read it.
    auto dequantize = [&](Value x, ActivationRange range) {
      Value &dx = dequantized[x];
      if (!dx) {
        OpBuilder after(op.getContext());
        after.setInsertionPointAfterValue(x);
        dx = quantizeActivation(after, x.getLoc(), x, range);
      }
      return dx;
    };
    QuantizedLayer layer;
    layer.node = nameOf(&op);
    layer.activation = activationQuantization(inputRanges[0]);
    layer.weightAxis = outputAxis(&op);
    if (inputs.size() == 2) {
      op.setOperand(1, dequantize(inputs[1], inputRanges[1]));
      layer.activationB = activationQuantization(inputRanges[1]);
    } else {
      OpBuilder b(&op);
      Value w =
          quantizeWeight(b, op.getLoc(), op.getOperand(1), outputAxis(&op));
      if (!w) {
        report.kept.push_back(describeOp(&op) + ": unreadable weight");
        continue;
      }
      Operation *oldWeight = op.getOperand(1).getDefiningOp();
      op.setOperand(1, w);
      if (oldWeight->use_empty())
        oldWeight->erase();
    }
    op.setOperand(0, dequantize(inputs[0], inputRanges[0]));
    report.quantized.push_back(describeOp(&op) +
                               (error.empty() ? "" : ": error " + error));
    report.layers.push_back(layer);
  }
  return report;
}

} // namespace mlcc::graph
