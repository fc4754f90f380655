/* conv_spatial.c - a 512x512 RGB image split across 4 devices along its height (spatial partitioning, GShard
   App. A.4): conv 5x5, max-pool 3x3 stride 2, dilated conv 3x3. Each device keeps its band of rows; the rows
   a window needs from its neighbours arrive by collective-permute (halo exchange). Prints the halo sizes each
   layer needs, the collectives, and the check against the unpartitioned reference.
   Build: cc -std=c99 -O2 examples/conv_spatial.c -o conv_spatial -lpthread -lm */
#define GSHARD_IMPLEMENTATION
#include "../gshard.h"
#include <stdlib.h>

enum { H = 512, W = 512, D = 4 };

static gs_value *conv(gs_graph *g, gs_value *x, int64_t k, int64_t cin, int64_t cout, int64_t dil, const char *name) {
    int64_t kd[4] = {k, k, cin, cout};
    gs_conv_config c = {0};
    int i;
    gs_conv_dims_from_labels("b01f_01io->b01f", &c.dims);
    for (i = 0; i < 2; i++) {
        c.window[i] = gs_window_default();
        c.window[i].size = k;
        c.window[i].window_dilation = dil;
        c.window[i].pad_lo = c.window[i].pad_hi = (k - 1) * dil / 2;   /* "SAME" */
    }
    x = gs_convolution(g, x, gs_parameter(g, -1, gs_shape_make(GS_F32, 4, kd), name), &c);
    return gs_max(g, x, gs_constant_splat(g, gs_value_shape(x), 0));   /* relu */
}

int main(void) {
    int64_t img[4] = {1, H, W, 3};
    gs_ctx *ctx;
    gs_graph *g, *spmd = NULL;
    gs_value *x, *c1, *pool, *c2;
    gs_window_dim pw[4];
    gs_runtime *rt = NULL;
    gs_runtime_desc rd = {0};
    gs_partition_desc pd = {0};
    gs_check_desc cd = {0};
    gs_check_report rep = {0};
    gs_runtime_stats st;
    void *in[3] = {0};
    const gs_value *layers[3];
    const char *names[3] = {"conv 5x5", "max-pool 3x3/2", "conv 3x3, dilation 2"};
    int k, i, ok = 0;

    if (gs_ctx_create(NULL, &ctx) != GS_OK) return 1;
    g = gs_graph_new(ctx, "conv_spatial");
    gs_graph_set_num_partitions(g, D);
    /* the only annotation: the image's rows split 4 ways */
    x = gs_annotate(g, gs_parameter(g, -1, gs_shape_make(GS_F32, 4, img), "image"), "{devices=[1,4,1,1]<=[4]}");
    c1 = conv(g, x, 5, 3, 8, 1, "k1");
    for (i = 0; i < 4; i++) pw[i] = gs_window_default();
    for (i = 1; i < 3; i++) {
        pw[i].size = 3;
        pw[i].stride = 2;
        pw[i].pad_lo = pw[i].pad_hi = 1;
    }
    pool = gs_reduce_window(g, c1, gs_scalar(g, GS_F32, -INFINITY), GS_REDUCE_MAX, pw);
    c2 = conv(g, pool, 3, 8, 8, 2, "k2");
    gs_graph_set_root(g, c2);
    /* the windowed instructions: convolutions under their relu, the pool itself */
    layers[0] = gs_value_operand(c1, 0);
    layers[1] = pool;
    layers[2] = gs_value_operand(c2, 0);
    pd.num_devices = D;
    if (gs_ctx_error(ctx) || gs_partition(g, &pd, &spmd) != GS_OK) goto fail;

    printf("image f32[1,%d,%d,3], rows split over %d devices (%d rows each)\n", H, W, D, H / D);
    for (i = 0; i < 3; i++) printf("%s:\n  %s\n", names[i], gs_partition_explain(spmd, layers[i]));

    for (k = 0; k < 3; k++) {
        gs_shape s = gs_value_shape(gs_graph_param(g, k));
        if (!(in[k] = malloc(gs_shape_bytes(&s)))) goto fail;
        gs_fill_random(s, 7, k, in[k]);
    }
    rd.num_devices = D;
    cd.locate = true;
    if (gs_runtime_create(ctx, &rd, &rt) != GS_OK || gs_partition_check(spmd, rt, &cd, (const void *const *)in, &rep) != GS_OK ||
        gs_runtime_get_stats(rt, &st) != GS_OK)
        goto fail;
    printf("collectives (bytes sent by all devices together):\n");
    for (i = 0; i < st.n_collectives; i++) {
        const gs_runtime_collective_stats *c = &st.collectives[i];
        printf("  %-18s %-22s %lld bytes\n", gs_op_name(c->op), gs_value_name(c->instruction), (long long)c->bytes_sent);
    }
    printf("peak bytes of live buffers on the busiest device: %lld (the image alone is %lld)\n",
           (long long)st.max_peak_bytes, (long long)(4LL * H * W * 3));
    printf("warnings: %d\n", gs_partition_num_warnings(spmd));
    printf("check against the reference interpreter: %s (%lld elements, max abs error %.3g)%s%s\n",
           rep.ok ? "ok" : "MISMATCH", (long long)rep.n_compared, rep.max_abs_err, rep.ok ? "" : ": ", rep.message);
    ok = rep.ok;
    goto done;
fail:
    fprintf(stderr, "conv_spatial: %s\n", gs_ctx_error(ctx) ? gs_ctx_error_msg(ctx) : "out of memory");
done:
    for (k = 0; k < 3; k++) free(in[k]);
    gs_runtime_destroy(rt);
    gs_ctx_destroy(ctx);
    return ok ? 0 : 1;
}
