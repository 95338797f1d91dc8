//===- main_external.c - A package model whose weights are in a file ------===//
//
// tiny_ext is tiny_classifier compiled by mlcc_add_model(... EXTERNAL_WEIGHTS):
// its context is created from the weights file the build wrote
// (TINY_EXT_WEIGHTS), and a missing file is an error status, not a crash.
// Prints "ok" and exits 0 on success.
//
//===----------------------------------------------------------------------===//

#include "tiny_ext.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: failed: %s (last error: %s)\n", __FILE__,        \
              __LINE__, #cond, mlcc_last_error_message());                     \
      return 1;                                                                \
    }                                                                          \
  } while (0)

static float image[MLCC_TINY_EXT_INPUT_0_BYTES / sizeof(float)];
static float probs[MLCC_TINY_EXT_OUTPUT_0_BYTES / sizeof(float)];

int main(void) {
  enum { Classes = sizeof(probs) / sizeof(probs[0]) };
  for (size_t i = 0; i < sizeof(image) / sizeof(image[0]); ++i)
    image[i] = (float)(i % 17) / 17.0f;

  mlcc_tiny_ext_context *ctx = NULL;
  EXPECT(mlcc_tiny_ext_create(NULL, "/nonexistent.weights", &ctx) != MLCC_OK);
  EXPECT(ctx == NULL);
  EXPECT(strstr(mlcc_last_error_message(), "cannot open") != NULL);
  EXPECT(mlcc_tiny_ext_create(NULL, TINY_EXT_WEIGHTS, &ctx) == MLCC_OK);
  EXPECT(mlcc_tiny_ext_run_static(ctx, image, probs) == MLCC_OK);
  float sum = 0;
  for (int i = 0; i < Classes; ++i) {
    EXPECT(probs[i] >= 0 && probs[i] <= 1);
    sum += probs[i];
  }
  EXPECT(fabsf(sum - 1) < 1e-4f);
  mlcc_tiny_ext_destroy(ctx);
  puts("ok");
  return 0;
}
