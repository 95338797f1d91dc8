//===- Gather.cpp - Gathers and data-dependent selections -----------------===//
//
// gather, gather_elements, gather_nd, one_hot, compress and nonzero. Indices
// follow the spec: negative values count from the end, anything outside
// [-dim, dim) is an error (never a wild read). Elements move as bytes so
// every dtype works.
//
//===----------------------------------------------------------------------===//

#include "ShapeKernelUtils.h"

namespace mlcc::ref {

using namespace shapek;

namespace {

Status checkIndexType(const char *op, DType t) {
  MLCC_CHECK(t == DType::I32 || t == DType::I64, op, ": indices have type ",
             dtypeName(t), ", expected int32 or int64");
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.gather
//===----------------------------------------------------------------------===//

Status inferGather(const Attrs &attrs, const std::vector<ValueInfo> &in,
                   std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("gather", in, 2));
  MLCC_RETURN_IF_ERROR(checkIndexType("gather", in[1].dtype));
  int64_t axis = 0;
  Status s = normalizeAxis(attrs.getInt("axis", 0), in[0].rank(), axis);
  MLCC_CHECK(s.ok(), "gather: ", s.message());
  // data[:axis] + indices.shape + data[axis+1:]
  const Shape &d = in[0].shape;
  Shape shape(d.begin(), d.begin() + axis);
  shape.insert(shape.end(), in[1].shape.begin(), in[1].shape.end());
  shape.insert(shape.end(), d.begin() + axis + 1, d.end());
  out[0].dtype = in[0].dtype;
  out[0].shape = std::move(shape);
  return Status::success();
}

Status runGather(const Attrs &attrs, const std::vector<Tensor> &in,
                 std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferGather, attrs, in, out));
  const Tensor &data = in[0], &indices = in[1];
  int64_t axis = 0;
  MLCC_RETURN_IF_ERROR(
      normalizeAxis(attrs.getInt("axis", 0), data.rank(), axis));
  int64_t dim = data.dim(axis);
  int64_t outer = productOf(data.shape(), 0, axis);
  size_t block =
      productOf(data.shape(), axis + 1, data.rank()) * dtypeSize(data.dtype());
  int64_t n = indices.numel();
  // Normalise all indices first so that a bad one fails before any copy.
  std::vector<int64_t> idx(n);
  for (int64_t i = 0; i < n; ++i)
    MLCC_RETURN_IF_ERROR(
        normalizeIndex("gather", indices.getInt(i), dim, idx[i]));
  auto *src = static_cast<const uint8_t *>(data.raw());
  auto *dst = static_cast<uint8_t *>(out[0].raw());
  if (block == 0)
    return Status::success();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(dst, src + (o * dim + idx[i]) * block, block);
      dst += block;
    }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.gather_elements
//===----------------------------------------------------------------------===//

Status inferGatherElements(const Attrs &attrs, const std::vector<ValueInfo> &in,
                           std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("gather_elements", in, 2));
  MLCC_RETURN_IF_ERROR(checkIndexType("gather_elements", in[1].dtype));
  int64_t rank = in[0].rank();
  MLCC_CHECK(in[1].rank() == rank, "gather_elements: indices have rank ",
             in[1].rank(), ", expected the data's rank ", rank);
  int64_t axis = 0;
  Status s = normalizeAxis(attrs.getInt("axis", 0), rank, axis);
  MLCC_CHECK(s.ok(), "gather_elements: ", s.message());
  // Off the axis, an index walks the data's own dims, so it must fit.
  for (int64_t d = 0; d < rank; ++d) {
    int64_t di = in[1].shape[d], dd = in[0].shape[d];
    MLCC_CHECK(d == axis || isDyn(di) || isDyn(dd) || di <= dd,
               "gather_elements: indices shape ", shapeToString(in[1].shape),
               " exceeds data shape ", shapeToString(in[0].shape),
               " outside the axis");
  }
  out[0].dtype = in[0].dtype;
  out[0].shape = in[1].shape;
  return Status::success();
}

