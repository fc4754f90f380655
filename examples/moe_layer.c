/* moe_layer.c - the GShard MoE layer (top-2 gating with expert capacity, random routing and the aux loss; dispatch,
   experts, combine) with the paper's three annotations, partitioned for 8 emulated devices, run with poisoned
   padding and checked against the reference interpreter. `moe_layer --hlo` prints the layer (moe_layer.hlo).
   Build: cc -std=c99 -O2 examples/moe_layer.c -o moe_layer -lpthread -lm */
#ifndef GSHARD_EXTERNAL_IMPL   /* the Makefile links gshard_impl.c instead */
#define GSHARD_IMPLEMENTATION
#endif
#include "../gshard.h"
#include "moe_model.h"
#include <stdlib.h>
static void print_shape(gs_shape s, const char *after) {
    int d;
    printf("%s[", gs_dtype_name(s.dtype));
    for (d = 0; d < s.rank; d++) printf("%s%lld", d ? "," : "", (long long)s.dims[d]);
    printf("]%s", after);
}
int main(int argc, char **argv) {
    const gs_op kinds[5] = {GS_OP_ALL_TO_ALL, GS_OP_ALL_REDUCE, GS_OP_ALL_GATHER, GS_OP_REDUCE_SCATTER, GS_OP_COLLECTIVE_PERMUTE};
    moe_config cfg = moe_example_config();
    gs_ctx *ctx;
    gs_graph *g, *spmd = NULL;
    gs_runtime *rt = NULL;
    gs_runtime_desc rd = {0};
    gs_partition_desc pd = {0};
    gs_check_desc cd = {0};
    gs_check_report rep = {0};
    gs_runtime_stats st;
    void *in[4] = {0};
    int k, i, ok = 0;
    if (gs_ctx_create(NULL, &ctx) != GS_OK) return 1;
    g = gs_graph_new(ctx, "moe_layer");
    if (moe_build_layer(g, &cfg, NULL) != GS_OK) goto fail;
    if (argc > 1 && strcmp(argv[1], "--hlo") == 0) {
        fputs(gs_hlo_print(g), stdout);
        gs_ctx_destroy(ctx);
        return 0;
    }
    printf("GShard MoE layer: G=%d groups of S=%d tokens, M=%d, E=%d experts (H=%d), capacity C=%d, on %d devices\n",
           (int)cfg.G, (int)cfg.S, (int)cfg.M, (int)cfg.E, (int)cfg.H, (int)cfg.C, (int)cfg.D);
    pd.num_devices = cfg.D;
    if (gs_partition(g, &pd, &spmd) != GS_OK) goto fail;
    printf("source: %d instructions; SPMD program (the same on every device): %d instructions\n",
           gs_graph_num_values(g), gs_graph_num_values(spmd));
    /* random global inputs, the runtime with poisoned padding, and the check against the interpreter */
    for (k = 0; k < 4; k++) {
        gs_shape s = gs_value_shape(gs_graph_param(g, k));
        if (!(in[k] = malloc(gs_shape_bytes(&s)))) goto fail;
        gs_fill_random(s, 42, k, in[k]);
    }
    rd.num_devices = cfg.D;
    cd.locate = true;
    if (gs_runtime_create(ctx, &rd, &rt) != GS_OK || gs_partition_check(spmd, rt, &cd, (const void *const *)in, &rep) != GS_OK ||
        gs_runtime_get_stats(rt, &st) != GS_OK)
        goto fail;
    printf("collectives, by kind (bytes: sent by all devices together in one run):\n");
    for (k = 0; k < 5; k++)
        for (i = 0; i < st.n_collectives; i++) {
            const gs_runtime_collective_stats *c = &st.collectives[i];
            if (c->op != kinds[k]) continue;
            printf("  %-18s %-14s ", gs_op_name(c->op), gs_value_name(c->instruction));
            print_shape(gs_value_shape(gs_value_operand(c->instruction, 0)), " -> ");
            print_shape(gs_value_shape(c->instruction), "");
            printf(", %lld time%s, %lld bytes\n", (long long)c->count, c->count == 1 ? "" : "s", (long long)c->bytes_sent);
        }
    printf("peak bytes per device:");
    for (i = 0; i < st.num_devices; i++) printf(" %lld", (long long)st.peak_bytes[i]);
    printf("\nwarnings: %d\n", gs_partition_num_warnings(spmd));
    for (i = 0; i < gs_partition_num_warnings(spmd); i++) printf("  %s\n", gs_partition_warning(spmd, i));
    printf("check against the reference interpreter: %s (%lld elements, max abs error %.3g)%s%s\n", rep.ok ? "ok" : "MISMATCH",
           (long long)rep.n_compared, rep.max_abs_err, rep.ok ? "" : ": ", rep.message);
    ok = rep.ok;
    goto done;
fail:
    fprintf(stderr, "moe_layer: %s\n", gs_ctx_error(ctx) ? gs_ctx_error_msg(ctx) : "out of memory");
done:
    for (k = 0; k < 4; k++) free(in[k]);
    gs_runtime_destroy(rt);
    gs_ctx_destroy(ctx);
    return ok ? 0 : 1;
}
