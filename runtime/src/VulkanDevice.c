//===- VulkanDevice.c - The device layer over Vulkan ----------------------===//
//
// mlcc_device_* for MLCC_DEVICE_API_VULKAN. Version 1 keeps the moving parts
// few, because a model's launches are recorded and waited for in bursts:
//
// - Memory: every buffer is its own allocation in a HOST_VISIBLE |
//   HOST_COHERENT memory type (DEVICE_LOCAL too where the device has one),
//   mapped for its whole life, so a copy is a memcpy once the recorded work
//   has finished. No staging buffers, no flushes.
// - Work: one command buffer, begun at the first launch after a wait and
//   submitted (with one fence, waited for at once) by wait, read and write.
//   Nothing is ever in flight when a call returns, so destroying an object
//   or writing its memory never races with the device.
// - Descriptors: VK_KHR_push_descriptor, so a launch writes its bindings
//   into the command buffer and there are no pools to size or recycle.
//   Binding 0 is a range of the device's "params" buffer, which each launch
//   fills with its parameter words; it is reused from the start after every
//   wait.
//
// Each recorded dispatch is followed by a compute-to-compute memory barrier:
// the compiler's launches depend on each other nearly always, and a barrier
// between independent dispatches costs little next to the dispatches.
//
// This file has buffers, copies and launches; VulkanOpen.c opens and closes
// devices, VulkanKernel.c makes pipelines, VulkanLoader.c loads libvulkan.
// Without the Vulkan headers at build time (MLCC_HAVE_VULKAN_HEADERS unset)
// only this file is built, and only its stubs at the end: opening says why,
// in MLCC_NO_DEVICE.
//
//===----------------------------------------------------------------------===//

#include "LastError.h"
#include "mlcc/device.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#if MLCC_HAVE_VULKAN_HEADERS

#include "VulkanDevice.h"

#include <string.h>

bool mlccVkIsOutOfMemory(VkResult result) {
  return result == VK_ERROR_OUT_OF_HOST_MEMORY ||
         result == VK_ERROR_OUT_OF_DEVICE_MEMORY;
}

// A failed Vulkan call: MLCC_OUT_OF_MEMORY for the two out-of-memory
// results, MLCC_INTERNAL for the rest (a device model's work is valid by
// construction, so any other failure is the driver's or mlcc's).
mlcc_status mlccVkFailed(mlccVkDevice *device, VkResult result, const char *fn,
                         const char *call) {
  if (result == VK_ERROR_DEVICE_LOST && device)
    device->Lost = true;
  return mlcc_last_error_set(mlccVkIsOutOfMemory(result) ? MLCC_OUT_OF_MEMORY
                                                         : MLCC_INTERNAL,
                             "%s: %s failed (VkResult %d, %s)", fn, call,
                             (int)result, mlccVkResultName(result));
}

mlcc_status mlccVkDeviceLost(const char *fn) {
  return mlcc_last_error_set(MLCC_INTERNAL,
                             "%s: the Vulkan device was lost "
                             "(VK_ERROR_DEVICE_LOST); close it and open it "
                             "again",
                             fn);
}

static uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

//===-- Buffers -----------------------------------------------------------===//

