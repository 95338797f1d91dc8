//===- BlockedReorder.h - NCHW <-> NCHW16c reorder kernels ------*- C++ -*-===//
//
// Generates the conversion of a 32-bit tensor [N, C, P] (P = the pixels of
// a plane, H x W or more dims) between the plain layout and the channel
// blocked one of Conv.h, x16c[((n * CB + cb) * P + p) * 16 + c % 16]: where a
// model's blocked ops (convs, pools) meet an op that runs on plain tensors.
// Sixteen pixels of sixteen channels at a time: sixteen loads, a 16 x 16
// transpose in registers, sixteen stores. To the blocked layout the padding
// lanes past C are written as 0; from it they are not read.
//
// The kernel's signature is that of lowering/Common/KernelABI.h:
//   void kernel(const mlcc_pool_args *args);
// with args->src the tensor in one layout and args->dst in the other.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_BLOCKEDREORDER_H
#define MLCC_LOWERING_AVX512_KERNELS_BLOCKEDREORDER_H

#include "mlcc/Reference/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlcc::avx512 {

struct BlockedReorderSpec {
  /// Names the kernel in error messages.
  std::string name = "reorder";
  /// [N, C, P] with 32-bit elements.
  int64_t n = 1, c = 1, pixels = 1;
  /// Plain to blocked; false: blocked to plain.
  bool toBlocked = true;
};

/// Fails, naming spec.name, for empty or negative sizes and for planes
/// whose byte offsets do not fit in 31 bits.
ref::Status generateBlockedReorder(const BlockedReorderSpec &spec,
                                   std::vector<uint8_t> &code);

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_BLOCKEDREORDER_H
