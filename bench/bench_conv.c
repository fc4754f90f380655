/* bench_conv.c -- convolution through the reference interpreter (gs_eval) vs a naive direct loop.
 *
 *   cc -O2 -march=native -I. bench/bench_conv.c -o build/bench_conv -lpthread -lm
 *
 * argv[1] = "quick": fewer repetitions. Single-threaded, best of several runs. Every interpreter result is
 * checked against the naive loop (max error scaled by sum |x*w|); the exit status is 1 only if a result is
 * wrong, never because of speed. */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 199309L
#endif
#ifndef GSHARD_EXTERNAL_IMPL   /* the Makefile links gshard_impl.c instead */
#define GSHARD_IMPLEMENTATION
#endif
#include "gshard.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_sec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng_state = 88172645463325252ull;
static float rng_f(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)((double)(rng_state >> 40) / 16777216.0 * 2.0 - 1.0);
}

/* One 2-D case: NHWC ("b01f_01io->b01f") or NCHW ("bf01_oi01->bf01"), square image and kernel, stride 1,
   "same" padding, feature groups g. */
typedef struct bench_case {
    const char *label;
    int nchw;
    int64_t n, hw, cin, cout, k, groups, stride;
} bench_case;

/* naive: for every output element, every tap and input feature of its group; layout-generic via strides */
static void naive_conv(const bench_case *c, int64_t ho, const float *x, const float *w, float *y, float *mag) {
    const int64_t cin_g = c->cin / c->groups, cout_g = c->cout / c->groups, pad = c->k / 2;
    int64_t xs_n, xs_c, xs_h, xs_w, ws_o, ws_i, ws_h, ws_w, ys_n, ys_c, ys_h, ys_w;
    int64_t b, oc, oh, ow, kh, kw, ic;
    if (c->nchw) {
        xs_w = 1; xs_h = c->hw; xs_c = c->hw * c->hw; xs_n = c->cin * xs_c;
        ws_w = 1; ws_h = c->k; ws_i = c->k * c->k; ws_o = cin_g * ws_i;
        ys_w = 1; ys_h = ho; ys_c = ho * ho; ys_n = c->cout * ys_c;
    } else {
        xs_c = 1; xs_w = c->cin; xs_h = c->hw * xs_w; xs_n = c->hw * xs_h;
        ws_o = 1; ws_i = c->cout; ws_w = cin_g * ws_i; ws_h = c->k * ws_w;
        ys_c = 1; ys_w = c->cout; ys_h = ho * ys_w; ys_n = ho * ys_h;
    }
    for (b = 0; b < c->n; b++)
        for (oc = 0; oc < c->cout; oc++)
            for (oh = 0; oh < ho; oh++)
                for (ow = 0; ow < ho; ow++) {
                    const int64_t g = oc / cout_g;
                    float acc = 0, m = 0;
                    for (kh = 0; kh < c->k; kh++) {
                        const int64_t ih = oh * c->stride - pad + kh;
                        if (ih < 0 || ih >= c->hw) continue;
                        for (kw = 0; kw < c->k; kw++) {
                            const int64_t iw = ow * c->stride - pad + kw;
                            if (iw < 0 || iw >= c->hw) continue;
                            for (ic = 0; ic < cin_g; ic++) {
                                const float p = x[b * xs_n + (g * cin_g + ic) * xs_c + ih * xs_h + iw * xs_w] *
                                                w[oc * ws_o + ic * ws_i + kh * ws_h + kw * ws_w];
                                acc += p;
                                m += fabsf(p);
                            }
                        }
                    }
                    y[b * ys_n + oc * ys_c + oh * ys_h + ow * ys_w] = acc;
                    mag[b * ys_n + oc * ys_c + oh * ys_h + ow * ys_w] = m;
                }
}

static int g_quick = 0, n_wrong = 0;

