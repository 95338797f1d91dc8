//===- VulkanLoader.c - dlopen of libvulkan and its function table --------===//

#include "VulkanLoader.h"
#include "LastError.h"

#include <dlfcn.h>
#include <string.h>

// The soname, not libvulkan.so: that link exists only where the development
// package is installed.
static const char VulkanLibrary[] = "libvulkan.so.1";

mlcc_status mlccVkLoadLibrary(mlcc_vk_functions *vk) {
  memset(vk, 0, sizeof(*vk));
  void *library = dlopen(VulkanLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    return mlcc_last_error_set(MLCC_NO_DEVICE,
                               "mlcc_device_open: cannot load %s: %s",
                               VulkanLibrary, why ? why : "unknown error");
  }
  void *symbol = dlsym(library, "vkGetInstanceProcAddr");
  if (!symbol) {
    dlclose(library);
    return mlcc_last_error_set(MLCC_NO_DEVICE,
                               "mlcc_device_open: %s has no "
                               "vkGetInstanceProcAddr: it is not a "
                               "Vulkan loader",
                               VulkanLibrary);
  }
  // ISO C has no conversion from an object pointer to a function pointer
  // (-pedantic says so); POSIX guarantees that the bytes are the function's
  // address, so copy them.
  _Static_assert(sizeof(symbol) == sizeof(vk->vkGetInstanceProcAddr),
                 "dlsym results must fit a function pointer");
  memcpy(&vk->vkGetInstanceProcAddr, &symbol, sizeof(symbol));
  vk->Library = library;

#define MLCC_VK_LOAD(name)                                                     \
  vk->name = (PFN_##name)vk->vkGetInstanceProcAddr(NULL, #name);               \
  if (!vk->name) {                                                             \
    mlccVkUnloadLibrary(vk);                                                   \
    return mlcc_last_error_set(MLCC_NO_DEVICE,                                 \
                               "mlcc_device_open: %s has no %s",               \
                               VulkanLibrary, #name);                          \
  }
#define MLCC_VK_LOAD_OPTIONAL(name)                                            \
  vk->name = (PFN_##name)vk->vkGetInstanceProcAddr(NULL, #name);
  MLCC_VK_GLOBAL_FUNCTIONS(MLCC_VK_LOAD, MLCC_VK_LOAD_OPTIONAL)
#undef MLCC_VK_LOAD
#undef MLCC_VK_LOAD_OPTIONAL
  return MLCC_OK;
}

mlcc_status mlccVkLoadInstance(mlcc_vk_functions *vk, VkInstance instance) {
#define MLCC_VK_LOAD(name)                                                     \
  vk->name = (PFN_##name)vk->vkGetInstanceProcAddr(instance, #name);           \
  if (!vk->name)                                                               \
    return mlcc_last_error_set(MLCC_INTERNAL, "the Vulkan loader gives no %s", \
                               #name);
#define MLCC_VK_LOAD_OPTIONAL(name)                                            \
  vk->name = (PFN_##name)vk->vkGetInstanceProcAddr(instance, #name);
  MLCC_VK_INSTANCE_FUNCTIONS(MLCC_VK_LOAD, MLCC_VK_LOAD_OPTIONAL)
#undef MLCC_VK_LOAD
#undef MLCC_VK_LOAD_OPTIONAL
  return MLCC_OK;
}

mlcc_status mlccVkLoadDevice(mlcc_vk_functions *vk, VkDevice device) {
#define MLCC_VK_LOAD(name)                                                     \
  vk->name = (PFN_##name)vk->vkGetDeviceProcAddr(device, #name);               \
  if (!vk->name)                                                               \
    return mlcc_last_error_set(MLCC_INTERNAL, "the Vulkan driver gives no %s", \
                               #name);
#define MLCC_VK_LOAD_OPTIONAL(name)                                            \
  vk->name = (PFN_##name)vk->vkGetDeviceProcAddr(device, #name);
  MLCC_VK_DEVICE_FUNCTIONS(MLCC_VK_LOAD, MLCC_VK_LOAD_OPTIONAL)
#undef MLCC_VK_LOAD
#undef MLCC_VK_LOAD_OPTIONAL
  return MLCC_OK;
}

void mlccVkUnloadLibrary(mlcc_vk_functions *vk) {
  if (vk->Library)
    dlclose(vk->Library);
  memset(vk, 0, sizeof(*vk));
}

const char *mlccVkResultName(VkResult result) {
  switch (result) {
#define MLCC_VK_RESULT(name)                                                   \
  case name:                                                                   \
    return #name;
    MLCC_VK_RESULT(VK_SUCCESS)
    MLCC_VK_RESULT(VK_NOT_READY)
    MLCC_VK_RESULT(VK_TIMEOUT)
    MLCC_VK_RESULT(VK_EVENT_SET)
    MLCC_VK_RESULT(VK_EVENT_RESET)
    MLCC_VK_RESULT(VK_INCOMPLETE)
    MLCC_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    MLCC_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    MLCC_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    MLCC_VK_RESULT(VK_ERROR_DEVICE_LOST)
    MLCC_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    MLCC_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    MLCC_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    MLCC_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    MLCC_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    MLCC_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    MLCC_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    MLCC_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    MLCC_VK_RESULT(VK_ERROR_UNKNOWN)
    MLCC_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    MLCC_VK_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    MLCC_VK_RESULT(VK_ERROR_FRAGMENTATION)
    MLCC_VK_RESULT(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
#undef MLCC_VK_RESULT
  default:
    return "unknown VkResult";
  }
}