// The memory type for a buffer: host-visible and coherent (copies are
// memcpy), device-local too when `deviceLocal` and one is.
static int32_t pickMemoryType(const VkPhysicalDeviceMemoryProperties *memory,
                              uint32_t allowed, bool deviceLocal) {
  const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  int32_t fallback = -1;
  for (uint32_t i = 0; i < memory->memoryTypeCount; ++i) {
    VkMemoryPropertyFlags flags = memory->memoryTypes[i].propertyFlags;
    if (!(allowed & (1u << i)) || (flags & host) != host)
      continue;
    if (!deviceLocal || (flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
      return (int32_t)i;
    if (fallback < 0)
      fallback = (int32_t)i;
  }
  return fallback;
}

void mlccVkFreeBuffer(mlccVkDevice *device, mlccVkBuffer *buffer) {
  const mlcc_vk_functions *vk = &device->Vk;
  if (buffer->Buffer)
    vk->vkDestroyBuffer(device->Device, buffer->Buffer, NULL);
  if (buffer->Memory)
    vk->vkFreeMemory(device->Device, buffer->Memory, NULL); // unmaps too
  free(buffer);
}

static mlcc_status allocateMemory(mlccVkDevice *device,
                                  const VkMemoryRequirements *reqs,
                                  mlccVkBuffer *buffer, const char *fn) {
  const mlcc_vk_functions *vk = &device->Vk;
  // Device-local host-visible memory is often a small heap (256 MiB
  // without resizable BAR): when it is full, plain host memory still works.
  VkResult result = VK_ERROR_OUT_OF_DEVICE_MEMORY;
  int32_t last = -1;
  for (int pass = 0; pass < 2; ++pass) {
    int32_t type =
        pickMemoryType(&device->Memory, reqs->memoryTypeBits, pass == 0);
    if (type < 0)
      return mlcc_last_error_set(MLCC_UNSUPPORTED,
                                 "%s: the device '%s' has no host-visible, "
                                 "coherent memory for storage buffers",
                                 fn, device->Name);
    if (type == last)
      break;
    last = type;
    VkMemoryAllocateInfo info = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = reqs->size,
        .memoryTypeIndex = (uint32_t)type,
    };
    result = vk->vkAllocateMemory(device->Device, &info, NULL, &buffer->Memory);
    if (result == VK_SUCCESS)
      break;
    buffer->Memory = VK_NULL_HANDLE;
    if (!mlccVkIsOutOfMemory(result))
      break;
  }
  if (result != VK_SUCCESS)
    return mlccVkFailed(device, result, fn, "vkAllocateMemory");
  return MLCC_OK;
}

// A mapped, zero-filled storage buffer; not linked into the device's list.
mlcc_status mlccVkNewBuffer(mlccVkDevice *device, uint64_t bytes,
                            const char *fn, mlccVkBuffer **out) {
  const mlcc_vk_functions *vk = &device->Vk;
  if (bytes > device->MaxAllocation || bytes > SIZE_MAX)
    return mlcc_last_error_set(
        MLCC_OUT_OF_RANGE,
        "%s: %llu bytes is more than the device '%s' allocates at once (%llu)",
        fn, (unsigned long long)bytes, device->Name,
        (unsigned long long)device->MaxAllocation);
  mlccVkBuffer *buffer = calloc(1, sizeof(*buffer));
  if (!buffer)
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "%s: cannot allocate the buffer handle", fn);
  buffer->Device = device;
  buffer->Size = bytes;
  VkBufferCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
      .size = bytes,
      .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
               VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT,
      .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
  };
  VkResult result =
      vk->vkCreateBuffer(device->Device, &info, NULL, &buffer->Buffer);
  if (result != VK_SUCCESS) {
    buffer->Buffer = VK_NULL_HANDLE;
    mlccVkFreeBuffer(device, buffer);
    return mlccVkFailed(device, result, fn, "vkCreateBuffer");
  }
  VkMemoryRequirements reqs;
  vk->vkGetBufferMemoryRequirements(device->Device, buffer->Buffer, &reqs);
  mlcc_status status = allocateMemory(device, &reqs, buffer, fn);
  if (status != MLCC_OK) {
    mlccVkFreeBuffer(device, buffer);
    return status;
  }
  const char *call = "vkBindBufferMemory";
  result =
      vk->vkBindBufferMemory(device->Device, buffer->Buffer, buffer->Memory, 0);
  if (result == VK_SUCCESS) {
    call = "vkMapMemory";
    void *mapped = NULL;
    result = vk->vkMapMemory(device->Device, buffer->Memory, 0, VK_WHOLE_SIZE,
                             0, &mapped);
    buffer->Mapped = mapped;
  }
  if (result != VK_SUCCESS) {
    mlccVkFreeBuffer(device, buffer);
    return mlccVkFailed(device, result, fn, call);
  }
  // Fresh memory holds whatever the driver left there; the contract says
  // zero, and coherent memory needs no flush after the memset.
  memset(buffer->Mapped, 0, (size_t)bytes);
  *out = buffer;
  return MLCC_OK;
}

//===-- Running the recorded work -----------------------------------------===//

