//===- Movement.cpp - Concat, split, slice, pad and friends ---------------===//
//
// Ops that move blocks of the input to new places without arithmetic. Data
// moves as bytes (memcpy of whole rows or of one element), so every dtype is
// served by the same code.
//
//===----------------------------------------------------------------------===//

#include "ShapeKernelUtils.h"

#include <limits>

namespace mlcc::ref {

using namespace shapek;

namespace {

//===----------------------------------------------------------------------===//
// graph.concat
//===----------------------------------------------------------------------===//

Status inferConcat(const Attrs &attrs, const std::vector<ValueInfo> &in,
                   std::vector<ValueInfo> &out) {
  MLCC_CHECK(!in.empty() && in[0].present(), "concat: no inputs");
  int64_t rank = in[0].rank();
  int64_t axis = 0;
  Status s = normalizeAxis(attrs.getInt("axis", 0), rank, axis);
  MLCC_CHECK(s.ok(), "concat: ", s.message());
  Shape shape = in[0].shape;
  shape[axis] = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const ValueInfo &x = in[i];
    MLCC_CHECK(x.present(), "concat: input ", i, " is missing");
    MLCC_CHECK(x.dtype == in[0].dtype, "concat: input ", i, " has type ",
               dtypeName(x.dtype), ", expected ", dtypeName(in[0].dtype));
    MLCC_CHECK(x.rank() == rank, "concat: input ", i, " has rank ", x.rank(),
               ", expected ", rank);
    for (int64_t d = 0; d < rank; ++d) {
      int64_t dim = x.shape[d];
      if (d == axis) {
        if (isDyn(shape[d]) || isDyn(dim))
          shape[d] = kDynamic;
        else
          MLCC_CHECK(addDims(shape[d], dim, shape[d]),
                     "concat: the sizes "
                     "along axis ",
                     axis, " add up past int64");
        continue;
      }
      if (isDyn(shape[d]))
        shape[d] = dim; // the first known size fixes the dim
      else
        MLCC_CHECK(isDyn(dim) || dim == shape[d], "concat: input ", i,
                   " has shape ", shapeToString(x.shape), ", unlike ",
                   shapeToString(in[0].shape), " outside axis ", axis);
    }
  }
  out[0].dtype = in[0].dtype;
  out[0].shape = std::move(shape);
  return Status::success();
}

Status runConcat(const Attrs &attrs, const std::vector<Tensor> &in,
                 std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferConcat, attrs, in, out));
  Tensor &y = out[0];
  int64_t axis = 0;
  MLCC_RETURN_IF_ERROR(normalizeAxis(attrs.getInt("axis", 0), y.rank(), axis));
  // Each input contributes, per outer index, one contiguous chunk of
  // dim(axis) * inner elements.
  int64_t outer = productOf(y.shape(), 0, axis);
  size_t elem = dtypeSize(y.dtype());
  size_t rowBytes = productOf(y.shape(), axis, y.rank()) * elem;
  auto *dst = static_cast<uint8_t *>(y.raw());
  size_t offset = 0;
  for (const Tensor &x : in) {
    size_t chunk = productOf(x.shape(), axis, x.rank()) * elem;
    auto *src = static_cast<const uint8_t *>(x.raw());
    if (chunk)
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(dst + o * rowBytes + offset, src + o * chunk, chunk);
    offset += chunk;
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.split
//===----------------------------------------------------------------------===//

Status inferSplit(const Attrs &attrs, const std::vector<ValueInfo> &in,
                  std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("split", in, 1));
  MLCC_CHECK(!out.empty(), "split: no outputs");
  int64_t axis = 0;
  Status s = normalizeAxis(attrs.getInt("axis", 0), in[0].rank(), axis);
  MLCC_CHECK(s.ok(), "split: ", s.message());
  int64_t dim = in[0].shape[axis];
  int64_t n = static_cast<int64_t>(out.size());
  std::vector<int64_t> sizes(n, kDynamic);
  if (const ValueInfo *split = optionalInput(in, 1)) {
    std::vector<int64_t> v;
    if (constInts(*split, v)) {
      MLCC_CHECK(static_cast<int64_t>(v.size()) == n, "split: ", v.size(),
                 " split sizes for ", n, " outputs");
      int64_t sum = 0;
      for (int64_t x : v) {
        MLCC_CHECK(x >= 0, "split: negative split size ", x);
        sum += x;
      }
      MLCC_CHECK(isDyn(dim) || sum == dim, "split: sizes sum to ", sum,
                 ", but the dimension is ", dim);
      sizes = v;
    }
  } else {
    // Equal parts (num_outputs of Split-18, or the result count); a
    // remainder shortens the last part.
    if (attrs.has("num_outputs"))
      MLCC_CHECK(attrs.getInt("num_outputs") == n, "split: num_outputs ",
                 attrs.getInt("num_outputs"), " but ", n, " results");
    if (!isDyn(dim)) {
      int64_t part = (dim + n - 1) / n;
      int64_t last = dim - part * (n - 1);
      MLCC_CHECK(last >= 0, "split: dimension ", dim, " cannot be split into ",
                 n, " parts");
      sizes.assign(n, part);
      sizes[n - 1] = last;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    out[i].dtype = in[0].dtype;
    out[i].shape = in[0].shape;
    out[i].shape[axis] = sizes[i];
  }
  return Status::success();
}

Status runSplit(const Attrs &attrs, const std::vector<Tensor> &in,
                std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferSplit, attrs, in, out));
  const Tensor &x = in[0];
  int64_t axis = 0;
  MLCC_RETURN_IF_ERROR(normalizeAxis(attrs.getInt("axis", 0), x.rank(), axis));
  int64_t outer = productOf(x.shape(), 0, axis);
  size_t elem = dtypeSize(x.dtype());
  size_t rowBytes = productOf(x.shape(), axis, x.rank()) * elem;
  auto *src = static_cast<const uint8_t *>(x.raw());
  size_t offset = 0;
  for (Tensor &y : out) {
    size_t chunk = productOf(y.shape(), axis, y.rank()) * elem;
    auto *dst = static_cast<uint8_t *>(y.raw());
    if (chunk)
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(dst + o * chunk, src + o * rowBytes + offset, chunk);
    offset += chunk;
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.slice
//===----------------------------------------------------------------------===//

/// Per-dim start, step and count of a slice (the whole dim by default).
struct SliceDims {
  std::vector<int64_t> start, step, count;
};

/// Clamps one axis' start/end as the spec says; `count` is the number of
/// elements taken.
void clampSlice(int64_t dim, int64_t start, int64_t end, int64_t step,
                int64_t &first, int64_t &count) {
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    count = end > start ? (end - start + step - 1) / step : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    count = start > end ? (start - end + (-step) - 1) / (-step) : 0;
  }
  first = start;
}

