//===- MetalDevice.m - The device layer on Metal (Apple platforms) --------===//
//
// mlcc/device.h on Metal: one MTLDevice and command queue per device; each
// kernel a library (from its metallib when the compiler could make one,
// else from its MSL source, compiled here once at create time) and one
// compute pipeline; every buffer one MTLBuffer in shared storage (on Apple
// silicon the CPU and GPU share it, so writes and reads are copies into
// and out of it, with no staging). Launches are encoded into one compute
// encoder of one command buffer, serial dispatches in recording order, and
// committed at the next wait, read or write: a whole model run is one
// command buffer. Each launch's parameter words go into a shared
// parameter buffer that the recorded launches bind at their offsets.
//
// Manual reference counting (no ARC), so that plain C structs hold the
// Metal objects; every entry point drains its own autorelease pool, since
// a C application's threads have none.
//
//===----------------------------------------------------------------------===//

#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

#include "DeviceLayer.h"
#include "LastError.h"
#include "MetalKernelCode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Parameter words of the launches recorded into one command buffer.
enum { ParamsChunkBytes = 64 * 1024, ParamsAlignment = 256 };

typedef struct mlccMtlParams {
  id<MTLBuffer> buffer;
  uint64_t used;
  struct mlccMtlParams *next;
} mlccMtlParams;

typedef struct mlccMtlDevice {
  struct mlcc_device base;
  id<MTLDevice> device;
  id<MTLCommandQueue> queue;
  id<MTLCommandBuffer> commands;        // recording; nil when nothing is
  id<MTLComputeCommandEncoder> encoder; // open on commands
  mlccMtlParams *params;                // in use by `commands`, newest first
  mlccMtlParams *spareParams;           // free for the next command buffer
  char name[256];
} mlccMtlDevice;

typedef struct mlccMtlBuffer {
  id<MTLBuffer> buffer;
  uint64_t bytes;
} mlccMtlBuffer;

typedef struct mlccMtlKernel {
  id<MTLComputePipelineState> pipeline;
  uint32_t numBuffers;
  uint32_t threads[3];
  char name[64];
} mlccMtlKernel;

static mlccMtlDevice *asMetal(mlcc_device *device) {
  return (mlccMtlDevice *)device;
}

static mlcc_status fail(mlcc_status status, const char *fn, const char *what,
                        NSError *error) {
  const char *detail =
      error ? [[error localizedDescription] UTF8String] : "no details";
  return mlcc_last_error_set(status, "%s: %s: %s", fn, what,
                             detail ? detail : "no details");
}

static void releaseParams(mlccMtlParams *chunk) {
  while (chunk) {
    mlccMtlParams *next = chunk->next;
    [chunk->buffer release];
    free(chunk);
    chunk = next;
  }
}

// Commits what was recorded and waits for it; the parameter chunks it used
// become spare.
static mlcc_status submit(mlccMtlDevice *d, const char *fn) {
  if (!d->commands)
    return MLCC_OK;
  [d->encoder endEncoding];
  [d->encoder release];
  d->encoder = nil;
  id<MTLCommandBuffer> commands = d->commands;
  d->commands = nil;
  [commands commit];
  [commands waitUntilCompleted];
  mlcc_status status = MLCC_OK;
  if ([commands status] == MTLCommandBufferStatusError)
    status =
        fail(MLCC_INTERNAL, fn, "the command buffer failed", [commands error]);
  [commands release];
  while (d->params) {
    mlccMtlParams *chunk = d->params;
    d->params = chunk->next;
    chunk->used = 0;
    chunk->next = d->spareParams;
    d->spareParams = chunk;
  }
  return status;
}

static void metalClose(mlcc_device *device) {
  mlccMtlDevice *d = asMetal(device);
  @autoreleasepool {
    submit(d, "mlcc_device_close");
    releaseParams(d->params);
    releaseParams(d->spareParams);
    [d->queue release];
    [d->device release];
  }
  free(d);
}

static const char *metalName(const mlcc_device *device) {
  return ((const mlccMtlDevice *)device)->name;
}

static uint64_t metalOffsetAlignment(const mlcc_device *device) {
  (void)device;
  // Constant-buffer offsets on Macs with AMD and Intel GPUs; Apple's
  // GPUs need 4. The compiler lays buffers out at this alignment.
  return 256;
}

static uint64_t metalValidationMessages(const mlcc_device *device) {
  (void)device;
  return 0;
}

