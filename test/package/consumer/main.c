//===- main.c - An application of the installed mlcc package --------------===//
//
// Runs tiny_classifier (compiled by mlcc_add_model) through both generated
// entry points and checks what a caller can rely on: probabilities out, and
// a wrong shape refused with a message. Prints "ok" and exits 0 on success.
//
//===----------------------------------------------------------------------===//

#include "tiny_classifier.h"

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

static float image[MLCC_TINY_CLASSIFIER_INPUT_0_BYTES / sizeof(float)];
static float probs[MLCC_TINY_CLASSIFIER_OUTPUT_0_BYTES / sizeof(float)];

int main(void) {
  enum { Classes = sizeof(probs) / sizeof(probs[0]) };
  for (size_t i = 0; i < sizeof(image) / sizeof(image[0]); ++i)
    image[i] = (float)(i % 17) / 17.0f;

  mlcc_tiny_classifier_context *ctx = NULL;
  EXPECT(mlcc_tiny_classifier_create(NULL, &ctx) == MLCC_OK);
  EXPECT(mlcc_tiny_classifier_run_static(ctx, image, probs) == MLCC_OK);
  // The model ends in a softmax.
  float sum = 0;
  for (int i = 0; i < Classes; ++i) {
    EXPECT(probs[i] >= 0 && probs[i] <= 1);
    sum += probs[i];
  }
  EXPECT(fabsf(sum - 1) < 1e-4f);

  int64_t inDims[4], outDims[2];
  memcpy(inDims, mlcc_tiny_classifier_input_0_dims, sizeof(inDims));
  memcpy(outDims, mlcc_tiny_classifier_output_0_dims, sizeof(outDims));
  mlcc_tensor in = {image, inDims, 4, MLCC_DTYPE_F32};
  mlcc_tensor out = {probs, outDims, 2, MLCC_DTYPE_F32};
  EXPECT(mlcc_tiny_classifier_run(ctx, &in, &out) == MLCC_OK);
  inDims[3] = 31;
  EXPECT(mlcc_tiny_classifier_run(ctx, &in, &out) == MLCC_SHAPE_MISMATCH);
  EXPECT(strstr(mlcc_last_error_message(), "input 'image'") != NULL);
  mlcc_tiny_classifier_destroy(ctx);
  puts("ok");
  return 0;
}
