//===- FakeCuda.h - What the fake libcuda.so.1 saw ----------------*- C -*-===//
//
// The tests' stand-in for the CUDA driver (FakeCuda.c): the driver API
// entry points the runtime loads, on host memory, running no kernel. It
// records every call as an event, which a test reads through
// fake_cuda_events (dlsym on the same library the runtime loaded).
//
// The environment steers it: FAKE_CUDA_ARCH (compute capability, default
// 90), FAKE_CUDA_DEVICES (default 1), FAKE_CUDA_FAIL=<entry point>[:n]
// (the n-th call of it, default every call, returns an error: out of
// memory for the allocations, a launch failure for launches,
// CUDA_ERROR_UNKNOWN otherwise).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_TEST_FAKECUDA_H
#define MLCC_TEST_FAKECUDA_H

#include <stddef.h>
#include <stdint.h>

typedef enum FakeCudaEventKind {
  FAKE_INIT = 1,
  FAKE_MODULE_LOAD, // Name: "ptx sm_90" or "cubin"
  FAKE_GET_FUNCTION,
  FAKE_LAUNCH, // direct, or inside a capture (Captured)
  FAKE_ALLOC,
  FAKE_FREE,
  FAKE_COPY_TO_DEVICE,
  FAKE_COPY_TO_HOST,
  FAKE_BEGIN_CAPTURE,
  FAKE_END_CAPTURE,
  FAKE_INSTANTIATE,
  FAKE_GRAPH_LAUNCH, // Nodes: the launches the graph holds
  FAKE_SYNC,
} FakeCudaEventKind;

typedef struct FakeCudaEvent {
  int Kind;
  char Name[64]; // the function of a launch
  unsigned Grid[3], Block[3], Shared;
  /// Launch: the kernel's parameters (from its PTX; -1 from a cubin), and
  /// whether every pointer argument is inside a live allocation.
  int NumArgs;
  int ArgsInAllocations;
  int Captured;
  /// Launch: the first parameter words (argument 0 points at them).
  uint32_t Params[4];
  uint64_t Bytes; // allocations and copies
  unsigned Nodes;
} FakeCudaEvent;

typedef void (*FakeCudaEventsFn)(const FakeCudaEvent **events, size_t *count);
typedef void (*FakeCudaResetFn)(void);

#endif // MLCC_TEST_FAKECUDA_H
