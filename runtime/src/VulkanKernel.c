//===- VulkanKernel.c - Compute pipelines of the Vulkan device layer ------===//
//
// One kernel is a shader module, a push-descriptor set layout (binding 0 the
// parameter words, bindings 1..n the buffers), a pipeline layout and a
// compute pipeline made through the device's pipeline cache. Its entry
// point is named after the kernel, as the compiler writes it.
//
//===----------------------------------------------------------------------===//

#include "LastError.h"
#include "VulkanDevice.h"

#include <stdlib.h>
#include <string.h>

// SPIR-V numbers read by the entry point check.
enum {
  SpirvMagic = 0x07230203,
  SpirvOpEntryPoint = 15,
  SpirvOpExecutionMode = 16,
  SpirvOpDecorate = 71,
  SpirvOpFunction = 54,
  SpirvOpExecutionModeId = 331,
  SpirvExecutionModelGLCompute = 5,
  SpirvExecutionModeLocalSize = 17,
  SpirvDecorationBuiltIn = 11,
  SpirvBuiltInWorkgroupSize = 25,
};

// What the SPIR-V says about the kernel's entry point. Drivers may crash on
// a module without the entry point a pipeline names, so that much is
// checked here; the rest of the module is the driver's to reject.
static mlcc_status checkSpirv(const mlcc_device_kernel_desc *desc,
                              const char *fn) {
  const uint32_t *words = desc->code;
  uint64_t count = desc->code_bytes / 4;
  if (words[0] != SpirvMagic)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: kernel '%s': the code is not SPIR-V "
                               "(first word 0x%08x)",
                               fn, desc->name, (unsigned)words[0]);
  size_t nameBytes = strlen(desc->name) + 1;
  bool found = false, builtinSize = false, localSize = false;
  uint32_t entry = 0, size[3] = {0, 0, 0};
  for (uint64_t at = 5; at < count;) {
    uint32_t length = words[at] >> 16, opcode = words[at] & 0xffff;
    if (length == 0 || length > count - at)
      return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                                 "%s: kernel '%s': the SPIR-V instruction at "
                                 "word %llu is malformed",
                                 fn, desc->name, (unsigned long long)at);
    const uint32_t *op = words + at;
    if (opcode == SpirvOpFunction)
      break; // entry points, modes and decorations all come before
    if (opcode == SpirvOpEntryPoint && length > 3 && !found &&
        op[1] == SpirvExecutionModelGLCompute &&
        (uint64_t)(length - 3) * 4 >= nameBytes &&
        memcmp(op + 3, desc->name, nameBytes) == 0) {
      found = true;
      entry = op[2];
    } else if (opcode == SpirvOpExecutionMode && length >= 6 && found &&
               op[1] == entry && op[2] == SpirvExecutionModeLocalSize) {
      localSize = true;
      memcpy(size, op + 3, sizeof(size));
    } else if (opcode == SpirvOpExecutionModeId && found && length >= 3 &&
               op[1] == entry) {
      builtinSize = true; // LocalSizeId: sizes are constants, not read here
    } else if (opcode == SpirvOpDecorate && length >= 4 &&
               op[2] == SpirvDecorationBuiltIn &&
               op[3] == SpirvBuiltInWorkgroupSize) {
      builtinSize = true; // a WorkgroupSize constant overrides LocalSize
    }
    at += length;
  }
  if (!found)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: kernel '%s': the SPIR-V has no GLCompute "
                               "entry point named '%s'",
                               fn, desc->name, desc->name);
  if (localSize && !builtinSize &&
      (size[0] != desc->workgroup_size[0] ||
       size[1] != desc->workgroup_size[1] ||
       size[2] != desc->workgroup_size[2]))
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: kernel '%s': the descriptor's workgroup "
                               "size %ux%ux%u differs from the SPIR-V's "
                               "LocalSize %ux%ux%u",
                               fn, desc->name, desc->workgroup_size[0],
                               desc->workgroup_size[1], desc->workgroup_size[2],
                               size[0], size[1], size[2]);
  return MLCC_OK;
}

