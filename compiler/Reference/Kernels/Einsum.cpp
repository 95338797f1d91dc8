//===- Einsum.cpp - Einstein summation reference kernel -------------------===//
//
// graph.einsum with numpy semantics: explicit ("ij,jk->ik") and implicit
// ("ij,jk") outputs, repeated labels within a term (diagonals), '...' for
// broadcast leading dims, and labels left out of the output summed. A
// generic loop: every output element sums the products of its inputs over
// the space of the summed labels, with incrementally updated offsets.
//
//===----------------------------------------------------------------------===//

#include "ConvPoolUtils.h"

#include "mlcc/Reference/EinsumPlan.h"

#include <cctype>
#include <map>

namespace mlcc::ref {
namespace {

using namespace nn;

constexpr int kEllipsisBase = kEinsumEllipsisBase;

int letterLabel(char c) {
  return std::islower(static_cast<unsigned char>(c)) ? c - 'a' : 26 + c - 'A';
}

/// One term of the equation: its letters, and where '...' stood (-1: no
/// ellipsis).
struct Term {
  std::vector<int> letters;
  int ellipsisAt = -1;
};

Status parseTerm(const std::string &s, Term &t) {
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      MLCC_CHECK(s.compare(i, 3, "...") == 0 && t.ellipsisAt < 0,
                 "einsum: malformed ellipsis in term '", s, "'");
      t.ellipsisAt = static_cast<int>(t.letters.size());
      i += 2;
      continue;
    }
    MLCC_CHECK(std::isalpha(static_cast<unsigned char>(c)),
               "einsum: unexpected character '", c, "' in term '", s, "'");
    t.letters.push_back(letterLabel(c));
  }
  return Status::success();
}

/// Labels of a term with its ellipsis expanded to `count` dims, the last of
/// `total` broadcast ellipsis dims.
std::vector<int> expand(const Term &t, int count, int total) {
  std::vector<int> labels;
  for (size_t i = 0; i <= t.letters.size(); ++i) {
    if (static_cast<int>(i) == t.ellipsisAt)
      for (int j = 0; j < count; ++j)
        labels.push_back(kEllipsisBase + total - count + j);
    if (i < t.letters.size())
      labels.push_back(t.letters[i]);
  }
  return labels;
}

} // namespace

