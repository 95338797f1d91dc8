//===- FuzzWeightsFile.cpp - libFuzzer target: external weights files -----===//
//
// A model compiled with `--weights external` is created from its weights
// file (mlcc_model_create_from_file) or that file's image in memory
// (mlcc_model_create_from_memory). The runtime checks the header against
// the descriptor before it trusts a byte. The input's first 10 bytes give
// the descriptor's data size (up to 64 KiB) and fingerprint, the rest is
// the file, so the fuzzer can reach a matching header; the model's "code"
// then reads every weight byte the descriptor promises (AddressSanitizer
// reports a file accepted shorter than that).
//
//===----------------------------------------------------------------------===//

#include "mlcc/model.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace {

uint64_t weightsBytes = 0;

int32_t readWeights(void *, const void *weights, const void *const *,
                    void *const *, mlcc_threadpool *) {
  volatile uint8_t sum = 0;
  const uint8_t *p = static_cast<const uint8_t *>(weights);
  for (uint64_t i = 0; i < weightsBytes; ++i)
    sum += p[i];
  return MLCC_OK;
}

const std::string &weightsPath() {
  static const std::string path =
      "/tmp/mlcc-fuzz-weights-" + std::to_string(getpid()) + ".bin";
  return path;
}

void runAndDestroy(const mlcc_model_desc *desc, mlcc_model_context *ctx) {
  mlcc_model_run(desc, ctx, nullptr, nullptr);
  mlcc_model_run_pointers(desc, ctx, nullptr, nullptr);
  mlcc_model_destroy(ctx);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 10 || size > (1 << 17))
    return -1;
  uint16_t dataBytes;
  uint64_t fingerprint;
  std::memcpy(&dataBytes, data, 2);
  std::memcpy(&fingerprint, data + 2, 8);
  data += 10;
  size -= 10;

  mlcc_model_desc desc{};
  desc.abi_version = MLCC_MODEL_ABI_VERSION;
  desc.name = "fuzz";
  desc.arena_bytes = 64;
  desc.entry = readWeights;
  desc.weights_bytes = dataBytes;
  desc.weights_fingerprint = dataBytes ? fingerprint : 0;
  weightsBytes = desc.weights_bytes;

  // The image as an application maps it: 64-byte aligned, exactly `size`.
  void *image = nullptr;
  if (posix_memalign(&image, 64, size ? size : 1) != 0)
    std::abort();
  std::memcpy(image, data, size);
  mlcc_model_context *ctx = nullptr;
  if (mlcc_model_create_from_memory(&desc, image, size, nullptr, &ctx) ==
      MLCC_OK)
    runAndDestroy(&desc, ctx);

  FILE *file = std::fopen(weightsPath().c_str(), "wb");
  if (!file || std::fwrite(data, 1, size, file) != size ||
      std::fclose(file) != 0)
    std::abort();
  if (mlcc_model_create_from_file(&desc, weightsPath().c_str(), nullptr,
                                  &ctx) == MLCC_OK)
    runAndDestroy(&desc, ctx);
  std::free(image);
  return 0;
}
