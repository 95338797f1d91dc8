//===- Shape.cpp - Reshape-like ops and shape producers -------------------===//
//
// Views (reshape, flatten, squeeze, unsqueeze) share the input's storage
// through Tensor::reshaped. Shape producers (shape, size, constant_of_shape,
// range, eye_like) are what constant folding of shape chains runs on, so
// their shape helpers read shape-like operands whenever their values are
// known.
//
//===----------------------------------------------------------------------===//

#include "ShapeKernelUtils.h"

#include <cmath>

namespace mlcc::ref {
namespace shapek {

Status inferConcrete(ShapeFn fn, const Attrs &attrs,
                     const std::vector<Tensor> &inputs,
                     std::vector<ValueInfo> &outputs) {
  MLCC_RETURN_IF_ERROR(fn(attrs, infosOf(inputs), outputs));
  for (size_t i = 0; i < outputs.size(); ++i)
    for (int64_t d : outputs[i].shape)
      MLCC_CHECK(d >= 0, "output ", i, " has unresolved shape ",
                 shapeToString(outputs[i].shape));
  return Status::success();
}


} // namespace shapek

using namespace shapek;

namespace {

/// Shared run function of the view ops: the ShapeFn gives the new shape, the
/// output aliases the input's storage.
template <ShapeFn Infer>
Status runView(const Attrs &attrs, const std::vector<Tensor> &inputs,
               std::vector<Tensor> &outputs) {
  std::vector<ValueInfo> out(outputs.size());
  MLCC_RETURN_IF_ERROR(inferConcrete(Infer, attrs, inputs, out));
  outputs[0] = inputs[0].reshaped(out[0].shape);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.reshape
//===----------------------------------------------------------------------===//

Status inferReshape(const Attrs &attrs, const std::vector<ValueInfo> &in,
                    std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("reshape", in, 2));
  MLCC_CHECK(isIntegerType(in[1].dtype), "reshape: shape has type ",
             dtypeName(in[1].dtype), ", expected an integer type");
  const Shape &src = in[0].shape;
  bool allowZero = attrs.getInt("allowzero", 0) != 0;
  out[0].dtype = in[0].dtype;
  std::vector<int64_t> target;
  if (!constInts(in[1], target)) {
    // Target unknown: only its length, hence the rank, may be known.
    int64_t len = 0;
    MLCC_RETURN_IF_ERROR(rankOperandLength("reshape", "shape", in[1], len));
    out[0].shape.assign(len, kDynamic);
    return Status::success();
  }
  Shape shape(target.size());
  int64_t inferAt = -1, known = 1;
  bool knownDynamic = false;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == -1) {
      MLCC_CHECK(inferAt < 0, "reshape: more than one -1 in the shape");
      inferAt = static_cast<int64_t>(i);
      continue;
    }
    MLCC_CHECK(d >= 0, "reshape: invalid dimension ", d, " in the shape");
    if (d == 0 && !allowZero) {
      MLCC_CHECK(i < src.size(), "reshape: shape[", i,
                 "] = 0 copies an input dimension, but the input has rank ",
                 src.size());
      d = src[i];
    }
    shape[i] = d;
    if (isDyn(d))
      knownDynamic = true;
    else
      MLCC_CHECK(mulDims(known, d, known), "reshape: the dims of shape ",
                 shapeToString(target), " multiply past int64");
  }
  int64_t total = productOf(src, 0, src.size());
  if (inferAt >= 0) {
    MLCC_CHECK(!(allowZero && known == 0),
               "reshape: -1 together with a 0 dimension under allowzero");
    if (known == 0)
      shape[inferAt] = 0;
    else if (total == kDynamic || knownDynamic)
      shape[inferAt] = kDynamic;
    else {
      MLCC_CHECK(total % known == 0, "reshape: cannot reshape ",
                 shapeToString(src), " to ", shapeToString(shape));
      shape[inferAt] = total / known;
    }
  } else if (total != kDynamic && !knownDynamic) {
    MLCC_CHECK(total == known, "reshape: cannot reshape ", shapeToString(src),
               " (", total, " elements) to ", shapeToString(shape));
  }
  out[0].shape = std::move(shape);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.flatten
//===----------------------------------------------------------------------===//

Status inferFlatten(const Attrs &attrs, const std::vector<ValueInfo> &in,
                    std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("flatten", in, 1));
  int64_t rank = in[0].rank();
  int64_t axis = attrs.getInt("axis", 1);
  // The axis may equal the rank here (everything in the first dim).
  MLCC_CHECK(axis >= -rank && axis <= rank, "flatten: axis ", axis,
             " is out of range for rank ", rank);
  if (axis < 0)
    axis += rank;
  out[0].dtype = in[0].dtype;
  out[0].shape = {productOf(in[0].shape, 0, axis),
                  productOf(in[0].shape, axis, rank)};
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.squeeze
//===----------------------------------------------------------------------===//

Status inferSqueeze(const Attrs &, const std::vector<ValueInfo> &in,
                    std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("squeeze", in, 1));
  const Shape &src = in[0].shape;
  int64_t rank = in[0].rank();
  out[0].dtype = in[0].dtype;
  const ValueInfo *axesIn = optionalInput(in, 1);
  std::vector<int64_t> axes;
  if (!axesIn) {
    // Squeeze every 1; a dynamic dim might be 1, so the rank is unknown.
    for (int64_t d : src) {
      MLCC_CHECK(!isDyn(d), "squeeze: without axes, the dynamic dims of ",
                 shapeToString(src), " leave the output rank unknown");
      if (d != 1)
        out[0].shape.push_back(d);
    }
    return Status::success();
  }
  if (!constInts(*axesIn, axes)) {
    int64_t len = operandLength(*axesIn);
    MLCC_CHECK(len != kDynamic,
               "squeeze: axes of unknown length leave the rank unknown");
    MLCC_CHECK(len <= rank, "squeeze: ", len, " axes for rank ", rank);
    out[0].shape.assign(rank - len, kDynamic);
    return Status::success();
  }
  std::vector<bool> drop(rank, false);
  for (int64_t a : axes) {
    int64_t axis = 0;
    MLCC_RETURN_IF_ERROR(normalizeAxis(a, rank, axis));
    MLCC_CHECK(!drop[axis], "squeeze: axis ", a, " is repeated");
    MLCC_CHECK(isDyn(src[axis]) || src[axis] == 1, "squeeze: dimension ", axis,
               " of ", shapeToString(src), " is not 1");
    drop[axis] = true;
  }
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i])
      out[0].shape.push_back(src[i]);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.unsqueeze