Status planEinsum(const std::string &equation, const std::vector<Shape> &shapes,
                  EinsumPlan &plan) {
  std::string eq;
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c)))
      eq += c;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<Term> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.emplace_back();
    MLCC_RETURN_IF_ERROR(
        parseTerm(lhs.substr(start, comma - start), terms.back()));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  MLCC_CHECK(terms.size() == shapes.size(), "einsum: equation '", equation,
             "' has ", terms.size(), " input terms for ", shapes.size(),
             " inputs");
  // Ellipsis dims of each input, right-aligned against the longest.
  std::vector<int> ellipsis(terms.size(), 0);
  int total = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    int extra = static_cast<int>(shapes[i].size()) -
                static_cast<int>(terms[i].letters.size());
    MLCC_CHECK(extra == 0 || (extra > 0 && terms[i].ellipsisAt >= 0),
               "einsum: input ", i, " has rank ", shapes[i].size(),
               " but its term has ", terms[i].letters.size(), " labels");
    ellipsis[i] = extra;
    total = std::max(total, extra);
  }
  plan.inputs.clear();
  plan.sizes.clear();
  std::map<int, int> uses;
  for (size_t i = 0; i < terms.size(); ++i) {
    plan.inputs.push_back(expand(terms[i], ellipsis[i], total));
    for (size_t d = 0; d < shapes[i].size(); ++d) {
      int l = plan.inputs[i][d];
      int64_t n = shapes[i][d];
      ++uses[l];
      auto it = plan.sizes.find(l);
      if (it == plan.sizes.end() || it->second == 1 || isDyn(it->second)) {
        if (it == plan.sizes.end() || !isDyn(n))
          plan.sizes[l] = n;
        continue;
      }
      // Like numpy, a dim of 1 broadcasts against the label's size.
      MLCC_CHECK(n == 1 || isDyn(n) || n == it->second, "einsum: label ",
                 l < kEllipsisBase ? "" : "of '...' ", "has sizes ", it->second,
                 " and ", n);
    }
  }
  plan.output.clear();
  if (arrow != std::string::npos) {
    Term out;
    MLCC_RETURN_IF_ERROR(parseTerm(eq.substr(arrow + 2), out));
    // Without '...' in the output, the ellipsis dims are summed.
    plan.output = expand(out, out.ellipsisAt >= 0 ? total : 0, total);
    std::map<int, int> seen;
    for (int l : plan.output) {
      MLCC_CHECK(plan.sizes.count(l), "einsum: output label of '", equation,
                 "' does not occur in any input");
      MLCC_CHECK(seen[l]++ == 0, "einsum: output of '", equation,
                 "' repeats a label");
    }
  } else {
    // Implicit output: the ellipsis dims, then the letters used once, in
    // alphabetical (ASCII) order.
    for (int j = 0; j < total; ++j)
      plan.output.push_back(kEllipsisBase + j);
    std::vector<std::pair<char, int>> once;
    for (auto &kv : uses)
      if (kv.first < kEllipsisBase && kv.second == 1)
        once.push_back(
            {kv.first < 26 ? char('a' + kv.first) : char('A' + kv.first - 26),
             kv.first});
    std::sort(once.begin(), once.end());
    for (auto &p : once)
      plan.output.push_back(p.second);
  }
  return Status::success();
}

