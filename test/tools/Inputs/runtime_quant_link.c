// Links the runtime_quant object (test/tools/runtime-quant.test) with the
// static runtime, which packs its int8 weights (mlcc_int8_pack_b), and
// makes and frees a context.
#include "rq.h"

#include <stdio.h>

int main(void) {
  mlcc_rq_context *ctx;
  if (mlcc_rq_create(NULL, &ctx) != MLCC_OK) {
    printf("create failed: %s\n", mlcc_last_error_message());
    return 1;
  }
  mlcc_rq_destroy(ctx);
  printf("created\n");
  return 0;
}