static mlcc_status metalBufferCreate(mlcc_device *device, uint64_t bytes,
                                     mlcc_device_buffer **out) {
  static const char fn[] = "mlcc_device_buffer_create";
  mlccMtlDevice *d = asMetal(device);
  if (bytes > [d->device maxBufferLength])
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "%s: %llu bytes; %s's buffers hold at most %llu",
                               fn, (unsigned long long)bytes, d->name,
                               (unsigned long long)[d->device maxBufferLength]);
  mlccMtlBuffer *b = calloc(1, sizeof(*b));
  if (!b)
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY, "%s: out of memory", fn);
  @autoreleasepool {
    b->buffer = [d->device newBufferWithLength:(NSUInteger)bytes
                                       options:MTLResourceStorageModeShared];
  }
  if (!b->buffer) {
    free(b);
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "%s: %s cannot allocate %llu bytes", fn, d->name,
                               (unsigned long long)bytes);
  }
  memset([b->buffer contents], 0, (size_t)bytes);
  b->bytes = bytes;
  *out = (mlcc_device_buffer *)b;
  return MLCC_OK;
}

static void metalBufferDestroy(mlcc_device *device,
                               mlcc_device_buffer *buffer) {
  mlccMtlBuffer *b = (mlccMtlBuffer *)buffer;
  @autoreleasepool {
    submit(asMetal(device), "mlcc_device_buffer_destroy");
    [b->buffer release];
  }
  free(b);
}

// The kernel's library: its metallib when it has one, else its source.
static id<MTLLibrary> makeLibrary(mlccMtlDevice *d,
                                  const mlcc_device_kernel_desc *desc,
                                  mlcc_status *status) {
  static const char fn[] = "mlcc_device_kernel_create";
  mlccMetalKernelParts parts;
  *status = mlccMetalReadKernel(desc, &parts);
  if (*status != MLCC_OK)
    return nil;
  NSError *error = nil;
  id<MTLLibrary> library = nil;
  if (parts.metallib) {
    dispatch_data_t data =
        dispatch_data_create(parts.metallib, (size_t)parts.metallibBytes, NULL,
                             DISPATCH_DATA_DESTRUCTOR_DEFAULT);
    library = [d->device newLibraryWithData:data error:&error];
    dispatch_release(data);
  } else {
    NSString *source = [NSString stringWithUTF8String:parts.source];
    MTLCompileOptions *options = [[MTLCompileOptions alloc] init];
    [options setLanguageVersion:MTLLanguageVersion2_3];
    library = [d->device newLibraryWithSource:source
                                      options:options
                                        error:&error];
    [options release];
  }
  if (!library)
    *status = fail(MLCC_INTERNAL, fn,
                   parts.metallib ? "Metal cannot load the kernel's metallib"
                                  : "Metal cannot compile the kernel's MSL",
                   error);
  return library;
}

static mlcc_status metalKernelCreate(mlcc_device *device,
                                     const mlcc_device_kernel_desc *desc,
                                     mlcc_device_kernel **out) {
  static const char fn[] = "mlcc_device_kernel_create";
  mlccMtlDevice *d = asMetal(device);
  mlccMtlKernel *k = calloc(1, sizeof(*k));
  if (!k)
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY, "%s: out of memory", fn);
  mlcc_status status = MLCC_OK;
  @autoreleasepool {
    id<MTLLibrary> library = makeLibrary(d, desc, &status);
    id<MTLFunction> function = nil;
    if (library) {
      function = [library
          newFunctionWithName:[NSString stringWithUTF8String:desc->name]];
      if (!function)
        status = mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                                     "%s: the library has no kernel %s", fn,
                                     desc->name);
    }
    if (function) {
      NSError *error = nil;
      k->pipeline = [d->device newComputePipelineStateWithFunction:function
                                                             error:&error];
      if (!k->pipeline)
        status = fail(MLCC_INTERNAL, fn,
                      "Metal cannot make the kernel's pipeline", error);
    }
    [function release];
    [library release];
  }
  uint64_t threads = (uint64_t)desc->workgroup_size[0] *
                     desc->workgroup_size[1] * desc->workgroup_size[2];
  if (k->pipeline && threads > [k->pipeline maxTotalThreadsPerThreadgroup])
    status = mlcc_last_error_set(
        MLCC_UNSUPPORTED,
        "%s: kernel %s runs threadgroups of %llu threads; its pipeline "
        "takes at most %llu on %s",
        fn, desc->name, (unsigned long long)threads,
        (unsigned long long)[k->pipeline maxTotalThreadsPerThreadgroup],
        d->name);
  if (status != MLCC_OK) {
    [k->pipeline release];
    free(k);
    return status;
  }
  k->numBuffers = desc->num_buffers;
  memcpy(k->threads, desc->workgroup_size, sizeof(k->threads));
  snprintf(k->name, sizeof(k->name), "%s", desc->name);
  *out = (mlcc_device_kernel *)k;
  return MLCC_OK;
}