/// Resolves the slice operands. With `dims` dynamic or some operand not
/// constant, the affected counts are kDynamic.
Status resolveSlice(const std::vector<ValueInfo> &in, SliceDims &sd) {
  MLCC_RETURN_IF_ERROR(requireInputs("slice", in, 3));
  const Shape &shape = in[0].shape;
  int64_t rank = in[0].rank();
  for (size_t i = 1; i < in.size() && i < 5; ++i)
    if (in[i].present())
      MLCC_CHECK(isIntegerType(in[i].dtype), "slice: input ", i, " has type ",
                 dtypeName(in[i].dtype), ", expected int32 or int64");
  sd.start.assign(rank, 0);
  sd.step.assign(rank, 1);
  sd.count = shape;
  std::vector<int64_t> starts, ends, axes, steps;
  const ValueInfo *axesIn = optionalInput(in, 3);
  const ValueInfo *stepsIn = optionalInput(in, 4);
  // One start, end, axis and step per sliced axis, each axis at most once,
  // whether their values are known or not (the kernels loop over them).
  int64_t length = kDynamic;
  for (const ValueInfo *v : {&in[1], &in[2], axesIn, stepsIn}) {
    int64_t len = v ? operandLength(*v) : kDynamic;
    MLCC_CHECK(len == kDynamic || length == kDynamic || len == length,
               "slice: starts, ends, axes and steps of different lengths (",
               length, " and ", len, ")");
    length = len == kDynamic ? length : len;
  }
  MLCC_CHECK(length == kDynamic || length <= rank, "slice: ", length,
             " starts for rank ", rank);
  bool known = constInts(in[1], starts) && constInts(in[2], ends) &&
               (!axesIn || constInts(*axesIn, axes)) &&
               (!stepsIn || constInts(*stepsIn, steps));
  if (!known) {
    // Without the axes, any dim may be sliced; with them only those.
    if (axesIn && constInts(*axesIn, axes)) {
      for (int64_t a : axes) {
        int64_t axis = 0;
        MLCC_RETURN_IF_ERROR(normalizeAxis(a, rank, axis));
        sd.count[axis] = kDynamic;
      }
    } else {
      sd.count.assign(rank, kDynamic);
    }
    return Status::success();
  }
  size_t n = starts.size();
  if (!axesIn)
    for (size_t i = 0; i < n; ++i)
      axes.push_back(static_cast<int64_t>(i));
  if (!stepsIn)
    steps.assign(n, 1);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < n; ++i) {
    int64_t axis = 0;
    Status s = normalizeAxis(axes[i], rank, axis);
    MLCC_CHECK(s.ok(), "slice: ", s.message());
    MLCC_CHECK(!seen[axis], "slice: axis ", axes[i], " is repeated");
    seen[axis] = true;
    MLCC_CHECK(steps[i] != 0, "slice: step is 0 on axis ", axis);
    sd.step[axis] = steps[i];
    if (isDyn(shape[axis])) {
      sd.count[axis] = kDynamic;
      continue;
    }
    clampSlice(shape[axis], starts[i], ends[i], steps[i], sd.start[axis],
               sd.count[axis]);
  }
  return Status::success();
}

