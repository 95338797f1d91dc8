//===- Sort.cpp - TopK and Unique -----------------------------------------===//
//
// Ops that order elements. Keys are compared as double for the float and
// narrow integer types and as int64/uint64 for the 64-bit integers, so large
// indices stay exact. NaN sorts above every number, which keeps the
// comparison a strict weak order (std::sort needs one).
//
//===----------------------------------------------------------------------===//

#include "ShapeKernelUtils.h"

#include <cmath>
#include <numeric>

namespace mlcc::ref {

using namespace shapek;

namespace {

template <typename K> bool keyLess(K a, K b) { return a < b; }
template <> bool keyLess<double>(double a, double b) {
  if (std::isnan(b))
    return !std::isnan(a);
  return a < b; // false when a is nan
}

/// Calls fn(keys) with the elements of `x` as a vector of comparison keys.
template <typename Fn> auto withKeys(const Tensor &x, Fn &&fn) {
  int64_t n = x.numel();
  if (x.dtype() == DType::I64 || x.dtype() == DType::U64) {
    // Same bits either way; uint64 needs its own order.
    if (x.dtype() == DType::U64) {
      std::vector<uint64_t> k(x.data<uint64_t>(), x.data<uint64_t>() + n);
      return fn(k);
    }
    std::vector<int64_t> k(x.data<int64_t>(), x.data<int64_t>() + n);
    return fn(k);
  }
  std::vector<double> k(n);
  for (int64_t i = 0; i < n; ++i)
    k[i] = x.getDouble(i);
  return fn(k);
}

//===----------------------------------------------------------------------===//
// graph.topk
//===----------------------------------------------------------------------===//

Status inferTopK(const Attrs &attrs, const std::vector<ValueInfo> &in,
                 std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("topk", in, 2));
  MLCC_CHECK(out.size() >= 2, "topk: expected two results");
  MLCC_CHECK(in[1].dtype == DType::I64, "topk: K has type ",
             dtypeName(in[1].dtype), ", expected int64");
  MLCC_CHECK(operandLength(in[1]) == 1 || operandLength(in[1]) == kDynamic,
             "topk: K must hold one value");
  int64_t axis = 0;
  Status s = normalizeAxis(attrs.getInt("axis", -1), in[0].rank(), axis);
  MLCC_CHECK(s.ok(), "topk: ", s.message());
  int64_t k = kDynamic;
  if (in[1].value) {
    k = in[1].value->getInt(0);
    int64_t dim = in[0].shape[axis];
    MLCC_CHECK(k >= 0 && (isDyn(dim) || k <= dim), "topk: K = ", k,
               " is out of range for a dimension of size ", dim);
  }
  Shape shape = in[0].shape;
  shape[axis] = k;
  out[0].dtype = in[0].dtype;
  out[0].shape = shape;
  out[1].dtype = DType::I64;
  out[1].shape = shape;
  return Status::success();
}

Status runTopK(const Attrs &attrs, const std::vector<Tensor> &in,
               std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferTopK, attrs, in, out));
  const Tensor &x = in[0];
  Tensor &values = out[0], &indices = out[1];
  int64_t axis = 0;
  MLCC_RETURN_IF_ERROR(normalizeAxis(attrs.getInt("axis", -1), x.rank(), axis));
  bool largest = attrs.getInt("largest", 1) != 0;
  int64_t dim = x.dim(axis), k = values.dim(axis);
  int64_t outer = productOf(x.shape(), 0, axis);
  int64_t inner = productOf(x.shape(), axis + 1, x.rank());
  size_t elem = dtypeSize(x.dtype());
  auto *src = static_cast<const uint8_t *>(x.raw());
  auto *dst = static_cast<uint8_t *>(values.raw());
  withKeys(x, [&](const auto &keys) {
    std::vector<int64_t> order(dim);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t base = o * dim * inner + i;
        auto key = [&](int64_t j) { return keys[base + j * inner]; };
        // Sorted output always (sorted=0 leaves the order free); ties go
        // to the lower index, per spec.
        auto before = [&](int64_t a, int64_t b) {
          auto ka = key(a), kb = key(b);
          if (largest ? keyLess(kb, ka) : keyLess(ka, kb))
            return true;
          if (largest ? keyLess(ka, kb) : keyLess(kb, ka))
            return false;
          return a < b;
        };
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + k, order.end(),
                          before);
        for (int64_t j = 0; j < k; ++j) {
          int64_t to = (o * k + j) * inner + i;
          std::memcpy(dst + to * elem, src + (base + order[j] * inner) * elem,
                      elem);
          indices.data<int64_t>()[to] = order[j];
        }
      }
    return 0;
  });
  return Status::success();
}

//===----------------------------------------------------------------------===//
// graph.unique
//===----------------------------------------------------------------------===//