//===----------------------------------------------------------------------===//

Status inferUnsqueeze(const Attrs &, const std::vector<ValueInfo> &in,
                      std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("unsqueeze", in, 2));
  const Shape &src = in[0].shape;
  out[0].dtype = in[0].dtype;
  std::vector<int64_t> axes;
  if (!constInts(in[1], axes)) {
    int64_t len = 0;
    MLCC_RETURN_IF_ERROR(rankOperandLength("unsqueeze", "axes", in[1], len));
    out[0].shape.assign(src.size() + len, kDynamic);
    return Status::success();
  }
  // Axes refer to the output, whose rank is the input's plus one per axis.
  int64_t rank = static_cast<int64_t>(src.size() + axes.size());
  std::vector<bool> inserted(rank, false);
  for (int64_t a : axes) {
    int64_t axis = 0;
    MLCC_RETURN_IF_ERROR(normalizeAxis(a, rank, axis));
    MLCC_CHECK(!inserted[axis], "unsqueeze: axis ", a, " is repeated");
    inserted[axis] = true;
  }
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i)
    out[0].shape.push_back(inserted[i] ? 1 : src[next++]);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.shape
//===----------------------------------------------------------------------===//

/// The [start, end) range of dims that Shape reports, clamped per spec.
void shapeRange(const Attrs &attrs, int64_t rank, int64_t &start,
                int64_t &end) {
  start = attrs.getInt("start", 0);
  end = attrs.getInt("end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
}

Status inferShape(const Attrs &attrs, const std::vector<ValueInfo> &in,
                  std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("shape", in, 1));
  int64_t start, end;
  shapeRange(attrs, in[0].rank(), start, end);
  out[0].dtype = DType::I64;
  out[0].shape = {std::max<int64_t>(end - start, 0)};
  return Status::success();
}