static void metalKernelDestroy(mlcc_device *device,
                               mlcc_device_kernel *kernel) {
  mlccMtlKernel *k = (mlccMtlKernel *)kernel;
  @autoreleasepool {
    submit(asMetal(device), "mlcc_device_kernel_destroy");
    [k->pipeline release];
  }
  free(k);
}

// Room for `bytes` of parameter words in the current command buffer's
// chunks: the chunk and the offset in it.
static mlccMtlParams *reserveParams(mlccMtlDevice *d, uint64_t bytes,
                                    uint64_t *offset) {
  mlccMtlParams *chunk = d->params;
  if (!chunk || chunk->used + bytes > ParamsChunkBytes) {
    chunk = d->spareParams;
    if (chunk) {
      d->spareParams = chunk->next;
    } else {
      chunk = calloc(1, sizeof(*chunk));
      if (!chunk)
        return NULL;
      chunk->buffer =
          [d->device newBufferWithLength:ParamsChunkBytes
                                 options:MTLResourceStorageModeShared];
      if (!chunk->buffer) {
        free(chunk);
        return NULL;
      }
    }
    chunk->next = d->params;
    d->params = chunk;
  }
  *offset = chunk->used;
  chunk->used +=
      (bytes + ParamsAlignment - 1) / ParamsAlignment * ParamsAlignment;
  return chunk;
}

static mlcc_status metalLaunch(mlcc_device *device, mlcc_device_kernel *kernel,
                               const uint32_t groups[3], const uint32_t *params,
                               uint32_t num_params,
                               const mlcc_device_binding *bindings,
                               uint32_t num_bindings) {
  static const char fn[] = "mlcc_device_launch";
  mlccMtlDevice *d = asMetal(device);
  mlccMtlKernel *k = (mlccMtlKernel *)kernel;
  (void)num_bindings; // Device.c checked it against k->numBuffers
  uint64_t paramBytes = (uint64_t)num_params * sizeof(uint32_t);
  if (paramBytes > ParamsChunkBytes)
    return mlcc_last_error_set(MLCC_INVALID_ARGUMENT,
                               "%s: kernel %s: %u parameter words; at most "
                               "%u",
                               fn, k->name, num_params,
                               (unsigned)(ParamsChunkBytes / 4));
  @autoreleasepool {
    if (!d->commands) {
      d->commands = [[d->queue commandBuffer] retain];
      d->encoder = [[d->commands computeCommandEncoder] retain];
      if (!d->commands || !d->encoder)
        return mlcc_last_error_set(
            MLCC_INTERNAL, "%s: %s gives no command buffer", fn, d->name);
    }
    uint64_t offset = 0;
    // Metal wants a buffer at every index the kernel declares, even with
    // no words: then a chunk's first bytes stand in.
    mlccMtlParams *chunk =
        reserveParams(d, paramBytes ? paramBytes : sizeof(uint32_t), &offset);
    if (!chunk)
      return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                                 "%s: no memory for parameter words", fn);
    if (paramBytes)
      memcpy((uint8_t *)[chunk->buffer contents] + offset, params,
             (size_t)paramBytes);
    id<MTLComputeCommandEncoder> encoder = d->encoder;
    [encoder setComputePipelineState:k->pipeline];
    [encoder setBuffer:chunk->buffer offset:(NSUInteger)offset atIndex:0];
    for (uint32_t i = 0; i < k->numBuffers; ++i) {
      mlccMtlBuffer *b = (mlccMtlBuffer *)bindings[i].buffer;
      [encoder setBuffer:b->buffer
                  offset:(NSUInteger)bindings[i].offset
                 atIndex:i + 1];
    }
    [encoder dispatchThreadgroups:MTLSizeMake(groups[0], groups[1], groups[2])
            threadsPerThreadgroup:MTLSizeMake(k->threads[0], k->threads[1],
                                              k->threads[2])];
  }
  return MLCC_OK;
}

