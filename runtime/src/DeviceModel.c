//===- DeviceModel.c - Running device models ------------------------------===//
//
// A device model's entry is host code that computes device addresses and
// calls mlcc_device_queue_launch / _read: the queue turns the addresses
// back into (buffer, offset) bindings. Errors are kept in the queue, so
// generated code never checks a status: the first failure ends the run's
// work and becomes its status, with its message.
//
//===----------------------------------------------------------------------===//

#include "DeviceModel.h"
#include "LastError.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

// Regions are 2^40 bytes apart in the device address space the entry sees.
enum { RegionShift = 40 };
#define REGION_OFFSET_MASK ((UINT64_C(1) << RegionShift) - 1)

enum { ArenaRegion = 0, WeightsRegion = 1, FirstTensorRegion = 2 };

// Launches with more buffers than this pay for a heap array.
enum { InlineBindings = 32 };

struct mlccDeviceModel {
  const mlcc_model_desc *Desc;
  mlcc_device *Device;
  mlcc_device_kernel **Kernels;
  uint32_t NumRegions;
  mlcc_device_buffer **Regions;
  uint64_t *RegionBytes;
  // The first failure of the current run, its message kept here (the last
  // error may be overwritten by later calls on this thread).
  mlcc_status Status;
  char Message[MLCC_LAST_ERROR_CAPACITY];
  // Validation-layer messages seen up to the end of the last check.
  uint64_t ValidationMessages;
};

// With MLCC_VULKAN_VALIDATION on, a message of the layer fails the call it
// came in (the tests run that way): the layer's text is on stderr.
static mlcc_status checkValidation(mlccDeviceModel *m, const char *what) {
  uint64_t seen = mlcc_device_validation_messages(m->Device);
  if (seen == m->ValidationMessages)
    return MLCC_OK;
  uint64_t added = seen - m->ValidationMessages;
  m->ValidationMessages = seen;
  return mlcc_last_error_set(MLCC_INTERNAL,
                             "device model '%s': %s: the validation layer "
                             "reported %llu messages (on stderr)",
                             m->Desc->name, what, (unsigned long long)added);
}

static void recordFailure(mlccDeviceModel *m, mlcc_status status) {
  if (m->Status != MLCC_OK)
    return;
  m->Status = status;
  strncpy(m->Message, mlcc_last_error_message(), sizeof(m->Message) - 1);
  m->Message[sizeof(m->Message) - 1] = '\0';
}

static uint64_t tensorBytes(const mlcc_model_tensor_desc *t) {
  uint64_t bytes = mlcc_dtype_size((mlcc_dtype)t->dtype);
  for (int32_t i = 0; i < t->rank; ++i)
    bytes *= (uint64_t)(t->max_dims ? t->max_dims[i] : t->dims[i]);
  return bytes;
}

void mlccDeviceModelDestroy(mlccDeviceModel *m) {
  if (!m)
    return;
  if (m->Device) {
    (void)mlcc_device_wait(m->Device);
    for (uint32_t r = 0; m->Regions && r < m->NumRegions; ++r)
      mlcc_device_buffer_destroy(m->Device, m->Regions[r]);
    const mlcc_device_program *p = m->Desc->device;
    for (uint32_t k = 0; m->Kernels && k < p->num_kernels; ++k)
      mlcc_device_kernel_destroy(m->Device, m->Kernels[k]);
    mlcc_device_close(m->Device);
  }
  free(m->Kernels);
  free(m->Regions);
  free(m->RegionBytes);
  free(m);
}

mlcc_device *mlccDeviceModelDevice(mlccDeviceModel *m) { return m->Device; }

