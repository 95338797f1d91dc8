//===- CudaLoader.c - dlopen of libcuda and its function table ------------===//

#include "CudaLoader.h"
#include "LastError.h"

#include <dlfcn.h>
#include <string.h>

// The soname the driver installs (libcuda.so is the toolkit's stub link).
static const char CudaLibrary[] = "libcuda.so.1";

// ISO C has no conversion from an object pointer to a function pointer
// (-pedantic says so); POSIX guarantees that the bytes are the function's
// address, so copy them.
static int loadSymbol(void *library, const char *name, void *slot,
                      size_t slotBytes) {
  void *symbol = dlsym(library, name);
  if (!symbol || slotBytes != sizeof(symbol))
    return 0;
  memcpy(slot, &symbol, sizeof(symbol));
  return 1;
}

mlcc_status mlccCudaLoadLibrary(mlcc_cuda_functions *cuda) {
  memset(cuda, 0, sizeof(*cuda));
  void *library = dlopen(CudaLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    return mlcc_last_error_set(MLCC_NO_DEVICE,
                               "mlcc_device_open: no CUDA driver: cannot "
                               "load %s: %s",
                               CudaLibrary, why ? why : "unknown error");
  }
  cuda->Library = library;
#define MLCC_CUDA_LOAD(name, params)                                           \
  if (!loadSymbol(library, #name, &cuda->name, sizeof(cuda->name))) {          \
    mlccCudaUnloadLibrary(cuda);                                               \
    return mlcc_last_error_set(MLCC_NO_DEVICE,                                 \
                               "mlcc_device_open: %s has no %s: the CUDA "     \
                               "driver is too old or not a CUDA driver",       \
                               CudaLibrary, #name);                            \
  }
#define MLCC_CUDA_LOAD_OPTIONAL(name, params)                                  \
  (void)loadSymbol(library, #name, &cuda->name, sizeof(cuda->name));
  MLCC_CUDA_FUNCTIONS(MLCC_CUDA_LOAD, MLCC_CUDA_LOAD_OPTIONAL)
#undef MLCC_CUDA_LOAD
#undef MLCC_CUDA_LOAD_OPTIONAL
  return MLCC_OK;
}

void mlccCudaUnloadLibrary(mlcc_cuda_functions *cuda) {
  if (cuda->Library)
    dlclose(cuda->Library);
  memset(cuda, 0, sizeof(*cuda));
}

int mlccCudaHasGraphs(const mlcc_cuda_functions *cuda) {
  return cuda->cuStreamBeginCapture_v2 && cuda->cuStreamEndCapture &&
         cuda->cuGraphInstantiateWithFlags && cuda->cuGraphLaunch &&
         cuda->cuGraphExecDestroy && cuda->cuGraphDestroy;
}
