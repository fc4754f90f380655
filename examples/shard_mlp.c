/* shard_mlp.c - annotate a two-layer MLP on a 2x2 device mesh (data x model, Megatron style), let
   propagation decide every other sharding and show where each came from and who holds what; then partition
   it for 4 devices, run the SPMD program on 4 emulated devices and check it against the reference interpreter.
   Build: cc -std=c99 -O2 examples/shard_mlp.c -o shard_mlp -lpthread -lm */
#ifndef GSHARD_EXTERNAL_IMPL   /* the Makefile links gshard_impl.c instead */
#define GSHARD_IMPLEMENTATION
#endif
#include "../gshard.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    gs_ctx *ctx;
    gs_graph *g;
    gs_value *x, *w1, *w2, *h, *y;
    const char *axes[2] = {"data", "model"};
    int64_t mesh_sizes[2] = {2, 2};
    int64_t xd[2] = {16, 8}, w1d[2] = {8, 32}, w2d[2] = {32, 8};
    const gs_mesh *mesh;
    const char *text;
    int k, failed = 0;
    gs_graph *spmd;
    gs_partition_desc pd = {0};
    gs_runtime_desc rd = {0};
    gs_runtime *rt = NULL;
    gs_check_desc cd = {0};
    gs_check_report rep = {0};
    void *in[3] = {0};

    if (gs_ctx_create(NULL, &ctx) != GS_OK) return 1;
    g = gs_graph_new(ctx, "mlp");
    gs_graph_set_num_partitions(g, 4);
    mesh = gs_mesh_new(ctx, 2, axes, mesh_sizes, NULL);

    /* only the input and the first weight are annotated */
    x = gs_mesh_split(g, gs_parameter(g, -1, gs_shape_make(GS_F32, 2, xd), "x"), mesh, "data, _");
    w1 = gs_mesh_split(g, gs_parameter(g, -1, gs_shape_make(GS_F32, 2, w1d), "w1"), mesh, "_, model");
    w2 = gs_parameter(g, -1, gs_shape_make(GS_F32, 2, w2d), "w2");
    h = gs_unary(g, GS_OP_TANH, gs_einsum(g, "bd,df->bf", x, w1));
    y = gs_einsum(g, "bf,fd->bd", h, w2);
    gs_graph_set_root(g, y);
    if (gs_ctx_error(ctx) || gs_propagate(g, NULL) != GS_OK || !(text = gs_propagate_explain(g, true))) {
        fprintf(stderr, "%s\n", gs_ctx_error_msg(ctx));
        gs_ctx_destroy(ctx);
        return 1;
    }
    fputs(text, stdout);
    printf("\nh: %s", gs_sharding_visualize(ctx, gs_value_sharding(h), gs_value_shape(h)));
    printf("\nw2: %s", gs_sharding_visualize(ctx, gs_value_sharding(w2), gs_value_shape(w2)));

    /* Megatron: h is split over both axes, w2 by rows over "model" (the other operand's contracting split) */
    if (strcmp(gs_value_sharding_text(h), "{devices=[2,2]<=[4]}") != 0) failed = 1;
    if (strcmp(gs_value_sharding_text(w2), "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}") != 0) failed = 1;
    printf("\n%s\n", failed ? "unexpected shardings" : "h is split over data x model, w2 by rows over model");

    /* the SPMD program for 4 devices, run on 4 emulated devices with random inputs, checked element by element
       against the reference interpreter running the unsharded graph */
    pd.num_devices = rd.num_devices = 4;
    cd.locate = true;   /* on a mismatch, name the first instruction and device that differ */
    for (k = 0; k < 3; k++) {
        gs_shape s = gs_value_shape(gs_graph_param(g, k));
        if ((in[k] = malloc(gs_shape_bytes(&s))) != NULL) gs_fill_random(s, 1, k, in[k]);
        else failed = 1;
    }
    if (failed || gs_partition(g, &pd, &spmd) != GS_OK || gs_runtime_create(ctx, &rd, &rt) != GS_OK ||
        gs_partition_check(spmd, rt, &cd, (const void *const *)in, &rep) != GS_OK) {
        fprintf(stderr, "%s\n", gs_ctx_error(ctx) ? gs_ctx_error_msg(ctx) : "out of memory");
        failed = 1;
    } else {
        printf("\nthe SPMD program every device runs:\n%s", gs_partition_print(spmd, true));
        printf("4 devices vs the reference: %s (%lld elements, max |error| %.3g)%s%s\n", rep.ok ? "ok" : "MISMATCH",
               (long long)rep.n_compared, rep.max_abs_err, rep.ok ? "" : ": ", rep.message);
        failed |= !rep.ok;
    }
    for (k = 0; k < 3; k++) free(in[k]);
    gs_runtime_destroy(rt);
    gs_ctx_destroy(ctx);
    return failed;
}
