//===- VulkanLoader.h - The Vulkan functions, loaded at run time --*- C -*-===//
//
// Not a public header. The runtime never links libvulkan: a machine without
// a Vulkan loader must still load the runtime (and run CPU models), so
// VulkanDevice.c dlopens libvulkan.so.1 when a device is opened and reaches
// every function through the table below. Only vkGetInstanceProcAddr comes
// from dlsym; the others come from vkGetInstanceProcAddr and
// vkGetDeviceProcAddr, which is what the loader documents (and what skips
// its dispatch trampolines for device functions).
//
// Only built when the Vulkan headers were found (MLCC_HAVE_VULKAN_HEADERS).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_RUNTIME_SRC_VULKANLOADER_H
#define MLCC_RUNTIME_SRC_VULKANLOADER_H

#include "mlcc/status.h"

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

// The functions, by the level they are loaded at. F(name) for required
// ones, O(name) for optional ones (NULL when absent, checked where used).
#define MLCC_VK_GLOBAL_FUNCTIONS(F, O)                                         \
  O(vkEnumerateInstanceVersion)                                                \
  F(vkEnumerateInstanceLayerProperties)                                        \
  F(vkEnumerateInstanceExtensionProperties)                                    \
  F(vkCreateInstance)

#define MLCC_VK_INSTANCE_FUNCTIONS(F, O)                                       \
  F(vkDestroyInstance)                                                         \
  F(vkEnumeratePhysicalDevices)                                                \
  F(vkGetPhysicalDeviceProperties)                                             \
  F(vkGetPhysicalDeviceQueueFamilyProperties)                                  \
  F(vkGetPhysicalDeviceMemoryProperties)                                       \
  F(vkEnumerateDeviceExtensionProperties)                                      \
  F(vkCreateDevice)                                                            \
  F(vkGetDeviceProcAddr)                                                       \
  /* Vulkan 1.1: missing from a 1.0 loader, checked before use. */             \
  O(vkGetPhysicalDeviceProperties2)                                            \
  O(vkGetPhysicalDeviceFeatures2)                                              \
  /* VK_EXT_debug_utils: only with validation. */                              \
  O(vkCreateDebugUtilsMessengerEXT)                                            \
  O(vkDestroyDebugUtilsMessengerEXT)

#define MLCC_VK_DEVICE_FUNCTIONS(F, O)                                         \
  F(vkDestroyDevice)                                                           \
  F(vkGetDeviceQueue)                                                          \
  F(vkDeviceWaitIdle)                                                          \
  F(vkCreateBuffer)                                                            \
  F(vkDestroyBuffer)                                                           \
  F(vkGetBufferMemoryRequirements)                                             \
  F(vkAllocateMemory)                                                          \
  F(vkFreeMemory)                                                              \
  F(vkBindBufferMemory)                                                        \
  F(vkMapMemory)                                                               \
  F(vkUnmapMemory)                                                             \
  F(vkCreateShaderModule)                                                      \
  F(vkDestroyShaderModule)                                                     \
  F(vkCreateDescriptorSetLayout)                                               \
  F(vkDestroyDescriptorSetLayout)                                              \
  F(vkCreatePipelineLayout)                                                    \
  F(vkDestroyPipelineLayout)                                                   \
  F(vkCreatePipelineCache)                                                     \
  F(vkDestroyPipelineCache)                                                    \
  F(vkCreateComputePipelines)                                                  \
  F(vkDestroyPipeline)                                                         \
  F(vkCreateCommandPool)                                                       \
  F(vkDestroyCommandPool)                                                      \
  F(vkAllocateCommandBuffers)                                                  \
  F(vkBeginCommandBuffer)                                                      \
  F(vkEndCommandBuffer)                                                        \
  F(vkResetCommandBuffer)                                                      \
  F(vkCmdBindPipeline)                                                         \
  F(vkCmdPushDescriptorSetKHR)                                                 \
  F(vkCmdDispatch)                                                             \
  F(vkCmdPipelineBarrier)                                                      \
  F(vkCreateFence)                                                             \
  F(vkDestroyFence)                                                            \
  F(vkResetFences)                                                             \
  F(vkWaitForFences)                                                           \
  F(vkQueueSubmit)

#define MLCC_VK_DECLARE(name) PFN_##name name;

/// The loaded library and its functions. One per device: each device has
/// its own instance, and the loader counts dlopen references.
typedef struct mlcc_vk_functions {
  void *Library; // from dlopen; NULL when not loaded
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
  MLCC_VK_GLOBAL_FUNCTIONS(MLCC_VK_DECLARE, MLCC_VK_DECLARE)
  MLCC_VK_INSTANCE_FUNCTIONS(MLCC_VK_DECLARE, MLCC_VK_DECLARE)
  MLCC_VK_DEVICE_FUNCTIONS(MLCC_VK_DECLARE, MLCC_VK_DECLARE)
} mlcc_vk_functions;

#undef MLCC_VK_DECLARE

/// dlopens libvulkan.so.1 and loads the global functions. MLCC_NO_DEVICE
/// (with dlerror's words) when there is no loader; `vk` is left unloaded.
mlcc_status mlccVkLoadLibrary(mlcc_vk_functions *vk);

/// Loads the instance-level functions of `instance`.
mlcc_status mlccVkLoadInstance(mlcc_vk_functions *vk, VkInstance instance);

/// Loads the device-level functions of `device`.
mlcc_status mlccVkLoadDevice(mlcc_vk_functions *vk, VkDevice device);

/// dlcloses the library (when loaded) and clears the table.
void mlccVkUnloadLibrary(mlcc_vk_functions *vk);

/// The VkResult's enumerator name ("VK_ERROR_DEVICE_LOST"), or
/// "unknown VkResult".
const char *mlccVkResultName(VkResult result);

#endif // MLCC_RUNTIME_SRC_VULKANLOADER_H
