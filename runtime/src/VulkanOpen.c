//===- VulkanOpen.c - Opening and closing a Vulkan device -----------------===//
//
// The loader, the instance (with the validation layer when asked), the
// choice of a physical device by the selector rules of device.h, and the
// logical device with the features the compiler's kernels may use.
//
//===----------------------------------------------------------------------===//

#include "LastError.h"
#include "VulkanDevice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//===-- Validation messages -----------------------------------------------===//

static VKAPI_ATTR VkBool32 VKAPI_CALL onValidationMessage(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity,
    VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  (void)severity;
  (void)types;
  mlccVkDevice *device = user;
  atomic_fetch_add(&device->ValidationMessages, 1);
  fprintf(stderr, "mlcc vulkan validation: %s\n",
          data && data->pMessage ? data->pMessage : "(no message)");
  // VK_FALSE: the call that was validated goes on, as the spec requires.
  return VK_FALSE;
}

static VkDebugUtilsMessengerCreateInfoEXT messengerInfo(mlccVkDevice *device) {
  VkDebugUtilsMessengerCreateInfoEXT info = {
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = onValidationMessage,
      .pUserData = device,
  };
  return info;
}

//===-- Opening -----------------------------------------------------------===//

static const char ValidationLayer[] = "VK_LAYER_KHRONOS_validation";

static bool validationRequested(void) {
  const char *value = getenv("MLCC_VULKAN_VALIDATION");
  return value && value[0] && strcmp(value, "0") != 0;
}

static bool hasExtension(const VkExtensionProperties *extensions,
                         uint32_t count, const char *name) {
  for (uint32_t i = 0; i < count; ++i)
    if (strcmp(extensions[i].extensionName, name) == 0)
      return true;
  return false;
}

// Whether the layer is installed and the debug-utils extension is there
// (from the loader, or from the layer itself).
static mlcc_status checkValidationLayer(const mlcc_vk_functions *vk) {
  uint32_t count = 0;
  bool found = false;
  if (vk->vkEnumerateInstanceLayerProperties(&count, NULL) == VK_SUCCESS &&
      count > 0) {
    VkLayerProperties *layers = calloc(count, sizeof(*layers));
    if (!layers)
      return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                                 "mlcc_device_open: out of memory");
    if (vk->vkEnumerateInstanceLayerProperties(&count, layers) >= 0)
      for (uint32_t i = 0; i < count && !found; ++i)
        found = strcmp(layers[i].layerName, ValidationLayer) == 0;
    free(layers);
  }
  if (!found)
    return mlcc_last_error_set(
        MLCC_NO_DEVICE,
        "mlcc_device_open: MLCC_VULKAN_VALIDATION is set but the Vulkan "
        "layer %s is not installed (package vulkan-validationlayers)",
        ValidationLayer);
  found = false;
  for (int pass = 0; pass < 2 && !found; ++pass) {
    const char *layer = pass == 0 ? NULL : ValidationLayer;
    count = 0;
    if (vk->vkEnumerateInstanceExtensionProperties(layer, &count, NULL) !=
            VK_SUCCESS ||
        count == 0)
      continue;
    VkExtensionProperties *extensions = calloc(count, sizeof(*extensions));
    if (!extensions)
      return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                                 "mlcc_device_open: out of memory");
    if (vk->vkEnumerateInstanceExtensionProperties(layer, &count, extensions) >=
        0)
      found =
          hasExtension(extensions, count, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    free(extensions);
  }
  if (!found)
    return mlcc_last_error_set(MLCC_NO_DEVICE,
                               "mlcc_device_open: MLCC_VULKAN_VALIDATION is "
                               "set but the Vulkan loader has no %s",
                               VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  return MLCC_OK;
}

