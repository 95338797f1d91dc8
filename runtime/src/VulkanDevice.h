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

#include "VulkanLoader.h"
#include "mlcc/device.h"

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

struct mlcc_device_buffer {
  mlcc_device *Device;
  mlcc_device_buffer *Prev, *Next; // the device's list, for close
  VkBuffer Buffer;
  VkDeviceMemory Memory;
  unsigned char *Mapped;
  uint64_t Size; // as asked for
};

struct mlcc_device_kernel {
  mlcc_device *Device;
  mlcc_device_kernel *Prev, *Next; // the device's list, for close
  VkShaderModule Module;
  VkDescriptorSetLayout SetLayout;
  VkPipelineLayout Layout;
  VkPipeline Pipeline;
  uint32_t NumBuffers;
  char *Name; // owned copy, for messages
};

struct mlcc_device {
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
  mlcc_device_buffer *Params;
  uint64_t ParamsUsed;
  VkWriteDescriptorSet *Writes;  // MaxBindings entries
  VkDescriptorBufferInfo *Infos; // MaxBindings entries
  mlcc_device_buffer *Buffers;   // every live buffer, but Params
  mlcc_device_kernel *Kernels;   // every live kernel
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
mlcc_status mlccVkFailed(mlcc_device *device, VkResult result, const char *fn,
                         const char *call);

/// The failure of every call on a lost device.
mlcc_status mlccVkDeviceLost(const char *fn);

/// A mapped, zero-filled storage buffer of `bytes`, not linked into the
/// device's list.
mlcc_status mlccVkNewBuffer(mlcc_device *device, uint64_t bytes, const char *fn,
                            mlcc_device_buffer **out);

/// Frees a buffer made by mlccVkNewBuffer (already unlinked).
void mlccVkFreeBuffer(mlcc_device *device, mlcc_device_buffer *buffer);

/// Submits the recorded launches (if any), waits for them, and frees the
/// command buffer and the params buffer for the next ones. The recorded
/// launches are dropped when this fails.
mlcc_status mlccVkSubmitAndWait(mlcc_device *device, const char *fn);

/// Unlinks `kernel` from its device and frees it, whatever parts of it
/// were made.
void mlccVkDestroyKernel(mlcc_device *device, mlcc_device_kernel *kernel);

#endif // MLCC_RUNTIME_SRC_VULKANDEVICE_H
