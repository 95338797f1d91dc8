//===- device.h - The runtime's device layer ----------------------*- C -*-===//
//
// One small interface over a GPU API: open a device, make buffers, load a
// kernel, record launches, copy, wait. Each API is implemented in
// runtime/src (Device.c dispatches): Vulkan in Vulkan*.c (only a stub
// without the Vulkan headers at build time), CUDA in Cuda*.c (no CUDA
// headers needed). The runtime never links a GPU API: the implementation
// loads it (libvulkan.so.1, libcuda.so.1) with dlopen when a device is
// opened, so a machine without a driver or a device gets MLCC_NO_DEVICE
// with a message, never a crash or a link error.
//
// Compiled device models (mlcc compile --target vulkan) use this layer
// through the model runtime (Model.c, DeviceModel.c); applications may use
// it directly to choose or inspect a device.
//
// Kernels follow one binding convention, written by the compiler: binding 0
// of descriptor set 0 is the launch's parameter words (a storage buffer of
// uint32_t), bindings 1..n are the launch's buffers, in order. A CUDA
// kernel takes the same as 1 + n pointer arguments. Every
// function records its message (mlcc_last_error_message) when it fails.
//
// A device, and the buffers and kernels made on it, are used by one thread
// at a time; different devices may be used by different threads.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_DEVICE_H
#define MLCC_DEVICE_H

#include "mlcc/status.h"

#include <stdint.h>

MLCC_EXTERN_C_BEGIN

/// The GPU APIs a device model can be compiled for. Values are part of the
/// model ABI.
typedef enum mlcc_device_api {
  MLCC_DEVICE_API_VULKAN = 1,
  MLCC_DEVICE_API_CUDA = 2,
  MLCC_DEVICE_API_METAL = 3,
} mlcc_device_api;

/// A CUDA kernel's code (mlcc_device_kernel_desc::code): a bundle of images
/// of the one kernel for several GPU architectures. The header, then
/// num_images entries, then the images; integers little-endian. The device
/// layer loads the cubin of the device's architecture (same major version,
/// highest minor not above the device's), else JIT-compiles the PTX of the
/// newest architecture not above the device's.
#define MLCC_CUDA_BUNDLE_MAGIC "MLCCCUDA"
typedef struct mlcc_cuda_bundle_header {
  char magic[8]; ///< MLCC_CUDA_BUNDLE_MAGIC, no NUL
  uint32_t num_images;
  uint32_t reserved; ///< 0
} mlcc_cuda_bundle_header;

typedef enum mlcc_cuda_image_kind {
  MLCC_CUDA_IMAGE_PTX = 1,   ///< PTX text with its NUL
  MLCC_CUDA_IMAGE_CUBIN = 2, ///< ptxas's ELF
} mlcc_cuda_image_kind;

typedef struct mlcc_cuda_image {
  uint32_t kind;   ///< an mlcc_cuda_image_kind
  uint32_t arch;   ///< compute capability: 80 for sm_80
  uint64_t offset; ///< from the bundle's first byte
  uint64_t bytes;
} mlcc_cuda_image;

/// A Metal kernel's code (mlcc_device_kernel_desc::code): the header, the
/// kernel's MSL source (one translation unit, its kernel function named as
/// the kernel, buffer(i) for binding i) and, when Apple's toolchain was
/// found at compile time, the same kernel as a metallib, which the device
/// layer loads in preference to compiling the source. Integers
/// little-endian; offsets from the header's first byte.
#define MLCC_METAL_KERNEL_MAGIC "MLCCMETL"
typedef struct mlcc_metal_kernel_header {
  char magic[8];        ///< MLCC_METAL_KERNEL_MAGIC, no NUL
  uint32_t msl_version; ///< the source's MSL: 20300 for 2.3
  uint32_t reserved;    ///< 0
  uint64_t source_offset;
  uint64_t source_bytes; ///< with the source's NUL
  uint64_t metallib_offset;
  uint64_t metallib_bytes; ///< 0: none
} mlcc_metal_kernel_header;

/// One compute kernel, as a model object holds it.
typedef struct mlcc_device_kernel_desc {
  /// The kernel's name, in messages, and the name of the SPIR-V entry
  /// point (a GLCompute one) the pipeline is made from: the compiler names
  /// each entry point after its kernel, not "main".
  const char *name;
  /// SPIR-V words (Vulkan), 4-byte aligned; a bundle (CUDA) or a kernel
  /// header and what follows (Metal), 8-byte aligned
  const void *code;
  uint64_t code_bytes;
  /// Storage buffers after the parameter words: bindings 1..num_buffers.
  uint32_t num_buffers;
  /// The workgroup size the kernel was written for (its entry point's
  /// LocalSize, checked against it when the module states one; MSL does
  /// not carry it: Metal dispatches threadgroups of this size); launches
  /// give the number of workgroups.
  uint32_t workgroup_size[3];
} mlcc_device_kernel_desc;

typedef struct mlcc_device mlcc_device;
typedef struct mlcc_device_buffer mlcc_device_buffer;
typedef struct mlcc_device_kernel mlcc_device_kernel;

/// A buffer range bound to a kernel: from `offset` (a multiple of
/// mlcc_device_offset_alignment, inside the buffer) to the buffer's end, or
/// to the device's maxStorageBufferRange past `offset` when that is nearer.
typedef struct mlcc_device_binding {
  mlcc_device_buffer *buffer;
  uint64_t offset;
} mlcc_device_binding;

