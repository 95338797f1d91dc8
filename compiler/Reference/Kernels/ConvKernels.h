//===- ConvKernels.h - The reference conv, for ops built on it -*- C++ -*-====//
//
// graph.conv's shape helper and kernel (Conv.cpp), for the kernels of ops
// that compute a convolution and then something more (graph.fused_conv in
// FusedConv.cpp), so that there is one convolution in the oracle.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_REFERENCE_KERNELS_CONVKERNELS_H
#define MLCC_REFERENCE_KERNELS_CONVKERNELS_H

#include "mlcc/Reference/Kernel.h"

namespace mlcc::ref::nn {

/// graph.conv: inputs X, W and an optional B.
Status inferConv(const Attrs &attrs, const std::vector<ValueInfo> &in,
                 std::vector<ValueInfo> &out);
Status runConv(const Attrs &attrs, const std::vector<Tensor> &in,
               std::vector<Tensor> &out);

} // namespace mlcc::ref::nn

#endif // MLCC_REFERENCE_KERNELS_CONVKERNELS_H
