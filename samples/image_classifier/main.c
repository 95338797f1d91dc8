//===- main.c - Classify an image with a model compiled by mlcc -----------===//
//
// Usage: image_classifier IMAGE [THREADS]
//
// IMAGE is either
//   - a binary PPM (P6) of any size: resized to the model's H x W by nearest
//     neighbour and normalised with the ImageNet mean and standard deviation,
//     as torchvision's classifiers expect; or
//   - a raw file of exactly the model's input tensor: little-endian f32 in
//     NCHW order (MLCC_CLASSIFIER_INPUT_0_BYTES bytes), used as is.
// THREADS is the size of the thread pool (default 1; 0 = one per CPU).
//
// Prints the five most likely classes with their scores: the softmax of the
// model's output, or the output itself when the model already ends in a
// softmax (its values are then non-negative and sum to 1).
//
// The model is whatever CMakeLists.txt compiles with
// mlcc_add_model(... NAME classifier): one image in, one row of class scores
// out. Every failure prints a message and exits with status 1.
//
//===----------------------------------------------------------------------===//

#include "classifier.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// What this program assumes of the model, checked when it is compiled.
_Static_assert(MLCC_CLASSIFIER_NUM_INPUTS == 1, "one input: the image");
_Static_assert(MLCC_CLASSIFIER_NUM_OUTPUTS >= 1, "an output: class scores");
_Static_assert(MLCC_CLASSIFIER_INPUT_0_DTYPE == MLCC_DTYPE_F32, "f32 image");
_Static_assert(MLCC_CLASSIFIER_INPUT_0_RANK == 4, "an NCHW image");
_Static_assert(MLCC_CLASSIFIER_OUTPUT_0_DTYPE == MLCC_DTYPE_F32, "f32 scores");

enum { TopK = 5 };

static int fail(const char *what, const char *detail) {
  fprintf(stderr, "image_classifier: %s%s%s\n", what, detail ? ": " : "",
          detail ? detail : "");
  return 1;
}

// Reads a whole file; *size gets its length. NULL (with a message) on error.
static unsigned char *readFile(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return NULL;
  }
  unsigned char *data = NULL;
  long length = -1;
  if (fseek(f, 0, SEEK_END) == 0)
    length = ftell(f);
  if (length >= 0 && fseek(f, 0, SEEK_SET) == 0)
    data = malloc((size_t)length + 1);
  if (data && fread(data, 1, (size_t)length, f) != (size_t)length) {
    free(data);
    data = NULL;
  }
  if (!data)
    fprintf(stderr, "image_classifier: cannot read %s\n", path);
  fclose(f);
  *size = (size_t)length;
  return data;
}

// The PPM header's next number, skipping whitespace and # comments.
static long ppmNumber(const unsigned char *data, size_t size, size_t *pos) {
  while (*pos < size) {
    if (data[*pos] == '#')
      while (*pos < size && data[*pos] != '\n')
        ++*pos;
    else if (data[*pos] == ' ' || (data[*pos] >= '\t' && data[*pos] <= '\r'))
      ++*pos;
    else
      break;
  }
  long value = 0;
  size_t start = *pos;
  while (*pos < size && data[*pos] >= '0' && data[*pos] <= '9' &&
         value < 1000000)
    value = value * 10 + (data[(*pos)++] - '0');
  return *pos > start ? value : -1;
}

// Decodes a P6 PPM into the NCHW input (C = 3): nearest-neighbour resize to
// H x W, then (x / maxval - mean) / std per channel.
static int loadPpm(const unsigned char *data, size_t size, float *input,
                   int64_t channels, int64_t height, int64_t width) {
  static const float Mean[3] = {0.485f, 0.456f, 0.406f};
  static const float Std[3] = {0.229f, 0.224f, 0.225f};
  if (channels != 3)
    return fail("a PPM needs a model with 3 input channels", NULL);
  size_t pos = 2;
  long srcW = ppmNumber(data, size, &pos);
  long srcH = ppmNumber(data, size, &pos);
  long maxval = ppmNumber(data, size, &pos);
  if (srcW <= 0 || srcH <= 0 || maxval <= 0 || maxval > 65535 || pos >= size)
    return fail("not a valid binary PPM (P6) header", NULL);
  ++pos; // the single whitespace byte before the pixels
  size_t sampleBytes = maxval > 255 ? 2 : 1;
  if ((size - pos) / sampleBytes / 3 / (size_t)srcW < (size_t)srcH)
    return fail("the PPM file is shorter than its header says", NULL);
  const unsigned char *pixels = data + pos;
  for (int64_t y = 0; y < height; ++y) {
    // The source pixel whose centre is nearest to this one's.
    size_t sy = (size_t)((2 * y + 1) * srcH / (2 * height));
    for (int64_t x = 0; x < width; ++x) {
      size_t sx = (size_t)((2 * x + 1) * srcW / (2 * width));
      const unsigned char *p =
          pixels + (sy * (size_t)srcW + sx) * 3 * sampleBytes;
      for (int64_t c = 0; c < 3; ++c) {
        // 16-bit samples are big-endian (netpbm).
        unsigned v =
            sampleBytes == 1 ? p[c] : (unsigned)p[2 * c] << 8 | p[2 * c + 1];
        input[(c * height + y) * width + x] =
            ((float)v / (float)maxval - Mean[c]) / Std[c];
      }
    }
  }
  return 0;
}