// The instance, for API 1.2 where the loader has it (so that 1.2 devices
// take the 8- and 16-bit features without extensions), else 1.1.
static mlcc_status createInstance(mlccVkDevice *device, bool validation,
                                  uint32_t *apiVersion) {
  mlcc_vk_functions *vk = &device->Vk;
  uint32_t loaderVersion = VK_API_VERSION_1_0;
  if (!vk->vkEnumerateInstanceVersion ||
      vk->vkEnumerateInstanceVersion(&loaderVersion) != VK_SUCCESS ||
      loaderVersion < VK_API_VERSION_1_1)
    return mlcc_last_error_set(MLCC_NO_DEVICE,
                               "mlcc_device_open: the Vulkan loader is "
                               "version 1.0; mlcc needs 1.1");
  *apiVersion = loaderVersion >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2
                                                    : VK_API_VERSION_1_1;
  VkApplicationInfo app = {
      .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
      .pApplicationName = "mlcc",
      .pEngineName = "mlcc",
      .apiVersion = *apiVersion,
  };
  const char *layers[] = {ValidationLayer};
  const char *extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  // Chained into the instance info, the messenger also sees what
  // vkCreateInstance and vkDestroyInstance report.
  VkDebugUtilsMessengerCreateInfoEXT messenger = messengerInfo(device);
  VkInstanceCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
      .pNext = validation ? &messenger : NULL,
      .pApplicationInfo = &app,
      .enabledLayerCount = validation ? 1 : 0,
      .ppEnabledLayerNames = layers,
      .enabledExtensionCount = validation ? 1 : 0,
      .ppEnabledExtensionNames = extensions,
  };
  VkResult result = vk->vkCreateInstance(&info, NULL, &device->Instance);
  if (result != VK_SUCCESS) {
    device->Instance = VK_NULL_HANDLE;
    if (mlccVkIsOutOfMemory(result))
      return mlccVkFailed(device, result, "mlcc_device_open",
                          "vkCreateInstance");
    // No driver (VK_ICD_FILENAMES naming nothing, no ICD installed) gives
    // VK_ERROR_INCOMPATIBLE_DRIVER.
    return mlcc_last_error_set(MLCC_NO_DEVICE,
                               "mlcc_device_open: no Vulkan driver: "
                               "vkCreateInstance failed (VkResult %d, %s)",
                               (int)result, mlccVkResultName(result));
  }
  mlcc_status status = mlccVkLoadInstance(vk, device->Instance);
  if (status != MLCC_OK)
    return status;
  if (!vk->vkGetPhysicalDeviceFeatures2 || !vk->vkGetPhysicalDeviceProperties2)
    return mlcc_last_error_set(MLCC_NO_DEVICE,
                               "mlcc_device_open: the Vulkan loader gives no "
                               "vkGetPhysicalDeviceFeatures2 (Vulkan 1.1)");
  if (validation) {
    if (!vk->vkCreateDebugUtilsMessengerEXT ||
        !vk->vkDestroyDebugUtilsMessengerEXT)
      return mlcc_last_error_set(MLCC_NO_DEVICE,
                                 "mlcc_device_open: the Vulkan loader gives "
                                 "no vkCreateDebugUtilsMessengerEXT");
    result = vk->vkCreateDebugUtilsMessengerEXT(device->Instance, &messenger,
                                                NULL, &device->Messenger);
    if (result != VK_SUCCESS) {
      device->Messenger = VK_NULL_HANDLE;
      return mlccVkFailed(device, result, "mlcc_device_open",
                          "vkCreateDebugUtilsMessengerEXT");
    }
  }
  return MLCC_OK;
}

static const char *deviceTypeName(VkPhysicalDeviceType type) {
  switch (type) {
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
    return "integrated GPU";
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
    return "discrete GPU";
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
    return "virtual GPU";
  case VK_PHYSICAL_DEVICE_TYPE_CPU:
    return "CPU";
  default:
    return "other";
  }
}