mlcc_status mlccDeviceModelCreate(const char *fn, const mlcc_model_desc *desc,
                                  const void *weights, mlccDeviceModel **out) {
  *out = NULL;
  const mlcc_device_program *p = desc->device;
  if (p->num_kernels > 0 && !p->kernels)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: the device program has %u kernels but no "
                               "kernel array",
                               fn, (unsigned)p->num_kernels);
  mlccDeviceModel *m = calloc(1, sizeof(mlccDeviceModel));
  if (!m)
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "%s: cannot allocate the device context", fn);
  m->Desc = desc;
  m->NumRegions = FirstTensorRegion + desc->num_inputs + desc->num_outputs;
  m->Kernels = calloc(p->num_kernels + 1, sizeof(mlcc_device_kernel *));
  m->Regions = calloc(m->NumRegions, sizeof(mlcc_device_buffer *));
  m->RegionBytes = calloc(m->NumRegions, sizeof(uint64_t));
  if (!m->Kernels || !m->Regions || !m->RegionBytes) {
    mlccDeviceModelDestroy(m);
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "%s: cannot allocate the device context", fn);
  }
  mlcc_status status =
      mlcc_device_open((mlcc_device_api)p->api, NULL, &m->Device);
  for (uint32_t k = 0; status == MLCC_OK && k < p->num_kernels; ++k)
    status =
        mlcc_device_kernel_create(m->Device, &p->kernels[k], &m->Kernels[k]);
  m->RegionBytes[ArenaRegion] = desc->arena_bytes;
  m->RegionBytes[WeightsRegion] =
      weights ? desc->weights_bytes : p->weights_bytes;
  for (uint32_t i = 0; i < desc->num_inputs; ++i)
    m->RegionBytes[FirstTensorRegion + i] = tensorBytes(&desc->inputs[i]);
  for (uint32_t i = 0; i < desc->num_outputs; ++i)
    m->RegionBytes[FirstTensorRegion + desc->num_inputs + i] =
        tensorBytes(&desc->outputs[i]);
  // Empty regions still get a buffer: every address names one.
  for (uint32_t r = 0; status == MLCC_OK && r < m->NumRegions; ++r)
    status = mlcc_device_buffer_create(
        m->Device, m->RegionBytes[r] ? m->RegionBytes[r] : 4, &m->Regions[r]);
  const void *weightData = weights ? weights : p->weights;
  if (status == MLCC_OK && m->RegionBytes[WeightsRegion] > 0)
    status = mlcc_device_write(m->Device, m->Regions[WeightsRegion], 0,
                               weightData, m->RegionBytes[WeightsRegion]);
  if (status == MLCC_OK)
    status = checkValidation(m, "creating the kernels");
  if (status != MLCC_OK) {
    mlcc_status kept =
        mlcc_last_error_set(status, "%s: %s", fn, mlcc_last_error_message());
    mlccDeviceModelDestroy(m);
    return kept;
  }
  *out = m;
  return MLCC_OK;
}

// (buffer, offset) of device address `address` with `bytes` after it, or
// false with the failure recorded.
static bool decode(mlccDeviceModel *m, uint64_t address, uint64_t bytes,
                   mlcc_device_binding *binding) {
  uint64_t region = (address >> RegionShift) - 1;
  uint64_t offset = address & REGION_OFFSET_MASK;
  if ((address >> RegionShift) == 0 || region >= m->NumRegions ||
      offset > m->RegionBytes[region] ||
      bytes > m->RegionBytes[region] - offset) {
    mlcc_last_error_set(MLCC_INTERNAL,
                        "device model '%s': address 0x%llx (+%llu bytes) is "
                        "outside its buffers",
                        m->Desc->name, (unsigned long long)address,
                        (unsigned long long)bytes);
    recordFailure(m, MLCC_INTERNAL);
    return false;
  }
  binding->buffer = m->Regions[region];
  // An empty tensor may sit at the very end, where no binding can start:
  // nothing reads it, so any offset serves.
  binding->offset = offset == m->RegionBytes[region] ? 0 : offset;
  return true;
}

void mlcc_device_queue_launch(void *queue, int32_t kernel, int32_t groups_x,
                              int32_t groups_y, int32_t groups_z,
                              const uint64_t *addresses, int32_t num_addresses,
                              const uint32_t *params, int32_t num_params) {
  mlccDeviceModel *m = queue;
  if (m->Status != MLCC_OK)
    return;
  const mlcc_device_program *p = m->Desc->device;
  if (kernel < 0 || (uint32_t)kernel >= p->num_kernels || num_addresses < 0 ||
      num_params < 0) {
    mlcc_last_error_set(MLCC_INTERNAL,
                        "device model '%s': launch of kernel %d of %u",
                        m->Desc->name, (int)kernel, (unsigned)p->num_kernels);
    recordFailure(m, MLCC_INTERNAL);
    return;
  }
  mlcc_device_binding inlineBindings[InlineBindings];
  mlcc_device_binding *bindings = inlineBindings;
  if (num_addresses > InlineBindings &&
      !(bindings = malloc((size_t)num_addresses * sizeof(*bindings)))) {
    mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                        "device model '%s': cannot allocate %d bindings",
                        m->Desc->name, (int)num_addresses);
    recordFailure(m, MLCC_OUT_OF_MEMORY);
    return;
  }
  bool ok = true;
  for (int32_t i = 0; i < num_addresses && ok; ++i)
    ok = decode(m, addresses[i], 0, &bindings[i]);
  if (ok) {
    uint32_t groups[3] = {(uint32_t)groups_x, (uint32_t)groups_y,
                          (uint32_t)groups_z};
    mlcc_status status = mlcc_device_launch(
        m->Device, m->Kernels[kernel], groups, params, (uint32_t)num_params,
        bindings, (uint32_t)num_addresses);
    if (status != MLCC_OK)
      recordFailure(m, status);
  }
  if (bindings != inlineBindings)
    free(bindings);
}

