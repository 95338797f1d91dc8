//===- CudaTarget.h - The CUDA GPU backend ----------------------*- C++ -*-===//
//
// --target cuda: the same kernels as --target vulkan (the hot ops through
// lowering/GPU's hand-structured kernels, every other loop through the
// shared GPU kernel layer, DeviceSchedule), lowered to NVVM and PTX for each
// compiled architecture, and assembled to cubins too when the CUDA
// toolkit's ptxas is found. Each kernel's code is a bundle of those images
// (runtime/include/mlcc/device.h, mlcc_cuda_bundle_header); the runtime's
// CUDA device layer (runtime/src/CudaDevice.c) loads the cubin of the
// device's architecture, else JIT-compiles the newest PTX it can.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_CUDA_CUDATARGET_H
#define MLCC_LOWERING_CUDA_CUDATARGET_H

#include "Target.h"

#include <memory>
#include <string>
#include <vector>

namespace mlcc::cuda {

/// The GPU architectures PTX is written for without --gpu-arch.
constexpr const char *kDefaultArchs = "sm_80,sm_90";

/// Where the CUDA toolkit's pieces the compiler uses are, if anywhere.
struct CudaToolkit {
  /// The toolkit's root (has nvvm/libdevice/libdevice.10.bc), or empty:
  /// then math functions are expanded into polynomials where MLIR can
  /// (f32), and other kernels that need libdevice are refused.
  std::string root;
  /// ptxas, or empty: then the bundle has PTX only.
  std::string ptxas;
};

/// The toolkit at `given` (--cuda-path; must hold libdevice), else at
/// $CUDA_PATH, $CUDA_HOME, /usr/local/cuda, /usr/lib/cuda, with ptxas from
/// its bin/ or PATH; none at all for "none". An error names what `given`
/// lacks.
llvm::Expected<CudaToolkit> findCudaToolkit(llvm::StringRef given);

struct CudaOptions {
  /// Compute capabilities, 80 for sm_80, newest last.
  std::vector<unsigned> archs;
  CudaToolkit toolkit;
};

/// Parses --gpu-arch ("sm_80,sm_90") into compute capabilities; an error
/// names an architecture LLVM's NVPTX backend cannot write PTX for.
llvm::Expected<std::vector<unsigned>> parseGpuArchs(llvm::StringRef list);

/// The PTX ISA version (70 for 7.0) the PTX for `arch` is written in: the
/// oldest that has the architecture. 0 for one the backend cannot write.
unsigned ptxVersionFor(unsigned arch);

/// What ptxas made of one kernel's PTX for one architecture.
struct Assembled {
  std::vector<uint8_t> cubin;
  /// ptxas -v's resource line: "40 registers, 0 bytes spill stores, ...".
  std::string resources;
  bool spills = false;
};

/// Assembles `ptx` for sm_`arch` with `ptxas`. An error carries ptxas's
/// messages.
llvm::Expected<Assembled> assemblePtx(llvm::StringRef ptxas,
                                      llvm::StringRef ptx, unsigned arch);

std::unique_ptr<lowering::Target> createCudaTarget(CudaOptions options);

/// Compiles one kernel module (DeviceBackend::compileKernel's contract) to
/// a CUDA code bundle.
mlir::LogicalResult compileCudaKernel(mlir::ModuleOp kernel,
                                      const CudaOptions &options,
                                      lowering::DeviceKernelCode &out);

} // namespace mlcc::cuda

#endif // MLCC_LOWERING_CUDA_CUDATARGET_H