static mlcc_status metalWrite(mlcc_device *device, mlcc_device_buffer *buffer,
                              uint64_t offset, const void *src,
                              uint64_t bytes) {
  mlccMtlDevice *d = asMetal(device);
  mlcc_status status;
  @autoreleasepool {
    status = submit(d, "mlcc_device_write");
  }
  if (status == MLCC_OK)
    memcpy((uint8_t *)[((mlccMtlBuffer *)buffer)->buffer contents] + offset,
           src, (size_t)bytes);
  return status;
}

static mlcc_status metalRead(mlcc_device *device, mlcc_device_buffer *buffer,
                             uint64_t offset, void *dst, uint64_t bytes) {
  mlccMtlDevice *d = asMetal(device);
  mlcc_status status;
  @autoreleasepool {
    status = submit(d, "mlcc_device_read");
  }
  if (status == MLCC_OK)
    memcpy(dst,
           (const uint8_t *)[((mlccMtlBuffer *)buffer)->buffer contents] +
               offset,
           (size_t)bytes);
  return status;
}

static mlcc_status metalWait(mlcc_device *device) {
  mlcc_status status;
  @autoreleasepool {
    status = submit(asMetal(device), "mlcc_device_wait");
  }
  return status;
}

static mlcc_status metalSetStream(mlcc_device *device, void *stream) {
  (void)device;
  (void)stream;
  return mlcc_last_error_set(MLCC_UNSUPPORTED,
                             "mlcc_device_set_stream: Metal devices have no "
                             "streams");
}

static const mlccDeviceOps MetalOps = {
    metalClose,
    metalName,
    metalOffsetAlignment,
    metalValidationMessages,
    metalBufferCreate,
    metalBufferDestroy,
    metalKernelCreate,
    metalKernelDestroy,
    metalLaunch,
    metalWrite,
    metalRead,
    metalWait,
    metalSetStream,
};

// The device `selector` names (mlcc_device_open's rules), retained; nil
// with the message set.
static id<MTLDevice> pickDevice(const char *selector) {
  static const char fn[] = "mlcc_device_open";
  if (!selector || !*selector)
    selector = getenv("MLCC_DEVICE");
  if (!selector || !*selector) {
    id<MTLDevice> device = MTLCreateSystemDefaultDevice();
    if (!device)
      mlcc_last_error_set(MLCC_NO_DEVICE,
                          "%s: this machine has no Metal "
                          "device",
                          fn);
    return device;
  }
#if TARGET_OS_OSX
  NSArray<id<MTLDevice>> *devices = [MTLCopyAllDevices() autorelease];
#else
  id<MTLDevice> only = [MTLCreateSystemDefaultDevice() autorelease];
  NSArray<id<MTLDevice>> *devices =
      only ? [NSArray arrayWithObject:only] : [NSArray array];
#endif
  char *end = NULL;
  unsigned long index = strtoul(selector, &end, 10);
  int isIndex = end != selector && *end == 0;
  char names[1024] = "";
  for (NSUInteger i = 0; i < [devices count]; ++i) {
    id<MTLDevice> device = [devices objectAtIndex:i];
    const char *name = [[device name] UTF8String];
    if (isIndex ? index == i
                : (name && mlccContainsIgnoringCase(name, selector)))
      return [device retain];
    size_t used = strlen(names);
    snprintf(names + used, sizeof(names) - used, "%s%lu: %s", used ? ", " : "",
             (unsigned long)i, name ? name : "?");
  }
  mlcc_last_error_set(MLCC_NO_DEVICE,
                      "%s: no Metal device matches '%s' "
                      "(there are: %s)",
                      fn, selector, names[0] ? names : "none");
  return nil;
}

mlcc_status mlccMetalOpen(const char *selector, mlcc_device **out) {
  mlccMtlDevice *d = calloc(1, sizeof(*d));
  if (!d)
    return mlcc_last_error_set(MLCC_OUT_OF_MEMORY,
                               "mlcc_device_open: out of memory");
  d->base.Ops = &MetalOps;
  mlcc_status status = MLCC_NO_DEVICE; // pickDevice's message
  @autoreleasepool {
    d->device = pickDevice(selector);
    if (d->device)
      d->queue = [d->device newCommandQueue];
    if (d->device && !d->queue)
      status = mlcc_last_error_set(MLCC_INTERNAL,
                                   "mlcc_device_open: %s gives no command "
                                   "queue",
                                   [[d->device name] UTF8String]);
    if (d->queue)
      snprintf(d->name, sizeof(d->name), "%s", [[d->device name] UTF8String]);
  }
  if (!d->queue) {
    [d->device release];
    free(d);
    return status;
  }
  *out = &d->base;
  return MLCC_OK;
}