void mlcc_device_queue_read(void *queue, uint64_t address, void *dst,
                            uint64_t bytes) {
  mlccDeviceModel *m = queue;
  mlcc_device_binding at;
  if (m->Status == MLCC_OK && decode(m, address, bytes, &at)) {
    mlcc_status status =
        mlcc_device_read(m->Device, at.buffer, at.offset, dst, bytes);
    if (status == MLCC_OK)
      return;
    recordFailure(m, status);
  }
  memset(dst, 0, (size_t)bytes);
}

mlcc_status mlccDeviceModelRun(mlccDeviceModel *m, mlcc_model_entry_fn entry,
                               const void *const *inputs, void *const *outputs,
                               int64_t *outputDims) {
  const mlcc_model_desc *desc = m->Desc;
  m->Status = MLCC_OK;
  m->Message[0] = '\0';
  mlcc_status status = MLCC_OK;
  for (uint32_t i = 0; i < desc->num_inputs && status == MLCC_OK; ++i) {
    uint32_t r = FirstTensorRegion + i;
    if (m->RegionBytes[r] > 0)
      status = mlcc_device_write(m->Device, m->Regions[r], 0, inputs[i],
                                 m->RegionBytes[r]);
  }
  if (status != MLCC_OK)
    return status;
  // The entry's pointer arguments are device addresses, never dereferenced
  // on the host.
  void *arenaAddress =
      (void *)(uintptr_t)((uint64_t)(ArenaRegion + 1) << RegionShift);
  const void *weightsAddress =
      (const void *)(uintptr_t)((uint64_t)(WeightsRegion + 1) << RegionShift);
  uint32_t numTensors = desc->num_inputs + desc->num_outputs;
  void **addresses = malloc((numTensors + 1) * sizeof(void *));
  if (!addresses)
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "device model '%s': cannot allocate the run's "
                               "addresses",
                               desc->name);
  for (uint32_t i = 0; i < numTensors; ++i)
    addresses[i] = (void *)(uintptr_t)((uint64_t)(FirstTensorRegion + i + 1)
                                       << RegionShift);
  int32_t entryStatus = entry(
      arenaAddress, weightsAddress, (const void *const *)addresses,
      (void *const *)(addresses + desc->num_inputs), (mlcc_threadpool *)m);
  free(addresses);
  if (m->Status == MLCC_OK) {
    status = mlcc_device_wait(m->Device);
    if (status != MLCC_OK)
      recordFailure(m, status);
  }
  if (m->Status != MLCC_OK)
    return mlcc_last_error_set(m->Status, "%s", m->Message);
  if (entryStatus != MLCC_OK)
    return (mlcc_status)entryStatus;
  for (uint32_t i = 0; i < desc->num_outputs && status == MLCC_OK; ++i) {
    uint32_t r = FirstTensorRegion + desc->num_inputs + i;
    if (m->RegionBytes[r] > 0)
      status = mlcc_device_read(m->Device, m->Regions[r], 0, outputs[i],
                                m->RegionBytes[r]);
  }
  if (status == MLCC_OK && outputDims) {
    uint64_t count = 0;
    for (uint32_t i = 0; i < desc->num_outputs; ++i)
      count += (uint64_t)desc->outputs[i].rank;
    status = mlcc_device_read(m->Device, m->Regions[ArenaRegion],
                              desc->output_dims_offset, outputDims,
                              count * sizeof(int64_t));
  }
  if (status == MLCC_OK)
    status = checkValidation(m, "the run");
  return status;
}
