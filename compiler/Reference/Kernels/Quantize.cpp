//===- Quantize.cpp - Linear quantization reference kernels ---------------===//
//
// QuantizeLinear, DequantizeLinear (opset 13: per-tensor or per-axis scale
// and zero point) and DynamicQuantizeLinear. f32 arithmetic is done in
// float, as onnxruntime and the ONNX reference do, so that values on a
// rounding boundary land on the same side; rounding is to nearest even.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"
#include "MiscKernels.h"

#include <cmath>
#include <limits>

namespace mlcc::ref::misc {
namespace {

/// How scale and zero point index into x: one value for all elements, or one
/// per index of `axis` (then `inner` elements share each value).
struct QuantLayout {
  bool perAxis = false;
  int64_t axisLen = 1, inner = 1;
};

/// Checks x, scale and the optional zero point of (de)quantize and
/// works out the layout.
Status checkQuantOperands(const char *op, const Attrs &attrs,
                          const std::vector<ValueInfo> &in,
                          QuantLayout &layout) {
  MLCC_CHECK(in.size() >= 2 && in[0].present() && in[1].present(), op,
             ": x and scale are required");
  const ValueInfo &x = in[0], &scale = in[1];
  MLCC_CHECK(isFloatType(scale.dtype), op, ": scale has dtype ",
             dtypeName(scale.dtype), ", expected a float type");
  MLCC_CHECK(scale.rank() <= 1, op, ": scale has rank ", scale.rank(),
             ", expected a scalar or a 1-D tensor");
  if (in.size() > 2 && in[2].present())
    MLCC_CHECK(in[2].shape == scale.shape, op, ": zero point has shape ",
               shapeToString(in[2].shape), " but scale has ",
               shapeToString(scale.shape));
  // A 1-D scale of one element is per-tensor, like a scalar.
  layout.perAxis = scale.rank() == 1 && scale.shape[0] != 1;
  if (!layout.perAxis)
    return Status::success();
  int64_t axis = 0;
  Status s = normalizeAxis(attrs.getInt("axis", 1), x.rank(), axis);
  MLCC_CHECK(s.ok(), op, ": ", s.message());
  layout.axisLen = x.shape[axis];
  MLCC_CHECK(isDyn(scale.shape[0]) || isDyn(layout.axisLen) ||
                 scale.shape[0] == layout.axisLen,
             op, ": scale has ", scale.shape[0], " elements but axis ", axis,
             " of x has length ", layout.axisLen);
  for (int64_t d = axis + 1; d < x.rank(); ++d)
    layout.inner = isDyn(x.shape[d]) || isDyn(layout.inner)
                       ? kDynamic
                       : layout.inner * x.shape[d];
  return Status::success();
}

/// Index of the scale / zero point of element i.
inline int64_t paramIndex(const QuantLayout &l, int64_t i) {
  return l.perAxis ? (i / l.inner) % l.axisLen : 0;
}

bool quantizedType(DType t) {
  return t == DType::U8 || t == DType::I8 || t == DType::U16 ||
         t == DType::I16 || t == DType::I32;
}

//===----------------------------------------------------------------------===//
// graph.quantize
//===----------------------------------------------------------------------===//

Status inferQuantize(const Attrs &attrs, const std::vector<ValueInfo> &in,
                     std::vector<ValueInfo> &out) {
  QuantLayout l;
  MLCC_RETURN_IF_ERROR(checkQuantOperands("quantize", attrs, in, l));
  MLCC_CHECK(isFloatType(in[0].dtype) || in[0].dtype == DType::I32,
             "quantize: x has dtype ", dtypeName(in[0].dtype),
             ", expected a float type or i32");
  DType t = in.size() > 2 && in[2].present() ? in[2].dtype : DType::U8;
  MLCC_CHECK(t == DType::U8 || t == DType::I8 || t == DType::U16 ||
                 t == DType::I16,
             "quantize: zero point has dtype ", dtypeName(t),
             ", expected u8 or i8");
  out[0] = ValueInfo{t, in[0].shape, nullptr};
  return Status::success();
}

Status runQuantize(const Attrs &attrs, const std::vector<Tensor> &in,
                   std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferQuantize, attrs, in, out));
  std::vector<ValueInfo> info;
  for (const Tensor &t : in)
    info.push_back(ValueInfo{t.dtype(), t.shape(), &t});
  QuantLayout l;
  MLCC_RETURN_IF_ERROR(checkQuantOperands("quantize", attrs, info, l));
  const Tensor &x = in[0], &scale = in[1];
  const bool hasZp = in.size() > 2 && in[2].present();
  Tensor &y = out[0];
  // Saturation range of the output type (u8 unless the zero point says).
  const double lo = y.dtype() == DType::I8    ? -128
                    : y.dtype() == DType::I16 ? -32768
                                              : 0;
  const double hi = y.dtype() == DType::I8    ? 127
                    : y.dtype() == DType::I16 ? 32767
                    : y.dtype() == DType::U16 ? 65535
                                              : 255;
  const bool wide = scale.dtype() == DType::F64 || x.dtype() == DType::F64;
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t p = paramIndex(l, i);
    double zp = hasZp ? in[2].getDouble(p) : 0.0;
    double q =
        wide ? x.getDouble(i) / scale.getDouble(p)
             : static_cast<double>(static_cast<float>(x.getDouble(i)) /
                                   static_cast<float>(scale.getDouble(p)));
    double v = std::nearbyint(q) + zp;
    y.setDouble(i, std::isnan(v) ? zp : std::min(std::max(v, lo), hi));
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.dequantize
//===----------------------------------------------------------------------===//

Status inferDequantize(const Attrs &attrs, const std::vector<ValueInfo> &in,
                       std::vector<ValueInfo> &out) {
  QuantLayout l;
  MLCC_RETURN_IF_ERROR(checkQuantOperands("dequantize", attrs, in, l));
  MLCC_CHECK(quantizedType(in[0].dtype), "dequantize: x has dtype ",
             dtypeName(in[0].dtype), ", expected i8, u8 or i32");
  if (in.size() > 2 && in[2].present())
    MLCC_CHECK(in[2].dtype == in[0].dtype,
               "dequantize: zero point has dtype ",
               dtypeName(in[2].dtype), " but x has ", dtypeName(in[0].dtype));
  // Opset 13 always gives f32 (its only scale type); later opsets give the
  // scale's type.
  out[0] = ValueInfo{in[1].dtype, in[0].shape, nullptr};
  return Status::success();
}

Status runDequantize(const Attrs &attrs, const std::vector<Tensor> &in,
                     std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferDequantize, attrs, in, out));
  std::vector<ValueInfo> info;
  for (const Tensor &t : in)
    info.push_back(ValueInfo{t.dtype(), t.shape(), &t});
  QuantLayout l;
  MLCC_RETURN_IF_ERROR(checkQuantOperands("dequantize", attrs, info, l));
  const Tensor &x = in[0], &scale = in[1];
  const bool hasZp = in.size() > 2 && in[2].present();
  // (x - zp) is an exact integer and the product of two floats is exact in
  // double, so one rounding in setDouble gives the float product.
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t p = paramIndex(l, i);
    int64_t zp = hasZp ? in[2].getInt(p) : 0;
    out[0].setDouble(i, static_cast<double>(x.getInt(i) - zp) *
                            scale.getDouble(p));
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.dynamic_quantize_linear
//===----------------------------------------------------------------------===//