// Submits the recorded launches (if any), waits for them and makes the
// command buffer and the params buffer free for the next ones. Recorded
// launches are dropped when this fails.
mlcc_status mlccVkSubmitAndWait(mlccVkDevice *device, const char *fn) {
  const mlcc_vk_functions *vk = &device->Vk;
  if (device->Lost)
    return mlccVkDeviceLost(fn);
  if (!device->Recording) {
    device->ParamsUsed = 0;
    return MLCC_OK;
  }
  device->Recording = false;
  device->ParamsUsed = 0;
  // The fence makes the shaders' writes available to the device only; the
  // host reads them through the mapping, which needs this barrier too.
  VkMemoryBarrier toHost = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
      .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
      .dstAccessMask = VK_ACCESS_HOST_READ_BIT,
  };
  vk->vkCmdPipelineBarrier(
      device->Commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
      VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &toHost, 0, NULL, 0, NULL);
  VkResult result = vk->vkEndCommandBuffer(device->Commands);
  if (result != VK_SUCCESS) {
    vk->vkResetCommandBuffer(device->Commands, 0);
    return mlccVkFailed(device, result, fn, "vkEndCommandBuffer");
  }
  VkSubmitInfo submit = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
      .commandBufferCount = 1,
      .pCommandBuffers = &device->Commands,
  };
  result = vk->vkQueueSubmit(device->Queue, 1, &submit, device->Fence);
  if (result != VK_SUCCESS) {
    vk->vkResetCommandBuffer(device->Commands, 0);
    return mlccVkFailed(device, result, fn, "vkQueueSubmit");
  }
  result = vk->vkWaitForFences(device->Device, 1, &device->Fence, VK_TRUE,
                               UINT64_MAX);
  if (result != VK_SUCCESS) {
    // The command buffer may still be pending: leave it alone. A failed
    // wait is a lost device in practice, which vkFailed records.
    device->Lost = true;
    return mlccVkFailed(device, result, fn, "vkWaitForFences");
  }
  result = vk->vkResetFences(device->Device, 1, &device->Fence);
  if (result != VK_SUCCESS)
    return mlccVkFailed(device, result, fn, "vkResetFences");
  result = vk->vkResetCommandBuffer(device->Commands, 0);
  if (result != VK_SUCCESS)
    return mlccVkFailed(device, result, fn, "vkResetCommandBuffer");
  return MLCC_OK;
}

//===-- Buffers, public ---------------------------------------------------===//

mlcc_status mlccVkBufferCreate(mlccVkDevice *device, uint64_t bytes,
                               mlccVkBuffer **out) {
  static const char fn[] = "mlcc_device_buffer_create";
  if (device->Lost)
    return mlccVkDeviceLost(fn);
  mlccVkBuffer *buffer = NULL;
  mlcc_status status = mlccVkNewBuffer(device, bytes, fn, &buffer);
  if (status != MLCC_OK)
    return status;
  buffer->Next = device->Buffers;
  if (device->Buffers)
    device->Buffers->Prev = buffer;
  device->Buffers = buffer;
  *out = buffer;
  return MLCC_OK;
}

void mlccVkBufferDestroy(mlccVkDevice *device, mlccVkBuffer *buffer) {
  if (buffer->Device != device)
    return;
  // Recorded launches may use it: run them first rather than leave them a
  // dangling buffer. A failure is recorded (and the launches dropped).
  if (device->Recording)
    mlccVkSubmitAndWait(device, "mlcc_device_buffer_destroy");
  if (buffer->Prev)
    buffer->Prev->Next = buffer->Next;
  else
    device->Buffers = buffer->Next;
  if (buffer->Next)
    buffer->Next->Prev = buffer->Prev;
  mlccVkFreeBuffer(device, buffer);
}

// A buffer argument of read or write, and its range.
static mlcc_status checkCopy(mlccVkDevice *device, mlccVkBuffer *buffer,
                             uint64_t offset, const void *host, uint64_t bytes,
                             const char *fn) {
  if (!buffer)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT, "%s: buffer is NULL", fn);
  if (buffer->Device != device)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: the buffer belongs to another device", fn);
  if (!host && bytes > 0)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: host pointer is NULL for %llu bytes", fn,
                               (unsigned long long)bytes);
  if (offset > buffer->Size || bytes > buffer->Size - offset)
    return mlcc_last_error_set(
        MLCC_OUT_OF_RANGE,
        "%s: bytes [%llu, %llu + %llu) are outside the buffer of %llu bytes",
        fn, (unsigned long long)offset, (unsigned long long)offset,
        (unsigned long long)bytes, (unsigned long long)buffer->Size);
  return MLCC_OK;
}

mlcc_status mlccVkWrite(mlccVkDevice *device, mlccVkBuffer *buffer,
                        uint64_t offset, const void *src, uint64_t bytes) {
  static const char fn[] = "mlcc_device_write";
  mlcc_status status = checkCopy(device, buffer, offset, src, bytes, fn);
  if (status == MLCC_OK)
    status = mlccVkSubmitAndWait(device, fn);
  // The next submit makes these host writes visible to the device.
  if (status == MLCC_OK && bytes > 0)
    memcpy(buffer->Mapped + offset, src, (size_t)bytes);
  return status;
}

