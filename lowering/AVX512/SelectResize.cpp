//===- SelectResize.cpp - Resize and Upsample -> AVX-512 kernels ----------===//
//
// f32 4-D nearest, linear and cubic resizes of H and W (N and C unchanged)
// with constant scales or sizes, in every coordinate mode but
// tf_crop_and_resize: the taps are baked into the generated code
// (Kernels/Resize.h). An input a conv left in NCHW16c is read so, which
// saves its conversion to NCHW. Everything else (crops, run-time scales,
// other ranks and types) is declined: the portable lowering
// (lowering/Common/Portable/Resize.cpp) takes it.
//
//===----------------------------------------------------------------------===//

#include "ChunkedKernelCalls.h"
#include "KernelABI.h"
#include "Resize.h"
#include "SelectionUtils.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <optional>

using namespace mlir;

namespace mlcc::avx512 {

namespace {

/// Output bytes below which a chunk is not worth a thread.
constexpr int64_t kMinChunkBytes = int64_t(64) << 10;

/// Absent, or without elements (opset 11 passes an empty tensor for the
/// unused one of scales and sizes).
bool isAbsent(Operation *op, int i) {
  if (i < 0 || i >= static_cast<int>(op->getNumOperands()))
    return true;
  auto t = dyn_cast<RankedTensorType>(op->getOperand(i).getType());
  return !t || (t.hasStaticShape() && t.getNumElements() == 0);
}

/// The values of a constant operand, as doubles.
bool constantDoubles(OpLoweringContext &ctx, Value v,
                     std::vector<double> &values) {
  ElementsAttr attr = ctx.constantValue(v);
  ref::Tensor t;
  if (!attr || tensorFromElementsAttr(attr, t).failed())
    return false;
  for (int64_t i = 0; i < t.numel(); ++i)
    values.push_back(t.getDouble(i));
  return true;
}

/// The op's modes, as the reference resolves them; false for those the
/// kernels lack (or the reference rejects).
bool coordsOf(Operation *op, ResizeCoords &c) {
  std::string mode = stringAttr(op, "mode", "nearest");
  if (op->getName().stripDialect() == "upsample") {
    // Opset 7-10: asymmetric coordinates, nearest takes the floor.
    if (mode == "bilinear" || mode == "trilinear")
      mode = "linear";
    c.coord = ResizeCoord::Asymmetric;
    c.rounding = ResizeRounding::Floor;
  } else {
    if (intAttr(op, "antialias", 0) != 0 || op->hasAttr("axes") ||
        stringAttr(op, "keep_aspect_ratio_policy", "stretch") != "stretch")
      return false;
    auto coord =
        llvm::StringSwitch<std::optional<ResizeCoord>>(
            stringAttr(op, "coordinate_transformation_mode", "half_pixel"))
            .Case("half_pixel", ResizeCoord::HalfPixel)
            .Case("pytorch_half_pixel", ResizeCoord::PytorchHalfPixel)
            .Case("align_corners", ResizeCoord::AlignCorners)
            .Case("asymmetric", ResizeCoord::Asymmetric)
            .Case("tf_half_pixel_for_nn", ResizeCoord::TfHalfPixelForNN)
            .Default(std::nullopt);
    auto rounding = llvm::StringSwitch<std::optional<ResizeRounding>>(
                        stringAttr(op, "nearest_mode", "round_prefer_floor"))
                        .Case("round_prefer_floor", ResizeRounding::PreferFloor)
                        .Case("round_prefer_ceil", ResizeRounding::PreferCeil)
                        .Case("floor", ResizeRounding::Floor)
                        .Case("ceil", ResizeRounding::Ceil)
                        .Default(std::nullopt);
    if (!coord || !rounding)
      return false;
    c.coord = *coord;
    c.rounding = *rounding;
    c.excludeOutside = intAttr(op, "exclude_outside", 0) != 0;
  }
  if (mode == "nearest")
    c.mode = ResizeMode::Nearest;
  else if (mode == "linear")
    c.mode = ResizeMode::Linear;
  else if (mode == "cubic")
    c.mode = ResizeMode::Cubic;
  else
    return false;
  c.cubicA = floatAttr(op, "cubic_coeff_a", -0.75f);
  return true;
}

/// Per-axis scales from the constant scales or sizes operand, checked
/// against the static shapes (a mismatch is the portable lowering's to
/// report); false when they are not constants.
bool scalesOf(Operation *op, OpLoweringContext &ctx, int scalesIdx,
              int sizesIdx, ResizeCoords &c, std::vector<double> &scales) {
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0)),
                    out = shapeOf(op->getResult(0));
  bool haveScales = !isAbsent(op, scalesIdx),
       haveSizes = !isAbsent(op, sizesIdx);
  if (haveScales == haveSizes)
    return false;
  std::vector<double> values;
  if (!constantDoubles(ctx, op->getOperand(haveScales ? scalesIdx : sizesIdx),
                       values) ||
      values.size() != in.size())
    return false;
  c.fromSizes = haveSizes;
  for (size_t a = 0; a < in.size(); ++a) {
    if (haveScales) {
      if (!(values[a] > 0) ||
          std::floor(static_cast<double>(in[a]) * values[a]) !=
              static_cast<double>(out[a]))
        return false;
      scales.push_back(values[a]);
    } else {
      if (values[a] != static_cast<double>(out[a]))
        return false;
      scales.push_back(in[a] > 0 ? static_cast<double>(out[a]) / in[a] : 0.0);
    }
  }
  return true;
}

} // namespace