Status runGatherElements(const Attrs &attrs, const std::vector<Tensor> &in,
                         std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferGatherElements, attrs, in, out));
  const Tensor &data = in[0], &indices = in[1];
  int64_t axis = 0;
  MLCC_RETURN_IF_ERROR(
      normalizeAxis(attrs.getInt("axis", 0), data.rank(), axis));
  std::vector<int64_t> strides = stridesOf(data.shape());
  size_t elem = dtypeSize(data.dtype());
  auto *src = static_cast<const uint8_t *>(data.raw());
  auto *dst = static_cast<uint8_t *>(out[0].raw());
  Status status = Status::success();
  forEachIndex(indices.shape(), [&](const std::vector<int64_t> &pos,
                                    int64_t linear) {
    if (status.failed())
      return;
    int64_t at = 0;
    status = normalizeIndex("gather_elements", indices.getInt(linear),
                            data.dim(axis), at);
    if (status.failed())
      return;
    int64_t offset = 0;
    for (size_t d = 0; d < pos.size(); ++d)
      offset += (static_cast<int64_t>(d) == axis ? at : pos[d]) * strides[d];
    std::memcpy(dst + linear * elem, src + offset * elem, elem);
  });
  return status;
}

//===----------------------------------------------------------------------===//
// graph.gather_nd
//===----------------------------------------------------------------------===//

Status inferGatherND(const Attrs &attrs, const std::vector<ValueInfo> &in,
                     std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("gather_nd", in, 2));
  MLCC_CHECK(in[1].dtype == DType::I64, "gather_nd: indices have type ",
             dtypeName(in[1].dtype), ", expected int64");
  const Shape &ds = in[0].shape, &is = in[1].shape;
  int64_t r = in[0].rank(), q = in[1].rank();
  int64_t b = attrs.getInt("batch_dims", 0);
  MLCC_CHECK(r >= 1 && q >= 1, "gather_nd: data and indices need rank >= 1");
  MLCC_CHECK(b >= 0 && b < std::min(q, r), "gather_nd: batch_dims ", b,
             " must be below both ranks (", r, ", ", q, ")");
  int64_t k = is[q - 1];
  MLCC_CHECK(!isDyn(k), "gather_nd: the last dim of indices must be known");
  MLCC_CHECK(k >= 1 && k <= r - b, "gather_nd: index tuples of length ", k,
             " for data of rank ", r, " with ", b, " batch dims");
  for (int64_t d = 0; d < b; ++d)
    MLCC_CHECK(isDyn(ds[d]) || isDyn(is[d]) || ds[d] == is[d],
               "gather_nd: batch dim ", d, " differs: data ", shapeToString(ds),
               ", indices ", shapeToString(is));
  // indices.shape[:-1] + data.shape[b+k:]
  Shape shape(is.begin(), is.end() - 1);
  shape.insert(shape.end(), ds.begin() + b + k, ds.end());
  out[0].dtype = in[0].dtype;
  out[0].shape = std::move(shape);
  return Status::success();
}

Status runGatherND(const Attrs &attrs, const std::vector<Tensor> &in,
                   std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferGatherND, attrs, in, out));
  const Tensor &data = in[0], &indices = in[1];
  int64_t b = attrs.getInt("batch_dims", 0);
  int64_t k = indices.dim(indices.rank() - 1);
  const Shape &ds = data.shape();
  std::vector<int64_t> strides = stridesOf(ds);
  int64_t batches = productOf(ds, 0, b);
  int64_t batchStride = productOf(ds, b, ds.size());
  int64_t tuples = batches == 0 ? 0 : indices.numel() / k / batches;
  size_t elem = dtypeSize(data.dtype());
  size_t block = productOf(ds, b + k, ds.size()) * elem;
  auto *src = static_cast<const uint8_t *>(data.raw());
  auto *dst = static_cast<uint8_t *>(out[0].raw());
  const auto *idx = indices.data<int64_t>();
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t offset = bi * batchStride;
      for (int64_t j = 0; j < k; ++j) {
        int64_t at = 0;
        MLCC_RETURN_IF_ERROR(
            normalizeIndex("gather_nd", *idx++, ds[b + j], at));
        offset += at * strides[b + j];
      }
      if (block)
        std::memcpy(dst, src + offset * elem, block);
      dst += block;
    }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.one_hot
