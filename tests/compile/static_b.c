/* static_b.c - a second private copy of the implementation. stb_ds's functions always have external
   linkage, so only one TU of the program may emit them: this one opts out. */
#define GSHARD_STATIC
#define GSHARD_NO_STB_DS_IMPLEMENTATION
#define GSHARD_IMPLEMENTATION
#include "../../gshard.h"

int static_b_ok(void);
int static_b_ok(void) {
    gs_ctx *ctx = NULL;
    if (gs_ctx_create(NULL, &ctx) != GS_OK) return 0;
    gs_ctx_destroy(ctx);
    return gs_dtype_size(GS_BF16) == 2;
}
