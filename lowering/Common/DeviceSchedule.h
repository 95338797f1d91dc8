//===- DeviceSchedule.h - Host schedule -> kernels, launches ----*- C++ -*-===//
//
// For a GPU target the host builder writes the same host module as for the
// CPU: every op lowered in place, on memrefs of the arena, the weights and
// the inputs and outputs. This pass moves the computation to the device:
//
//  - each outermost scf.parallel (and each linalg op, made parallel loops
//    first) becomes a kernel in MLIR's gpu dialect whose threads take its
//    iterations (a grid-stride loop over the linearised iteration space),
//    or, for a workgroup loop (kWorkgroupLoopAttr), whose workgroups do;
//  - each run of other ops that read or write device memory (serial loops,
//    scalar stores, the index checks) becomes a one-thread kernel;
//  - what stays on the host is the graph's control flow (scf ops marked
//    kHostControlAttr), address arithmetic and the scalars it reads: a load
//    of device memory that host code needs is a read-back.
//
// A kernel takes its buffers as flat memrefs (bound at an aligned base
// address) and its scalars as 32-bit words in a parameter buffer (the
// element offset of each buffer from its base, loop bounds and values the
// host computed). The host function calls the runtime's device queue
// (runtime/src/DeviceModel.c) for each launch and read-back, with the
// arena, weights, inputs and outputs given as device addresses.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_COMMON_DEVICESCHEDULE_H
#define MLCC_LOWERING_COMMON_DEVICESCHEDULE_H

#include "HostBuilder.h"
#include "Target.h"

#include <vector>

namespace mlcc::lowering {

/// The threads of a kernel that runs a parallel loop.
constexpr uint32_t kDeviceWorkgroupSize = 256;
/// The most workgroups a launch asks for in x (every API's guaranteed
/// minimum); a larger loop's threads take several iterations each.
constexpr uint32_t kDeviceMaxWorkgroups = 65535;

/// Marks an scf.parallel whose iterations are workgroups rather than
/// threads: each is run by kDeviceWorkgroupSize threads together, its body
/// written for one of them (gpu.thread_id x tells which), sharing
/// workgroup memory (memref.alloc in #gpu.address_space<workgroup>) and
/// meeting at gpu.barrier. A GPU target's hand-structured kernels
/// (lowering/GPU) are written so; the CPU never sees one.
constexpr const char *kWorkgroupLoopAttr = "mlcc.workgroup_loop";

/// The runtime functions the host function calls (runtime/src/DeviceModel.c).
constexpr const char *kDeviceLaunchFn = "mlcc_device_queue_launch";
constexpr const char *kDeviceReadFn = "mlcc_device_queue_read";

struct DeviceProgram {
  std::vector<DeviceKernelCode> kernels;
  /// Launch sites in the host functions, and how many run one thread.
  unsigned launchSites = 0;
  unsigned serialSites = 0;
  unsigned readBackSites = 0;
};

struct DeviceScheduleOptions {
  /// Each kernel is printed here before it is compiled.
  llvm::raw_ostream *kernelsOut = nullptr;
  DeviceFault fault = DeviceFault::None;
};

/// Rewrites every entry of `host` for `backend`, compiling the kernels into
/// `out` (identical kernels once). Errors are emitted on the ops.
mlir::LogicalResult scheduleOnDevice(HostModule &host, DeviceBackend &backend,
                                     DeviceProgram &out,
                                     const DeviceScheduleOptions &options = {});

} // namespace mlcc::lowering

#endif // MLCC_LOWERING_COMMON_DEVICESCHEDULE_H