// The index the selector rules of device.h give, or -1 (no match).
static int64_t selectDevice(const VkPhysicalDeviceProperties *props,
                            uint32_t count, const char *selector) {
  if (!selector) {
    for (uint32_t i = 0; i < count; ++i)
      if (props[i].deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU)
        return i;
    return count > 0 ? 0 : -1;
  }
  bool decimal = true;
  uint64_t index = 0;
  for (const char *c = selector; *c && decimal; ++c) {
    decimal = *c >= '0' && *c <= '9';
    if (index < UINT32_MAX) // saturates: a huge index matches nothing
      index = index * 10 + (uint64_t)(*c - '0');
  }
  if (decimal)
    return index < count ? (int64_t)index : -1;
  for (uint32_t i = 0; i < count; ++i)
    if (mlccContainsIgnoringCase(props[i].deviceName, selector))
      return i;
  return -1;
}

static mlcc_status noMatchingDevice(const VkPhysicalDeviceProperties *props,
                                    uint32_t count, const char *selector,
                                    const char *from) {
  char list[MLCC_LAST_ERROR_CAPACITY];
  size_t used = 0;
  list[0] = '\0';
  for (uint32_t i = 0; i < count && used < sizeof(list); ++i) {
    int n = snprintf(list + used, sizeof(list) - used, "%s%u: %s (%s)",
                     i ? ", " : "", i, props[i].deviceName,
                     deviceTypeName(props[i].deviceType));
    if (n < 0)
      break;
    used += (size_t)n;
  }
  return mlcc_last_error_set(MLCC_NO_DEVICE,
                             "mlcc_device_open: no Vulkan device matches %s "
                             "'%s'; the devices are %s",
                             from, selector, list);
}

// The physical device, by the selector rules of device.h.
static mlcc_status pickPhysicalDevice(mlccVkDevice *device,
                                      const char *selector) {
  const mlcc_vk_functions *vk = &device->Vk;
  const char *from = "the selector";
  if (!selector || !selector[0]) {
    selector = getenv("MLCC_DEVICE");
    from = "MLCC_DEVICE";
    if (selector && !selector[0])
      selector = NULL;
  }
  uint32_t count = 0;
  VkResult result =
      vk->vkEnumeratePhysicalDevices(device->Instance, &count, NULL);
  if (result != VK_SUCCESS && result != VK_INCOMPLETE) {
    if (mlccVkIsOutOfMemory(result))
      return mlccVkFailed(device, result, "mlcc_device_open",
                          "vkEnumeratePhysicalDevices");
    return mlcc_last_error_set(MLCC_NO_DEVICE,
                               "mlcc_device_open: vkEnumeratePhysicalDevices "
                               "failed (VkResult %d, %s)",
                               (int)result, mlccVkResultName(result));
  }
  if (count == 0)
    return mlcc_last_error_set(MLCC_NO_DEVICE,
                               "mlcc_device_open: the Vulkan drivers found no "
                               "device");
  VkPhysicalDevice *devices = calloc(count, sizeof(*devices));
  VkPhysicalDeviceProperties *props = calloc(count, sizeof(*props));
  mlcc_status status = MLCC_OK;
  if (!devices || !props) {
    status = mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                                 "mlcc_device_open: out of memory");
    goto done;
  }
  result = vk->vkEnumeratePhysicalDevices(device->Instance, &count, devices);
  if (result != VK_SUCCESS && result != VK_INCOMPLETE) {
    status = mlccVkFailed(device, result, "mlcc_device_open",
                          "vkEnumeratePhysicalDevices");
    goto done;
  }
  for (uint32_t i = 0; i < count; ++i)
    vk->vkGetPhysicalDeviceProperties(devices[i], &props[i]);
  int64_t chosen = selectDevice(props, count, selector);
  if (chosen < 0) {
    status = noMatchingDevice(props, count, selector, from);
    goto done;
  }
  device->Physical = devices[chosen];
  device->Limits = props[chosen].limits;
  memcpy(device->Name, props[chosen].deviceName, sizeof(device->Name));
  device->Name[sizeof(device->Name) - 1] = '\0';
  if (props[chosen].apiVersion < VK_API_VERSION_1_1)
    status = mlcc_last_error_set(MLCC_UNSUPPORTED,
                                 "mlcc_device_open: the Vulkan device '%s' "
                                 "supports Vulkan 1.0 only; mlcc needs 1.1",
                                 device->Name);