static mlcc_status checkKernelDesc(const mlccVkDevice *device,
                                   const mlcc_device_kernel_desc *desc,
                                   const char *fn) {
  if (!desc->name || !desc->name[0])
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: the kernel has no name (it is the SPIR-V "
                               "entry point's)",
                               fn);
  if (!desc->code || desc->code_bytes < 20 || desc->code_bytes % 4 != 0 ||
      (uintptr_t)desc->code % 4 != 0)
    return mlcc_last_error_set(
        MLCC_INVALID_ARGUMENT,
        "%s: kernel '%s': the code must be SPIR-V "
        "words, 4-byte aligned (%llu bytes at %p)",
        fn, desc->name, (unsigned long long)desc->code_bytes, desc->code);
  const VkPhysicalDeviceLimits *limits = &device->Limits;
  const uint32_t *wg = desc->workgroup_size;
  if (wg[0] == 0 || wg[1] == 0 || wg[2] == 0)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: kernel '%s': workgroup size %ux%ux%u has "
                               "a 0",
                               fn, desc->name, wg[0], wg[1], wg[2]);
  if (wg[0] > limits->maxComputeWorkGroupSize[0] ||
      wg[1] > limits->maxComputeWorkGroupSize[1] ||
      wg[2] > limits->maxComputeWorkGroupSize[2] ||
      (uint64_t)wg[0] * wg[1] * wg[2] > limits->maxComputeWorkGroupInvocations)
    return mlcc_last_error_set(
        MLCC_UNSUPPORTED,
        "%s: kernel '%s': workgroup size %ux%ux%u is beyond the device '%s' "
        "(at most %ux%ux%u and %u invocations)",
        fn, desc->name, wg[0], wg[1], wg[2], device->Name,
        limits->maxComputeWorkGroupSize[0], limits->maxComputeWorkGroupSize[1],
        limits->maxComputeWorkGroupSize[2],
        limits->maxComputeWorkGroupInvocations);
  uint64_t bindings = (uint64_t)desc->num_buffers + 1;
  if (bindings > device->MaxBindings ||
      bindings > limits->maxPerStageDescriptorStorageBuffers)
    return mlcc_last_error_set(
        MLCC_UNSUPPORTED,
        "%s: kernel '%s': %llu storage buffers are more than the device '%s' "
        "binds (%u pushed descriptors, %u per stage)",
        fn, desc->name, (unsigned long long)bindings, device->Name,
        device->MaxBindings, limits->maxPerStageDescriptorStorageBuffers);
  return checkSpirv(desc, fn);
}

void mlccVkDestroyKernel(mlccVkDevice *device, mlccVkKernel *kernel) {
  const mlcc_vk_functions *vk = &device->Vk;
  if (kernel->Prev)
    kernel->Prev->Next = kernel->Next;
  else if (device->Kernels == kernel)
    device->Kernels = kernel->Next;
  if (kernel->Next)
    kernel->Next->Prev = kernel->Prev;
  if (kernel->Pipeline)
    vk->vkDestroyPipeline(device->Device, kernel->Pipeline, NULL);
  if (kernel->Layout)
    vk->vkDestroyPipelineLayout(device->Device, kernel->Layout, NULL);
  if (kernel->SetLayout)
    vk->vkDestroyDescriptorSetLayout(device->Device, kernel->SetLayout, NULL);
  if (kernel->Module)
    vk->vkDestroyShaderModule(device->Device, kernel->Module, NULL);
  free(kernel->Name);
  free(kernel);
}