/// Reads only the input's shape, never its data: the constant folder may
/// run it on a value whose dims are static but whose data is unknown.
Status runShape(const Attrs &attrs, const std::vector<Tensor> &in,
                std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferShape, attrs, in, out));
  int64_t start, end;
  shapeRange(attrs, in[0].rank(), start, end);
  for (int64_t i = start; i < end; ++i)
    out[0].data<int64_t>()[i - start] = in[0].dim(i);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.size
//===----------------------------------------------------------------------===//

Status inferSize(const Attrs &, const std::vector<ValueInfo> &in,
                 std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("size", in, 1));
  out[0].dtype = DType::I64;
  out[0].shape = {};
  return Status::success();
}

Status runSize(const Attrs &attrs, const std::vector<Tensor> &in,
               std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferSize, attrs, in, out));
  out[0].data<int64_t>()[0] = in[0].numel();
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.constant_of_shape
//===----------------------------------------------------------------------===//

Status inferConstantOfShape(const Attrs &attrs,
                            const std::vector<ValueInfo> &in,
                            std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("constant_of_shape", in, 1));
  MLCC_CHECK(isIntegerType(in[0].dtype), "constant_of_shape: input has type ",
             dtypeName(in[0].dtype), ", expected int64");
  Tensor value = attrs.getTensor("value");
  if (value.present())
    MLCC_CHECK(value.numel() == 1,
               "constant_of_shape: value must hold one element, it has ",
               value.numel());
  out[0].dtype = value.present() ? value.dtype() : DType::F32;
  std::vector<int64_t> dims;
  if (!constInts(in[0], dims)) {
    int64_t len = 0;
    MLCC_RETURN_IF_ERROR(
        rankOperandLength("constant_of_shape", "shape", in[0], len));
    out[0].shape.assign(len, kDynamic);
    return Status::success();
  }
  for (int64_t d : dims)
    MLCC_CHECK(d >= 0, "constant_of_shape: negative dimension ", d);
  out[0].shape = dims;
  return Status::success();
}

Status runConstantOfShape(const Attrs &attrs, const std::vector<Tensor> &in,
                          std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferConstantOfShape, attrs, in, out));
  Tensor value = attrs.getTensor("value");
  if (!value.present())
    return Status::success(); // float zeros, as allocated
  size_t size = dtypeSize(value.dtype());
  auto *dst = static_cast<uint8_t *>(out[0].raw());
  for (int64_t i = 0; i < out[0].numel(); ++i)
    std::memcpy(dst + i * size, value.raw(), size);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.range
//===----------------------------------------------------------------------===//

/// Element count of Range: max(ceil((limit - start) / delta), 0).
Status rangeCount(DType t, const Tensor &start, const Tensor &limit,
                  const Tensor &delta, int64_t &n) {
  if (isFloatType(t)) {
    double s = start.getDouble(0), l = limit.getDouble(0),
           d = delta.getDouble(0);
    MLCC_CHECK(d != 0 && std::isfinite(s) && std::isfinite(l) &&
                   std::isfinite(d),
               "range: start, limit and delta must be finite, delta non-zero");
    MLCC_CHECK(floorToDim(std::ceil((l - s) / d), n),
               "range: the element count overflows int64");
    n = std::max<int64_t>(n, 0);
  } else {
    int64_t s = start.getInt(0), l = limit.getInt(0), d = delta.getInt(0);
    MLCC_CHECK(d != 0, "range: delta is zero");
    int64_t span = 0;
    MLCC_CHECK(!__builtin_sub_overflow(l, s, &span),
               "range: limit - start overflows int64");
    // Ceiling division that also rounds the right way for negative values.
    int64_t q = span / d;
    if (q * d != span && ((span > 0) == (d > 0)))
      ++q;
    n = std::max<int64_t>(q, 0);
  }
  return Status::success();
}