done:
  free(devices);
  free(props);
  return status;
}

// The optional features the compiler's kernels may use, as one pNext chain.
typedef struct FeatureChain {
  VkPhysicalDeviceFeatures2 Core;
  VkPhysicalDevice16BitStorageFeatures Storage16;
  VkPhysicalDevice8BitStorageFeatures Storage8;
  VkPhysicalDeviceShaderFloat16Int8Features Float16Int8;
} FeatureChain;

static void linkFeatures(FeatureChain *chain, bool storage8, bool float16Int8) {
  memset(chain, 0, sizeof(*chain));
  chain->Core.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  chain->Storage16.sType =
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
  chain->Storage8.sType =
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES;
  chain->Float16Int8.sType =
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
  void **next = &chain->Core.pNext;
  *next = &chain->Storage16;
  next = &chain->Storage16.pNext;
  if (storage8) {
    *next = &chain->Storage8;
    next = &chain->Storage8.pNext;
  }
  if (float16Int8)
    *next = &chain->Float16Int8;
}

static mlcc_status createDevice(mlccVkDevice *device, uint32_t apiVersion) {
  const char fn[] = "mlcc_device_open";
  mlcc_vk_functions *vk = &device->Vk;
  uint32_t families = 0;
  vk->vkGetPhysicalDeviceQueueFamilyProperties(device->Physical, &families,
                                               NULL);
  VkQueueFamilyProperties *queues =
      calloc(families ? families : 1, sizeof(*queues));
  if (!queues)
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY, "%s: out of memory", fn);
  vk->vkGetPhysicalDeviceQueueFamilyProperties(device->Physical, &families,
                                               queues);
  uint32_t family = 0;
  while (family < families &&
         !(queues[family].queueFlags & VK_QUEUE_COMPUTE_BIT))
    ++family;
  free(queues);
  if (family == families)
    return mlcc_last_error_set(MLCC_UNSUPPORTED,
                               "%s: the Vulkan device '%s' has no compute "
                               "queue",
                               fn, device->Name);

  uint32_t count = 0;
  VkExtensionProperties *extensions = NULL;
  VkResult result = vk->vkEnumerateDeviceExtensionProperties(
      device->Physical, NULL, &count, NULL);
  if (result == VK_SUCCESS && count > 0) {
    extensions = calloc(count, sizeof(*extensions));
    if (!extensions)
      return mlcc_last_error_set(MLCC_OUT_OF_MEMORY, "%s: out of memory", fn);
    result = vk->vkEnumerateDeviceExtensionProperties(device->Physical, NULL,
                                                      &count, extensions);
  }
  if (result != VK_SUCCESS && result != VK_INCOMPLETE) {
    free(extensions);
    return mlccVkFailed(device, result, fn,
                        "vkEnumerateDeviceExtensionProperties");
  }
  bool push =
      hasExtension(extensions, count, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  bool ext8 =
      hasExtension(extensions, count, VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
  bool extF16 = hasExtension(extensions, count,
                             VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
  free(extensions);
  if (!push)
    return mlcc_last_error_set(MLCC_UNSUPPORTED,
                               "%s: the Vulkan device '%s' lacks the "
                               "extension %s, which mlcc's launches use",
                               fn, device->Name,
                               VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);

  VkPhysicalDevicePushDescriptorPropertiesKHR pushProps = {
      .sType =
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PUSH_DESCRIPTOR_PROPERTIES_KHR};
  VkPhysicalDeviceMaintenance3Properties maintenance3 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES,
      .pNext = &pushProps};
  VkPhysicalDeviceProperties2 props = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
      .pNext = &maintenance3};
  vk->vkGetPhysicalDeviceProperties2(device->Physical, &props);
  // Every 1.1 driver gives the limit; 0 would only mean "not said".
  device->MaxAllocation = maintenance3.maxMemoryAllocationSize
                              ? maintenance3.maxMemoryAllocationSize
                              : UINT64_MAX;
  device->MaxBindings = pushProps.maxPushDescriptors < MLCC_VK_MAX_BINDINGS
                            ? pushProps.maxPushDescriptors
                            : MLCC_VK_MAX_BINDINGS;
  vk->vkGetPhysicalDeviceMemoryProperties(device->Physical, &device->Memory);

  // The version the device is used at is the lower of the instance's and
  // its own; below 1.2 the 8-bit and float16/int8 features are extensions.
  uint32_t deviceVersion = props.properties.apiVersion;
  bool core12 =
      deviceVersion >= VK_API_VERSION_1_2 && apiVersion >= VK_API_VERSION_1_2;
  bool storage8 = core12 || ext8, float16Int8 = core12 || extF16;
  FeatureChain have, enable;
  linkFeatures(&have, storage8, float16Int8);
  vk->vkGetPhysicalDeviceFeatures2(device->Physical, &have.Core);
  linkFeatures(&enable, storage8, float16Int8);
  VkPhysicalDeviceFeatures *core = &enable.Core.features;
  core->shaderInt64 = have.Core.features.shaderInt64;
  core->shaderFloat64 = have.Core.features.shaderFloat64;
  core->shaderInt16 = have.Core.features.shaderInt16;
  enable.Storage16.storageBuffer16BitAccess =
      have.Storage16.storageBuffer16BitAccess;
  enable.Storage8.storageBuffer8BitAccess =
      have.Storage8.storageBuffer8BitAccess;
  enable.Float16Int8.shaderInt8 = have.Float16Int8.shaderInt8;
  enable.Float16Int8.shaderFloat16 = have.Float16Int8.shaderFloat16;

  // Below 1.2 the extensions are enabled whenever the device has them:
  // their feature structs are in the chain, which needs the extensions on.
  const char *names[3] = {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME};
  uint32_t numNames = 1;
  if (!core12 && ext8)
    names[numNames++] = VK_KHR_8BIT_STORAGE_EXTENSION_NAME;
  if (!core12 && extF16)
    names[numNames++] = VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME;

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue = {
      .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
      .queueFamilyIndex = family,
      .queueCount = 1,
      .pQueuePriorities = &priority,
  };
  VkDeviceCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
      .pNext = &enable.Core,
      .queueCreateInfoCount = 1,
      .pQueueCreateInfos = &queue,
      .enabledExtensionCount = numNames,
      .ppEnabledExtensionNames = names,
  };
  result = vk->vkCreateDevice(device->Physical, &info, NULL, &device->Device);
  if (result != VK_SUCCESS) {
    device->Device = VK_NULL_HANDLE;
    if (result == VK_ERROR_EXTENSION_NOT_PRESENT ||
        result == VK_ERROR_FEATURE_NOT_PRESENT)
      return mlcc_last_error_set(MLCC_UNSUPPORTED,
                                 "%s: vkCreateDevice failed for '%s' (VkResult "
                                 "%d, %s)",
                                 fn, device->Name, (int)result,
                                 mlccVkResultName(result));
    return mlccVkFailed(device, result, fn, "vkCreateDevice");
  }
  mlcc_status status = mlccVkLoadDevice(vk, device->Device);
  if (status != MLCC_OK)
    return status;
  vk->vkGetDeviceQueue(device->Device, family, 0, &device->Queue);

  VkPipelineCacheCreateInfo cacheInfo = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  result = vk->vkCreatePipelineCache(device->Device, &cacheInfo, NULL,
                                     &device->Cache);
  if (result != VK_SUCCESS) {
    device->Cache = VK_NULL_HANDLE;
    return mlccVkFailed(device, result, fn, "vkCreatePipelineCache");
  }
  VkCommandPoolCreateInfo poolInfo = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
      .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
      .queueFamilyIndex = family,
  };
  result =
      vk->vkCreateCommandPool(device->Device, &poolInfo, NULL, &device->Pool);
  if (result != VK_SUCCESS) {
    device->Pool = VK_NULL_HANDLE;
    return mlccVkFailed(device, result, fn, "vkCreateCommandPool");
  }
  VkCommandBufferAllocateInfo commandsInfo = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
      .commandPool = device->Pool,
      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
      .commandBufferCount = 1,
  };
  result = vk->vkAllocateCommandBuffers(device->Device, &commandsInfo,
                                        &device->Commands);
  if (result != VK_SUCCESS)
    return mlccVkFailed(device, result, fn, "vkAllocateCommandBuffers");
  VkFenceCreateInfo fenceInfo = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  result = vk->vkCreateFence(device->Device, &fenceInfo, NULL, &device->Fence);
  if (result != VK_SUCCESS) {
    device->Fence = VK_NULL_HANDLE;
    return mlccVkFailed(device, result, fn, "vkCreateFence");
  }
  device->Writes = calloc(device->MaxBindings, sizeof(*device->Writes));
  device->Infos = calloc(device->MaxBindings, sizeof(*device->Infos));
  if (!device->Writes || !device->Infos)
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY, "%s: out of memory", fn);
  return mlccVkNewBuffer(device, MLCC_VK_PARAMS_INITIAL_BYTES, fn,
                         &device->Params);
}

