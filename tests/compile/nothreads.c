/* nothreads.c - gshard.h built with GSHARD_NO_THREADS (linked without -lpthread): the runtime runs every
   device in lockstep in the calling thread, and a threaded runtime is refused. */
#define GSHARD_NO_THREADS
#define GSHARD_IMPLEMENTATION
#include "../../gshard.h"
#include <stdio.h>
#include <string.h>

static const char text[] =
    "HloModule nt\n"
    "sum { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
    "ENTRY main {\n  p = u32[] partition-id()\n  f = f32[] convert(p)\n  b = f32[2] broadcast(f), dimensions={}\n"
    "  ROOT ar = f32[2] all-reduce(b), replica_groups={}, to_apply=sum\n}\n";

int main(void) {
    gs_ctx *ctx = NULL;
    gs_graph *g = NULL;
    gs_runtime *rt = NULL;
    gs_runtime_desc desc;
    float out[4][2];
    void *o[4];
    int d, ok = 1;
    if (gs_ctx_create(NULL, &ctx) != GS_OK || gs_hlo_parse(ctx, text, sizeof text - 1, &g) != GS_OK) return 1;
    memset(&desc, 0, sizeof desc);
    desc.num_devices = 4;
    desc.mode = GS_RUNTIME_THREADED;
    if (gs_runtime_create(ctx, &desc, &rt) != GS_ERR_UNSUPPORTED) ok = 0;
    gs_ctx_clear_error(ctx);
    desc.mode = GS_RUNTIME_MODE_DEFAULT;
    if (gs_runtime_create(ctx, &desc, &rt) != GS_OK || gs_runtime_get_mode(rt) != GS_RUNTIME_LOCKSTEP) ok = 0;
    for (d = 0; d < 4; d++) o[d] = out[d];
    if (ok && gs_runtime_run(rt, g, NULL, o) != GS_OK) ok = 0;
    for (d = 0; ok && d < 4; d++) ok = out[d][0] == 6.0f && out[d][1] == 6.0f;
    if (!ok) printf("failed: %s\n", gs_ctx_error_msg(ctx));
    gs_runtime_destroy(rt);
    gs_ctx_destroy(ctx);
    return ok ? 0 : 1;
}
