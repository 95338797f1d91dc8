//===- AVX512Target.cpp - The AVX-512 CPU backend -------------------------===//

#include "AVX512Target.h"
#include "KernelSelection.h"

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

private:
  SelectionState state;
};

} // namespace

std::unique_ptr<lowering::Target> createAVX512Target() {
  return std::make_unique<AVX512Target>();
}

} // namespace mlcc::avx512
