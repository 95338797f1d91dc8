//===- Scatter.cpp - Scatter, ScatterElements and ScatterND ---------------===//
//
// The output is a copy of the data with the updates written (or combined by
// the reduction) at the indexed places. Updates apply in row-major order of
// the indices, so duplicates under "none" keep the last one, like the ONNX
// reference implementation. Out-of-range indices are errors.
//
//===----------------------------------------------------------------------===//

#include "ShapeKernelUtils.h"

namespace mlcc::ref {

using namespace shapek;

namespace {

enum class Reduction { None, Add, Mul, Max, Min };

Status getReduction(const char *op, const Attrs &attrs, Reduction &r) {
  std::string s = attrs.getString("reduction", "none");
  if (s == "none")
    r = Reduction::None;
  else if (s == "add")
    r = Reduction::Add;
  else if (s == "mul")
    r = Reduction::Mul;
  else if (s == "max")
    r = Reduction::Max;
  else if (s == "min")
    r = Reduction::Min;
  else
    return Status::error(op, ": unknown reduction '", s, "'");
  return Status::success();
}

/// Combines updates[u] into out[o]. "none" is a byte copy; the reductions
/// compute in double for floats and in int64 for integers (bool: add/max
/// act as or, mul/min as and).
void combine(Tensor &out, int64_t o, const Tensor &upd, int64_t u,
             Reduction r) {
  if (r == Reduction::None) {
    size_t elem = dtypeSize(out.dtype());
    std::memcpy(static_cast<uint8_t *>(out.raw()) + o * elem,
                static_cast<const uint8_t *>(upd.raw()) + u * elem, elem);
    return;
  }
  if (isFloatType(out.dtype())) {
    double a = out.getDouble(o), b = upd.getDouble(u);
    double v = r == Reduction::Add   ? a + b
               : r == Reduction::Mul ? a * b
               : r == Reduction::Max ? std::max(a, b)
                                     : std::min(a, b);
    out.setDouble(o, v);
    return;
  }
  int64_t a = out.getInt(o), b = upd.getInt(u);
  int64_t v = r == Reduction::Add   ? a + b
              : r == Reduction::Mul ? a * b
              : r == Reduction::Max ? std::max(a, b)
                                    : std::min(a, b);
  out.setInt(o, v);
}

Status checkIndexType(const char *op, DType t) {
  MLCC_CHECK(t == DType::I32 || t == DType::I64, op, ": indices have type ",
             dtypeName(t), ", expected int32 or int64");
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.scatter_elements, graph.scatter (its deprecated form)
//===----------------------------------------------------------------------===//

template <const char *Op>
Status inferScatterElements(const Attrs &attrs,
                            const std::vector<ValueInfo> &in,
                            std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs(Op, in, 3));
  MLCC_RETURN_IF_ERROR(checkIndexType(Op, in[1].dtype));
  Reduction red;
  MLCC_RETURN_IF_ERROR(getReduction(Op, attrs, red));
  const ValueInfo &data = in[0], &indices = in[1], &updates = in[2];
  int64_t rank = data.rank();
  MLCC_CHECK(updates.dtype == data.dtype, Op, ": updates have type ",
             dtypeName(updates.dtype), ", expected ", dtypeName(data.dtype));
  MLCC_CHECK(indices.rank() == rank && updates.rank() == rank, Op,
             ": data, indices and updates must have the same rank");
  int64_t axis = 0;
  Status s = normalizeAxis(attrs.getInt("axis", 0), rank, axis);
  MLCC_CHECK(s.ok(), Op, ": ", s.message());
  for (int64_t d = 0; d < rank; ++d) {
    int64_t di = indices.shape[d], du = updates.shape[d], dd = data.shape[d];
    MLCC_CHECK(isDyn(di) || isDyn(du) || di == du, Op, ": indices shape ",
               shapeToString(indices.shape), " differs from updates shape ",
               shapeToString(updates.shape));
    MLCC_CHECK(d == axis || isDyn(di) || isDyn(dd) || di <= dd, Op,
               ": indices shape ", shapeToString(indices.shape),
               " exceeds data shape ", shapeToString(data.shape),
               " outside the axis");
  }
  out[0].dtype = data.dtype;
  out[0].shape = data.shape;
  return Status::success();
}

template <const char *Op>
Status runScatterElements(const Attrs &attrs, const std::vector<Tensor> &in,
                          std::vector<Tensor> &out) {
  std::vector<ValueInfo> info(1);
  MLCC_RETURN_IF_ERROR(
      inferConcrete(inferScatterElements<Op>, attrs, in, info));
  const Tensor &data = in[0], &indices = in[1], &updates = in[2];
  Reduction red;
  MLCC_RETURN_IF_ERROR(getReduction(Op, attrs, red));
  int64_t axis = 0;
  MLCC_RETURN_IF_ERROR(
      normalizeAxis(attrs.getInt("axis", 0), data.rank(), axis));
  Tensor y = data.clone();
  std::vector<int64_t> strides = stridesOf(data.shape());
  Status status = Status::success();
  forEachIndex(indices.shape(), [&](const std::vector<int64_t> &pos,
                                    int64_t linear) {
    if (status.failed())
      return;
    int64_t at = 0;
    status = normalizeIndex(Op, indices.getInt(linear), data.dim(axis), at);
    if (status.failed())
      return;
    int64_t offset = 0;
    for (size_t d = 0; d < pos.size(); ++d)
      offset += (static_cast<int64_t>(d) == axis ? at : pos[d]) * strides[d];
    combine(y, offset, updates, linear, red);
  });
  MLCC_RETURN_IF_ERROR(status);
  out[0] = y;
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.scatter_nd
//===----------------------------------------------------------------------===//

Status inferScatterND(const Attrs &attrs, const std::vector<ValueInfo> &in,
                      std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("scatter_nd", in, 3));
  MLCC_CHECK(in[1].dtype == DType::I64, "scatter_nd: indices have type ",
             dtypeName(in[1].dtype), ", expected int64");
  Reduction red;
  MLCC_RETURN_IF_ERROR(getReduction("scatter_nd", attrs, red));
  const Shape &ds = in[0].shape, &is = in[1].shape, &us = in[2].shape;
  int64_t r = in[0].rank(), q = in[1].rank();
  MLCC_CHECK(in[2].dtype == in[0].dtype, "scatter_nd: updates have type ",
             dtypeName(in[2].dtype), ", expected ", dtypeName(in[0].dtype));
  MLCC_CHECK(r >= 1 && q >= 1, "scatter_nd: data and indices need rank >= 1");
  int64_t k = is[q - 1];
  MLCC_CHECK(!isDyn(k), "scatter_nd: the last dim of indices must be known");
  MLCC_CHECK(k >= 1 && k <= r, "scatter_nd: index tuples of length ", k,
             " for data of rank ", r);
  // updates.shape must be indices.shape[:-1] + data.shape[k:].
  Shape want(is.begin(), is.end() - 1);
  want.insert(want.end(), ds.begin() + k, ds.end());
  bool match = want.size() == us.size();
  for (size_t i = 0; match && i < us.size(); ++i)
    match = isDyn(want[i]) || isDyn(us[i]) || want[i] == us[i];
  MLCC_CHECK(match, "scatter_nd: updates have shape ", shapeToString(us),
             ", expected ", shapeToString(want));
  out[0].dtype = in[0].dtype;
  out[0].shape = ds;
  return Status::success();
}

Status runScatterND(const Attrs &attrs, const std::vector<Tensor> &in,
                    std::vector<Tensor> &out) {
  std::vector<ValueInfo> info(1);
  MLCC_RETURN_IF_ERROR(inferConcrete(inferScatterND, attrs, in, info));
  const Tensor &data = in[0], &indices = in[1], &updates = in[2];
  Reduction red;
  MLCC_RETURN_IF_ERROR(getReduction("scatter_nd", attrs, red));
  const Shape &ds = data.shape();
  int64_t k = indices.dim(indices.rank() - 1);
  int64_t tuples = indices.numel() / k;
  int64_t block = productOf(ds, k, ds.size());
  std::vector<int64_t> strides = stridesOf(ds);
  Tensor y = data.clone();
  const auto *idx = indices.data<int64_t>();
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t at = 0;
      MLCC_RETURN_IF_ERROR(normalizeIndex("scatter_nd", *idx++, ds[j], at));
      offset += at * strides[j];
    }
    for (int64_t e = 0; e < block; ++e)
      combine(y, offset + e, updates, t * block + e, red);
  }
  out[0] = y;
  return Status::success();
}

constexpr char kScatter[] = "scatter";
constexpr char kScatterElements[] = "scatter_elements";

} // namespace

void shapek::registerScatterKernels(KernelRegistry &r) {
  r.add("scatter",
        {inferScatterElements<kScatter>, runScatterElements<kScatter>});
  r.add("scatter_elements", {inferScatterElements<kScatterElements>,
                             runScatterElements<kScatterElements>});
  r.add("scatter_nd", {inferScatterND, runScatterND});
}

} // namespace mlcc::ref
