/* use.c - a translation unit that only includes the declarations (no GSHARD_IMPLEMENTATION). */
#include "../../gshard.h"
#include "../../gshard.h" /* a second include is harmless */
#include <stdio.h>
#include <string.h>

int main(void) {
    gs_ctx *ctx = NULL;
    int ok;
    if (gs_ctx_create(NULL, &ctx) != GS_OK) return 1;
    ok = strcmp(gs_version(), GS_VERSION_STRING) == 0 && gs_ctx_error(ctx) == GS_OK &&
         gs_dtype_size(GS_F32) == 4;
    gs_ctx_destroy(ctx);
    if (!ok) puts("unexpected result");
    return ok ? 0 : 1;
}