TargetLowering selectResize(Operation *op, OpLoweringContext &ctx,
                            SelectionState &state) {
  StringRef name = op->getName().stripDialect();
  if (name != "resize" && name != "upsample")
    return TargetLowering::Declined;
  Value x = op->getOperand(0), y = op->getResult(0);
  if (!isF32Tensor(x) || !isF32Tensor(y) || shapeOf(x).size() != 4 ||
      shapeOf(y).size() != 4)
    return TargetLowering::Declined;
  ResizeSpec spec;
  std::vector<double> scales;
  bool resize = name == "resize";
  if (!coordsOf(op, spec.coords) ||
      !scalesOf(op, ctx, resize ? 2 : 1, resize ? 3 : -1, spec.coords, scales))
    return TargetLowering::Declined;
  ArrayRef<int64_t> in = shapeOf(x), out = shapeOf(y);
  for (int a = 0; a < 2; ++a)
    if (!isIdentityAxis(resizeAxisTaps(spec.coords, scales[a], in[a], out[a]),
                        in[a], out[a]))
      return TargetLowering::Declined;
  spec.name = nodeName(op);
  spec.scales[0] = scales[2];
  spec.scales[1] = scales[3];
  spec.n = in[0];
  spec.c = in[1];
  spec.h = in[2];
  spec.w = in[3];
  spec.oh = out[2];
  spec.ow = out[3];
  if (validateResize(spec).failed())
    return TargetLowering::Declined;
  auto blocked = state.blocked.find(x);
  if (blocked != state.blocked.end()) {
    spec.blockedInput = true;
    if (validateResize(spec).failed())
      spec.blockedInput = false;
  }
  auto generate = [&](const ResizeSpec &s, StringRef suffix,
                      std::string &symbol) {
    return addGeneratedKernel(op, ctx, generateResize, s,
                              spec.name + suffix.str(), symbol);
  };
  std::string whole;
  if (!generate(spec, "", whole))
    return TargetLowering::Failed;
  // mlcc_resize_args: src, dst.
  SmallVector<Value> fields{
      ctx.address(spec.blockedInput ? blocked->second : ctx.buffer(x)),
      ctx.address(ctx.buffer(y))};

  // Units of work a chunk takes whole: planes; NCHW16c channel blocks (of
  // 16 planes each), or images when the last block is narrower.
  const int64_t blocks = (spec.c + 15) / 16, outPlane = spec.oh * spec.ow;
  int64_t units = spec.n * spec.c, unitPlanes = 1, unitSrc = spec.h * spec.w;
  if (spec.blockedInput) {
    bool byBlock = spec.c % 16 == 0;
    units = byBlock ? spec.n * blocks : spec.n;
    unitPlanes = byBlock ? 16 : spec.c;
    unitSrc = (byBlock ? 1 : blocks) * 16 * spec.h * spec.w;
  }
  const int64_t unitBytes = 4 * unitPlanes * outPlane;
  const int64_t perChunk = std::max<int64_t>(
      1, (kMinChunkBytes + unitBytes - 1) / std::max<int64_t>(unitBytes, 1));
  const int64_t chunks = (units + perChunk - 1) / perChunk;
  if (ctx.oneThread() || chunks < 2) {
    ctx.callKernel(whole, fields);
    return TargetLowering::Lowered;
  }
  // A chunk of k units is the same resize of one image of k planes (or
  // blocks), or of k images.
  auto part = [&](int64_t k) {
    ResizeSpec s = spec;
    if (spec.blockedInput && spec.c % 16 != 0) {
      s.n = k;
    } else {
      s.n = 1;
      s.c = k * unitPlanes;
    }
    return s;
  };
  std::string chunk, tail;
  int64_t last = units - (chunks - 1) * perChunk;
  if (!generate(part(perChunk), "_chunk", chunk) ||
      (last != perChunk && !generate(part(last), "_tail", tail)))
    return TargetLowering::Failed;
  emitChunkedKernelCalls(ctx, {whole, chunk, tail, chunks}, fields,
                         {4 * perChunk * unitSrc, perChunk * unitBytes});
  return TargetLowering::Lowered;
}

} // namespace mlcc::avx512
