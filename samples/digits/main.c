//===- main.c - Read a handwritten digit with the fp32 and int8 models ----===//
//
// Usage: digits IMAGE.pgm
//
// IMAGE is an 8x8 binary PGM (P5) with 16 grey levels (maxval 16), as
// scikit-learn's digits are; sample.pgm is one of the test images the model
// never saw in training. It runs two objects compiled from the same trained
// CNN (model.onnx, test/models/export_digits.py): digits_fp32 and
// digits_int8 (`mlcc compile --quantize int8`, calibrated on the 32
// training images in calibration/), and prints each one's answer with its
// softmax probability. Every failure prints a message and exits with 1.
//
//===----------------------------------------------------------------------===//

#include "digits_fp32.h"
#include "digits_int8.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

_Static_assert(MLCC_DIGITS_FP32_INPUT_0_BYTES == 64 * sizeof(float),
               "one 8x8 image");
_Static_assert(MLCC_DIGITS_INT8_OUTPUT_0_BYTES == 10 * sizeof(float),
               "ten class scores");

static int fail(const char *what, const char *detail) {
  fprintf(stderr, "digits: %s%s%s\n", what, detail ? ": " : "",
          detail ? detail : "");
  return 1;
}

// An 8x8 P5 PGM with maxval 16 as the model's input: grey level / 16.
static int readPgm(const char *path, float image[64]) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return fail("cannot open", path);
  int width = 0, height = 0, maxval = 0;
  unsigned char pixels[64];
  int ok = fscanf(f, "P5 %d %d %d", &width, &height, &maxval) == 3 &&
           width == 8 && height == 8 && maxval == 16 && fgetc(f) != EOF &&
           fread(pixels, 1, 64, f) == 64;
  fclose(f);
  if (!ok)
    return fail("not an 8x8 P5 PGM with 16 grey levels", path);
  for (int i = 0; i < 64; ++i)
    image[i] = (float)(pixels[i] > 16 ? 16 : pixels[i]) / 16.0f;
  return 0;
}

// The most likely digit and its softmax probability.
static int best(const float logits[10], double *probability) {
  int top = 0;
  for (int i = 1; i < 10; ++i)
    top = logits[i] > logits[top] ? i : top;
  double sum = 0;
  for (int i = 0; i < 10; ++i)
    sum += exp((double)logits[i] - logits[top]);
  *probability = 1.0 / sum;
  return top;
}

int main(int argc, char **argv) {
  if (argc != 2)
    return fail("usage: digits IMAGE.pgm", NULL);
  float image[64], fp32[10], int8[10];
  if (readPgm(argv[1], image))
    return 1;
  mlcc_digits_fp32_context *f = NULL;
  mlcc_digits_int8_context *q = NULL;
  mlcc_status status = mlcc_digits_fp32_create(NULL, &f);
  if (status == MLCC_OK)
    status = mlcc_digits_fp32_run_static(f, image, fp32);
  if (status == MLCC_OK)
    status = mlcc_digits_int8_create(NULL, &q);
  if (status == MLCC_OK)
    status = mlcc_digits_int8_run_static(q, image, int8);
  mlcc_digits_fp32_destroy(f);
  mlcc_digits_int8_destroy(q);
  if (status != MLCC_OK)
    return fail(mlcc_status_string(status), mlcc_last_error_message());
  double p;
  int digit = best(fp32, &p);
  printf("fp32: %d (p = %.3f)\n", digit, p);
  digit = best(int8, &p);
  printf("int8: %d (p = %.3f)\n", digit, p);
  return 0;
}
