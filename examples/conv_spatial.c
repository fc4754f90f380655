/* conv_spatial.c - a 512x512 RGB image split across 4 devices by rows (spatial partitioning, GShard App. A.4):
   conv 5x5, max-pool 3x3 stride 2, dilated conv 3x3. Each device keeps its band of rows; the rows a window needs
   from its neighbours arrive by collective-permute (halo exchange). Prints each layer's halos, the collectives,
   the peak memory and the check against the unpartitioned reference.
   Build: cc -std=c99 -O2 examples/conv_spatial.c -o conv_spatial -lpthread -lm */
#ifndef GSHARD_EXTERNAL_IMPL   /* the Makefile links gshard_impl.c instead */
#define GSHARD_IMPLEMENTATION
#endif
#include "../gshard.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
enum { H = 512, W = 512, D = 4 };

/* a 2-D window on dims 1 and 2 of an NHWC array ("SAME" padding) */
static void window2(gs_window_dim *w, int64_t size, int64_t stride, int64_t dil) {
    gs_window_dim d = {size, stride, (size - 1) * dil / 2, (size - 1) * dil / 2, 1, dil};
    w[0] = w[1] = d;
}
static gs_value *conv(gs_graph *g, gs_value *x, int64_t k, int64_t cin, int64_t cout, int64_t dil, const char *name) {
    int64_t kd[4] = {k, k, cin, cout};
    gs_conv_config c = {0};
    gs_conv_dims_from_labels("b01f_01io->b01f", &c.dims);
    window2(c.window, k, 1, dil);
    return gs_convolution(g, x, gs_parameter(g, -1, gs_shape_make(GS_F32, 4, kd), name), &c);
}

static gs_value *relu(gs_graph *g, gs_value *x) { return gs_max(g, x, gs_constant_splat(g, gs_value_shape(x), 0)); }
int main(void) {
    int64_t img[4] = {1, H, W, 3};
    gs_ctx *ctx;
    gs_graph *g, *spmd = NULL;
    gs_value *x, *layers[3];
    gs_window_dim pw[4] = {{1, 1, 0, 0, 1, 1}, {0}, {0}, {1, 1, 0, 0, 1, 1}};
    gs_runtime *rt = NULL;
    gs_runtime_desc rd = {0};
    gs_partition_desc pd = {0};
    gs_check_desc cd = {0};
    gs_check_report rep = {0};
    gs_runtime_stats st = {0};
    void *in[3] = {0};
    const char *names[3] = {"conv 5x5", "max-pool 3x3/2", "conv 3x3, dilation 2"};
    int k, ok = 0;
    if (gs_ctx_create(NULL, &ctx) != GS_OK) return 1;
    g = gs_graph_new(ctx, "conv_spatial");
    gs_graph_set_num_partitions(g, D);
    /* the only annotation: the image's rows split 4 ways; propagation splits every layer the same way */
    x = gs_annotate(g, gs_parameter(g, -1, gs_shape_make(GS_F32, 4, img), "image"), "{devices=[1,4,1,1]<=[4]}");
    layers[0] = conv(g, x, 5, 3, 8, 1, "k1");
    window2(pw + 1, 3, 2, 1);
    layers[1] = gs_reduce_window(g, relu(g, layers[0]), gs_scalar(g, GS_F32, -INFINITY), GS_REDUCE_MAX, pw);
    layers[2] = conv(g, layers[1], 3, 8, 8, 2, "k2");
    gs_graph_set_root(g, relu(g, layers[2]));
    pd.num_devices = rd.num_devices = D;
    if (gs_ctx_error(ctx) || gs_partition(g, &pd, &spmd) != GS_OK) goto fail;
    printf("image f32[1,%d,%d,3], rows split over %d devices (%d rows each)\n", H, W, D, H / D);
    for (k = 0; k < 3; k++) printf("%s:\n  %s\n", names[k], gs_partition_explain(spmd, layers[k]));
    for (k = 0; k < 3; k++) {
        gs_shape s = gs_value_shape(gs_graph_param(g, k));
        if (!(in[k] = malloc(gs_shape_bytes(&s)))) goto fail;
        gs_fill_random(s, 7, k, in[k]);
    }
    if (gs_runtime_create(ctx, &rd, &rt) != GS_OK || gs_partition_check(spmd, rt, &cd, (const void *const *)in, &rep) != GS_OK ||
        gs_runtime_get_stats(rt, &st) != GS_OK)
        goto fail;
    for (k = 0; k < st.n_collectives; k++)
        printf("%-18s %-22s %lld bytes sent\n", gs_op_name(st.collectives[k].op),
               gs_value_name(st.collectives[k].instruction), (long long)st.collectives[k].bytes_sent);
    printf("peak bytes on the busiest device: %lld (the image alone: %lld); warnings: %d\n",
           (long long)st.max_peak_bytes, 4LL * H * W * 3, gs_partition_num_warnings(spmd));
    printf("check against the reference interpreter: %s (%lld elements, max abs error %.3g) %s\n",
           rep.ok ? "ok" : "MISMATCH", (long long)rep.n_compared, rep.max_abs_err, rep.message);
    ok = rep.ok;
fail:
    if (!ok && !rep.n_compared) fprintf(stderr, "conv_spatial: %s\n", gs_ctx_error(ctx) ? gs_ctx_error_msg(ctx) : "out of memory");
    for (k = 0; k < 3; k++) free(in[k]);
    gs_runtime_destroy(rt);
    gs_ctx_destroy(ctx);
    return ok ? 0 : 1;
}
