/* mlp.c - a 2-layer MLP with a softmax, built with the C builders and run by the reference interpreter.
   y = softmax(tanh(x w1 + b1) w2): x f32[8,16], w1 f32[16,32], b1 f32[32], w2 f32[32,4]. Same as mlp.hlo.
   Build (from the repository root): cc -std=c99 -O2 examples/mlp.c -o mlp -lpthread -lm */
#ifndef GSHARD_EXTERNAL_IMPL   /* the Makefile links gshard_impl.c instead */
#define GSHARD_IMPLEMENTATION
#endif
#include "../gshard.h"
#include <math.h>
#include <stdio.h>

enum { B = 8, D = 16, H = 32, C = 4 };

int main(void) {
    static float x[B * D], w1[D * H], b1[H], w2[H * C], y[B * C];
    int64_t xs[] = {B, D}, w1s[] = {D, H}, b1s[] = {H}, w2s[] = {H, C}, hs[] = {B, H}, ys[] = {B, C};
    int64_t last[] = {1}, first[] = {0};
    gs_ctx *ctx;
    int i, j, k, bad = 0;
    for (i = 0; i < B * D; i++) x[i] = (float)((i % 7) - 3) / 4;          /* fixed inputs */
    for (i = 0; i < D * H; i++) w1[i] = (float)((i * 5 % 11) - 5) / 10;
    for (i = 0; i < H; i++) b1[i] = (float)(i % 3) / 10;
    for (i = 0; i < H * C; i++) w2[i] = (float)((i * 3 % 7) - 3) / 5;

    if (gs_ctx_create(NULL, &ctx) != GS_OK) return 1;
    gs_graph *g = gs_graph_new(ctx, "main");
    gs_value *px = gs_parameter(g, -1, gs_shape_make(GS_F32, 2, xs), "x");
    gs_value *pw1 = gs_parameter(g, -1, gs_shape_make(GS_F32, 2, w1s), "w1");
    gs_value *pb1 = gs_parameter(g, -1, gs_shape_make(GS_F32, 1, b1s), "b1");
    gs_value *pw2 = gs_parameter(g, -1, gs_shape_make(GS_F32, 2, w2s), "w2");
    gs_value *pre = gs_add(g, gs_einsum(g, "bd,dh->bh", px, pw1),
                           gs_broadcast(g, pb1, gs_shape_make(GS_F32, 2, hs), last));
    gs_value *logits = gs_einsum(g, "bh,hc->bc", gs_unary(g, GS_OP_TANH, pre), pw2);
    gs_shape ysh = gs_shape_make(GS_F32, 2, ys);
    gs_value *mx = gs_reduce(g, logits, gs_scalar(g, GS_F32, -INFINITY), GS_REDUCE_MAX, 1, last);
    gs_value *e = gs_exp(g, gs_sub(g, logits, gs_broadcast(g, mx, ysh, first)));
    gs_value *sum = gs_reduce(g, e, gs_scalar(g, GS_F32, 0), GS_REDUCE_SUM, 1, last);
    gs_graph_set_root(g, gs_div(g, e, gs_broadcast(g, sum, ysh, first)));
    if (gs_ctx_error(ctx) || gs_graph_verify(g) != GS_OK) {
        fprintf(stderr, "build failed: %s\n", gs_ctx_error_msg(ctx));
        gs_ctx_destroy(ctx);
        return 1;
    }

    const void *in[4] = {x, w1, b1, w2};
    void *out[1] = {y};
    if (gs_eval(g, in, out) != GS_OK) {
        fprintf(stderr, "eval failed: %s\n", gs_ctx_error_msg(ctx));
        gs_ctx_destroy(ctx);
        return 1;
    }
    fputs(gs_hlo_print(g), stdout);

    /* row 0 by hand, in double precision */
    double hid[H], lg[C], m = -INFINITY, s = 0;
    for (j = 0; j < H; j++) {
        double a = b1[j];
        for (k = 0; k < D; k++) a += (double)x[k] * w1[k * H + j];
        hid[j] = tanh(a);
    }
    for (j = 0; j < C; j++) {
        lg[j] = 0;
        for (k = 0; k < H; k++) lg[j] += hid[k] * w2[k * C + j];
        if (lg[j] > m) m = lg[j];
    }
    for (j = 0; j < C; j++) s += exp(lg[j] - m);
    printf("row 0:");
    for (j = 0; j < C; j++) {
        double want = exp(lg[j] - m) / s;
        printf(" %.6f (hand %.6f)", y[j], want);
        if (fabs(y[j] - want) > 1e-5) bad = 1;
    }
    printf("\n%s\n", bad ? "MISMATCH" : "row 0 matches the hand computation");
    gs_ctx_destroy(ctx);
    return bad;
}