//===----------------------------------------------------------------------===//

Status inferOneHot(const Attrs &attrs, const std::vector<ValueInfo> &in,
                   std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("one_hot", in, 3));
  MLCC_CHECK(operandLength(in[1]) == 1 || operandLength(in[1]) == kDynamic,
             "one_hot: depth must be a scalar");
  MLCC_CHECK(operandLength(in[2]) == 2 || operandLength(in[2]) == kDynamic,
             "one_hot: values must hold [off_value, on_value]");
  int64_t rank = in[0].rank() + 1;
  int64_t axis = 0;
  Status s = normalizeAxis(attrs.getInt("axis", -1), rank, axis);
  MLCC_CHECK(s.ok(), "one_hot: ", s.message());
  int64_t depth = kDynamic;
  if (in[1].value) {
    // Depth may be of any numeric type; it is truncated to an integer.
    depth = static_cast<int64_t>(in[1].value->getDouble(0));
    MLCC_CHECK(depth >= 1, "one_hot: depth ", depth, " must be positive");
  }
  out[0].dtype = in[2].dtype;
  out[0].shape = in[0].shape;
  out[0].shape.insert(out[0].shape.begin() + axis, depth);
  return Status::success();
}

Status runOneHot(const Attrs &attrs, const std::vector<Tensor> &in,
                 std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferOneHot, attrs, in, out));
  Tensor &y = out[0];
  int64_t axis = 0;
  MLCC_RETURN_IF_ERROR(normalizeAxis(attrs.getInt("axis", -1), y.rank(), axis));
  int64_t depth = y.dim(axis);
  // Output viewed as [outer, depth, inner]; index element (o, i) turns on
  // position (o, indices[o, i], i).
  int64_t inner = productOf(y.shape(), axis + 1, y.rank());
  int64_t outer = productOf(y.shape(), 0, axis);
  size_t elem = dtypeSize(y.dtype());
  const auto *values = static_cast<const uint8_t *>(in[2].raw());
  auto *dst = static_cast<uint8_t *>(y.raw());
  for (int64_t i = 0; i < y.numel(); ++i)
    std::memcpy(dst + i * elem, values, elem);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto v = static_cast<int64_t>(in[0].getDouble(o * inner + i));
      if (v < -depth || v >= depth)
        continue; // out of range: all off, per spec
      if (v < 0)
        v += depth;
      std::memcpy(dst + ((o * depth + v) * inner + i) * elem, values + elem,
                  elem);
    }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.compress
//===----------------------------------------------------------------------===//

Status inferCompress(const Attrs &attrs, const std::vector<ValueInfo> &in,
                     std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("compress", in, 2));
  MLCC_CHECK(in[1].dtype == DType::Bool && in[1].rank() == 1,
             "compress: condition must be a 1-D bool tensor");
  const Shape &s = in[0].shape;
  int64_t dim = 0;
  out[0].dtype = in[0].dtype;
  if (attrs.has("axis")) {
    int64_t axis = 0;
    Status st = normalizeAxis(attrs.getInt("axis"), in[0].rank(), axis);
    MLCC_CHECK(st.ok(), "compress: ", st.message());
    out[0].shape = s;
    dim = s[axis];
  } else {
    out[0].shape = {kDynamic};
    dim = productOf(s, 0, s.size());
  }
  // The selected count depends on the condition's data.
  int64_t count = kDynamic;
  if (in[1].value && !isDyn(dim)) {
    const Tensor &c = *in[1].value;
    count = 0;
    for (int64_t i = 0; i < c.numel(); ++i) {
      if (!c.data<bool>()[i])
        continue;
      MLCC_CHECK(i < dim, "compress: condition selects index ", i,
                 " beyond the dimension of size ", dim);
      ++count;
    }
  }
  if (attrs.has("axis")) {
    int64_t axis = 0;
    MLCC_RETURN_IF_ERROR(
        normalizeAxis(attrs.getInt("axis"), in[0].rank(), axis));
    out[0].shape[axis] = count;
  } else {
    out[0].shape[0] = count;
  }
  return Status::success();
}