Status inferRange(const Attrs &, const std::vector<ValueInfo> &in,
                  std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("range", in, 3));
  for (int i = 0; i < 3; ++i) {
    MLCC_CHECK(in[i].dtype == in[0].dtype, "range: input ", i, " has type ",
               dtypeName(in[i].dtype), ", expected ", dtypeName(in[0].dtype));
    MLCC_CHECK(operandLength(in[i]) == 1 || operandLength(in[i]) == kDynamic,
               "range: input ", i, " is not a scalar");
  }
  out[0].dtype = in[0].dtype;
  int64_t n = kDynamic;
  if (in[0].value && in[1].value && in[2].value)
    MLCC_RETURN_IF_ERROR(
        rangeCount(in[0].dtype, *in[0].value, *in[1].value, *in[2].value, n));
  out[0].shape = {n};
  return Status::success();
}

Status runRange(const Attrs &attrs, const std::vector<Tensor> &in,
                std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferRange, attrs, in, out));
  Tensor &y = out[0];
  if (isFloatType(y.dtype())) {
    double s = in[0].getDouble(0), d = in[2].getDouble(0);
    for (int64_t i = 0; i < y.numel(); ++i)
      y.setDouble(i, s + static_cast<double>(i) * d);
  } else {
    int64_t s = in[0].getInt(0), d = in[2].getInt(0);
    for (int64_t i = 0; i < y.numel(); ++i)
      y.setInt(i, s + i * d);
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.eye_like
//===----------------------------------------------------------------------===//

Status inferEyeLike(const Attrs &attrs, const std::vector<ValueInfo> &in,
                    std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("eye_like", in, 1));
  MLCC_CHECK(in[0].rank() == 2, "eye_like: input has rank ", in[0].rank(),
             ", expected rank 2");
  DType t = in[0].dtype;
  if (attrs.has("dtype")) {
    t = dtypeFromOnnxEnum(attrs.getInt("dtype"));
    MLCC_CHECK(t != DType::Undefined, "eye_like: unsupported dtype ",
               attrs.getInt("dtype"));
  }
  out[0].dtype = t;
  out[0].shape = in[0].shape;
  return Status::success();
}

Status runEyeLike(const Attrs &attrs, const std::vector<Tensor> &in,
                  std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferEyeLike, attrs, in, out));
  int64_t rows = out[0].dim(0), cols = out[0].dim(1);
  int64_t k = attrs.getInt("k", 0);
  // Ones at (i, i + k); everything else stays zero from allocation.
  for (int64_t i = 0; i < rows; ++i)
    if (i + k >= 0 && i + k < cols)
      out[0].setDouble(i * cols + i + k, 1.0);
  return Status::success();
}

} // namespace

void registerShapeKernels(KernelRegistry &r) {
  r.add("reshape", {inferReshape, runView<inferReshape>});
  r.add("flatten", {inferFlatten, runView<inferFlatten>});
  r.add("squeeze", {inferSqueeze, runView<inferSqueeze>});
  r.add("unsqueeze", {inferUnsqueeze, runView<inferUnsqueeze>});
  r.add("shape", {inferShape, runShape});
  r.add("size", {inferSize, runSize});
  r.add("constant_of_shape", {inferConstantOfShape, runConstantOfShape});
  r.add("range", {inferRange, runRange});
  r.add("eye_like", {inferEyeLike, runEyeLike});
  shapek::registerLayoutKernels(r);
  shapek::registerMovementKernels(r);
}

} // namespace mlcc::ref