void mlccVkDestroyKernel(mlccVkDevice *device, mlccVkKernel *kernel);

// Frees what `device` holds, however far opening it got.
static void destroyDevice(mlccVkDevice *device) {
  mlcc_vk_functions *vk = &device->Vk;
  if (device->Device) {
    // Nothing is in flight between calls; recorded launches are dropped
    // with the pool. The wait covers a failed fence wait.
    if (!device->Lost)
      vk->vkDeviceWaitIdle(device->Device);
    while (device->Kernels)
      mlccVkDestroyKernel(device, device->Kernels);
    while (device->Buffers) {
      mlccVkBuffer *buffer = device->Buffers;
      device->Buffers = buffer->Next;
      mlccVkFreeBuffer(device, buffer);
    }
    if (device->Params)
      mlccVkFreeBuffer(device, device->Params);
    if (device->Fence)
      vk->vkDestroyFence(device->Device, device->Fence, NULL);
    if (device->Pool) // frees Commands
      vk->vkDestroyCommandPool(device->Device, device->Pool, NULL);
    if (device->Cache)
      vk->vkDestroyPipelineCache(device->Device, device->Cache, NULL);
    vk->vkDestroyDevice(device->Device, NULL);
  }
  if (device->Messenger)
    vk->vkDestroyDebugUtilsMessengerEXT(device->Instance, device->Messenger,
                                        NULL);
  if (device->Instance)
    vk->vkDestroyInstance(device->Instance, NULL);
  mlccVkUnloadLibrary(vk);
  free(device->Writes);
  free(device->Infos);
  free(device);
}