Status inferSlice(const Attrs &, const std::vector<ValueInfo> &in,
                  std::vector<ValueInfo> &out) {
  SliceDims sd;
  MLCC_RETURN_IF_ERROR(resolveSlice(in, sd));
  out[0].dtype = in[0].dtype;
  out[0].shape = sd.count;
  return Status::success();
}

Status runSlice(const Attrs &attrs, const std::vector<Tensor> &in,
                std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferSlice, attrs, in, out));
  SliceDims sd;
  MLCC_RETURN_IF_ERROR(resolveSlice(infosOf(in), sd));
  if (out[0].numel() == 0)
    return Status::success();
  // The slice is a strided view: offset to the first element, strides
  // scaled by the steps (negative for reversed axes).
  std::vector<int64_t> strides = stridesOf(in[0].shape());
  int64_t offset = 0;
  for (int64_t d = 0; d < in[0].rank(); ++d) {
    offset += sd.start[d] * strides[d];
    strides[d] *= sd.step[d];
  }
  size_t elem = dtypeSize(in[0].dtype());
  copyStrided(static_cast<const uint8_t *>(in[0].raw()) + offset * elem,
              strides, out[0].raw(), out[0].shape(), elem);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.pad
//===----------------------------------------------------------------------===//

/// The pads as [begin..., end...] over all dims, expanding the optional
/// axes operand (Pad-18). `known` is false when pads or axes are unknown.
Status resolvePads(const std::vector<ValueInfo> &in, bool &known,
                   std::vector<int64_t> &pads) {
  int64_t rank = in[0].rank();
  std::vector<int64_t> given, axes;
  const ValueInfo *axesIn = optionalInput(in, 3);
  known = constInts(in[1], given) && (!axesIn || constInts(*axesIn, axes));
  if (!known)
    return Status::success();
  if (!axesIn)
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  MLCC_CHECK(given.size() == 2 * axes.size(), "pad: ", given.size(),
             " pads for ", axes.size(), " axes (expected twice as many)");
  pads.assign(2 * rank, 0);
  size_t n = axes.size();
  for (size_t i = 0; i < n; ++i) {
    int64_t axis = 0;
    Status s = normalizeAxis(axes[i], rank, axis);
    MLCC_CHECK(s.ok(), "pad: ", s.message());
    pads[axis] = given[i];
    pads[rank + axis] = given[n + i];
  }
  return Status::success();
}

Status inferPad(const Attrs &attrs, const std::vector<ValueInfo> &in,
                std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("pad", in, 2));
  MLCC_CHECK(isIntegerType(in[1].dtype), "pad: pads has type ",
             dtypeName(in[1].dtype), ", expected int64");
  std::string mode = attrs.getString("mode", "constant");
  MLCC_CHECK(mode == "constant" || mode == "reflect" || mode == "edge" ||
                 mode == "wrap",
             "pad: unknown mode '", mode, "'");
  int64_t rank = in[0].rank();
  bool known;
  std::vector<int64_t> pads;
  MLCC_RETURN_IF_ERROR(resolvePads(in, known, pads));
  out[0].dtype = in[0].dtype;
  out[0].shape.assign(rank, kDynamic);
  if (!known)
    return Status::success();
  for (int64_t d = 0; d < rank; ++d) {
    int64_t dim = in[0].shape[d];
    if (isDyn(dim))
      continue;
    int64_t size = 0;
    MLCC_CHECK(addDims(dim, pads[d], size) &&
                   addDims(size, pads[rank + d], size),
               "pad: dimension ", d, " (", dim,
               ") plus its pads overflows "
               "int64");
    MLCC_CHECK(size >= 0, "pad: negative pads remove more than dimension ", d,
               " (", dim, ") holds");
    MLCC_CHECK(mode == "constant" || dim > 0 || size == 0, "pad: mode ", mode,
               " cannot pad the empty dimension ", d);
    out[0].shape[d] = size;
  }
  return Status::success();
}

