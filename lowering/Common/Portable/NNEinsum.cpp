//===- NNEinsum.cpp - Portable lowering of graph.einsum -------------------===//
//
// Einstein summation as one linalg.generic: one loop dim per label, each
// input read through the dims of its labels (a repeated label reads a
// diagonal, a dim of 1 against a larger label size broadcasts), the output
// through its labels, the labels it lacks reduced. Numpy semantics as in
// the reference (compiler/Reference/Kernels/Einsum.cpp): explicit and
// implicit outputs, '...' for broadcast leading dims.
//
//===----------------------------------------------------------------------===//

#include "NNUtils.h"

#include <algorithm>
#include <cctype>
#include <map>

using namespace mlir;

namespace mlcc::portable::nn {
namespace {

/// Labels 0..51 are letters; the dims an ellipsis covers get
/// kEllipsisBase + j, j counted in the broadcast ellipsis of all inputs.
constexpr int kEllipsisBase = 64;

struct Term {
  SmallVector<int> letters;
  int ellipsisAt = -1; // where '...' stood; -1: none
};

bool parseTerm(StringRef s, Term &t) {
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      if (!s.substr(i).starts_with("...") || t.ellipsisAt >= 0)
        return false;
      t.ellipsisAt = static_cast<int>(t.letters.size());
      i += 2;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(c)))
      return false;
    t.letters.push_back(
        std::islower(static_cast<unsigned char>(c)) ? c - 'a' : 26 + c - 'A');
  }
  return true;
}

/// The labels of a term with its ellipsis expanded to `count` dims, the
/// last of `total` broadcast ellipsis dims.
SmallVector<int> expandTerm(const Term &t, int count, int total) {
  SmallVector<int> labels;
  for (size_t i = 0; i <= t.letters.size(); ++i) {
    if (static_cast<int>(i) == t.ellipsisAt)
      for (int j = 0; j < count; ++j)
        labels.push_back(kEllipsisBase + total - count + j);
    if (i < t.letters.size())
      labels.push_back(t.letters[i]);
  }
  return labels;
}

/// The equation resolved against the operand shapes.
struct EinsumPlan {
  SmallVector<SmallVector<int>> inputs; // label of each operand dim
  SmallVector<int> output;
  std::map<int, int64_t> sizes;
};

LogicalResult makePlan(Operation *op, ArrayRef<ArrayRef<int64_t>> shapes,
                       EinsumPlan &plan) {
  std::string eq;
  for (char c : stringAttr(op, "equation", ""))
    if (!std::isspace(static_cast<unsigned char>(c)))
      eq += c;
  size_t arrow = eq.find("->");
  StringRef lhs = StringRef(eq).substr(0, arrow);
  SmallVector<StringRef> parts;
  lhs.split(parts, ',');
  if (parts.size() != shapes.size())
    return op->emitError("einsum: the equation has ")
           << parts.size() << " input terms for " << shapes.size() << " inputs";
  SmallVector<Term> terms(parts.size());
  for (size_t i = 0; i < parts.size(); ++i)
    if (!parseTerm(parts[i], terms[i]))
      return op->emitError("einsum: malformed term '") << parts[i] << "'";
  // Ellipsis dims of each input, right-aligned against the longest.
  SmallVector<int> ellipsis;
  int total = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    int extra = static_cast<int>(shapes[i].size()) -
                static_cast<int>(terms[i].letters.size());
    if (extra < 0 || (extra > 0 && terms[i].ellipsisAt < 0))
      return op->emitError("einsum: input ")
             << i << " does not match its term's labels";
    ellipsis.push_back(extra);
    total = std::max(total, extra);
  }
  std::map<int, int> uses;
  for (size_t i = 0; i < terms.size(); ++i) {
    plan.inputs.push_back(expandTerm(terms[i], ellipsis[i], total));
    for (size_t d = 0; d < shapes[i].size(); ++d) {
      int l = plan.inputs[i][d];
      int64_t n = shapes[i][d];
      ++uses[l];
      auto it = plan.sizes.find(l);
      if (it == plan.sizes.end() || it->second == 1)
        plan.sizes[l] = n;
      else if (n != 1 && n != it->second)
        return op->emitError("einsum: a label has sizes ")
               << it->second << " and " << n;
    }
  }
  if (arrow != std::string::npos) {
    Term out;
    if (!parseTerm(StringRef(eq).substr(arrow + 2), out))
      return op->emitError("einsum: malformed output term");
    // Without '...' in the output, the ellipsis dims are summed.
    plan.output = expandTerm(out, out.ellipsisAt >= 0 ? total : 0, total);
    std::map<int, int> seen;
    for (int l : plan.output)
      if (!plan.sizes.count(l) || seen[l]++)
        return op->emitError("einsum: an output label is missing from the "
                             "inputs or repeated");
    return success();
  }
  // Implicit output: the ellipsis dims, then the letters used once in ASCII
  // order (upper case first).
  for (int j = 0; j < total; ++j)
    plan.output.push_back(kEllipsisBase + j);
  SmallVector<std::pair<char, int>> once;
  for (auto &[label, count] : uses)
    if (label < kEllipsisBase && count == 1)
      once.push_back(
          {label < 26 ? char('a' + label) : char('A' + label - 26), label});
  llvm::sort(once);
  for (auto &entry : once)
    plan.output.push_back(entry.second);
  return success();
}

