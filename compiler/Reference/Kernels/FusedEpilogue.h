//===- FusedEpilogue.h - What the fused ops' reference kernels share -*- C++
//-*-===//
//
// The reference kernels of GraphFusedOps.td compute exactly what the group
// of ops they replace computes, by running those ops' own registered
// kernels in the group's order. These are the pieces they share: running a
// registered kernel, and the activation encoding (activation,
// activation_alpha, activation_beta) applied the way the activation's own
// op computes it.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_REFERENCE_KERNELS_FUSEDEPILOGUE_H
#define MLCC_REFERENCE_KERNELS_FUSEDEPILOGUE_H

#include "KernelUtils.h"

#include <string>

namespace mlcc::ref::fused {

/// out = `name`(in) with the registered reference kernel (its first output;
/// layer_norm's statistics are not asked for). `caller` names the fused op
/// in the message when no kernel is registered.
Status runRegistered(const char *caller, const char *name, const Attrs &attrs,
                     const std::vector<Tensor> &in, Tensor &out);

/// Fails ("<caller>: unknown activation 'x'") unless `act` is one of the
/// activation names of GraphFusedOps.td.
Status checkActivation(const char *caller, const std::string &act);

/// y = act(y) for the op's activation attributes.
Status applyActivation(const char *caller, const Attrs &attrs, Tensor &y);

} // namespace mlcc::ref::fused

#endif // MLCC_REFERENCE_KERNELS_FUSEDEPILOGUE_H