Status inferUnique(const Attrs &attrs, const std::vector<ValueInfo> &in,
                   std::vector<ValueInfo> &out) {
  MLCC_RETURN_IF_ERROR(requireInputs("unique", in, 1));
  const ValueInfo &x = in[0];
  int64_t slices;
  if (attrs.has("axis")) {
    int64_t axis = 0;
    Status s = normalizeAxis(attrs.getInt("axis"), x.rank(), axis);
    MLCC_CHECK(s.ok(), "unique: ", s.message());
    out[0].shape = x.shape;
    out[0].shape[axis] = kDynamic;
    slices = x.shape[axis];
  } else {
    out[0].shape = {kDynamic};
    slices = productOf(x.shape, 0, x.shape.size());
  }
  out[0].dtype = x.dtype;
  // The unique count depends on the data; the inverse map has one entry per
  // input slice.
  for (size_t i = 1; i < out.size() && i < 4; ++i) {
    out[i].dtype = DType::I64;
    out[i].shape = {i == 2 ? slices : kDynamic};
  }
  return Status::success();
}

Status runUnique(const Attrs &attrs, const std::vector<Tensor> &in,
                 std::vector<Tensor> &out) {
  std::vector<ValueInfo> info(out.size());
  MLCC_RETURN_IF_ERROR(inferUnique(attrs, infosOf(in), info));
  const Tensor &x = in[0];
  bool sorted = attrs.getInt("sorted", 1) != 0;
  // Rows of `rows` are the slices compared: the elements, or the
  // subtensors along the axis moved to the front.
  int64_t axis = 0;
  std::vector<int64_t> perm;
  Tensor rows;
  if (attrs.has("axis")) {
    MLCC_RETURN_IF_ERROR(normalizeAxis(attrs.getInt("axis"), x.rank(), axis));
    perm.push_back(axis);
    for (int64_t d = 0; d < x.rank(); ++d)
      if (d != axis)
        perm.push_back(d);
    rows = transposeTensor(x, perm);
  } else {
    rows = x.reshaped({x.numel()});
  }
  int64_t n = rows.dim(0);
  int64_t len = n == 0 ? 0 : rows.numel() / n;
  // group[i]: output position of slice i; first[g], count[g] per group.
  std::vector<int64_t> group(n), first, count;
  withKeys(rows, [&](const auto &keys) {
    auto rowLess = [&](int64_t a, int64_t b) {
      for (int64_t e = 0; e < len; ++e) {
        if (keyLess(keys[a * len + e], keys[b * len + e]))
          return true;
        if (keyLess(keys[b * len + e], keys[a * len + e]))
          return false;
      }
      return false;
    };
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    // Stable, so each run of equal slices starts at its first occurrence.
    std::stable_sort(order.begin(), order.end(), rowLess);
    std::vector<int64_t> runOf(n);
    std::vector<int64_t> runFirst;
    for (int64_t i = 0; i < n; ++i) {
      if (i == 0 || rowLess(order[i - 1], order[i]))
        runFirst.push_back(order[i]);
      runOf[order[i]] = static_cast<int64_t>(runFirst.size()) - 1;
    }
    // Output order of the runs: sorted, or by first occurrence.
    std::vector<int64_t> pos(runFirst.size());
    std::iota(pos.begin(), pos.end(), 0);
    if (!sorted) {
      std::vector<int64_t> byFirst(runFirst.size());
      std::iota(byFirst.begin(), byFirst.end(), 0);
      std::sort(byFirst.begin(), byFirst.end(), [&](int64_t a, int64_t b) {
        return runFirst[a] < runFirst[b];
      });
      for (size_t g = 0; g < byFirst.size(); ++g)
        pos[byFirst[g]] = static_cast<int64_t>(g);
    }
    first.assign(runFirst.size(), 0);
    count.assign(runFirst.size(), 0);
    for (size_t r = 0; r < runFirst.size(); ++r)
      first[pos[r]] = runFirst[r];
    for (int64_t i = 0; i < n; ++i) {
      group[i] = pos[runOf[i]];
      ++count[group[i]];
    }
    return 0;
  });
  int64_t u = static_cast<int64_t>(first.size());
  // Y in the row layout, then back to the input's axis order.
  Shape rowShape = rows.shape();
  rowShape[0] = u;
  Tensor y(x.dtype(), rowShape);
  size_t rowBytes = len * dtypeSize(x.dtype());
  for (int64_t g = 0; g < u; ++g)
    std::memcpy(static_cast<uint8_t *>(y.raw()) + g * rowBytes,
                static_cast<const uint8_t *>(rows.raw()) + first[g] * rowBytes,
                rowBytes);
  if (attrs.has("axis")) {
    std::vector<int64_t> back(x.rank());
    for (int64_t d = 0; d < x.rank(); ++d)
      back[d] = d < axis ? d + 1 : (d == axis ? 0 : d);
    y = transposeTensor(y, back);
  }
  out[0] = y;
  auto toTensor = [](const std::vector<int64_t> &v) {
    Tensor t(DType::I64, {static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), t.data<int64_t>());
    return t;
  };
  if (out.size() > 1)
    out[1] = toTensor(first);
  if (out.size() > 2)
    out[2] = toTensor(group);
  if (out.size() > 3)
    out[3] = toTensor(count);
  return Status::success();
}

} // namespace

void shapek::registerSortKernels(KernelRegistry &r) {
  r.add("topk", {inferTopK, runTopK});
  r.add("unique", {inferUnique, runUnique});
}

} // namespace mlcc::ref