Status inferDynamicQuantize(const Attrs &, const std::vector<ValueInfo> &in,
                            std::vector<ValueInfo> &out) {
  MLCC_CHECK(!in.empty() && in[0].present(),
             "dynamic_quantize_linear: x is required");
  MLCC_CHECK(isFloatType(in[0].dtype), "dynamic_quantize_linear: x has dtype ",
             dtypeName(in[0].dtype), ", expected a float type");
  MLCC_CHECK(out.size() == 3, "dynamic_quantize_linear: has ", out.size(),
             " results, expected 3");
  out[0] = ValueInfo{DType::U8, in[0].shape, nullptr};
  out[1] = ValueInfo{DType::F32, {}, nullptr};
  out[2] = ValueInfo{DType::U8, {}, nullptr};
  return Status::success();
}

Status runDynamicQuantize(const Attrs &attrs, const std::vector<Tensor> &in,
                          std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferDynamicQuantize, attrs, in, out));
  const Tensor &x = in[0];
  // The range always includes 0 so that 0 is exactly representable.
  float mn = 0, mx = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    float v = static_cast<float>(x.getDouble(i));
    mn = std::min(mn, v);
    mx = std::max(mx, v);
  }
  float scale = (mx - mn) / 255.0f;
  float zp = 0;
  if (scale != 0)
    zp = std::min(std::max(std::nearbyint((0.0f - mn) / scale), 0.0f), 255.0f);
  for (int64_t i = 0; i < x.numel(); ++i) {
    float q = scale != 0
                  ? std::nearbyint(static_cast<float>(x.getDouble(i)) / scale)
                  : 0.0f;
    out[0].setDouble(i, std::min(std::max(q + zp, 0.0f), 255.0f));
  }
  out[1].setDouble(0, scale);
  out[2].setDouble(0, zp);
  return Status::success();
}

} // namespace

void registerQuantizeKernels(KernelRegistry &r) {
  r.add("quantize", {inferQuantize, runQuantize});
  r.add("dequantize", {inferDequantize, runDequantize});
  r.add("dynamic_quantize_linear", {inferDynamicQuantize, runDynamicQuantize});
}

} // namespace mlcc::ref::misc