static const mlccDeviceOps VulkanOps;

mlcc_status mlccVkOpen(const char *selector, mlcc_device **out) {
  *out = NULL;
  mlccVkDevice *device = calloc(1, sizeof(*device));
  if (!device)
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "mlcc_device_open: cannot allocate the handle");
  atomic_init(&device->ValidationMessages, 0);
  bool validation = validationRequested();
  uint32_t apiVersion = 0;
  mlcc_status status = mlccVkLoadLibrary(&device->Vk);
  if (status == MLCC_OK && validation)
    status = checkValidationLayer(&device->Vk);
  if (status == MLCC_OK)
    status = createInstance(device, validation, &apiVersion);
  if (status == MLCC_OK)
    status = pickPhysicalDevice(device, selector);
  if (status == MLCC_OK)
    status = createDevice(device, apiVersion);
  if (status != MLCC_OK) {
    destroyDevice(device);
    return status;
  }
  device->Base.Ops = &VulkanOps;
  *out = &device->Base;
  return MLCC_OK;
}

void mlccVkClose(mlccVkDevice *device) {
  if (device)
    destroyDevice(device);
}

const char *mlccVkName(const mlccVkDevice *device) {
  return device ? device->Name : "";
}

uint64_t mlccVkOffsetAlignment(const mlccVkDevice *device) {
  if (!device)
    return 0;
  uint64_t alignment = device->Limits.minStorageBufferOffsetAlignment;
  return alignment ? alignment : 1;
}

