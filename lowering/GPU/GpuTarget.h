//===- GpuTarget.h - A GPU target: the hot kernels and an API --*- C++ -*-===//
//
// Every GPU target is the same Target: the hot ops through lowerHotOp
// (lowering/GPU), every other op through the portable lowering, the host
// schedule on the application's CPU (it only computes addresses and calls
// the runtime: x86-64 Linux, or an Apple host for Metal), and a
// DeviceBackend that compiles the kernels for its API (SPIR-V for Vulkan,
// PTX for CUDA, MSL for Metal).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_GPU_GPUTARGET_H
#define MLCC_LOWERING_GPU_GPUTARGET_H

#include "GpuKernels.h"
#include "Target.h"

#include <memory>
#include <string>

namespace mlcc::gpukernels {

/// The CPU the host schedule runs on.
struct GpuHost {
  std::string triple = lowering::kLinuxHostTriple;
  std::string cpu = "x86-64";
};

class GpuTarget : public lowering::Target {
public:
  GpuTarget(std::string name, std::unique_ptr<lowering::DeviceBackend> backend,
            GpuTraits traits = {}, GpuHost host = {})
      : targetName(std::move(name)), backend(std::move(backend)),
        traits(traits), host(std::move(host)) {}
  llvm::StringRef name() const override { return targetName; }
  llvm::StringRef hostCpu() const override { return host.cpu; }
  llvm::StringRef hostTriple() const override { return host.triple; }
  lowering::TargetLowering lowerOp(mlir::Operation *op,
                                   lowering::OpLoweringContext &ctx) override;
  lowering::DeviceBackend *device() override { return backend.get(); }

private:
  std::string targetName;
  std::unique_ptr<lowering::DeviceBackend> backend;
  GpuTraits traits;
  GpuHost host;
};

} // namespace mlcc::gpukernels

#endif // MLCC_LOWERING_GPU_GPUTARGET_H