Status runCompress(const Attrs &attrs, const std::vector<Tensor> &in,
                   std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferCompress, attrs, in, out));
  const Tensor &x = in[0], &cond = in[1];
  Shape shape = x.shape();
  int64_t axis = 0;
  if (attrs.has("axis"))
    MLCC_RETURN_IF_ERROR(normalizeAxis(attrs.getInt("axis"), x.rank(), axis));
  else
    shape = {x.numel()};
  // Per outer index, the selected blocks along the axis are copied in order.
  int64_t dim = shape[axis];
  int64_t outer = productOf(shape, 0, axis);
  size_t block =
      productOf(shape, axis + 1, shape.size()) * dtypeSize(x.dtype());
  auto *src = static_cast<const uint8_t *>(x.raw());
  auto *dst = static_cast<uint8_t *>(out[0].raw());
  int64_t n = std::min(dim, cond.numel());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < n; ++i)
      if (cond.data<bool>()[i]) {
        std::memcpy(dst, src + (o * dim + i) * block, block);
        dst += block;
      }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.nonzero
//===----------------------------------------------------------------------===//

Status inferNonZero(const Attrs &, const std::vector<ValueInfo> &in,
                    std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("nonzero", in, 1));
  out[0].dtype = DType::I64;
  // [rank, count]; the count depends on the data.
  out[0].shape = {in[0].rank(), kDynamic};
  return Status::success();
}

Status runNonZero(const Attrs &attrs, const std::vector<Tensor> &in,
                  std::vector<Tensor> &out) {
  std::vector<ValueInfo> info(1);
  MLCC_RETURN_IF_ERROR(inferNonZero(attrs, infosOf(in), info));
  const Tensor &x = in[0];
  size_t elem = dtypeSize(x.dtype());
  const auto *p = static_cast<const uint8_t *>(x.raw());
  // Any set bit is non-zero, except -0.0 for the float types.
  auto isNonZero = [&](int64_t i) {
    if (isFloatType(x.dtype()))
      return x.getDouble(i) != 0.0;
    for (size_t b = 0; b < elem; ++b)
      if (p[i * elem + b])
        return true;
    return false;
  };
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x.numel(); ++i)
    if (isNonZero(i))
      hits.push_back(i);
  int64_t rank = x.rank(), count = static_cast<int64_t>(hits.size());
  // A scalar gives shape [0, count] per spec.
  Tensor y(DType::I64, {rank, count});
  std::vector<int64_t> strides = stridesOf(x.shape());
  for (int64_t j = 0; j < count; ++j) {
    int64_t rest = hits[j];
    for (int64_t d = 0; d < rank; ++d) {
      y.data<int64_t>()[d * count + j] = rest / strides[d];
      rest %= strides[d];
    }
  }
  out[0] = y;
  return Status::success();
}

} // namespace

void registerIndexingKernels(KernelRegistry &r) {
  r.add("gather", {inferGather, runGather});
  r.add("gather_elements", {inferGatherElements, runGatherElements});
  r.add("gather_nd", {inferGatherND, runGatherND});
  r.add("one_hot", {inferOneHot, runOneHot});
  r.add("compress", {inferCompress, runCompress});
  r.add("nonzero", {inferNonZero, runNonZero});
  shapek::registerScatterKernels(r);
  shapek::registerSortKernels(r);
}

} // namespace mlcc::ref