/// Input coordinate of output coordinate `o` along one dim, or -1 where the
/// constant goes.
int64_t padSource(const std::string &mode, int64_t o, int64_t before,
                  int64_t dim) {
  int64_t i = o - before;
  if (i >= 0 && i < dim)
    return i;
  if (mode == "constant")
    return -1;
  if (mode == "edge")
    return i < 0 ? 0 : dim - 1;
  if (mode == "wrap")
    return ((i % dim) + dim) % dim;
  // reflect: mirror at both ends, without repeating the edge, so the
  // pattern has period 2 * (dim - 1).
  if (dim == 1)
    return 0;
  int64_t period = 2 * (dim - 1);
  i = ((i % period) + period) % period;
  return i < dim ? i : period - i;
}

Status runPad(const Attrs &attrs, const std::vector<Tensor> &in,
              std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferPad, attrs, in, out));
  const Tensor &x = in[0];
  Tensor &y = out[0];
  std::string mode = attrs.getString("mode", "constant");
  int64_t rank = x.rank();
  size_t elem = dtypeSize(x.dtype());
  std::vector<int64_t> pads;
  bool known;
  MLCC_RETURN_IF_ERROR(resolvePads(infosOf(in), known, pads));
  // The fill value in the data's own bytes (zero by default).
  Tensor fill(x.dtype(), {});
  if (const Tensor *cv = optionalInput(in, 2)) {
    if (cv->numel() > 0 && mode == "constant") {
      if (cv->dtype() == x.dtype())
        std::memcpy(fill.raw(), cv->raw(), elem);
      else
        fill.setDouble(0, cv->getDouble(0));
    }
  }
  if (y.numel() == 0)
    return Status::success();
  if (rank == 0) {
    std::memcpy(y.raw(), x.raw(), elem);
    return Status::success();
  }
  // Per dim, the source coordinate of each output coordinate, scaled to an
  // element offset (-1: fill).
  std::vector<int64_t> strides = stridesOf(x.shape());
  std::vector<std::vector<int64_t>> src(rank);
  for (int64_t d = 0; d < rank; ++d) {
    src[d].resize(y.dim(d));
    for (int64_t o = 0; o < y.dim(d); ++o) {
      int64_t i = padSource(mode, o, pads[d], x.dim(d));
      src[d][o] = i < 0 ? -1 : i * strides[d];
    }
  }
  auto *xs = static_cast<const uint8_t *>(x.raw());
  auto *ys = static_cast<uint8_t *>(y.raw());
  const auto *fv = static_cast<const uint8_t *>(fill.raw());
  int64_t inner = y.dim(rank - 1);
  int64_t outer = y.numel() / inner;
  std::vector<int64_t> idx(rank, 0);
  const std::vector<int64_t> &last = src[rank - 1];
  for (int64_t o = 0; o < outer; ++o) {
    int64_t base = 0;
    bool filled = false;
    for (int64_t d = 0; d + 1 < rank; ++d) {
      int64_t s = src[d][idx[d]];
      if (s < 0)
        filled = true;
      base += s;
    }
    for (int64_t i = 0; i < inner; ++i) {
      int64_t s = filled ? -1 : last[i];
      std::memcpy(ys, s < 0 ? fv : xs + (base + s) * elem, elem);
      ys += elem;
    }
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++idx[d] < y.dim(d))
        break;
      idx[d] = 0;
    }
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.trilu
//===----------------------------------------------------------------------===//

Status inferTrilu(const Attrs &, const std::vector<ValueInfo> &in,
                  std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("trilu", in, 1));
  MLCC_CHECK(in[0].rank() >= 2, "trilu: input has rank ", in[0].rank(),
             ", expected at least 2");
  if (const ValueInfo *k = optionalInput(in, 1))
    MLCC_CHECK(isIntegerType(k->dtype) && operandLength(*k) <= 1,
               "trilu: k must be an int64 scalar");
  out[0].dtype = in[0].dtype;
  out[0].shape = in[0].shape;
  return Status::success();
}