uint64_t mlccVkValidationMessages(const mlccVkDevice *device) {
  return device ? atomic_load(&device->ValidationMessages) : 0;
}

//===-- The device's ops (DeviceLayer.h) ----------------------------------===//
//
// The public handles are this file's types: a Vulkan device only ever sees
// its own buffers and kernels.

static void opClose(mlcc_device *d) { mlccVkClose((mlccVkDevice *)d); }
static const char *opName(const mlcc_device *d) {
  return mlccVkName((const mlccVkDevice *)d);
}
static uint64_t opOffsetAlignment(const mlcc_device *d) {
  return mlccVkOffsetAlignment((const mlccVkDevice *)d);
}
static uint64_t opValidationMessages(const mlcc_device *d) {
  return mlccVkValidationMessages((const mlccVkDevice *)d);
}
static mlcc_status opBufferCreate(mlcc_device *d, uint64_t bytes,
                                  mlcc_device_buffer **out) {
  return mlccVkBufferCreate((mlccVkDevice *)d, bytes, (mlccVkBuffer **)out);
}
static void opBufferDestroy(mlcc_device *d, mlcc_device_buffer *buffer) {
  mlccVkBufferDestroy((mlccVkDevice *)d, (mlccVkBuffer *)buffer);
}
static mlcc_status opKernelCreate(mlcc_device *d,
                                  const mlcc_device_kernel_desc *desc,
                                  mlcc_device_kernel **out) {
  return mlccVkKernelCreate((mlccVkDevice *)d, desc, (mlccVkKernel **)out);
}
static void opKernelDestroy(mlcc_device *d, mlcc_device_kernel *kernel) {
  mlccVkKernelDestroy((mlccVkDevice *)d, (mlccVkKernel *)kernel);
}
static mlcc_status opLaunch(mlcc_device *d, mlcc_device_kernel *kernel,
                            const uint32_t groups[3], const uint32_t *params,
                            uint32_t num_params,
                            const mlcc_device_binding *bindings,
                            uint32_t num_bindings) {
  return mlccVkLaunch((mlccVkDevice *)d, (mlccVkKernel *)kernel, groups, params,
                      num_params, bindings, num_bindings);
}
static mlcc_status opWrite(mlcc_device *d, mlcc_device_buffer *buffer,
                           uint64_t offset, const void *src, uint64_t bytes) {
  return mlccVkWrite((mlccVkDevice *)d, (mlccVkBuffer *)buffer, offset, src,
                     bytes);
}
static mlcc_status opRead(mlcc_device *d, mlcc_device_buffer *buffer,
                          uint64_t offset, void *dst, uint64_t bytes) {
  return mlccVkRead((mlccVkDevice *)d, (mlccVkBuffer *)buffer, offset, dst,
                    bytes);
}
static mlcc_status opWait(mlcc_device *d) {
  return mlccVkWait((mlccVkDevice *)d);
}

static const mlccDeviceOps VulkanOps = {
    .close = opClose,
    .name = opName,
    .offsetAlignment = opOffsetAlignment,
    .validationMessages = opValidationMessages,
    .bufferCreate = opBufferCreate,
    .bufferDestroy = opBufferDestroy,
    .kernelCreate = opKernelCreate,
    .kernelDestroy = opKernelDestroy,
    .launch = opLaunch,
    .write = opWrite,
    .read = opRead,
    .wait = opWait,
    .setStream = NULL,
};
