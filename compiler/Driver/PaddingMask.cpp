//===- PaddingMask.cpp - May an item run at its mask's length? ------------===//

#include "mlcc/Driver/PaddingMask.h"

#include "mlcc/Driver/Driver.h"
#include "mlcc/Reference/Kernel.h"
#include "mlcc/Reference/MlirBridge.h"

#include "GraphDialect.h"
#include "PatternUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace mlcc {
namespace {

/// The values computed from the mask input alone (and constants), with the
/// input's first `ones` positions 1 and the others 0.
void evaluateFromMask(func::FuncOp main, unsigned arg, int64_t axis,
                      int64_t ones, llvm::DenseMap<Value, ref::Tensor> &known) {
  known.clear();
  Value input = main.getArgument(arg);
  auto type = cast<RankedTensorType>(input.getType());
  ref::Shape shape(type.getShape());
  ref::Tensor mask(dtypeFromMlir(type.getElementType()), shape);
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < type.getRank(); ++d)
    inner *= type.getDimSize(d);
  for (int64_t i = 0; i < mask.numel(); ++i)
    mask.setDouble(i, (i / inner) % type.getDimSize(axis) < ones ? 1.0 : 0.0);
  known[input] = std::move(mask);
  for (Operation &op : main.getBody().front().without_terminator()) {
    if (isa<graph::ConstantOp>(op))
      continue;
    bool fromMask = false, computable = true;
    std::vector<ref::Tensor> operands(op.getNumOperands());
    for (unsigned k = 0; k < op.getNumOperands() && computable; ++k) {
      Value v = op.getOperand(k);
      if (isa<NoneType>(v.getType()))
        continue;
      if (auto it = known.find(v); it != known.end()) {
        operands[k] = it->second;
        fromMask = true;
      } else if (auto c = v.getDefiningOp<graph::ConstantOp>()) {
        computable = tensorFromElementsAttr(c.getValue(), operands[k]).ok();
      } else {
        computable = false;
      }
    }
    if (!fromMask || !computable)
      continue;
    llvm::StringRef name = op.getName().getStringRef();
    name.consume_front("graph.");
    const ref::KernelDef *kernel = ref::KernelRegistry::get().find(name.str());
    std::vector<ref::Tensor> results(op.getNumResults());
    if (!kernel || !kernel->run ||
        kernel->run(attrsFromOp(&op), operands, results).failed())
      continue; // not known: an attention taking it is refused below
    for (unsigned r = 0; r < op.getNumResults(); ++r)
      known[op.getResult(r)] = std::move(results[r]);
  }
}

} // namespace

ref::Status checkPaddingMask(ModuleOp module, const std::string &input,
                             int64_t axis) {
  func::FuncOp main = mainFunction(module);
  if (!main)
    return ref::Status::error("the module has no function to compile");
  std::optional<unsigned> arg;
  for (unsigned i = 0; i < main.getNumArguments(); ++i)
    if (inputName(main, i) == input)
      arg = i;
  if (!arg)
    return ref::Status::error("the model has no input '", input, "'");
  auto type = dyn_cast<RankedTensorType>(main.getArgument(*arg).getType());
  if (!type || axis < 0 || axis >= type.getRank())
    return ref::Status::error("input '", input,
                              "' does not have the range of lengths");
  std::vector<graph::AttentionOp> attentions;
  main.walk([&](graph::AttentionOp op) { attentions.push_back(op); });
  if (attentions.empty())
    return ref::Status::error("the model has no attention for '", input,
                              "' to mask");
  int64_t length = type.getDimSize(axis);
  llvm::DenseMap<Value, ref::Tensor> known;
  for (int64_t ones = 0; ones <= length; ++ones) {
    evaluateFromMask(main, *arg, axis, ones, known);
    for (graph::AttentionOp op : attentions) {
      Value mask = op->getOperand(3);
      auto it = known.find(mask);
      if (isa<NoneType>(mask.getType()) || it == known.end())
        return ref::Status::error(graph::describeOp(op),
                                  " takes no mask computed from '", input,
                                  "' alone, so a run at the mask's length "
                                  "would leave out keys that it counts");
      const ref::Tensor &m = it->second;
      int64_t keys = m.shape().back();
      if (keys != length)
        return ref::Status::error(graph::describeOp(op), "'s mask has ", keys,
                                  " keys, not one per position of '", input,
                                  "'");
      for (int64_t i = 0; i < m.numel(); ++i)
        if (i % keys >= ones && !(m.getDouble(i) <= kPaddedKeyMask))
          return ref::Status::error(graph::describeOp(op), "'s mask is ",
                                    m.getDouble(i), " at a key where '", input,
                                    "' is 0 (padding); a padded key "
                                    "counts for nothing only at ",
                                    kPaddedKeyMask, " or less");
    }
  }
  return ref::Status::success();
}

} // namespace mlcc