static void bench(const bench_case *c) {
    gs_ctx *ctx = NULL;
    gs_graph *g;
    gs_conv_config cfg;
    gs_shape xs, ws;
    gs_value *cv;
    int64_t ho = (c->hw + 2 * (c->k / 2) - c->k) / c->stride + 1, nx, nw, ny, i;
    float *x, *w, *y, *r, *mag;
    double t_i = 1e30, t_n, flops, err = 0;
    int rep, i2;
    const void *ins[2];
    void *outs[1];
    if (gs_ctx_create(NULL, &ctx) != GS_OK) exit(2);
    memset(&cfg, 0, sizeof cfg);
    gs_conv_dims_from_labels(c->nchw ? "bf01_oi01->bf01" : "b01f_01io->b01f", &cfg.dims);
    for (i2 = 0; i2 < 2; i2++) {
        cfg.window[i2] = gs_window_default();
        cfg.window[i2].size = c->k;
        cfg.window[i2].stride = c->stride;
        cfg.window[i2].pad_lo = cfg.window[i2].pad_hi = c->k / 2;
    }
    cfg.feature_group_count = c->groups;
    memset(&xs, 0, sizeof xs);
    memset(&ws, 0, sizeof ws);
    xs.dtype = ws.dtype = GS_F32;
    xs.rank = ws.rank = 4;
    xs.dims[0] = c->n;
    xs.dims[c->nchw ? 1 : 3] = c->cin;
    xs.dims[c->nchw ? 2 : 1] = xs.dims[c->nchw ? 3 : 2] = c->hw;
    ws.dims[c->nchw ? 0 : 3] = c->cout;
    ws.dims[c->nchw ? 1 : 2] = c->cin / c->groups;
    ws.dims[c->nchw ? 2 : 0] = ws.dims[c->nchw ? 3 : 1] = c->k;
    g = gs_graph_new(ctx, "conv");
    cv = gs_convolution(g, gs_parameter(g, 0, xs, "x"), gs_parameter(g, 1, ws, "w"), &cfg);
    if (!cv || gs_graph_set_root(g, cv) != GS_OK) {
        printf("%-32s build failed: %s\n", c->label, gs_ctx_error_msg(ctx));
        n_wrong++;
        gs_ctx_destroy(ctx);
        return;
    }
    nx = gs_shape_numel(&xs);
    nw = gs_shape_numel(&ws);
    ny = c->n * c->cout * ho * ho;
    x = (float *)malloc((size_t)nx * sizeof(float));
    w = (float *)malloc((size_t)nw * sizeof(float));
    y = (float *)malloc((size_t)ny * sizeof(float));
    r = (float *)malloc((size_t)ny * sizeof(float));
    mag = (float *)malloc((size_t)ny * sizeof(float));
    if (!x || !w || !y || !r || !mag) exit(2);
    for (i = 0; i < nx; i++) x[i] = rng_f();
    for (i = 0; i < nw; i++) w[i] = rng_f();
    ins[0] = x;
    ins[1] = w;
    outs[0] = y;
    for (rep = 0; rep < (g_quick ? 2 : 5); rep++) {
        double t0 = now_sec(), dt;
        if (gs_eval(g, ins, outs) != GS_OK) {
            printf("%-32s eval failed: %s\n", c->label, gs_ctx_error_msg(ctx));
            n_wrong++;
            break;
        }
        dt = now_sec() - t0;
        if (dt < t_i) t_i = dt;
    }
    t_n = now_sec();
    naive_conv(c, ho, x, w, r, mag);
    t_n = now_sec() - t_n;
    for (i = 0; i < ny; i++) {
        double e = fabs((double)y[i] - (double)r[i]) / ((double)mag[i] + 1e-30);
        if (y[i] != y[i]) e = 1e30;
        if (e > err) err = e;
    }
    flops = 2.0 * (double)ny * (double)(c->cin / c->groups) * (double)(c->k * c->k);
    printf("%-32s %9.2f %9.2f %9.2f %8.1fx  %9.2e %s\n", c->label, t_i * 1e3, flops / t_i * 1e-9, t_n * 1e3,
           t_n / t_i, err, err > 1e-5 ? "WRONG" : "ok");
    if (err > 1e-5) n_wrong++;
    fflush(stdout);
    free(x); free(w); free(y); free(r); free(mag);
    gs_ctx_destroy(ctx);
}

int main(int argc, char **argv) {
    static const bench_case cases[] = {
        {"NHWC 8x56x56 64->64 3x3", 0, 8, 56, 64, 64, 3, 1, 1},
        {"NCHW 8x56x56 64->64 3x3", 1, 8, 56, 64, 64, 3, 1, 1},
        {"NHWC 8x28x28 256->256 1x1", 0, 8, 28, 256, 256, 1, 1, 1},
        {"NHWC 8x224x224 3->64 7x7 s2", 0, 8, 224, 3, 64, 7, 1, 2},
        {"NHWC 8x56x56 128->128 3x3 g4", 0, 8, 56, 128, 128, 3, 4, 1},
        {"NHWC 8x56x56 256 depthwise 3x3", 0, 8, 56, 256, 256, 3, 256, 1},
    };
    size_t k;
    if (argc > 1 && strcmp(argv[1], "quick") == 0) g_quick = 1;
    printf("%-32s %9s %9s %9s %9s  %9s\n", "case", "interp ms", "GFLOP/s", "naive ms", "speedup", "max err");
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) bench(&cases[k]);
    return n_wrong ? 1 : 0;
}
