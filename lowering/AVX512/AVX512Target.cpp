//===- AVX512Target.cpp - The AVX-512 CPU backend -------------------------===//

#include "AVX512Target.h"
#include "KernelSelection.h"

#include <vector>

using namespace mlir;

namespace mlcc::avx512 {

namespace {

class AVX512Target : public lowering::Target {
public:
  llvm::StringRef name() const override { return "avx512"; }
  // The kernels need AVX-512 anyway; the host code (and the portable
  // lowerings' loops) may as well use it.
  llvm::StringRef hostCpu() const override { return "x86-64-v4"; }
  lowering::TargetLowering lowerOp(Operation *op,
                                   lowering::OpLoweringContext &ctx) override {
    return selectKernel(op, ctx, state);
  }
  void enterRegion() override { saved.push_back(state); }
  void exitRegion() override {
    state = std::move(saved.back());
    saved.pop_back();
  }

private:
  SelectionState state;
  std::vector<SelectionState> saved;
};

} // namespace

std::unique_ptr<lowering::Target> createAVX512Target() {
  return std::make_unique<AVX512Target>();
}

} // namespace mlcc::avx512