mlcc_status mlccVkRead(mlccVkDevice *device, mlccVkBuffer *buffer,
                       uint64_t offset, void *dst, uint64_t bytes) {
  static const char fn[] = "mlcc_device_read";
  mlcc_status status = checkCopy(device, buffer, offset, dst, bytes, fn);
  if (status == MLCC_OK)
    status = mlccVkSubmitAndWait(device, fn);
  if (status == MLCC_OK && bytes > 0)
    memcpy(dst, buffer->Mapped + offset, (size_t)bytes);
  return status;
}

mlcc_status mlccVkWait(mlccVkDevice *device) {
  return mlccVkSubmitAndWait(device, "mlcc_device_wait");
}

//===-- Launches ----------------------------------------------------------===//

static mlcc_status checkLaunch(const mlccVkDevice *device,
                               const mlccVkKernel *kernel,
                               const uint32_t groups[3], const uint32_t *params,
                               uint32_t num_params,
                               const mlcc_device_binding *bindings,
                               uint32_t num_bindings, const char *fn) {
  if (kernel->Device != device)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: kernel '%s' belongs to another device", fn,
                               kernel->Name);
  if (!groups)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: kernel '%s': groups is NULL", fn,
                               kernel->Name);
  if (!params && num_params > 0)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: kernel '%s': params is NULL but "
                               "num_params is %u",
                               fn, kernel->Name, num_params);
  if (num_bindings != kernel->NumBuffers)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: kernel '%s' takes %u buffers, %u "
                               "bindings given",
                               fn, kernel->Name, kernel->NumBuffers,
                               num_bindings);
  if (!bindings && num_bindings > 0)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: kernel '%s': bindings is NULL", fn,
                               kernel->Name);
  uint64_t alignment = mlccVkOffsetAlignment(device);
  for (uint32_t i = 0; i < num_bindings; ++i) {
    const mlcc_device_binding *b = &bindings[i];
    const mlccVkBuffer *buffer = (const mlccVkBuffer *)b->buffer;
    if (!buffer || buffer->Device != device)
      return mlcc_last_error_set(
          MLCC_INVALID_ARGUMENT, "%s: kernel '%s': bindings[%u] %s", fn,
          kernel->Name, i,
          buffer ? "is a buffer of another device" : "has no buffer");
    if (b->offset % alignment != 0)
      return mlcc_last_error_set(
          MLCC_INVALID_ARGUMENT,
          "%s: kernel '%s': bindings[%u]: offset %llu is not a multiple of "
          "%llu",
          fn, kernel->Name, i, (unsigned long long)b->offset,
          (unsigned long long)alignment);
    if (b->offset >= buffer->Size)
      return mlcc_last_error_set(
          MLCC_OUT_OF_RANGE,
          "%s: kernel '%s': bindings[%u]: offset %llu is not inside the "
          "buffer of %llu bytes",
          fn, kernel->Name, i, (unsigned long long)b->offset,
          (unsigned long long)buffer->Size);
  }
  const uint32_t *max = device->Limits.maxComputeWorkGroupCount;
  if (groups[0] > max[0] || groups[1] > max[1] || groups[2] > max[2])
    return mlcc_last_error_set(MLCC_OUT_OF_RANGE,
                               "%s: kernel '%s': %ux%ux%u workgroups are more "
                               "than the device launches (%ux%ux%u)",
                               fn, kernel->Name, groups[0], groups[1],
                               groups[2], max[0], max[1], max[2]);
  return MLCC_OK;
}

// Room for `bytes` of parameter words in the params buffer: its offset.
// May run the recorded launches to free the buffer, or grow it.
static mlcc_status takeParams(mlccVkDevice *device, uint64_t bytes,
                              uint64_t *offset, const char *fn) {
  uint64_t alignment = mlccVkOffsetAlignment(device);
  uint64_t at = alignUp(device->ParamsUsed, alignment);
  if (at + bytes > device->Params->Size) {
    mlcc_status status = mlccVkSubmitAndWait(device, fn);
    if (status != MLCC_OK)
      return status;
    at = 0;
    if (bytes > device->Params->Size) {
      mlccVkBuffer *larger = NULL;
      status = mlccVkNewBuffer(
          device, alignUp(bytes, MLCC_VK_PARAMS_INITIAL_BYTES), fn, &larger);
      if (status != MLCC_OK)
        return status;
      mlccVkFreeBuffer(device, device->Params);
      device->Params = larger;
    }
  }
  device->ParamsUsed = at + bytes;
  *offset = at;
  return MLCC_OK;
}