namespace {

Status inferEinsum(const Attrs &attrs, const std::vector<ValueInfo> &in,
                   std::vector<ValueInfo> &out) {
  MLCC_CHECK(!in.empty(), "einsum: expected at least one input");
  MLCC_CHECK(attrs.has("equation"), "einsum: missing equation attribute");
  DType t = in[0].dtype;
  MLCC_CHECK(t != DType::Bool && t != DType::Undefined, "einsum: type ",
             dtypeName(t), " is not supported");
  std::vector<Shape> shapes;
  for (const ValueInfo &v : in) {
    MLCC_CHECK(v.dtype == t, "einsum: inputs have types ", dtypeName(t),
               " and ", dtypeName(v.dtype), ", expected the same");
    shapes.push_back(v.shape);
  }
  EinsumPlan plan;
  MLCC_RETURN_IF_ERROR(planEinsum(attrs.getString("equation"), shapes, plan));
  out[0].dtype = t;
  out[0].shape.clear();
  for (int l : plan.output)
    out[0].shape.push_back(plan.sizes[l]);
  return Status::success();
}

/// Sums over the labels missing from the output. Acc is double for float
/// types and T for integers.
template <typename T, typename Acc>
void einsumTyped(const EinsumPlan &plan, const std::vector<Tensor> &in, Tensor &y) {
  // Output labels first, then the summed ones.
  std::vector<int> labels = plan.output;
  for (auto &kv : plan.sizes)
    if (std::find(labels.begin(), labels.end(), kv.first) == labels.end())
      labels.push_back(kv.first);
  size_t nOut = plan.output.size(), nAll = labels.size(), nIn = in.size();
  Shape sizes(nAll);
  for (size_t j = 0; j < nAll; ++j)
    sizes[j] = plan.sizes.at(labels[j]);
  // strides[i][j]: step of input i along label j (0 where the input lacks
  // it or broadcasts it; summed where a label repeats: a diagonal).
  std::vector<std::vector<int64_t>> strides(nIn, std::vector<int64_t>(nAll, 0));
  std::vector<const T *> data(nIn);
  for (size_t i = 0; i < nIn; ++i) {
    data[i] = in[i].data<T>();
    std::vector<int64_t> st = stridesOf(in[i].shape());
    for (size_t d = 0; d < st.size(); ++d) {
      if (in[i].dim(d) == 1)
        continue;
      size_t j = std::find(labels.begin(), labels.end(), plan.inputs[i][d]) -
                 labels.begin();
      strides[i][j] += st[d];
    }
  }
  Shape redSizes(sizes.begin() + nOut, sizes.end());
  int64_t redCount = numElements(redSizes);
  Shape outSizes(sizes.begin(), sizes.begin() + nOut);
  T *out = y.data<T>();
  std::vector<int64_t> base(nIn), off(nIn), idx(redSizes.size());
  forEachIndex(outSizes, [&](const std::vector<int64_t> &o, int64_t lin) {
    for (size_t i = 0; i < nIn; ++i) {
      base[i] = 0;
      for (size_t j = 0; j < nOut; ++j)
        base[i] += o[j] * strides[i][j];
    }
    off = base;
    std::fill(idx.begin(), idx.end(), 0);
    Acc acc = 0;
    for (int64_t r = 0; r < redCount; ++r) {
      Acc prod = 1;
      for (size_t i = 0; i < nIn; ++i)
        prod *= static_cast<Acc>(data[i][off[i]]);
      acc += prod;
      // Advance the odometer over the summed labels.
      for (int64_t j = static_cast<int64_t>(idx.size()) - 1; j >= 0; --j) {
        for (size_t i = 0; i < nIn; ++i)
          off[i] += strides[i][nOut + j];
        if (++idx[j] < redSizes[j])
          break;
        idx[j] = 0;
        for (size_t i = 0; i < nIn; ++i)
          off[i] -= strides[i][nOut + j] * redSizes[j];
      }
    }
    out[lin] = static_cast<T>(acc);
  });
}

Status runEinsum(const Attrs &attrs, const std::vector<Tensor> &in,
                 std::vector<Tensor> &out) {
  MLCC_RETURN_IF_ERROR(allocateOutputs(inferEinsum, attrs, in, out));
  std::vector<Tensor> ins;
  std::vector<Shape> shapes;
  for (const Tensor &t : in) {
    ins.push_back(widenHalf(t));
    shapes.push_back(t.shape());
  }
  EinsumPlan plan;
  MLCC_RETURN_IF_ERROR(planEinsum(attrs.getString("equation"), shapes, plan));
  bool half = isHalfType(out[0].dtype());
  Tensor y = half ? Tensor(DType::F32, out[0].shape()) : out[0];
  switch (y.dtype()) {
  case DType::F32:
    einsumTyped<float, double>(plan, ins, y);
    break;
  case DType::F64:
    einsumTyped<double, double>(plan, ins, y);
    break;
  case DType::I8:
    einsumTyped<int8_t, int8_t>(plan, ins, y);
    break;
  case DType::U8:
    einsumTyped<uint8_t, uint8_t>(plan, ins, y);
    break;
  case DType::I16:
    einsumTyped<int16_t, int16_t>(plan, ins, y);
    break;
  case DType::U16:
    einsumTyped<uint16_t, uint16_t>(plan, ins, y);
    break;
  case DType::I32:
    einsumTyped<int32_t, int32_t>(plan, ins, y);
    break;
  case DType::U32:
    einsumTyped<uint32_t, uint32_t>(plan, ins, y);
    break;
  case DType::I64:
    einsumTyped<int64_t, int64_t>(plan, ins, y);
    break;
  case DType::U64:
    einsumTyped<uint64_t, uint64_t>(plan, ins, y);
    break;
  default:
    return Status::error("einsum: type ", dtypeName(y.dtype()),
                         " is not supported");
  }
  if (half)
    narrowHalf(y, out[0]);
  return Status::success();
}

} // namespace

void nn::registerEinsumKernels(KernelRegistry &r) {
  r.add("einsum", {inferEinsum, runEinsum});
}

} // namespace mlcc::ref
