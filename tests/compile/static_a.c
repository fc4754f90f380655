/* static_a.c - GSHARD_STATIC: this TU has its own private copy of the implementation (and stb_ds's). */
#define GSHARD_STATIC
#define GSHARD_IMPLEMENTATION
#include "../../gshard.h"
#include <string.h>

int static_b_ok(void);

int main(void) {
    gs_ctx *ctx = NULL;
    int ok;
    if (gs_ctx_create(NULL, &ctx) != GS_OK) return 1;
    ok = strcmp(gs_version(), GS_VERSION_STRING) == 0;
    gs_ctx_destroy(ctx);
    return ok && static_b_ok() ? 0 : 1;
}
