/* spmd_allreduce.c - an SPMD program on 8 emulated devices, checked against the reference interpreter.
   Column sums of x f32[13,5], rows split 8 ways (shards of ceil(13/8) = 2 rows; devices 6 and 7 hold 1 and 0
   real rows plus padding). Each device masks its padding rows, sums its rows; an all-reduce adds the partial
   sums. The runtime scatters x into shards padded with NaN (so a missing mask would show), runs the program
   threaded and in lockstep, and gathers the replicated result.
   Build (from the repository root): cc -std=c99 -O2 examples/spmd_allreduce.c -o spmd_allreduce -lpthread -lm */
#ifndef GSHARD_EXTERNAL_IMPL   /* the Makefile links gshard_impl.c instead */
#define GSHARD_IMPLEMENTATION
#endif
#include "../gshard.h"
#include <stdio.h>
#include <string.h>
enum { R = 13, C = 5, D = 8, S = (R + D - 1) / D };   /* S: rows per shard */

static gs_graph *build_spmd(gs_ctx *ctx) {   /* the SPMD program, for one device's shard x f32[S,C] */
    int64_t xs[] = {S, C}, rows[] = {S}, d0[] = {0}, one[] = {1};
    int32_t offsets[D];
    gs_graph *g = gs_graph_new(ctx, "spmd");
    gs_collective_desc all = {0};   /* replica groups {}: all devices */
    for (int i = 0; i < D; i++) offsets[i] = i * S;
    gs_graph_set_num_partitions(g, D);
    gs_value *x = gs_parameter(g, -1, gs_shape_make(GS_F32, 2, xs), "x");
    /* offset = offsets[partition-id]; row r of the shard is global row offset + r */
    gs_value *table = gs_constant(g, gs_shape_make(GS_S32, 1, (int64_t[]){D}), offsets);
    gs_value *pid = gs_partition_id(g), *off = gs_reshape(g, gs_dynamic_slice(g, table, &pid, one), 0, NULL);
    gs_value *grow = gs_add(g, gs_iota(g, gs_shape_make(GS_S32, 1, rows), 0),
                            gs_broadcast(g, off, gs_shape_make(GS_S32, 1, rows), NULL));
    gs_value *valid = gs_compare(g, grow, gs_constant_splat(g, gs_shape_make(GS_S32, 1, rows), R), GS_CMP_LT);
    gs_value *xm = gs_select(g, gs_broadcast(g, valid, gs_shape_make(GS_PRED, 2, xs), d0), x,
                             gs_constant_splat(g, gs_shape_make(GS_F32, 2, xs), 0));
    gs_value *part = gs_reduce(g, xm, gs_scalar(g, GS_F32, 0), GS_REDUCE_SUM, 1, d0);
    gs_graph_set_root(g, gs_all_reduce(g, part, GS_REDUCE_SUM, &all));
    return g;
}

static gs_graph *build_reference(gs_ctx *ctx) {   /* the same on one device: column sums of the whole x */
    gs_graph *g = gs_graph_new(ctx, "reference");
    gs_value *x = gs_parameter(g, -1, gs_shape_make(GS_F32, 2, (int64_t[]){R, C}), "x");
    gs_graph_set_root(g, gs_reduce(g, x, gs_scalar(g, GS_F32, 0), GS_REDUCE_SUM, 1, (int64_t[]){0}));
    return g;
}

int main(void) {
    static float x[R * C], want[C], got[2][C];
    gs_ctx *ctx;
    gs_shape xshape = gs_shape_make(GS_F32, 2, (int64_t[]){R, C}), yshape = gs_shape_make(GS_F32, 1, (int64_t[]){C});
    const void *in[1] = {x};
    void *out[1] = {want};
    int i, m, bad = 0;
    for (i = 0; i < R * C; i++) x[i] = (float)(i % 7) - 3.0f;   /* small integers: every sum is exact */
    if (gs_ctx_create(NULL, &ctx) != GS_OK) return 1;
    gs_graph *spmd = build_spmd(ctx), *ref = build_reference(ctx);
    const gs_sharding *rows = gs_sharding_parse(ctx, "{devices=[8,1]<=[8]}");
    if (gs_ctx_error(ctx) || gs_eval(ref, in, out) != GS_OK) goto fail;
    for (m = 0; m < 2; m++) {
        gs_runtime_desc desc = {.num_devices = D, .mode = m ? GS_RUNTIME_LOCKSTEP : GS_RUNTIME_THREADED,
                                .check_replicas = true};   /* every device's copy of the result must agree */
        gs_runtime *rt = NULL;
        gs_runtime_stats st;
        out[0] = got[m];
        bool ok = gs_runtime_create(ctx, &desc, &rt) == GS_OK &&
                  gs_runtime_run_global(rt, spmd, &xshape, &rows, in, &yshape, NULL, out) == GS_OK &&
                  gs_runtime_get_stats(rt, &st) == GS_OK;
        if (ok) printf("%s: peak %lld bytes per device; the all-reduce sent %lld bytes\n", m ? "lockstep" : "threaded",
                       (long long)st.max_peak_bytes, (long long)st.collectives[0].bytes_sent);
        gs_runtime_destroy(rt);
        if (!ok) goto fail;
    }
    printf("column sums:");
    for (i = 0; i < C; i++) printf(" %g", got[0][i]);
    bad = memcmp(got[0], want, sizeof want) != 0 || memcmp(got[1], want, sizeof want) != 0;
    printf("\n%s\n", bad ? "MISMATCH with the reference interpreter" : "equal to the reference interpreter");
    fputs(gs_hlo_print(spmd), stdout);
    gs_ctx_destroy(ctx);
    return bad;
fail:
    fprintf(stderr, "spmd_allreduce: %s\n", gs_ctx_error_msg(ctx));
    gs_ctx_destroy(ctx);
    return 1;
}