// The Vulkan objects of a kernel whose descriptor was checked.
static mlcc_status buildKernel(mlccVkDevice *device,
                               const mlcc_device_kernel_desc *desc,
                               mlccVkKernel *kernel, const char *fn) {
  const mlcc_vk_functions *vk = &device->Vk;
  VkShaderModuleCreateInfo moduleInfo = {
      .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
      .codeSize = (size_t)desc->code_bytes,
      .pCode = desc->code,
  };
  VkResult result = vk->vkCreateShaderModule(device->Device, &moduleInfo, NULL,
                                             &kernel->Module);
  if (result != VK_SUCCESS) {
    kernel->Module = VK_NULL_HANDLE;
    return mlccVkFailed(device, result, fn, "vkCreateShaderModule");
  }
  uint32_t count = desc->num_buffers + 1;
  VkDescriptorSetLayoutBinding *bindings = calloc(count, sizeof(*bindings));
  if (!bindings)
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY, "%s: out of memory", fn);
  for (uint32_t i = 0; i < count; ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo setInfo = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
      .flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR,
      .bindingCount = count,
      .pBindings = bindings,
  };
  result = vk->vkCreateDescriptorSetLayout(device->Device, &setInfo, NULL,
                                           &kernel->SetLayout);
  free(bindings);
  if (result != VK_SUCCESS) {
    kernel->SetLayout = VK_NULL_HANDLE;
    return mlccVkFailed(device, result, fn, "vkCreateDescriptorSetLayout");
  }
  VkPipelineLayoutCreateInfo layoutInfo = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
      .setLayoutCount = 1,
      .pSetLayouts = &kernel->SetLayout,
  };
  result = vk->vkCreatePipelineLayout(device->Device, &layoutInfo, NULL,
                                      &kernel->Layout);
  if (result != VK_SUCCESS) {
    kernel->Layout = VK_NULL_HANDLE;
    return mlccVkFailed(device, result, fn, "vkCreatePipelineLayout");
  }
  VkComputePipelineCreateInfo pipelineInfo = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage =
          {
              .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
              .stage = VK_SHADER_STAGE_COMPUTE_BIT,
              .module = kernel->Module,
              .pName = kernel->Name, // the compiler's entry point name
          },
      .layout = kernel->Layout,
  };
  result = vk->vkCreateComputePipelines(device->Device, device->Cache, 1,
                                        &pipelineInfo, NULL, &kernel->Pipeline);
  if (result != VK_SUCCESS) {
    kernel->Pipeline = VK_NULL_HANDLE;
    return mlccVkFailed(device, result, fn, "vkCreateComputePipelines");
  }
  return MLCC_OK;
}

mlcc_status mlccVkKernelCreate(mlccVkDevice *device,
                               const mlcc_device_kernel_desc *desc,
                               mlccVkKernel **out) {
  static const char fn[] = "mlcc_device_kernel_create";
  if (device->Lost)
    return mlccVkDeviceLost(fn);
  mlcc_status status = checkKernelDesc(device, desc, fn);
  if (status != MLCC_OK)
    return status;
  mlccVkKernel *kernel = calloc(1, sizeof(*kernel));
  size_t nameBytes = strlen(desc->name) + 1;
  char *name = malloc(nameBytes);
  if (!kernel || !name) {
    free(kernel);
    free(name);
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "%s: cannot allocate the kernel handle", fn);
  }
  memcpy(name, desc->name, nameBytes);
  kernel->Device = device;
  kernel->Name = name;
  kernel->NumBuffers = desc->num_buffers;
  kernel->Next = device->Kernels;
  if (device->Kernels)
    device->Kernels->Prev = kernel;
  device->Kernels = kernel;
  status = buildKernel(device, desc, kernel, fn);
  if (status != MLCC_OK) {
    mlccVkDestroyKernel(device, kernel);
    return status;
  }
  *out = kernel;
  return MLCC_OK;
}

void mlccVkKernelDestroy(mlccVkDevice *device, mlccVkKernel *kernel) {
  if (kernel->Device != device)
    return;
  if (device->Recording) // as for buffers: recorded launches may use it
    mlccVkSubmitAndWait(device, "mlcc_device_kernel_destroy");
  mlccVkDestroyKernel(device, kernel);
}