/// Opens a device of `api`. `selector` chooses among several: a decimal
/// index into the API's device list, or a case-insensitive substring of
/// the device's name ("llvmpipe"); NULL or "" takes the MLCC_DEVICE
/// environment variable, and without it the first discrete GPU, else the
/// first device. With MLCC_VULKAN_VALIDATION=1 in the environment the
/// Khronos validation layer is enabled (opening fails when it is not
/// installed) and every message it gives is printed to stderr and counted.
/// No loader, no driver or no matching device: MLCC_NO_DEVICE (a message
/// lists the devices there are). A device without Vulkan 1.1 or
/// VK_KHR_push_descriptor: MLCC_UNSUPPORTED. Other APIs: MLCC_UNSUPPORTED.
/// CUDA: the CUDA driver's device list, in its order, and without a
/// selector the first device; no libcuda.so.1, a failing cuInit or no
/// device: MLCC_NO_DEVICE. MLCC_CUDA_GRAPHS=0 in the environment turns the
/// capture of repeated launch batches into CUDA graphs off.
/// Metal (a runtime built for an Apple platform): MTLCopyAllDevices's
/// list (MTLCreateSystemDefaultDevice's on iOS), and without a selector
/// the system default device; elsewhere, or with no Metal device:
/// MLCC_NO_DEVICE.
MLCC_API mlcc_status mlcc_device_open(mlcc_device_api api, const char *selector,
                                      mlcc_device **out);

/// Frees the device, with the buffers and kernels still made on it (their
/// handles become invalid); launches recorded but not run are dropped.
/// NULL is a no-op.
MLCC_API void mlcc_device_close(mlcc_device *device);

/// The device's name as its driver gives it ("llvmpipe (LLVM 15.0.6, 256
/// bits)"); valid while the device is open. "" for NULL.
MLCC_API const char *mlcc_device_name(const mlcc_device *device);

/// The alignment binding offsets need (minStorageBufferOffsetAlignment);
/// 0 for NULL.
MLCC_API uint64_t mlcc_device_offset_alignment(const mlcc_device *device);

/// Validation-layer messages (warnings and errors) seen since the device
/// was opened; 0 without validation.
MLCC_API uint64_t mlcc_device_validation_messages(const mlcc_device *device);

/// A buffer of `bytes` (> 0; 0 is MLCC_INVALID_ARGUMENT) in device memory,
/// zero-filled.
MLCC_API mlcc_status mlcc_device_buffer_create(mlcc_device *device,
                                               uint64_t bytes,
                                               mlcc_device_buffer **out);
/// Frees `buffer` (NULL is a no-op). Launches recorded and not yet run are
/// run first, as by mlcc_device_wait, since they may use it.
MLCC_API void mlcc_device_buffer_destroy(mlcc_device *device,
                                         mlcc_device_buffer *buffer);

/// Makes the kernel's pipeline (once; launches reuse it). The code is not
/// kept: `desc` may be freed when this returns.
MLCC_API mlcc_status mlcc_device_kernel_create(
    mlcc_device *device, const mlcc_device_kernel_desc *desc,
    mlcc_device_kernel **out);
/// Frees `kernel` (NULL is a no-op), after running the recorded launches
/// as mlcc_device_buffer_destroy does.
MLCC_API void mlcc_device_kernel_destroy(mlcc_device *device,
                                         mlcc_device_kernel *kernel);

/// Records a launch of groups[0] x groups[1] x groups[2] workgroups, with
/// `params` (num_params words, copied now; may be 0) at binding 0 and
/// bindings[i] at binding i + 1 (num_bindings must be the kernel's
/// num_buffers). Launches run in the order they are recorded, each seeing
/// every earlier one's writes. Nothing runs until mlcc_device_wait or a
/// copy. A 0 in `groups` records nothing (MLCC_OK); more workgroups than
/// the device's maxComputeWorkGroupCount: MLCC_OUT_OF_RANGE.
MLCC_API mlcc_status mlcc_device_launch(mlcc_device *device,
                                        mlcc_device_kernel *kernel,
                                        const uint32_t groups[3],
                                        const uint32_t *params,
                                        uint32_t num_params,
                                        const mlcc_device_binding *bindings,
                                        uint32_t num_bindings);

/// Copies host memory into a buffer, after every launch recorded so far
/// has finished.
MLCC_API mlcc_status mlcc_device_write(mlcc_device *device,
                                       mlcc_device_buffer *buffer,
                                       uint64_t offset, const void *src,
                                       uint64_t bytes);

/// Runs the launches recorded so far, waits for them and copies from a
/// buffer into host memory.
MLCC_API mlcc_status mlcc_device_read(mlcc_device *device,
                                      mlcc_device_buffer *buffer,
                                      uint64_t offset, void *dst,
                                      uint64_t bytes);

/// Runs the launches recorded so far and waits for them.
MLCC_API mlcc_status mlcc_device_wait(mlcc_device *device);

/// CUDA: runs the device's work from now on on `stream` (a CUstream the
/// application made on the device's primary context, and keeps alive until
/// it sets another or closes the device); NULL returns to the device's own
/// stream. What was recorded runs first. Other APIs: MLCC_UNSUPPORTED.
MLCC_API mlcc_status mlcc_device_set_stream(mlcc_device *device, void *stream);

MLCC_EXTERN_C_END

#endif // MLCC_DEVICE_H
