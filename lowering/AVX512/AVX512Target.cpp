//===- AVX512Target.cpp - The AVX-512 CPU backend -------------------------===//

#include "AVX512Target.h"
#include "KernelSelection.h"

#include <vector>

using namespace mlir;

namespace mlcc::avx512 {

namespace {

class AVX512Target : public lowering::Target {
public:
  AVX512Target(lowering::CpuTarget cpu, bool bf16, int64_t winogradTile,
               bool strassen) {
    state.cpu = std::move(cpu);
    state.bf16Precision = bf16;
    state.winogradTile = winogradTile;
    state.strassen = strassen;
  }
  llvm::StringRef name() const override { return "avx512"; }
  // The host code (and the portable lowerings' loops) uses what the
  // kernels may: the --cpu's instructions.
  llvm::StringRef hostCpu() const override { return state.cpu.llvmCpu; }
  llvm::StringRef hostFeatures() const override {
    return state.cpu.llvmFeatures;
  }
  const lowering::CpuTarget *cpuTarget() const override { return &state.cpu; }
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

std::unique_ptr<lowering::Target> createAVX512Target(lowering::CpuTarget cpu,
                                                     bool bf16,
                                                     int64_t winogradTile,
                                                     bool strassen) {
  return std::make_unique<AVX512Target>(std::move(cpu), bf16, winogradTile,
                                        strassen);
}

} // namespace mlcc::avx512