mlcc_status mlccVkLaunch(mlccVkDevice *device, mlccVkKernel *kernel,
                         const uint32_t groups[3], const uint32_t *params,
                         uint32_t num_params,
                         const mlcc_device_binding *bindings,
                         uint32_t num_bindings) {
  static const char fn[] = "mlcc_device_launch";
  mlcc_status status = checkLaunch(device, kernel, groups, params, num_params,
                                   bindings, num_bindings, fn);
  if (status != MLCC_OK)
    return status;
  if (device->Lost)
    return mlccVkDeviceLost(fn);
  if (groups[0] == 0 || groups[1] == 0 || groups[2] == 0)
    return MLCC_OK; // an empty grid: nothing to run
  const mlcc_vk_functions *vk = &device->Vk;
  // A kernel without parameters still declares binding 0, which must be
  // bound: 4 bytes, one word.
  uint64_t paramBytes = num_params ? (uint64_t)num_params * 4 : 4;
  if (paramBytes > device->Limits.maxStorageBufferRange)
    return mlcc_last_error_set(MLCC_OUT_OF_RANGE,
                               "%s: kernel '%s': %u parameter words are more "
                               "than one binding holds",
                               fn, kernel->Name, num_params);
  uint64_t paramOffset = 0;
  status = takeParams(device, paramBytes, &paramOffset, fn);
  if (status != MLCC_OK)
    return status;
  if (num_params)
    memcpy(device->Params->Mapped + paramOffset, params, (size_t)paramBytes);
  else
    memset(device->Params->Mapped + paramOffset, 0, 4);

  if (!device->Recording) {
    VkCommandBufferBeginInfo begin = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    VkResult result = vk->vkBeginCommandBuffer(device->Commands, &begin);
    if (result != VK_SUCCESS)
      return mlccVkFailed(device, result, fn, "vkBeginCommandBuffer");
    device->Recording = true;
  }
  VkDescriptorBufferInfo *infos = device->Infos;
  VkWriteDescriptorSet *writes = device->Writes;
  infos[0] =
      (VkDescriptorBufferInfo){device->Params->Buffer, paramOffset, paramBytes};
  for (uint32_t i = 0; i < num_bindings; ++i) {
    const mlcc_device_binding *b = &bindings[i];
    const mlccVkBuffer *buffer = (const mlccVkBuffer *)b->buffer;
    // The whole rest of the buffer, but no more than one binding may span:
    // a kernel bound into a large arena reads only its own part of it.
    uint64_t range = buffer->Size - b->offset;
    infos[i + 1] =
        (VkDescriptorBufferInfo){buffer->Buffer, b->offset,
                                 range > device->Limits.maxStorageBufferRange
                                     ? device->Limits.maxStorageBufferRange
                                     : VK_WHOLE_SIZE};
  }
  for (uint32_t i = 0; i <= num_bindings; ++i)
    writes[i] = (VkWriteDescriptorSet){
        .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
        .dstBinding = i,
        .descriptorCount = 1,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .pBufferInfo = &infos[i],
    };
  VkCommandBuffer commands = device->Commands;
  vk->vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE,
                        kernel->Pipeline);
  vk->vkCmdPushDescriptorSetKHR(commands, VK_PIPELINE_BIND_POINT_COMPUTE,
                                kernel->Layout, 0, num_bindings + 1, writes);
  vk->vkCmdDispatch(commands, groups[0], groups[1], groups[2]);
  VkMemoryBarrier barrier = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
      .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
      .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
  };
  vk->vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                           VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier,
                           0, NULL, 0, NULL);
  return MLCC_OK;
}

#else // !MLCC_HAVE_VULKAN_HEADERS

#include "DeviceLayer.h"

// Built without the Vulkan headers: no Vulkan device can be opened.
mlcc_status mlccVkOpen(const char *selector, mlcc_device **out) {
  (void)selector;
  *out = NULL;
  return mlcc_last_error_set(MLCC_NO_DEVICE,
                             "mlcc_device_open: this runtime was built "
                             "without Vulkan headers");
}

#endif // MLCC_HAVE_VULKAN_HEADERS