LogicalResult lowerEinsum(PortableOp &p) {
  Operation *op = p.op;
  OpBuilder &b = p.b;
  Location loc = p.loc;
  MLIRContext *ctx = b.getContext();
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value v : p.operands)
    shapes.push_back(shapeOf(v));
  EinsumPlan plan;
  if (failed(makePlan(op, shapes, plan)))
    return failure();
  Value y = p.results[0];
  SmallVector<int64_t> outShape;
  for (int l : plan.output)
    outShape.push_back(plan.sizes[l]);
  if (ArrayRef<int64_t>(outShape) != shapeOf(y))
    return op->emitError("einsum: the result shape does not match the "
                         "equation");

  // Loop dims: the output labels but the last, the summed labels, then the
  // last output label innermost (contiguous in the output).
  SmallVector<int> labels(plan.output.begin(), plan.output.end());
  SmallVector<int> summed;
  for (auto &entry : plan.sizes)
    if (!llvm::is_contained(plan.output, entry.first))
      summed.push_back(entry.first);
  int lastOut = -1;
  if (!labels.empty())
    lastOut = labels.pop_back_val();
  size_t numOuter = labels.size();
  labels.append(summed.begin(), summed.end());
  if (lastOut >= 0)
    labels.push_back(lastOut);
  auto dimOf = [&](int label) {
    return getAffineDimExpr(llvm::find(labels, label) - labels.begin(), ctx);
  };

  Type t = elementTypeOf(op->getResult(0));
  Type accType = computeType(t);
  Scratch scratch(b, loc);
  Accumulator acc = Accumulator::create(scratch, y, t);
  fillBuffer(b, loc, acc.buffer, scalarConstant(b, loc, accType, 0.0));
  GenericBuilder g(labels.size());
  SmallVector<Type> inTypes;
  for (auto [i, v] : llvm::enumerate(p.operands)) {
    SmallVector<AffineExpr> exprs;
    for (auto [d, label] : llvm::enumerate(plan.inputs[i]))
      exprs.push_back(shapes[i][d] == 1 && plan.sizes[label] != 1
                          ? getAffineConstantExpr(0, ctx)
                          : dimOf(label));
    g.addInput(v, exprs);
    inTypes.push_back(elementTypeOf(op->getOperand(i)));
  }
  SmallVector<AffineExpr> outExprs;
  for (int l : plan.output)
    outExprs.push_back(dimOf(l));
  g.addOutput(acc.buffer, outExprs);
  for (size_t i = 0; i < summed.size(); ++i)
    g.setReduction(numOuter + i);
  size_t numInputs = p.operands.size();
  g.build(b, loc, [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value prod;
    for (size_t i = 0; i < numInputs; ++i) {
      Value v = convertScalar(nb, nl, args[i], inTypes[i], accType);
      prod = prod ? mulValues(nb, nl, prod, v) : v;
    }
    return SmallVector<Value>{addValues(nb, nl, args[numInputs], prod)};
  });
  acc.finish(b, loc);
  return success();
}

} // namespace

void registerEinsumLowering(PortableRegistry &registry) {
  registry["graph.einsum"] = &lowerEinsum;
}

} // namespace mlcc::portable::nn
