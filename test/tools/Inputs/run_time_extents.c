// Runs the run_time_extents model as an application does: output buffers
// of the bound (max_dims), the actual dims written back by run.
#include "nz.h"

#include <stdio.h>
#include <string.h>

int main(void) {
  float x[3][4] = {{0.1f, 0.9f, 0.7f, 0.2f},
                   {0.6f, 0.0f, 0.0f, 0.8f},
                   {0.3f, 0.3f, 0.99f, 0.4f}};
  int64_t nz[MLCC_NZ_OUTPUT_0_MAX_BYTES / sizeof(int64_t)];
  int64_t nzt[MLCC_NZ_OUTPUT_1_MAX_BYTES / sizeof(int64_t)];
  int64_t xDims[2] = {3, 4};
  int64_t nzDims[2], nztDims[2];
  memcpy(nzDims, mlcc_nz_output_0_max_dims, sizeof(nzDims));
  memcpy(nztDims, mlcc_nz_output_1_max_dims, sizeof(nztDims));
  mlcc_tensor in = {x, xDims, 2, MLCC_DTYPE_F32};
  mlcc_tensor out[2] = {{nz, nzDims, 2, MLCC_DTYPE_I64},
                        {nzt, nztDims, 2, MLCC_DTYPE_I64}};
  mlcc_nz_context *ctx;
  if (mlcc_nz_create(NULL, &ctx) != MLCC_OK ||
      mlcc_nz_run(ctx, &in, out) != MLCC_OK) {
    printf("error: %s\n", mlcc_last_error_message());
    return 1;
  }
  printf("nz [%lld, %lld]:", (long long)nzDims[0], (long long)nzDims[1]);
  for (int64_t i = 0; i < nzDims[0] * nzDims[1]; ++i)
    printf(" %lld", (long long)nz[i]);
  printf("\nnzt [%lld, %lld]:", (long long)nztDims[0], (long long)nztDims[1]);
  for (int64_t i = 0; i < nztDims[0] * nztDims[1]; ++i)
    printf(" %lld", (long long)nzt[i]);
  printf("\n");
  // A buffer below the bound is refused before the model runs.
  nzDims[1] = 4;
  if (mlcc_nz_run(ctx, &in, out) != MLCC_SHAPE_MISMATCH)
    return 1;
  printf("small: %s\n", mlcc_last_error_message());
  mlcc_nz_destroy(ctx);
  return 0;
}