Status runTrilu(const Attrs &attrs, const std::vector<Tensor> &in,
                std::vector<Tensor> &out) {
  std::vector<ValueInfo> info(1);
  MLCC_RETURN_IF_ERROR(inferConcrete(inferTrilu, attrs, in, info));
  const Tensor *kIn = optionalInput(in, 1);
  MLCC_CHECK(!kIn || kIn->numel() == 1, "trilu: k must hold one value");
  int64_t k = kIn ? kIn->getInt(0) : 0;
  bool upper = attrs.getInt("upper", 1) != 0;
  Tensor y = in[0].clone();
  int64_t rows = y.dim(y.rank() - 2), cols = y.dim(y.rank() - 1);
  int64_t mats = rows * cols == 0 ? 0 : y.numel() / (rows * cols);
  size_t elem = dtypeSize(y.dtype());
  auto *p = static_cast<uint8_t *>(y.raw());
  // Zero the elements outside the kept triangle: upper keeps j - i >= k,
  // lower keeps j - i <= k.
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        bool keep = upper ? j - i >= k : j - i <= k;
        if (!keep)
          std::memset(p + ((m * rows + i) * cols + j) * elem, 0, elem);
      }
  out[0] = y;
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.reverse_sequence
//===----------------------------------------------------------------------===//

Status inferReverseSequence(const Attrs &attrs,
                            const std::vector<ValueInfo> &in,
                            std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("reverse_sequence", in, 2));
  MLCC_CHECK(in[0].rank() >= 2, "reverse_sequence: input has rank ",
             in[0].rank(), ", expected at least 2");
  int64_t batchAxis = attrs.getInt("batch_axis", 1);
  int64_t timeAxis = attrs.getInt("time_axis", 0);
  MLCC_CHECK((batchAxis == 0 && timeAxis == 1) ||
                 (batchAxis == 1 && timeAxis == 0),
             "reverse_sequence: batch_axis ", batchAxis, " and time_axis ",
             timeAxis, " must be 0 and 1 in some order");
  MLCC_CHECK(isIntegerType(in[1].dtype) && in[1].rank() == 1,
             "reverse_sequence: sequence_lens must be a 1-D int64 tensor");
  int64_t batch = in[0].shape[batchAxis], lens = in[1].shape[0];
  MLCC_CHECK(isDyn(batch) || isDyn(lens) || batch == lens,
             "reverse_sequence: ", lens, " sequence lengths for a batch of ",
             batch);
  out[0].dtype = in[0].dtype;
  out[0].shape = in[0].shape;
  return Status::success();
}

Status runReverseSequence(const Attrs &attrs, const std::vector<Tensor> &in,
                          std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferReverseSequence, attrs, in, out));
  const Tensor &x = in[0];
  int64_t batchAxis = attrs.getInt("batch_axis", 1);
  int64_t timeAxis = attrs.getInt("time_axis", 0);
  int64_t batch = x.dim(batchAxis), time = x.dim(timeAxis);
  std::vector<int64_t> strides = stridesOf(x.shape());
  size_t elem = dtypeSize(x.dtype());
  size_t block = productOf(x.shape(), 2, x.rank()) * elem;
  auto *src = static_cast<const uint8_t *>(x.raw());
  auto *dst = static_cast<uint8_t *>(out[0].raw());
  for (int64_t b = 0; b < batch; ++b) {
    int64_t len = in[1].getInt(b);
    MLCC_CHECK(len >= 0 && len <= time, "reverse_sequence: sequence length ",
               len, " is out of range [0, ", time, "]");
    for (int64_t t = 0; t < time; ++t) {
      int64_t from = t < len ? len - 1 - t : t;
      int64_t dOff = b * strides[batchAxis] + t * strides[timeAxis];
      int64_t sOff = b * strides[batchAxis] + from * strides[timeAxis];
      std::memcpy(dst + dOff * elem, src + sOff * elem, block);
    }
  }
  return Status::success();
}

} // namespace

void shapek::registerMovementKernels(KernelRegistry &r) {
  r.add("concat", {inferConcat, runConcat});
  r.add("split", {inferSplit, runSplit});
  r.add("slice", {inferSlice, runSlice});
  r.add("pad", {inferPad, runPad});
  r.add("trilu", {inferTrilu, runTrilu});
  r.add("reverse_sequence", {inferReverseSequence, runReverseSequence});
}

} // namespace mlcc::ref
