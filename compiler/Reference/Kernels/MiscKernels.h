//===- MiscKernels.h - The files of the misc kernel family ------*- C++ -*-===//
//
// registerMiscKernels (Misc.cpp) gathers the long tail of ops from several
// files; each file registers its ops through one of these hooks.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_REFERENCE_KERNELS_MISCKERNELS_H
#define MLCC_REFERENCE_KERNELS_MISCKERNELS_H

#include "mlcc/Reference/Kernel.h"

namespace mlcc::ref::misc {

void registerResizeKernels(KernelRegistry &r);   // resize, upsample
void registerQuantizeKernels(KernelRegistry &r); // (de)quantize_linear...
void registerSignalKernels(KernelRegistry &r);   // dft, stft, windows, mel
void registerSamplingKernels(KernelRegistry &r); // grid_sample, roi_align

} // namespace mlcc::ref::misc

#endif // MLCC_REFERENCE_KERNELS_MISCKERNELS_H
