//===- VulkanDevice.h - The Vulkan device layer's own pieces ------*- C -*-===//
//
// Not a public header. The handles behind mlcc_device, mlcc_device_buffer
// and mlcc_device_kernel, and what VulkanOpen.c (instance, device
// selection, device creation), VulkanKernel.c (pipelines) and
// VulkanDevice.c (buffers, copies, launches) share. VulkanDevice.c says how
// the pieces work together.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_RUNTIME_SRC_VULKANDEVICE_H
#define MLCC_RUNTIME_SRC_VULKANDEVICE_H

#include "DeviceLayer.h"
#include "VulkanLoader.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum {
  // The params buffer's first size; it grows when one launch needs more.
  MLCC_VK_PARAMS_INITIAL_BYTES = 1 << 20,
  // Push-descriptor writes are prepared in arrays of the device's
  // maxPushDescriptors entries, but no more than this many (drivers give
  // 32 or so; the cap only bounds what a bogus limit can make us allocate).
  MLCC_VK_MAX_BINDINGS = 1024,
};

typedef struct mlccVkDevice mlccVkDevice;
typedef struct mlccVkBuffer mlccVkBuffer;
typedef struct mlccVkKernel mlccVkKernel;

struct mlccVkBuffer {
  mlccVkDevice *Device;
  mlccVkBuffer *Prev, *Next; // the device's list, for close
  VkBuffer Buffer;
  VkDeviceMemory Memory;
  unsigned char *Mapped;
  uint64_t Size; // as asked for
};

struct mlccVkKernel {
  mlccVkDevice *Device;
  mlccVkKernel *Prev, *Next; // the device's list, for close
  VkShaderModule Module;
  VkDescriptorSetLayout SetLayout;
  VkPipelineLayout Layout;
  VkPipeline Pipeline;
  uint32_t NumBuffers;
  char *Name; // owned copy, for messages
};

struct mlccVkDevice {
  mlcc_device Base; // first: the public handle
  mlcc_vk_functions Vk;
  VkInstance Instance;
  VkDebugUtilsMessengerEXT Messenger;
  VkPhysicalDevice Physical;
  VkDevice Device;
  VkQueue Queue;
  VkPhysicalDeviceLimits Limits;
  VkPhysicalDeviceMemoryProperties Memory;
  uint64_t MaxAllocation; // maxMemoryAllocationSize
  uint32_t MaxBindings;   // min(maxPushDescriptors, MLCC_VK_MAX_BINDINGS)
  VkPipelineCache Cache;
  VkCommandPool Pool;
  VkCommandBuffer Commands;
  VkFence Fence;
  bool Recording; // Commands is begun and holds launches
  bool Lost;      // VK_ERROR_DEVICE_LOST was seen: every call fails
  // Binding 0 of each launch: ParamsUsed bytes of Params are taken.
  mlccVkBuffer *Params;
  uint64_t ParamsUsed;
  VkWriteDescriptorSet *Writes;  // MaxBindings entries
  VkDescriptorBufferInfo *Infos; // MaxBindings entries
  mlccVkBuffer *Buffers;         // every live buffer, but Params
  mlccVkKernel *Kernels;         // every live kernel
  // The validation layer may call back from threads of its own.
  _Atomic uint64_t ValidationMessages;
  char Name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
};

/// Whether `result` is one of the two out-of-memory results.
bool mlccVkIsOutOfMemory(VkResult result);

/// Records the failure of the Vulkan call `call` made by `fn`:
/// "fn: call failed (VkResult -4, VK_ERROR_DEVICE_LOST)". Out-of-memory
/// results give MLCC_OUT_OF_MEMORY, the others MLCC_INTERNAL; a lost device
/// is remembered in `device` (may be NULL).
mlcc_status mlccVkFailed(mlccVkDevice *device, VkResult result, const char *fn,
                         const char *call);

/// The failure of every call on a lost device.
mlcc_status mlccVkDeviceLost(const char *fn);

/// A mapped, zero-filled storage buffer of `bytes`, not linked into the
/// device's list.
mlcc_status mlccVkNewBuffer(mlccVkDevice *device, uint64_t bytes,
                            const char *fn, mlccVkBuffer **out);

/// Frees a buffer made by mlccVkNewBuffer (already unlinked).
void mlccVkFreeBuffer(mlccVkDevice *device, mlccVkBuffer *buffer);

/// Submits the recorded launches (if any), waits for them, and frees the
/// command buffer and the params buffer for the next ones. The recorded
/// launches are dropped when this fails.
mlcc_status mlccVkSubmitAndWait(mlccVkDevice *device, const char *fn);

/// Unlinks `kernel` from its device and frees it, whatever parts of it
/// were made.
void mlccVkDestroyKernel(mlccVkDevice *device, mlccVkKernel *kernel);

/// mlcc/device.h's functions for a Vulkan device; the ops table
/// (VulkanOpen.c) calls them. Device.c has checked the arguments it checks.
void mlccVkClose(mlccVkDevice *device);
const char *mlccVkName(const mlccVkDevice *device);
uint64_t mlccVkOffsetAlignment(const mlccVkDevice *device);
uint64_t mlccVkValidationMessages(const mlccVkDevice *device);
mlcc_status mlccVkBufferCreate(mlccVkDevice *device, uint64_t bytes,
                               mlccVkBuffer **out);
void mlccVkBufferDestroy(mlccVkDevice *device, mlccVkBuffer *buffer);
mlcc_status mlccVkKernelCreate(mlccVkDevice *device,
                               const mlcc_device_kernel_desc *desc,
                               mlccVkKernel **out);
void mlccVkKernelDestroy(mlccVkDevice *device, mlccVkKernel *kernel);
mlcc_status mlccVkLaunch(mlccVkDevice *device, mlccVkKernel *kernel,
                         const uint32_t groups[3], const uint32_t *params,
                         uint32_t num_params,
                         const mlcc_device_binding *bindings,
                         uint32_t num_bindings);
mlcc_status mlccVkWrite(mlccVkDevice *device, mlccVkBuffer *buffer,
                        uint64_t offset, const void *src, uint64_t bytes);
mlcc_status mlccVkRead(mlccVkDevice *device, mlccVkBuffer *buffer,
                       uint64_t offset, void *dst, uint64_t bytes);
mlcc_status mlccVkWait(mlccVkDevice *device);

#endif // MLCC_RUNTIME_SRC_VULKANDEVICE_H