// Copies a raw little-endian f32 tensor, whatever the host's byte order.
static void loadRaw(const unsigned char *data, float *input, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const unsigned char *b = data + 4 * i;
    uint32_t bits = (uint32_t)b[0] | (uint32_t)b[1] << 8 |
                    (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    memcpy(&input[i], &bits, sizeof(float));
  }
}

// Turns raw scores into probabilities, unless they already are.
static void toProbabilities(float *scores, size_t count) {
  double sum = 0;
  int probabilities = 1;
  for (size_t i = 0; i < count; ++i) {
    probabilities &= scores[i] >= 0 && scores[i] <= 1;
    sum += scores[i];
  }
  if (probabilities && fabs(sum - 1) < 1e-3)
    return;
  float max = scores[0];
  for (size_t i = 1; i < count; ++i)
    max = scores[i] > max ? scores[i] : max;
  sum = 0;
  for (size_t i = 0; i < count; ++i) {
    scores[i] = expf(scores[i] - max); // shifted: no overflow
    sum += scores[i];
  }
  for (size_t i = 0; i < count; ++i)
    scores[i] = (float)(scores[i] / sum);
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s IMAGE.ppm|INPUT.f32 [THREADS]\n", argv[0]);
    return 1;
  }
  const int64_t *dims = mlcc_classifier_input_0_dims;
  size_t inputCount = MLCC_CLASSIFIER_INPUT_0_BYTES / sizeof(float);
  size_t classes = MLCC_CLASSIFIER_OUTPUT_0_BYTES / sizeof(float);
  if (dims[0] != 1)
    return fail("this sample handles a batch of one image", NULL);

  size_t size = 0;
  unsigned char *file = readFile(argv[1], &size);
  if (!file)
    return 1;
  float *input = malloc(MLCC_CLASSIFIER_INPUT_0_BYTES);
  float *scores = malloc(MLCC_CLASSIFIER_OUTPUT_0_BYTES);
  if (!input || !scores)
    return fail("out of memory", NULL);
  int status = 0;
  if (size >= 2 && file[0] == 'P' && file[1] == '6')
    status = loadPpm(file, size, input, dims[1], dims[2], dims[3]);
  else if (size == MLCC_CLASSIFIER_INPUT_0_BYTES)
    loadRaw(file, input, inputCount);
  else
    status = fail("the input is neither a P6 PPM nor a raw f32 tensor of the "
                  "model's input size",
                  argv[1]);
  free(file);
  if (status != 0)
    return status;

  // Run the model: a pool, a context (its arena), one run.
  int32_t threads = argc == 3 ? (int32_t)atoi(argv[2]) : 1;
  mlcc_threadpool *pool = NULL;
  mlcc_classifier_context *ctx = NULL;
  if (mlcc_threadpool_create(threads, &pool) != MLCC_OK ||
      mlcc_classifier_create(pool, &ctx) != MLCC_OK ||
      mlcc_classifier_run_static(ctx, input, scores) != MLCC_OK) {
    status = fail("mlcc", mlcc_last_error_message());
  }
  mlcc_classifier_destroy(ctx);
  mlcc_threadpool_destroy(pool);
  free(input);
  if (status != 0) {
    free(scores);
    return status;
  }

  toProbabilities(scores, classes);
  printf("model input [%lld, %lld, %lld, %lld], %zu classes\n",
         (long long)dims[0], (long long)dims[1], (long long)dims[2],
         (long long)dims[3], classes);
  printf("rank  class  score\n");
  // Selection of the best remaining class, TopK times: classes are few.
  for (int rank = 1; rank <= TopK && (size_t)rank <= classes; ++rank) {
    size_t best = 0;
    for (size_t i = 1; i < classes; ++i)
      if (scores[i] > scores[best])
        best = i;
    printf("%4d  %5zu  %.6f\n", rank, best, scores[best]);
    scores[best] = -1; // below every probability
  }
  free(scores);
  return 0;
}
