//===- main.c - Poisson image blending with a model compiled by mlcc -----===//
//
// Usage: poisson_blend SOURCE.ppm BACKGROUND.ppm MASK.pgm OUT.ppm
//                      [--fixed] [--init source|background] [--raw OUT.f32]
//
// Pastes the part of SOURCE under MASK (white = inside) into BACKGROUND so
// that the edges come from the source and the seam disappears: the graph
// solves the Poisson equation with Jacobi iterations until the largest
// change of an iteration is at most 1e-4 (poisson_blend.mlir, a
// graph.while), or for a fixed 400 iterations with --fixed
// (poisson_blend_fixed.mlir, a graph.for). --init picks the starting image:
// the source pasted in (default) or the background. Writes the result as a
// PPM (and, with --raw, the model's f32 output planes as they are), and
// prints the iteration count.
//
// All three images must have the size the models were compiled for
// (64 x 64). Every failure prints a message and exits with status 1.
//
//===----------------------------------------------------------------------===//

#include "poisson.h"
#include "poisson_fixed.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Both models take and give the same planes.
_Static_assert(MLCC_POISSON_INPUT_0_BYTES == MLCC_POISSON_FIXED_INPUT_0_BYTES &&
                   MLCC_POISSON_INPUT_2_BYTES ==
                       MLCC_POISSON_FIXED_INPUT_2_BYTES,
               "the two models take images of one size");
_Static_assert(MLCC_POISSON_INPUT_0_RANK == 4, "[3, 1, H, W] planes");

enum { Channels = 3 };

static int fail(const char *what, const char *detail) {
  fprintf(stderr, "poisson_blend: %s%s%s\n", what, detail ? ": " : "",
          detail ? detail : "");
  return 1;
}

// The header's next number, skipping whitespace and # comments; -1 if none.
static long headerNumber(FILE *f) {
  int c = fgetc(f);
  while (c == '#' || c == ' ' || (c >= '\t' && c <= '\r')) {
    if (c == '#')
      while (c != '\n' && c != EOF)
        c = fgetc(f);
    c = fgetc(f);
  }
  long n = -1;
  while (c >= '0' && c <= '9') {
    n = (n < 0 ? 0 : n * 10) + (c - '0');
    if (n > 1000000)
      return -1;
    c = fgetc(f);
  }
  return n;
}

// Reads a binary PPM (P6, channels = 3) or PGM (P5, channels = 1) of exactly
// width x height with maxval 255 into planes[c][y][x] in [0, 1].
static int readImage(const char *path, int channels, long width, long height,
                     float *planes) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return fail("cannot open", path);
  char magic[3] = {0};
  int ok = fread(magic, 1, 2, f) == 2 &&
           magic[0] == 'P' && magic[1] == (channels == 3 ? '6' : '5');
  long w = ok ? headerNumber(f) : -1, h = ok ? headerNumber(f) : -1;
  long maxval = ok ? headerNumber(f) : -1;
  if (!ok || maxval != 255) {
    fclose(f);
    return fail(channels == 3 ? "not a binary 8-bit PPM (P6)"
                              : "not a binary 8-bit PGM (P5)",
                path);
  }
  if (w != width || h != height) {
    fclose(f);
    fprintf(stderr,
            "poisson_blend: %s is %ld x %ld; the models were compiled for "
            "%ld x %ld\n",
            path, w, h, width, height);
    return 1;
  }
  size_t n = (size_t)(width * height * channels);
  unsigned char *pixels = malloc(n);
  int read = pixels && fread(pixels, 1, n, f) == n;
  fclose(f);
  if (!read) {
    free(pixels);
    return fail("image data cut short", path);
  }
  for (long i = 0; i < width * height; ++i)
    for (int c = 0; c < channels; ++c)
      planes[c * width * height + i] = pixels[i * channels + c] / 255.0f;
  free(pixels);
  return 0;
}

static int writeImage(const char *path, long width, long height,
                      const float *planes) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return fail("cannot write", path);
  fprintf(f, "P6\n%ld %ld\n255\n", width, height);
  for (long i = 0; i < width * height; ++i)
    for (int c = 0; c < Channels; ++c) {
      float v = planes[c * width * height + i] * 255.0f + 0.5f;
      fputc(v <= 0.0f ? 0 : v >= 255.0f ? 255 : (int)v, f);
    }
  return fclose(f) == 0 ? 0 : fail("cannot write", path);
}

static int writeRaw(const char *path, const float *data, size_t bytes) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return fail("cannot write", path);
  size_t written = fwrite(data, 1, bytes, f);
  return fclose(f) == 0 && written == bytes ? 0 : fail("cannot write", path);
}

int main(int argc, char **argv) {
  const char *raw = NULL;
  int fixed = 0;
  uint8_t fromSource = 1;
  int positional = 0;
  const char *paths[4] = {NULL, NULL, NULL, NULL};
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--fixed") == 0) {
      fixed = 1;
    } else if (strcmp(argv[i], "--init") == 0 && i + 1 < argc) {
      ++i;
      if (strcmp(argv[i], "source") != 0 && strcmp(argv[i], "background") != 0)
        return fail("--init takes 'source' or 'background', not", argv[i]);
      fromSource = strcmp(argv[i], "source") == 0;
    } else if (strcmp(argv[i], "--raw") == 0 && i + 1 < argc) {
      raw = argv[++i];
    } else if (argv[i][0] != '-' && positional < 4) {
      paths[positional++] = argv[i];
    } else {
      positional = -1;
      break;
    }
  }
  if (positional != 4) {
    fprintf(stderr, "usage: poisson_blend SOURCE.ppm BACKGROUND.ppm MASK.pgm "
                    "OUT.ppm [--fixed] [--init source|background] "
                    "[--raw OUT.f32]\n");
    return 1;
  }

  long height = (long)mlcc_poisson_input_0_dims[2];
  long width = (long)mlcc_poisson_input_0_dims[3];
  float *source = malloc(MLCC_POISSON_INPUT_0_BYTES);
  float *background = malloc(MLCC_POISSON_INPUT_1_BYTES);
  float *mask = malloc(MLCC_POISSON_INPUT_2_BYTES);
  float *blended = malloc(MLCC_POISSON_OUTPUT_0_BYTES);
  int status = 1;
  if (source && background && mask && blended &&
      readImage(paths[0], Channels, width, height, source) == 0 &&
      readImage(paths[1], Channels, width, height, background) == 0 &&
      readImage(paths[2], 1, width, height, mask) == 0) {
    int64_t iterations = 0;
    mlcc_status run;
    if (fixed) {
      mlcc_poisson_fixed_context *ctx = NULL;
      run = mlcc_poisson_fixed_create(NULL, &ctx);
      if (run == MLCC_OK)
        run = mlcc_poisson_fixed_run_static(ctx, source, background, mask,
                                            &fromSource, blended, &iterations);
      mlcc_poisson_fixed_destroy(ctx);
    } else {
      mlcc_poisson_context *ctx = NULL;
      run = mlcc_poisson_create(NULL, &ctx);
      if (run == MLCC_OK)
        run = mlcc_poisson_run_static(ctx, source, background, mask,
                                      &fromSource, blended, &iterations);
      mlcc_poisson_destroy(ctx);
    }
    if (run != MLCC_OK) {
      status = fail("mlcc", mlcc_last_error_message());
    } else if (writeImage(paths[3], width, height, blended) == 0 &&
               (!raw ||
                writeRaw(raw, blended, MLCC_POISSON_OUTPUT_0_BYTES) == 0)) {
      printf("blended %ld x %ld in %lld iterations (%s, from the %s)\n",
             width, height, (long long)iterations,
             fixed ? "fixed count" : "until the change is <= 1e-4",
             fromSource ? "source" : "background");
      status = 0;
    }
  }
  free(source);
  free(background);
  free(mask);
  free(blended);
  return status;
}
